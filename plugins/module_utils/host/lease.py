# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One change at a time per SBC: the push lease and lock, shared by pushes, rollbacks and the SRV refresher.

A push is several Ansible tasks, each its own process on the SBC, so a lock held by one process cannot
span it. The role takes a *lease* when its push starts and gives it back at its end or rescue: the file
``<state dir>.lease`` (next to the SBC's push state, see ``state_dir_for``) holds ``run_id``, ``controller``,
``host``, ``pid``, ``taken``, ``expires`` and ``ttl_s`` as JSON; empty, or past ``expires``, means free.
Every step of the push (the push modules of a host platform) checks that the lease is its run's (or free)
and renews it, and does its file operations under ``flock(LOCK_EX)`` of the same file. The SRV refresher
holds ``LOCK_SH`` on it for its whole run and skips the run while a lease is active, so it never rewrites
the peer list from a spec a push is replacing.

Who may do what: the lease's directory (``/var/lib/commsgw-routing``) is root's, 0755, and the file root's,
0640 with the refresher's group. The refresher may open it read-only, read it and lock it; it can neither
write it nor put a name there that root would follow. Root reaches it through a descriptor of a directory
checked by ``safe_files.open_root_directory``. Standard library only: shipped to SBC hosts with the refresher.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import socket
import stat
import time
import typing as t

try:  # the collection's path first, then a plain import next to the installed refresher
    from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import (  # type: ignore
        UnsafePathError, open_root_directory)
except ImportError:  # pragma: no cover - on the SBC host
    from core.safe_files import UnsafePathError, open_root_directory  # type: ignore

LOG = logging.getLogger("commsgw-srv-refresh")
STATE_BASE = "/var/lib/commsgw-routing"
DEFAULT_TTL_S = 600.0
# How long a step waits for the lock itself (a refresher run, another step's file operation).
LOCK_WAIT_S = 60.0

Lease = t.Dict[str, t.Any]


class LeaseBusy(RuntimeError):
    """Another run holds the SBC's lease, or its lock stayed taken; the message names it."""


def _escape(path: str) -> str:
    """``/etc/sbc`` -> ``etc-sbc`` (as systemd-escape --path): one directory name per path."""
    trimmed = os.path.normpath(path).strip("/")
    out = []
    for index, char in enumerate(trimmed):
        if char == "/":
            out.append("-")
        elif char.isascii() and (char.isalnum() or char in "_:" or (char == "." and index > 0)):
            out.append(char)
        else:
            out.extend("\\x%02x" % byte for byte in char.encode("utf-8", "surrogateescape"))
    return "".join(out) or "-"


def state_dir_for(config_dir: str, base: str = STATE_BASE) -> str:
    """The push state directory of the SBC whose configuration lives in ``config_dir``."""
    return os.path.join(base, _escape(config_dir))


def lease_path(state_dir: str) -> str:
    return os.path.normpath(state_dir) + ".lease"


# --- root's side


def open_lease(state_dir: str, group: t.Optional[int] = None) -> int:
    """The lease file of ``state_dir`` opened read-write (created 0640 when missing); ``group``: its group."""
    path = lease_path(state_dir)
    parent = open_root_directory(os.path.dirname(path), "push lease directory", mode=0o755)
    try:
        fd = os.open(os.path.basename(path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o640,
                     dir_fd=parent)
    except OSError as exc:
        raise UnsafePathError("push lease %s cannot be opened (%s): expected root's regular file" % (path, exc))
    finally:
        os.close(parent)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid not in (0, os.geteuid()):
        os.close(fd)
        raise UnsafePathError("push lease %s is not root's regular file" % path)
    if group is not None and info.st_gid != group:
        os.fchown(fd, -1, group)
    if stat.S_IMODE(info.st_mode) != 0o640:
        os.fchmod(fd, 0o640)
    return fd


def _flock(fd: int, operation: int, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)


def read_lease(fd: int) -> t.Optional[Lease]:
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    try:
        lease = json.loads(data.decode("utf-8")) if data.strip() else None
    except ValueError:
        return None
    return lease if isinstance(lease, dict) else None


def _write_lease(fd: int, lease: t.Optional[Lease]) -> None:
    data = (json.dumps(lease, sort_keys=True) + "\n").encode() if lease else b""
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
    os.fsync(fd)


def active(lease: t.Optional[Lease], now: float) -> bool:
    try:
        return bool(lease and lease.get("run_id") and float(lease.get("expires") or 0) > now)
    except (TypeError, ValueError):
        return False


def _when(seconds: t.Any) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(seconds)))
    except (TypeError, ValueError, OverflowError):
        return "?"


def describe(lease: Lease) -> str:
    return "run %s (controller %s, pid %s on %s), taken %s, expires %s" % (
        lease.get("run_id"), lease.get("controller") or "?", lease.get("pid"), lease.get("host") or "?",
        _when(lease.get("taken")), _when(lease.get("expires")))


def _new_lease(run_id: str, ttl_s: float, controller: str, now: float) -> Lease:
    return {"run_id": run_id, "controller": controller, "host": socket.gethostname(), "pid": os.getpid(),
            "taken": now, "expires": now + ttl_s, "ttl_s": ttl_s}


@contextlib.contextmanager
def locked(state_dir: str, group: t.Optional[int] = None, wait_s: float = LOCK_WAIT_S) -> t.Iterator[int]:
    """The lease file, under LOCK_EX for the duration (LeaseBusy after ``wait_s``)."""
    fd = open_lease(state_dir, group)
    try:
        if not _flock(fd, fcntl.LOCK_EX, wait_s):
            raise LeaseBusy("the push lock %s stayed taken for %.0f s (a refresher run or another push step "
                            "holds it)" % (lease_path(state_dir), wait_s))
        yield fd
    finally:
        os.close(fd)


def acquire(state_dir: str, run_id: str, ttl_s: float = DEFAULT_TTL_S, wait_s: float = 0.0, controller: str = "",
            group: t.Optional[int] = None, clock: t.Callable[[], float] = time.time) -> tuple[Lease, bool]:
    """Take the lease for ``run_id`` (waiting up to ``wait_s`` for another run's); (lease, renewed) where
    ``renewed`` says the run already held it. Raises LeaseBusy naming the holder."""
    deadline = time.monotonic() + wait_s
    while True:
        with locked(state_dir, group) as fd:
            current, now = read_lease(fd), clock()
            if not active(current, now) or current.get("run_id") == run_id:  # type: ignore[union-attr]
                renewed = active(current, now)
                lease = dict(current, expires=now + ttl_s, ttl_s=ttl_s) if renewed else _new_lease(
                    run_id, ttl_s, controller, now)
                _write_lease(fd, lease)
                return lease, renewed
        if time.monotonic() >= deadline:
            raise LeaseBusy("another push holds this SBC: %s; wait for it to finish (or for its lease to expire)"
                            % describe(current))  # type: ignore[arg-type]
        time.sleep(1.0)


def release(state_dir: str, run_id: str) -> bool:
    """Give the lease back if ``run_id`` holds it; True when it did."""
    with locked(state_dir) as fd:
        current = read_lease(fd)
        if current and current.get("run_id") == run_id:
            _write_lease(fd, None)
            return True
    return False


@contextlib.contextmanager
def push_step(state_dir: str, run_id: t.Optional[str], what: str,
              clock: t.Callable[[], float] = time.time) -> t.Iterator[t.Optional[Lease]]:
    """One step of a push (a file swap, a restart): under LOCK_EX, refused while another run's lease is
    active; with ``run_id`` the run's lease is renewed (or taken again after it expired)."""
    with locked(state_dir) as fd:
        current, now = read_lease(fd), clock()
        if active(current, now) and current.get("run_id") != run_id:  # type: ignore[union-attr]
            raise LeaseBusy("%s refused: another push holds this SBC: %s" % (what, describe(current)))  # type: ignore
        lease = None
        if run_id:
            ttl_s = float((current or {}).get("ttl_s") or DEFAULT_TTL_S)
            lease = dict(current, expires=now + ttl_s) if active(current, now) else _new_lease(run_id, ttl_s, "", now)
            _write_lease(fd, lease)
        yield lease


# --- the refresher's side


@contextlib.contextmanager
def refresher_turn(config_dir: str, wait_s: float = 30.0) -> t.Iterator[t.Optional[str]]:
    """Yields None when the refresher may run now (holding LOCK_SH until the block ends), else why it skips.

    Opens the lease read-only without following a symlink; a missing lease means no push of this release
    ever ran here, so there is nothing to wait for.
    """
    path = lease_path(state_dir_for(config_dir))
    fd, reason = -1, None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        pass
    except OSError as exc:
        reason = "cannot read the push lease %s (%s)" % (path, exc.strerror)
    try:
        if fd >= 0 and not _flock(fd, fcntl.LOCK_SH, wait_s):
            reason = "the push lock %s stayed taken for %.0f s" % (path, wait_s)
        elif fd >= 0:
            lease = read_lease(fd)
            if active(lease, time.time()):
                reason = "a push holds this SBC: %s" % describe(lease)  # type: ignore[arg-type]
        yield reason
    finally:
        if fd >= 0:
            os.close(fd)


def unless_pushing(skipped: t.Callable[[str], t.Any]) -> t.Callable[[t.Callable[..., t.Any]], t.Callable[..., t.Any]]:
    """Decorates a refresher run ``run(spec, ...)``: it runs holding the push lock shared, or, while a push holds
    the SBC's lease, returns ``skipped(why)`` instead. A run that started before the push would otherwise
    rewrite the peer list from the spec the push is replacing."""
    def decorate(run: t.Callable[..., t.Any]) -> t.Callable[..., t.Any]:
        @functools.wraps(run)
        def guarded(spec: t.Mapping[str, t.Any], *args: t.Any, **kwargs: t.Any) -> t.Any:
            with refresher_turn(spec.get("config_dir") or os.path.dirname(spec["_path"])) as busy:
                if not busy:
                    return run(spec, *args, **kwargs)
            LOG.warning("run skipped: %s", busy)
            return skipped(busy)
        return guarded
    return decorate
