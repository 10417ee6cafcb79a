# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a read-only step as the SBC's own user instead of root.

The read-back, the probe's SBC view and the migration's peer-state poll read files another user can change
and talk to sockets in a directory that user controls. Run as root, any mistake there is root's; run as the
user the SBC already runs as, they can see and do nothing the SBC could not. Ansible's ``become_user`` to an
unprivileged account needs ACL tools on the host (Debian has none by default), so the module drops inside:
a forked child takes the account's uid, gid and groups, does the work and hands back JSON through a pipe
(never pickle: the parent stays root and must not run what the child sends).
"""

from __future__ import annotations

import json
import os
import pwd
import select
import time
import typing as t

RESULT_LIMIT_BYTES = 64 << 20
T = t.TypeVar("T")


class RunAsError(RuntimeError):
    """The step could not run as the user, or it failed there; ``kind`` names the exception it raised."""

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


def needs_drop(user: t.Optional[str]) -> bool:
    """True when this process is root and ``user`` names another account."""
    return os.geteuid() == 0 and bool(user) and user not in ("root", "0")


def run_as(user: t.Optional[str], func: t.Callable[[], T], timeout_s: float = 120.0) -> T:
    """``func()`` as ``user`` (uid, primary gid and supplementary groups) when this process is root, else here.

    ``func`` must return JSON-serialisable data; an exception in the child comes back as RunAsError naming it.
    """
    if not needs_drop(user):
        return func()
    try:
        account = pwd.getpwnam(str(user))
    except KeyError:
        raise RunAsError("no user %r on this host to read as (the SBC's run_as_user)" % user, "KeyError") from None
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its result is what the tests check
        os.close(read_fd)
        try:
            os.setgroups(os.getgrouplist(account.pw_name, account.pw_gid))
            os.setgid(account.pw_gid)
            os.setuid(account.pw_uid)
            outcome: dict[str, t.Any] = {"result": func()}
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            outcome = {"error": str(exc), "kind": type(exc).__name__}
        try:
            data = json.dumps(outcome).encode()
        except (TypeError, ValueError) as exc:
            data = json.dumps({"error": "not JSON: %s" % exc, "kind": "TypeError"}).encode()
        while data:
            data = data[os.write(write_fd, data):]
        os._exit(0)
    os.close(write_fd)
    try:
        data = _read_all(read_fd, timeout_s)
    finally:
        os.close(read_fd)
        _reap(pid)
    try:
        outcome = json.loads(data.decode())
    except ValueError:
        raise RunAsError("the step run as %s returned nothing usable" % user) from None
    if "error" in outcome:
        raise RunAsError(str(outcome["error"]), str(outcome.get("kind", "")))
    return t.cast(T, outcome["result"])


def _read_all(fd: int, timeout_s: float) -> bytes:
    deadline = time.monotonic() + timeout_s
    chunks = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RunAsError("the step run as another user did not finish within %.0f s" % timeout_s)
        ready, _w, _x = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > RESULT_LIMIT_BYTES:
            raise RunAsError("the step run as another user returned more than %d bytes" % RESULT_LIMIT_BYTES)
        chunks.append(chunk)


def _reap(pid: int) -> None:
    for _attempt in range(50):
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        time.sleep(0.02)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
