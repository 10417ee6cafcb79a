# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Replacing several files of a configuration directory so that it ends all-new or all-old (issue 21).

A push used to write and rename one file after the other: on a full disk the second write failed after
the first rename, and the SBC was left half-new. ``swap`` works in three phases on a descriptor of the
directory, by plain names only (never a path, never following a symlink):

1. stage: every new file is written under a random name (O_CREAT|O_EXCL|O_NOFOLLOW, 0600 until
   ``prepare`` gives it its owner and mode) and fsynced; each previous file gets a second hard link under a
   random name. Nothing live has changed yet; any error here only removes the staged names.
2. swap: each staged file is renamed over its name, each removed name is unlinked (its hard link keeps it).
3. commit: the directory is fsynced and the extra links are removed.

Any error in phase 2 (or 3, before the commit) renames the previous files back from their links (a rename
needs no free space) and removes what the swap created, so the directory is byte for byte as before.
``space_problem`` says beforehand when the filesystem has not got room for the staged files.
"""

from __future__ import annotations

import os
import secrets
import stat
import typing as t

_STAGE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_PREFIX = ".commsgw-"


class SwapError(OSError):
    """The swap failed; ``restored`` says whether the directory holds exactly its previous files again."""

    def __init__(self, message: str, restored: bool) -> None:
        super().__init__(message)
        self.restored = restored


def read_file(dir_fd: int, name: str) -> t.Optional[bytes]:
    """The content of regular file ``name`` in ``dir_fd``; None when missing or not a regular file (a symlink
    is never followed, a FIFO never waited on)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError:  # ELOOP: a symlink; anything else unreadable counts as absent, and is replaced
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def write_new(dir_fd: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Create ``name`` (must not exist) with ``data``, fsynced."""
    fd = os.open(name, _STAGE_FLAGS, mode, dir_fd=dir_fd)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(dir_fd: int, name: str, data: bytes, mode: int = 0o600, owner: t.Optional[tuple[int, int]] = None
                 ) -> None:
    """Replace (or create) ``name`` in ``dir_fd`` at once: ``data`` under a temporary name (a stale one from a
    process that died removed first), fsynced, exactly ``mode`` whatever the umask (and ``owner``, uid and gid),
    renamed over ``name``. The directory is the caller's to fsync."""
    temp = ".%s.%d" % (name, os.getpid())
    try:
        os.unlink(temp, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    fd = os.open(temp, _STAGE_FLAGS, mode, dir_fd=dir_fd)
    try:
        _write_all(fd, data)
        if owner is not None:
            os.fchown(fd, *owner)
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def space_problem(dir_fd: int, sizes: t.Iterable[int], where: str) -> t.Optional[str]:
    """Why files of ``sizes`` bytes will not fit in the filesystem of ``dir_fd`` (None when they will);
    counted in whole blocks, one more per file for its directory entry."""
    info = os.fstatvfs(dir_fd)
    block = info.f_frsize or info.f_bsize or 4096
    needed = sum((size + block - 1) // block + 1 for size in sizes) * block
    available = info.f_bavail * block
    if needed > available:
        return ("not enough free space in %s: the files need %d bytes, %d are available; free some space "
                "and run again" % (where, needed, available))
    return None


def _temp_name(name: str) -> str:
    return "%s%s.%s" % (TEMP_PREFIX, secrets.token_hex(6), name)


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def swap(dir_fd: int, writes: t.Mapping[str, bytes], removes: t.Sequence[str] = (),
         prepare: t.Optional[t.Callable[[int, str, str], None]] = None,
         before_first_rename: t.Optional[t.Callable[[], None]] = None, where: str = "the directory",
         dir_of: t.Optional[t.Callable[[str], int]] = None) -> None:
    """Replace ``writes`` (name -> content) and remove ``removes`` in ``dir_fd`` all at once (see above).

    ``dir_of(name)``: the descriptor of the directory ``name`` lives in, when not ``dir_fd`` (a subdirectory
    on the same filesystem; each file is staged and kept next to its own name). ``prepare(fd, temp_name,
    name)``: gives a staged file its owner and mode; ``before_first_rename()``: the last chance to fail with
    nothing changed (the push notes the pending restart there). Raises SwapError.
    """
    def fd_of(name: str) -> int:
        return dir_of(name) if dir_of is not None else dir_fd
    staged: dict[str, str] = {}
    kept: dict[str, t.Optional[str]] = {}
    done: list[str] = []
    try:
        try:
            for name, data in writes.items():
                staged[name] = _temp_name(name)
                write_new(fd_of(name), staged[name], data)
                if prepare is not None:
                    prepare(fd_of(name), staged[name], name)
            for name in list(writes) + [n for n in removes if n not in writes]:
                kept[name] = _keep(fd_of(name), name)
            if before_first_rename is not None:
                before_first_rename()
        except Exception as exc:
            raise SwapError("staging the new files in %s failed (%s); nothing was changed" % (where, exc), True)
        try:
            for name in writes:
                os.rename(staged[name], name, src_dir_fd=fd_of(name), dst_dir_fd=fd_of(name))
                del staged[name]
                done.append(name)
            for name in removes:
                if name not in writes and kept.get(name):
                    os.unlink(name, dir_fd=fd_of(name))
                    done.append(name)
            for fd in {fd_of(name) for name in done} | {dir_fd}:
                os.fsync(fd)
        except Exception as exc:
            problems = _put_back(fd_of, done, kept)
            if problems:
                raise SwapError("replacing the files in %s failed (%s) and putting the previous ones back failed "
                                "too (%s)" % (where, exc, "; ".join(problems)), False)
            raise SwapError("replacing the files in %s failed (%s); the previous files are back" % (where, exc), True)
    finally:
        for name, temp in list(staged.items()) + [(n, k) for n, k in kept.items() if k]:
            _unlink_quietly(fd_of(name), temp)


def _keep(dir_fd: int, name: str) -> t.Optional[str]:
    """A second hard link of the current ``name`` (the entry itself, a symlink is not followed); None when absent."""
    keep = _temp_name(name)
    try:
        os.link(name, keep, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return keep


def _put_back(fd_of: t.Callable[[str], int], done: t.Sequence[str],
              kept: t.MutableMapping[str, t.Optional[str]]) -> list[str]:
    problems = []
    for name in reversed(done):
        try:
            previous = kept.get(name)
            if previous:
                os.rename(previous, name, src_dir_fd=fd_of(name), dst_dir_fd=fd_of(name))
                kept[name] = None
            else:
                os.unlink(name, dir_fd=fd_of(name))
        except OSError as exc:
            problems.append("%s: %s" % (name, exc))
    for fd in {fd_of(name) for name in done}:
        try:
            os.fsync(fd)
        except OSError as exc:
            problems.append("fsync: %s" % exc)
    return problems
