# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a Kamailio SBC host still is exactly as the role's last complete push left it (issue 25 item 2).

A re-run of the role that changes nothing used to redo every step over SSH: the start test's comparison,
the refresher's ~20 tasks, the accounts, the units. After a push that ended well, the role records two
digests in the SBC's push state directory (root's, ``host.lease.state_dir_for``): ``input``, the digest of
everything the controller gave the push (rendered files, role variables, the collection's code; computed on
the controller), and ``host``, one digest per managed path on the host (content and owner/mode, see
``fingerprint``). The next run reads them in the same round trip that reads the Kamailio version and the
deployed address.list for the render: when the controller's input digest is the recorded one, every managed
path is as recorded and the services run (``readiness``), the push has nothing to do and is skipped.
Anything else, a hand edit, a changed mode, a user added to a group, a stopped timer, a push left pending,
another run's lease, means the full push runs as before, which finds and repairs (or, in check mode,
reports) it. The record only ever shortens a run whose outcome would be "no change".

Reading is done as root on paths some of which another user controls (``peers/`` is the refresher's): no
symlink is followed (its target is recorded instead), no FIFO waited on, files are read through their
descriptor and bounded in size, the walk is bounded in entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.host.push_state import open_state_dir
from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import read_file, replace_file

RECORD = "converged.json"
RECORD_VERSION = 1
MAX_ENTRIES = 5000
MAX_FILE_BYTES = 64 << 20
# Entries the push does not manage that appear on their own in a managed tree: Python's byte-code caches next to
# the refresher's libraries (written when root runs the refresher by hand, say); they follow the sources.
DERIVED = frozenset({"__pycache__"})
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class FingerprintError(ValueError):
    """The walk went past its bounds; the caller treats the host as changed."""


def _meta(info: os.stat_result) -> str:
    kind = ("dir" if stat.S_ISDIR(info.st_mode) else "file" if stat.S_ISREG(info.st_mode)
            else "link" if stat.S_ISLNK(info.st_mode) else "other")
    return "%s %o %d:%d" % (kind, stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid)


def _content_digest(parent: int, name: str) -> str:
    """sha256 of a regular file opened without following a link or waiting on a FIFO; what it is instead when it
    cannot be read or is no regular file."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
    except OSError:
        return "unreadable"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > MAX_FILE_BYTES:
            raise FingerprintError("%s is larger than %d bytes" % (name, MAX_FILE_BYTES))
        digest = hashlib.sha256()
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return digest.hexdigest()
            digest.update(chunk)
    finally:
        os.close(fd)


class _Walk:
    """One fingerprint: path -> its entry, bounded in entries."""

    def __init__(self) -> None:
        self.entries: dict[str, str] = {}

    def add(self, path: str, entry: str) -> None:
        if len(self.entries) >= MAX_ENTRIES:
            raise FingerprintError("more than %d paths to fingerprint" % MAX_ENTRIES)
        self.entries[path] = entry

    def one(self, parent: int, name: str, path: str, content: bool, recurse: bool, children: bool) -> None:
        """Record ``name`` in directory ``parent``: owner and mode always; a file's content with ``content``;
        a directory's entries with ``children`` (files with their content, directories as owner and mode only)
        or its whole tree with ``recurse``."""
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            self.add(path, "absent")
            return
        except OSError as exc:
            self.add(path, "unreadable %s" % exc.errno)
            return
        entry = _meta(info)
        if stat.S_ISLNK(info.st_mode):
            entry += " -> " + os.readlink(name, dir_fd=parent)
        elif stat.S_ISREG(info.st_mode) and content:
            entry += " " + _content_digest(parent, name)
        self.add(path, entry)
        if stat.S_ISDIR(info.st_mode) and (recurse or children):
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except OSError as exc:  # replaced by a link since the stat, or unreadable
                self.add(path + "/", "unreadable %s" % exc.errno)
                return
            try:
                for child in sorted(os.listdir(fd)):
                    if child in DERIVED:
                        continue
                    self.one(fd, child, path.rstrip("/") + "/" + child, content, recurse, False)
            finally:
                os.close(fd)


def _split(path: str) -> tuple[str, str]:
    path = os.path.normpath(path)
    return os.path.dirname(path) or "/", os.path.basename(path) or "/"


def fingerprint(content: t.Iterable[str] = (), meta: t.Iterable[str] = (), listed: t.Iterable[str] = ()
                ) -> dict[str, str]:
    """Path -> entry for every path given and below: ``content`` paths with their content (a directory with its
    whole tree), ``meta`` paths by owner and mode only (a log, a directory whose other entries change on their
    own), ``listed`` directories with their direct entries (files with content, sub-directories by owner and
    mode). A missing path is ``absent``. Raises FingerprintError past MAX_ENTRIES or MAX_FILE_BYTES."""
    walk = _Walk()
    for paths, has_content, recurse, children in ((content, True, True, False), (meta, False, False, False),
                                                  (listed, True, False, True)):
        for path in paths:
            parent_path, name = _split(path)
            try:
                parent = os.open(parent_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except FileNotFoundError:
                walk.add(os.path.normpath(path), "absent")
                continue
            try:
                walk.one(parent, name, os.path.normpath(path), has_content, recurse, children)
            finally:
                os.close(parent)
    return walk.entries


def differences(recorded: t.Mapping[str, str], now: t.Mapping[str, str]) -> list[str]:
    """The paths whose entry is not the recorded one (new, gone or changed), sorted."""
    return sorted(path for path in set(recorded) | set(now) if recorded.get(path) != now.get(path))


def read_record(state_dir: str) -> t.Optional[dict[str, t.Any]]:
    """The record of the last complete push (``input`` digest, ``host`` path entries), or None."""
    state_fd = open_state_dir(state_dir, create=False)
    if state_fd is None:
        return None
    try:
        data = read_file(state_fd, RECORD)
    finally:
        os.close(state_fd)
    try:
        record = json.loads(data.decode("utf-8")) if data else None
    except ValueError:
        return None
    if (not isinstance(record, dict) or record.get("version") != RECORD_VERSION
            or not isinstance(record.get("input"), str) or not isinstance(record.get("host"), dict)):
        return None
    return record


def write_record(state_dir: str, input_digest: str, host: t.Mapping[str, str]) -> None:
    """Replace the record atomically (root's directory, 0600, fsynced)."""
    state_fd = open_state_dir(state_dir)
    if state_fd is None:  # open_root_directory creates it
        raise OSError("no push state directory %s" % state_dir)
    try:
        record = {"version": RECORD_VERSION, "input": input_digest, "host": dict(host), "recorded": time.time()}
        replace_file(state_fd, RECORD, (json.dumps(record, sort_keys=True) + "\n").encode())
        os.fsync(state_fd)
    finally:
        os.close(state_fd)


def verdict(record: t.Optional[t.Mapping[str, t.Any]], host: t.Mapping[str, str], not_ready: t.Sequence[str]
            ) -> dict[str, t.Any]:
    """What the read tells the role: ``recorded_input`` (the input digest to compare with the controller's, None
    without a usable record) and ``reasons`` why the push must run whatever the input (empty: it may be
    skipped if the input is the recorded one)."""
    if record is None:
        return {"recorded_input": None, "reasons": ["no record of a complete push"] + list(not_ready)}
    changed = differences(record["host"], host)
    reasons = ["%s changed since the last push" % path for path in changed[:20]]
    if len(changed) > 20:
        reasons.append("and %d other paths" % (len(changed) - 20))
    return {"recorded_input": record["input"], "reasons": reasons + list(not_ready)}
