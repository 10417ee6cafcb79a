# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The file work of a push and of a rollback on the SBC host, platform-neutral (issue 21).

The push module of a host platform decides what changed and what the running SBC needs for it (a restart or
reloads); ``install`` and ``restore`` do the rest, the caller holding the push lock (``push_lease.push_step``):

* take over the backups an older release kept in the configuration directory (``push_state.import_old_backups``);
* refuse a filesystem without room for the new files or the backup, before anything changes;
* back up what is replaced into the root-only state directory (``host.push_state``);
* swap the files all at once (``config_swap.swap``), noting in the state directory what the running SBC
  still has to do right before the first rename, so that a run cut off before its restart or reload is
  completed by the next one (``pending``) and drift reports it meanwhile.
"""

from __future__ import annotations

import dataclasses
import os
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.host import push_state
from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import SwapError, read_file, space_problem, swap


@dataclasses.dataclass
class Target:
    """One SBC's configuration: where it lives, what may be written there and what a change needs.

    ``prepare(dir_fd, temp_name, name)`` gives a staged file its owner and mode (through ``dir_fd``: a
    subdirectory may belong to another user); ``restart``/``reload``: what the running SBC needs to take the
    change (noted as pending before the first rename); ``subdirs``: files that live in a subdirectory of
    ``config_dir`` (name -> subdirectory, e.g. a peer list in a refresher's own ``peers``), reached
    through the configuration directory's fd without following a link."""

    config_dir: str
    state_dir: str
    managed: t.Collection[str]
    prepare: t.Callable[[int, str, str], t.Any]
    restart: bool = False
    reload: t.Sequence[str] = ()
    subdirs: t.Mapping[str, str] = dataclasses.field(default_factory=dict)


class _Dirs:
    """The configuration directory's fd and its subdirectories' (opened on first use, never through a link;
    a missing one is created like its parent: root's, the parent's group, 0750)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.config_fd = os.open(target.config_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.fds: dict[str, int] = {}

    def of(self, name: str) -> int:
        sub = self.target.subdirs.get(name)
        if not sub:
            return self.config_fd
        if sub not in self.fds:
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                self.fds[sub] = os.open(sub, flags, dir_fd=self.config_fd)
            except FileNotFoundError:
                os.mkdir(sub, 0o750, dir_fd=self.config_fd)
                self.fds[sub] = os.open(sub, flags, dir_fd=self.config_fd)
                os.fchown(self.fds[sub], 0, os.fstat(self.config_fd).st_gid)
        return self.fds[sub]

    def close(self) -> None:
        for fd in [self.config_fd, *self.fds.values()]:
            os.close(fd)


def pending(state_dir: str, pid_file: str, program: bytes) -> t.Optional[dict[str, t.Any]]:
    """What an earlier run left for the running SBC to do, unless its process (``pid_file``) started since."""
    state_fd = push_state.open_state_dir(state_dir, create=False)
    try:
        noted = push_state.read_pending(state_fd)
    finally:
        if state_fd is not None:
            os.close(state_fd)
    return push_state.outstanding(noted, push_state.process_started_at(pid_file, program))


def _swap(target: Target, dirs: _Dirs, state_fd: int, writes: t.Mapping[str, bytes],
          removes: t.Sequence[str], noted: dict[str, t.Any]) -> None:
    def note() -> None:
        noted.update(push_state.note_pending(state_fd, target.restart, target.reload, sorted(set(writes) | set(removes))))
    swap(dirs.config_fd, writes, removes, prepare=target.prepare, before_first_rename=note, where=target.config_dir,
         dir_of=dirs.of)


def install(target: Target, new: t.Mapping[str, bytes], changed: t.Sequence[str], keep: int,
            warn: t.Callable[[str], t.Any]) -> dict[str, t.Any]:
    """Back up every file of ``new`` as it is now, then swap in the ``changed`` ones. Returns ``backup`` (its
    path), ``backups_removed`` (beyond ``keep``), ``backups_imported`` and ``pending``. Raises SwapError,
    push_state.BackupError or OSError with nothing changed (or, SwapError.restored False, saying what is not)."""
    dirs = _Dirs(target)
    state_fd = push_state.open_state_dir(target.state_dir)
    try:
        imported, skipped = push_state.import_old_backups(dirs.config_fd, target.config_dir, state_fd, target.managed)
        for reason in skipped:
            warn("a backup of an older release was not taken over: %s" % reason)
        # Read again under the lock: the backup keeps exactly what is replaced.
        previous = {name: read_file(dirs.of(name), name) for name in new}
        kept = {name: data for name, data in previous.items() if data is not None}
        writes = {name: new[name] for name in changed}
        problem = (space_problem(dirs.config_fd, [len(data) for data in writes.values()], target.config_dir)
                   or push_state.backup_space_problem(state_fd, kept, target.state_dir))
        if problem:
            raise SwapError(problem + "; nothing was changed", True)
        stamp = push_state.new_stamp()
        push_state.write_backup(state_fd, stamp, kept, sorted(name for name in new if previous[name] is None))
        noted: dict[str, t.Any] = {}
        _swap(target, dirs, state_fd, writes, (), noted)
        return {"backup": os.path.join(target.state_dir, push_state.BACKUPS, stamp), "pending": noted,
                "backups_removed": push_state.prune(state_fd, keep, stamp), "backups_imported": imported}
    finally:
        dirs.close()
        os.close(state_fd)


def restore(target: Target, writes: t.Mapping[str, bytes], removes: t.Sequence[str]) -> dict[str, t.Any]:
    """Put ``writes`` back and remove ``removes`` (a backup's files and absent names, already checked) all at
    once; returns what is pending now."""
    dirs = _Dirs(target)
    state_fd = push_state.open_state_dir(target.state_dir)
    try:
        noted: dict[str, t.Any] = {}
        _swap(target, dirs, state_fd, writes, removes, noted)
        return noted
    finally:
        dirs.close()
        os.close(state_fd)
