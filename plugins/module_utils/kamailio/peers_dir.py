# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one directory the SRV refresher may change: ``<config_dir>/peers``, which holds dispatcher.list.

The configuration directory is root's: Kamailio reads it through its group, only the push writes it. The
refresher changes exactly one thing, the peer list, in a directory of its own below it, owned by the
refresher's user, group Kamailio's with the setgid bit (2750): what it writes there gets Kamailio's group
without the refresher being in that group, and it can rename nothing else. Kamailio's ``list_file`` names
the file there (``kamailio.view``), so a candidate's tree (the whole config dir) carries its own list.

Root (the push, its backup and its restore) acts there only through the directory's fd: it reads with
O_NOFOLLOW, writes a fresh temporary name (O_EXCL), sets owner and mode with fchown/fchmod and renames
within the fd; it never follows a name the refresher controls.
"""

from __future__ import annotations

import os
import secrets
import stat
import typing as t

PEERS_SUBDIR = "peers"
# Rendered files that live in the peers directory (the rest of the rendered files: the config dir itself).
IN_PEERS_DIR = frozenset({"dispatcher.list"})


def file_path(config_dir: str, name: str) -> str:
    """Where the rendered file ``name`` lives under ``config_dir``."""
    if name in IN_PEERS_DIR:
        return os.path.join(config_dir, PEERS_SUBDIR, name)
    return os.path.join(config_dir, name)


def read_nofollow(path: str) -> t.Optional[str]:
    """The text of the regular file at ``path`` (None when absent); a symlink or anything else is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OSError("%s: not read (%s; symlinks are not followed)" % (path, exc.strerror)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("%s: not a regular file" % path)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8")
    finally:
        os.close(fd)


def open_directory(path: str) -> int:
    """An fd of the real directory at ``path`` (a symlink is refused)."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def ensure_peers_dir(config_dir: str, uid: int, gid: int, mode: int = 0o750) -> None:
    """Create ``<config_dir>/peers`` (``uid``:``gid``, ``mode``) when it is missing; an existing one is left
    as the role made it (the refresher's). ``config_dir`` is root's, so its name cannot be redirected."""
    parent = open_directory(config_dir)
    try:
        try:
            os.mkdir(PEERS_SUBDIR, mode, dir_fd=parent)
        except FileExistsError:
            return
        fd = os.open(PEERS_SUBDIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        try:
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    finally:
        os.close(parent)


def write_in(directory: str, name: str, text: str, mode: int) -> None:
    """Replace ``directory/name`` with ``text`` in one rename, all through the directory's fd: whatever another
    user put at ``name`` (a symlink too) is replaced, never followed. The file belongs to the directory's owner
    and group (the refresher's and Kamailio's), ``mode``: the refresher reads and replaces what the push wrote."""
    dfd = open_directory(directory)
    try:
        owner = os.fstat(dfd)
        tmp = ".commsgw-%s.tmp" % secrets.token_hex(8)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        try:
            try:
                data = text.encode("utf-8")
                while data:
                    data = data[os.write(fd, data):]
                os.fchown(fd, owner.st_uid, owner.st_gid)
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    finally:
        os.close(dfd)


def unlink_in(directory: str, name: str) -> bool:
    """Remove ``directory/name`` (whatever it is, never what it points to); True when something was removed."""
    try:
        dfd = open_directory(directory)
    except FileNotFoundError:
        return False
    try:
        os.unlink(name, dir_fd=dfd)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(dfd)
