# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing files and preparing directories where another local user may have planted a name first.

* ``write_text_atomic``: the content goes to a random name created with O_CREAT|O_EXCL|O_NOFOLLOW
  (``tempfile.mkstemp``) in the target's directory, then is renamed over the target. A symlink planted
  at the target is replaced, never followed; nothing else is ever opened by its predictable name.
* ``owned_directory``: a directory a daemon works in (Kamailio's work dir) is created private, or, when
  it exists, accepted only if it is a real directory (no symlink) owned by root or by that daemon's user.
"""

from __future__ import annotations

import os
import stat
import tempfile
import typing as t


class UnsafePathError(OSError):
    """A path is a symlink, not a directory, or owned by someone who could swap its content."""


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_text_atomic(path: str, text: str, mode: int = 0o644, dir_mode: int = 0o755) -> None:
    """Write ``text`` to ``path`` through a random temporary name in the same directory and a rename.

    ``mode`` (less the umask) is the file's final mode; a missing directory is created with ``dir_mode``.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=dir_mode, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), mode & ~_umask())
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def owned_directory(path: str, what: str, uid: int = -1, gid: int = -1, mode: int = 0o770) -> bool:
    """Create ``path`` (``mode``, chowned to ``uid``/``gid``) or check the one there; True when created.

    An existing directory must not be a symlink and must belong to root or ``uid``: a directory of a
    predictable name in a shared place (/var/tmp/...) could have been created by any local user, who
    would then read Kamailio's core files or swap what it writes. ``what`` names the option in errors.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        os.mkdir(path, mode)
        if uid >= 0 or gid >= 0:
            os.chown(path, uid, gid, follow_symlinks=False)
        os.chmod(path, mode)
        return True
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError("%s %s is a symlink (to %s); expected a real directory owned by root%s: remove it or "
                              "choose another %s" % (what, path, os.readlink(path), _owner_text(uid), what))
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError("%s %s exists and is not a directory; remove it or choose another %s" % (what, path, what))
    if info.st_uid not in _trusted(uid):
        raise UnsafePathError("%s %s exists and belongs to uid %d, expected root%s: another local user may have "
                              "created it first; remove it or choose another %s" % (
                                  what, path, info.st_uid, _owner_text(uid), what))
    return False


def _trusted(uid: int) -> t.Set[int]:
    return {0, os.geteuid()} | ({uid} if uid >= 0 else set())


def _owner_text(uid: int) -> str:
    return " or uid %d (the user Kamailio runs as)" % uid if uid > 0 else ""
