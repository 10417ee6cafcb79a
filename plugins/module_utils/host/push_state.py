# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The push state of one SBC on its host, where only root can change it (issue 21).

The state directory (``push_lease.state_dir_for(config_dir)``: ``/var/lib/commsgw-routing/etc-sbc`` for
``/etc/sbc``; root's, 0700) is reached only through a descriptor (``safe_files.open_root_directory``)::

    backups/<UTC time>/   the files one push replaced, and ``.absent``: the names it created (a restore removes them)
    pending.json          what the running SBC still has to do to run the deployed files:
                          {"restart": bool, "reload": [methods], "files": [names], "since": epoch seconds}

A backup may name only files the push manages (``managed``, the platform's list) and only as plain names;
a name that is not, an entry that is not a regular file, or a backup that is not a directory of ``backups/``
refuses the restore, naming it, before anything changes.

Older releases kept backups in ``<config_dir>/.commsgw-backups/``, a directory the SRV refresher's user
could write. ``import_old_backups`` takes over the ones that are root's and pass the same checks, and
removes that directory.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import stat
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import (
    read_file, replace_file, space_problem, write_new)
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import open_root_directory

BACKUPS = "backups"
PENDING = "pending.json"
ABSENT = ".absent"
OLD_BACKUPS = ".commsgw-backups"
_STAMP = re.compile(r"\A\d{8}T\d{6}\.\d{6}Z\Z")
_PLAIN = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class BackupError(ValueError):
    """A backup that cannot be restored as it is; nothing was changed."""


def open_state_dir(state_dir: str, create: bool = True) -> t.Optional[int]:
    return open_root_directory(state_dir, "push state directory", 0o700, create)


def check_name(name: str, managed: t.Collection[str], where: str) -> None:
    if not _PLAIN.match(name) or name not in managed:
        raise BackupError("%s names %r: not a file the push manages (%s); refused, nothing was restored"
                          % (where, name, ", ".join(sorted(managed))))


def _subdir(parent: int, name: str, create: bool) -> t.Optional[int]:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            return None
    os.mkdir(name, 0o700, dir_fd=parent)
    return os.open(name, _DIR_FLAGS, dir_fd=parent)


def _names(fd: int) -> list[str]:
    return sorted(os.listdir(fd))


# --- backups


def backup_names(state_fd: int) -> list[str]:
    backups = _subdir(state_fd, BACKUPS, False)
    if backups is None:
        return []
    try:
        return [name for name in _names(backups) if _STAMP.match(name)]
    finally:
        os.close(backups)


def latest_backup(state_dir: str) -> str:
    """The newest backup's path, "" when there is none (nothing is created)."""
    state_fd = open_state_dir(state_dir, create=False)
    if state_fd is None:
        return ""
    try:
        names = backup_names(state_fd)
    finally:
        os.close(state_fd)
    return os.path.join(state_dir, BACKUPS, names[-1]) if names else ""


def new_stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


def write_backup(state_fd: int, stamp: str, files: t.Mapping[str, bytes], absent: t.Sequence[str]) -> None:
    """``backups/<stamp>/``: ``files`` and the ``absent`` names, every file and directory fsynced."""
    backups = _subdir(state_fd, BACKUPS, True)
    try:
        os.mkdir(stamp, 0o700, dir_fd=backups)
        backup = os.open(stamp, _DIR_FLAGS, dir_fd=backups)
        try:
            for name, data in files.items():
                write_new(backup, name, data)
            write_new(backup, ABSENT, "".join(n + "\n" for n in absent).encode())
            os.fsync(backup)
        except BaseException:
            _remove_flat(backups, stamp)  # no half backup for a later rollback to find
            raise
        finally:
            os.close(backup)
        os.fsync(backups)
    finally:
        os.close(backups)


def backup_space_problem(state_fd: int, files: t.Mapping[str, bytes], where: str) -> t.Optional[str]:
    return space_problem(state_fd, [len(data) for data in files.values()] + [0], where)


def _read_backup(backup: int, managed: t.Collection[str], where: str) -> tuple[dict[str, bytes], list[str]]:
    files: dict[str, bytes] = {}
    absent: list[str] = []
    for name in _names(backup):
        info = os.stat(name, dir_fd=backup, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise BackupError("%s holds %r, which is not a regular file; refused, nothing was restored" % (where, name))
        if name == ABSENT:
            absent = (read_file(backup, name) or b"").decode("utf-8", "replace").split()
            for gone in absent:
                check_name(gone, managed, "%s/%s" % (where, ABSENT))
            continue
        check_name(name, managed, where)
        files[name] = read_file(backup, name) or b""
    both = sorted(set(files) & set(absent))
    if both:
        raise BackupError("%s both holds and lists as absent %s; refused, nothing was restored" % (where, both))
    return files, absent


def load_backup(state_dir: str, state_fd: t.Optional[int], backup: str,
                managed: t.Collection[str]) -> tuple[dict[str, bytes], list[str]]:
    """The files of ``backup`` and the names it lists as absent, each checked; BackupError otherwise."""
    backups_dir = os.path.join(os.path.normpath(state_dir), BACKUPS)
    name = os.path.basename(os.path.normpath(backup or ""))
    if os.path.dirname(os.path.normpath(backup or "/")) != backups_dir or not _STAMP.match(name):
        raise BackupError("backup %r is not a backup of this SBC: backups are the directories of %s (older "
                          "releases kept them in <config_dir>/%s; a push takes those over)"
                          % (backup, backups_dir, OLD_BACKUPS))
    backups = _subdir(state_fd, BACKUPS, False) if state_fd is not None else None
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=backups) if backups is not None else None
    except OSError as exc:
        raise BackupError("backup %s is not a directory (%s): a symlink is refused" % (backup, exc.strerror))
    finally:
        if backups is not None:
            os.close(backups)
    if fd is None:
        raise BackupError("backup %s does not exist" % backup)
    try:
        return _read_backup(fd, managed, "backup %s" % backup)
    finally:
        os.close(fd)


def prune(state_fd: int, keep: int, current: str) -> list[str]:
    """Remove all but the newest ``keep`` backups, never ``current`` (the run's own, a rollback needs it)."""
    backups = _subdir(state_fd, BACKUPS, False)
    if backups is None:
        return []
    try:
        older = [n for n in _names(backups) if _STAMP.match(n) and n != current]
        older = older[:len(older) - max(keep - 1, 0)]
        for name in older:
            _remove_flat(backups, name)
        return older
    finally:
        os.close(backups)


def _remove_flat(parent: int, name: str) -> None:
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    try:
        for entry in os.listdir(fd):
            os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def import_old_backups(config_fd: int, config_dir: str, state_fd: int,
                       managed: t.Collection[str]) -> tuple[list[str], list[str]]:
    """Take over ``<config_dir>/.commsgw-backups/`` (older releases); (imported, skipped with the reason).

    Only a real directory of root's that nobody else may write is trusted, and in it only backups that
    pass ``load_backup``'s checks; the old directory is removed either way."""
    imported: list[str] = []
    skipped: list[str] = []
    old_path = os.path.join(config_dir, OLD_BACKUPS)
    try:
        info = os.stat(OLD_BACKUPS, dir_fd=config_fd, follow_symlinks=False)
    except FileNotFoundError:
        return imported, skipped
    if not _root_only_dir(info):
        skipped.append("%s: not a directory only root may write; none of it was taken over" % old_path)
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(old_path)  # removes what is in it, never following a symlink
        else:
            os.unlink(OLD_BACKUPS, dir_fd=config_fd)
        return imported, skipped
    old = os.open(OLD_BACKUPS, _DIR_FLAGS, dir_fd=config_fd)
    try:
        have = set(backup_names(state_fd))
        for name in _names(old):
            try:
                if not _STAMP.match(name) or not _root_only_dir(os.stat(name, dir_fd=old, follow_symlinks=False)):
                    raise BackupError("not a backup directory only root may write")
                fd = os.open(name, _DIR_FLAGS, dir_fd=old)
                try:
                    files, absent = _read_backup(fd, managed, "%s/%s" % (old_path, name))
                finally:
                    os.close(fd)
            except (BackupError, OSError) as exc:
                skipped.append("%s/%s: %s" % (old_path, name, exc))
                continue
            if name not in have:
                write_backup(state_fd, name, files, absent)
            imported.append(name)
    finally:
        os.close(old)
    shutil.rmtree(old_path)
    return imported, skipped


def _root_only_dir(info: os.stat_result) -> bool:
    return (stat.S_ISDIR(info.st_mode) and info.st_uid in (0, os.geteuid())
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


# --- what the running SBC still has to do


def read_pending(state_fd: t.Optional[int]) -> t.Optional[dict[str, t.Any]]:
    if state_fd is None:
        return None
    data = read_file(state_fd, PENDING)
    try:
        pending = json.loads(data.decode("utf-8")) if data else None
    except ValueError:
        return None
    if not isinstance(pending, dict) or not (pending.get("restart") or pending.get("reload")):
        return None
    return {"restart": bool(pending.get("restart")), "reload": [str(m) for m in pending.get("reload") or []],
            "files": [str(n) for n in pending.get("files") or []], "since": float(pending.get("since") or 0)}


def _write_pending(state_fd: int, pending: t.Optional[t.Mapping[str, t.Any]]) -> None:
    if not pending or not (pending.get("restart") or pending.get("reload")):
        try:
            os.unlink(PENDING, dir_fd=state_fd)
        except FileNotFoundError:
            return
    else:
        replace_file(state_fd, PENDING, (json.dumps(pending, sort_keys=True) + "\n").encode())
    os.fsync(state_fd)


def note_pending(state_fd: int, restart: bool, reload: t.Sequence[str], files: t.Sequence[str],
                 now: t.Optional[float] = None) -> dict[str, t.Any]:
    """Add what the files just swapped need to what was pending (a restart covers every reload)."""
    before = read_pending(state_fd) or {"restart": False, "reload": [], "files": []}
    restart = restart or before["restart"]
    reloads = [] if restart else before["reload"] + [m for m in reload if m not in before["reload"]]
    pending = {"restart": restart, "reload": reloads,
               "files": sorted(set(before["files"]) | set(files)), "since": time.time() if now is None else now}
    _write_pending(state_fd, pending)
    return pending


def clear_pending(state_fd: int, restarted: bool, reloaded: t.Sequence[str] = ()) -> None:
    """After a restart (or a start) nothing is pending; after reloads, those reloads are not."""
    pending = read_pending(state_fd)
    if pending is None:
        return
    if restarted:
        pending = None
    else:
        pending["reload"] = [m for m in pending["reload"] if m not in reloaded]
    _write_pending(state_fd, pending)


def outstanding(pending: t.Optional[dict[str, t.Any]], started_at: t.Optional[float]) -> t.Optional[dict[str, t.Any]]:
    """``pending`` unless the running process started after it was noted (a restart loads every file)."""
    if pending is None or (started_at is not None and started_at > pending["since"]):
        return None
    return pending


def process_started_at(pid_file: str, name: bytes) -> t.Optional[float]:
    """When the process of ``pid_file`` started (epoch seconds, never later than the truth); None when it
    does not run or its program is not ``name``."""
    try:
        # The SBC's own run directory: no symlink followed, no FIFO waited on.
        run_dir = os.open(os.path.dirname(pid_file) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            pid = int((read_file(run_dir, os.path.basename(pid_file)) or b"").strip()[:20])
        finally:
            os.close(run_dir)
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            if not os.path.basename(handle.read().split(b"\0")[0]).startswith(name):
                return None
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")
