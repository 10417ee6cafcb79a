# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing files and preparing directories where another local user may have planted a name first.

* ``write_text_atomic``: the atomic writer of code that runs without an AnsibleModule (the SRV refresher's
  dispatcher.list and state on the SBC, the change record on the controller); modules write through
  ``module_files.install_text`` (Ansible's ``atomic_move``). The content goes to a random name created with
  O_CREAT|O_EXCL|O_NOFOLLOW (``tempfile.mkstemp``) in the target's directory, then is renamed over the
  target. A symlink planted at the target is replaced, never followed; nothing else is ever opened by
  its predictable name. Standard library only: it is shipped to SBC hosts with the refresher.
* ``owned_directory``: a directory a daemon works in (the SBC's work dir) is created private, or, when
  it exists, accepted only if it is a real directory (no symlink) owned by root or by that daemon's user.
* ``open_root_directory``: a directory only root may change (the push state: backups, the pending restart,
  the push lease), opened as a file descriptor by walking from ``/`` without following a symlink, every
  directory on the way owned by root and writable by nobody else (or sticky, as /tmp). Everything in it
  is then reached relative to that descriptor, never again by path.
"""

from __future__ import annotations

import errno
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


def write_text_atomic(path: str, text: str, mode: t.Optional[int] = 0o644, dir_mode: t.Optional[int] = 0o755, *,
                      group: t.Optional[int] = None, keep_existing: bool = False, umask: bool = True,
                      prefix: t.Optional[str] = None,
                      prepare: t.Optional[t.Callable[[str], t.Any]] = None) -> None:
    """Write ``text`` to ``path`` through a random temporary name in the same directory and a rename.

    The one atomic writer of the collection; the options are what its callers need:

    * ``mode``: the file's final mode, less the process umask unless ``umask`` is False;
    * ``group``: chown the file to this gid (a refresher's unprivileged unit: the SBC's group);
    * ``keep_existing``: when ``path`` exists, the new file takes its mode and (where allowed) owner instead;
    * ``dir_mode``: a missing directory is created with it; None: the directory must exist;
    * ``prefix``: of the temporary name (default ``.<name>.``);
    * ``prepare``: called with the temporary file's path after writing, before the rename (e.g. to set
      owner, group and mode through Ansible's own file handling).
    """
    directory = os.path.dirname(os.path.abspath(path))
    if dir_mode is not None:
        os.makedirs(directory, mode=dir_mode, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix or ".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            _set_attributes(handle.fileno(), path, mode, group, keep_existing, umask)
            handle.write(text)
        if prepare is not None:
            prepare(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _set_attributes(fd: int, path: str, mode: t.Optional[int], group: t.Optional[int], keep_existing: bool,
                    umask: bool) -> None:
    if group is not None:
        os.fchown(fd, -1, group)
    existing = _stat_or_none(path) if keep_existing and group is None else None
    if existing is not None:
        os.fchmod(fd, existing.st_mode & 0o7777)
        try:
            os.fchown(fd, existing.st_uid, existing.st_gid)
        except PermissionError:
            pass
    elif mode is not None:
        os.fchmod(fd, mode & ~_umask() if umask else mode)


def _stat_or_none(path: str) -> t.Optional[os.stat_result]:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def owned_directory(path: str, what: str, uid: int = -1, gid: int = -1, mode: int = 0o770) -> bool:
    """Create ``path`` (``mode``, chowned to ``uid``/``gid``) or check the one there; True when created.

    An existing directory must not be a symlink and must belong to root or ``uid``: a directory of a
    predictable name in a shared place (/var/tmp/...) could have been created by any local user, who
    would then read the SBC's core files or swap what it writes. ``what`` names the option in errors.
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


def open_root_directory(path: str, what: str, mode: int = 0o700, create: bool = True) -> t.Optional[int]:
    """A descriptor of directory ``path`` that no user but root (the caller) can change; None when it is
    missing and ``create`` is False.

    Walks from ``/`` one name at a time with O_NOFOLLOW: a symlink anywhere, a directory owned by another
    user, or one another user may write (group/other write without the sticky bit) raises UnsafePathError
    naming it and ``what``. Missing directories are created (0755 on the way, ``mode`` at the end) and the
    last one is given ``mode`` (through its descriptor) when it differs.
    """
    if not os.path.isabs(path):
        raise UnsafePathError("%s %r is not an absolute path" % (what, path))
    names = [name for name in os.path.normpath(path).split("/") if name]
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, name in enumerate(names):
            last = index == len(names) - 1
            child = open_root_child_directory(fd, name, "/" + "/".join(names[:index + 1]), what,
                                              (mode if last else 0o755) if create else None, last)
            os.close(fd)
            fd = child
            if fd is None:
                return None
        if names and stat.S_IMODE(os.fstat(fd).st_mode) != mode:
            os.fchmod(fd, mode)
        return fd
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise


def open_root_child_directory(parent: int, name: str, shown: str, what: str, create_mode: t.Optional[int],
                              last: bool = True) -> t.Optional[int]:
    """A descriptor of directory ``name`` in ``parent`` (``shown`` is its path in errors) that no user but root can
    change: one step of open_root_directory, for a caller that already holds a root-only parent. Created with
    exactly ``create_mode`` when missing, unless that is None (then None is returned). ``last``: a sticky
    directory another user may write is refused too (only a directory on the way may be one, like /tmp)."""
    child = _open_child_directory(parent, name, shown, what, create_mode)
    if child is None:
        return None
    try:
        _check_root_only(os.fstat(child), shown, what, last)
    except BaseException:
        os.close(child)
        raise
    return child


def _open_child_directory(parent: int, name: str, shown: str, what: str,
                          create_mode: t.Optional[int]) -> t.Optional[int]:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if create_mode is None:
            return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePathError("%s: %s is a symlink or not a directory; expected a real directory owned by root"
                                  % (what, shown))
        raise
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
    except FileExistsError:  # someone else was first: checked like any existing directory
        return _open_child_directory(parent, name, shown, what, None)
    child = os.open(name, flags, dir_fd=parent)
    os.fchmod(child, create_mode)  # exactly, whatever the umask
    return child


def _check_root_only(info: os.stat_result, shown: str, what: str, last: bool) -> None:
    if info.st_uid not in (0, os.geteuid()):
        raise UnsafePathError("%s: %s belongs to uid %d, expected root: another local user could change what "
                              "is in it" % (what, shown, info.st_uid))
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and (last or not info.st_mode & stat.S_ISVTX):
        raise UnsafePathError("%s: %s is writable by group or others (mode %04o); expected root's alone"
                              % (what, shown, stat.S_IMODE(info.st_mode)))


def _trusted(uid: int) -> t.Set[int]:
    return {0, os.geteuid()} | ({uid} if uid >= 0 else set())


def _owner_text(uid: int) -> str:
    return " or uid %d (the user the SBC runs as)" % uid if uid > 0 else ""
