# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 13 item 5, issue 21 items 3 and 4: another local user can neither answer for Kamailio nor reach the
client's reply path, and Kamailio's own user cannot turn the root client's reply path into a root file.

A real Kamailio (as user ``kamailio`` from its first instruction where that account exists, in a network
namespace of its own so it binds nothing on the machine) answers over its jsonrpcs datagram socket and FIFO.
The clients run in that namespace too (abstract reply addresses are per network namespace).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pwd
import signal
import stat
import subprocess
import sys
import threading
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (
    JsonRpc, RpcEndpoints, RpcError, rpc_endpoints)
from tests.harness.kamailio import process_tree
from tests.harness.tools import needs

CFG = """#!KAMAILIO
debug=2
log_stderror=yes
children=1
listen=udp:127.0.0.1:5060
loadmodule "jsonrpcs.so"
loadmodule "sl.so"
modparam("jsonrpcs", "fifo_name", "{run}/kamailio_rpc.fifo")
modparam("jsonrpcs", "dgram_socket", "{run}/kamailio_rpc.sock")
modparam("jsonrpcs", "fifo_reply_dir", "{replies}/")
{extra}
request_route {{ sl_send_reply("404", "nothing here"); }}
"""


def _account() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam("kamailio")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 0, 0


NOBODY = 65534


def _start(tmp_path: Path, replies_in_run: bool = False) -> t.Iterator[t.Any]:
    """Kamailio as user kamailio (Debian's unit) in a network namespace this test process enters."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespace, Kamailio as its own user)")
    uid, gid = _account()
    os.chmod(tmp_path, 0o755)
    run, replies = tmp_path / "run", tmp_path / "replies"
    run.mkdir(mode=0o770)
    replies.mkdir()
    os.chmod(replies, 0o1777)  # the shape of /tmp, jsonrpcs' default reply dir
    os.chown(run, uid, gid)    # Debian: /run/kamailio is kamailio:kamailio 0770
    cfg = tmp_path / "kamailio.cfg"
    cfg.write_text(CFG.format(run=run, replies=run if replies_in_run else replies, extra=""))
    log = open(tmp_path / "kamailio.log", "wb")  # pylint: disable=consider-using-with
    # As Debian's unit runs it (User=kamailio from the first instruction): its socket is kamailio's, 0660.
    # The net namespace stays open (a sleeping holder) so that this process can join it (setns).
    holder = subprocess.Popen(["unshare", "--net", "sh", "-c", "ip link set lo up && exec sleep 600"],
                              stdin=subprocess.DEVNULL, start_new_session=True)
    netns = "/proc/%d/ns/net" % holder.pid
    _wait_for(lambda: "yes" if os.readlink(netns) != os.readlink("/proc/self/ns/net") else None)
    proc = subprocess.Popen(["nsenter", "--net=" + netns, "setpriv", "--reuid=%d" % uid, "--regid=%d" % gid,
                             "--init-groups", "kamailio", "-f", str(cfg), "-DD", "-E", "-w", str(tmp_path),
                             "-m", "32", "-M", "4"],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    endpoints = RpcEndpoints(str(run / "kamailio_rpc.sock"), str(run / "kamailio_rpc.fifo"),
                             str(run if replies_in_run else replies))
    own_netns = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        _setns(netns)
        deadline = time.monotonic() + 15
        while True:
            try:
                JsonRpc(endpoints, timeout_s=1).call("core.version")
                break
            except RpcError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError((tmp_path / "kamailio.log").read_text(errors="replace"))
                time.sleep(0.2)
        yield type("K", (), {"proc": proc, "run": run, "replies": replies, "endpoints": endpoints,
                             "uid": uid, "gid": gid, "netns": netns, "tmp": tmp_path})
    finally:
        _setns_fd(own_netns)
        os.close(own_netns)
        for child in (proc, holder):
            try:
                os.killpg(child.pid, signal.SIGTERM)
                child.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(child.pid, signal.SIGKILL)
                child.wait(timeout=10)
        log.close()


def _setns_fd(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns")


def _setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        _setns_fd(fd)
    finally:
        os.close(fd)


@pytest.fixture(name="kamailio")
def fixture_kamailio(tmp_path: Path) -> t.Iterator[t.Any]:
    yield from _start(tmp_path)


@pytest.fixture(name="kamailio_fifo_in_run")
def fixture_kamailio_fifo_in_run(tmp_path: Path) -> t.Iterator[t.Any]:
    """The FIFO's replies go to the run dir (fifo_reply_dir), a directory Kamailio's user controls."""
    yield from _start(tmp_path, replies_in_run=True)


def _wait_for(predicate: t.Callable[[], t.Optional[str]], timeout_s: float = 5.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.005)
    raise AssertionError("not seen within %.1f s" % timeout_s)


def _owner(path: Path) -> t.Optional[int]:
    try:
        return os.stat(path).st_uid
    except FileNotFoundError:
        return None


def _abstract_reply() -> t.Optional[str]:
    """The client's abstract reply address (``/proc/net/unix`` of this network namespace), as sendto takes it."""
    with open("/proc/self/net/unix", encoding="utf-8", errors="replace") as handle:
        for line in handle.read().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[7].startswith("@commsgw-rpc-"):
                return "\0" + fields[7][1:]
    return None


def _as_nobody(code: str, *args: str, groups: t.Sequence[int] = ()) -> subprocess.CompletedProcess[str]:
    """Python ``code`` as uid/gid 65534 (with ``groups``), in this test's network namespace."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p and os.path.isdir(p)))
    group_arg = "--groups=" + ",".join(map(str, groups)) if groups else "--clear-groups"
    return subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, group_arg, sys.executable,
                           "-c", code, *args], capture_output=True, text=True, timeout=60, check=False, env=env,
                          cwd="/")


@contextlib.contextmanager
def _frozen(kamailio: t.Any) -> t.Iterator[None]:
    """Kamailio's processes stopped (SIGSTOP) for the block: its reply can only come after the block."""
    pids = process_tree(kamailio.proc.pid)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def _call_in_thread(endpoints: RpcEndpoints, outcome: dict[str, t.Any], timeout_s: float = 5.0) -> threading.Thread:
    def run() -> None:
        try:
            outcome["result"] = JsonRpc(endpoints, timeout_s=timeout_s).call("core.version")
        except RpcError as exc:
            outcome["error"] = str(exc)
    thread = threading.Thread(target=run)
    thread.start()
    return thread


# Abstract addresses travel as "@name" (argv cannot hold a NUL byte).
FORGE = ("import json, socket, sys; a = lambda n: '\\0' + n[1:] if n.startswith('@') else n; "
         "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(a(sys.argv[2])); "
         "s.sendto(json.dumps({'jsonrpc': '2.0', 'id': 1, 'result': 'forged 9.9.9'}).encode(), a(sys.argv[1]))")


@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_forged_datagram_reply_is_ignored_and_kamailios_own_is_taken(kamailio: t.Any) -> None:
    """Kamailio is frozen; a forger (another user) answers first; the client keeps Kamailio's reply."""
    outcome: dict[str, t.Any] = {}
    with _frozen(kamailio):
        thread = _call_in_thread(kamailio.endpoints, outcome)
        target = _wait_for(_abstract_reply)
        forged = _as_nobody(FORGE, "@" + target[1:], "@commsgw-forger")
        assert forged.returncode == 0, forged.stderr  # the abstract address takes anyone's datagram...
        time.sleep(0.3)
    thread.join(timeout=10)
    assert "error" not in outcome, outcome  # ...and the client ignores it
    assert outcome["result"].startswith("kamailio ") and "forged" not in outcome["result"]


@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_only_forged_replies_end_in_a_clear_timeout(kamailio: t.Any) -> None:
    outcome: dict[str, t.Any] = {}
    with _frozen(kamailio):
        thread = _call_in_thread(RpcEndpoints(kamailio.endpoints.socket, None), outcome, timeout_s=1.0)
        target = _wait_for(_abstract_reply)
        assert _as_nobody(FORGE, "@" + target[1:], "@commsgw-forger").returncode == 0
        thread.join(timeout=10)
    assert "result" not in outcome, outcome
    assert "no reply from Kamailio's socket within 1.0 s" in outcome["error"]
    assert "ignored 1 reply(ies) from other senders" in outcome["error"]


@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_a_socket_the_live_cfg_names_elsewhere_is_not_asked_and_its_owner_not_trusted(kamailio: t.Any) -> None:
    """Issue 21 item 4: whoever could rewrite kamailio.cfg pointed dgram_socket at a socket of its own, in a
    directory of its own, and its answers were taken (the old client trusted the owner of the socket's
    directory). The endpoint is pinned to the configured run dir, the answer's uid to the configured user."""
    evil_dir = kamailio.tmp / "evil"
    evil_dir.mkdir()
    os.chown(evil_dir, NOBODY, NOBODY)
    evil = str(evil_dir / "kamailio_rpc.sock")
    cfg = 'loadmodule "jsonrpcs.so"\nmodparam("jsonrpcs", "dgram_socket", "%s")\n' % evil
    # A client pointed at the forger's socket anyway (as a spec or an option could): the answer is refused.
    answer = ("import json, os, socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); "
              "s.settimeout(10); d, a = s.recvfrom(65536); "
              "s.sendto(json.dumps({'jsonrpc': '2.0', 'id': json.loads(d)['id'], 'result': 'forged 9.9.9'}).encode(), a)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p and os.path.isdir(p)))
    forger = subprocess.Popen(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
                               sys.executable, "-c", answer, evil], env=env, cwd="/",
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: "bound" if os.path.exists(evil) else None)
        with pytest.raises(RpcError, match=r"ignored 1 reply\(ies\) from other senders: .*uid %d" % NOBODY):
            JsonRpc(RpcEndpoints(evil, None), timeout_s=1.5).call("core.version")
    finally:
        forger.wait(timeout=15)
    assert rpc_endpoints(cfg, str(kamailio.run)).socket == str(kamailio.run / "kamailio_rpc.sock")


@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_datagram_reply_address_is_abstract_no_file_anywhere(kamailio: t.Any) -> None:
    """No reply socket or directory in the run dir (Kamailio's user's) or in any other directory."""
    outcome: dict[str, t.Any] = {}
    before = sorted(os.listdir(kamailio.run))
    with _frozen(kamailio):
        thread = _call_in_thread(kamailio.endpoints, outcome)
        address = _wait_for(_abstract_reply)
        during = sorted(os.listdir(kamailio.run))
    thread.join(timeout=10)
    assert outcome.get("result", "").startswith("kamailio "), outcome
    assert address.startswith("\0commsgw-rpc-") and during == before


@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_reply_fifo_is_private_to_kamailio(kamailio: t.Any) -> None:
    """The FIFO reply (in the shared reply dir, Kamailio refuses a sub-directory) is 0600, Kamailio's own."""
    outcome: dict[str, t.Any] = {}
    with _frozen(kamailio):
        thread = _call_in_thread(RpcEndpoints(None, kamailio.endpoints.fifo, str(kamailio.replies)), outcome)
        # The client makes the FIFO, then hands it to Kamailio (fchown): wait for the hand-over, not the name,
        # or the stat can land between the two. A FIFO never handed over fails the wait.
        name = _wait_for(lambda: next((n for n in os.listdir(kamailio.replies) if n.startswith("commsgw_rpc_reply_")
                                       and _owner(kamailio.replies / n) == kamailio.uid), None))
        info = os.stat(kamailio.replies / name)
    thread.join(timeout=10)
    assert outcome.get("result", "").startswith("kamailio "), outcome
    assert stat.S_ISFIFO(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == kamailio.uid
    assert os.listdir(kamailio.replies) == []


@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_socket_named_through_a_symlinked_directory_still_gets_its_reply(kamailio: t.Any, tmp_path: Path) -> None:
    """/var/run -> /run: the endpoint's spelling differs from the path Kamailio bound; same socket, accepted."""
    alias = tmp_path / "var-run"
    alias.symlink_to(kamailio.run)
    rpc = JsonRpc(RpcEndpoints(str(alias / "kamailio_rpc.sock"), None), timeout_s=3)
    assert str(rpc.call("core.version")).startswith("kamailio ")


@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_a_user_who_may_write_to_the_socket_gets_its_answer(kamailio: t.Any) -> None:
    """The refresher's shape: its own user, allowed to send to Kamailio's socket (here through the socket's
    group), nothing else of Kamailio's; the abstract reply address needs no grant, end to end."""
    if kamailio.uid == 0:
        pytest.skip("needs a kamailio account")
    code = ("import json, sys; from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import "
            "JsonRpc, RpcEndpoints; print(json.dumps(JsonRpc(RpcEndpoints(sys.argv[1], None), 3).call('core.version')))")
    proc = _as_nobody(code, str(kamailio.endpoints.socket), groups=[kamailio.gid])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout).startswith("kamailio ")


# --- issue 21 item 3: Kamailio's user races the root client

RACE_CALLS = 1500
RACE_LIMIT_S = 90.0
# As Kamailio's user: whatever reply path the root client makes in the run dir (its own directory), swap the
# socket or FIFO for a symlink to the victim, as fast as it can, until told to stop.
ATTACKER = r"""
import os, sys
run, victim, stop = sys.argv[1:4]
swaps = 0
while not os.path.exists(stop):
    for entry in os.listdir(run):
        path = os.path.join(run, entry)
        targets = []
        if entry.startswith("commsgw-rpc-"):
            targets = [os.path.join(path, name) for name in ("c.sock",)]
        elif entry.startswith("commsgw_rpc_reply_"):
            targets = [path]
        for target in targets:
            try:
                os.rename(target, target + "-moved")
                os.symlink(victim, target)
                swaps += 1
            except OSError:
                pass
print(swaps)
"""


def _race(kamailio: t.Any, endpoints: RpcEndpoints) -> tuple[int, int, str]:
    """RACE_CALLS root calls against the attacker; (calls made, calls answered, attacker's swap count)."""
    victim = kamailio.tmp / "victim"
    victim.write_text("root's\n")
    os.chmod(victim, 0o600)
    stop = kamailio.tmp / "stop"
    attacker = subprocess.Popen(["setpriv", "--reuid=%d" % kamailio.uid, "--regid=%d" % kamailio.gid,
                                 "--init-groups", sys.executable, "-c", ATTACKER, str(kamailio.run), str(victim),
                                 str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    calls = answered = 0
    rpc = JsonRpc(endpoints, timeout_s=1.0)
    deadline = time.monotonic() + RACE_LIMIT_S
    try:
        while calls < RACE_CALLS and time.monotonic() < deadline:
            calls += 1
            try:
                rpc.call("core.version")
                answered += 1
            except RpcError:
                pass
            info = os.lstat(victim)
            assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o600), \
                "call %d: the victim became %d:%d %04o" % (calls, info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
    finally:
        stop.write_text("")
        out, _err = attacker.communicate(timeout=30)
    return calls, answered, out.strip()


@pytest.mark.skipif(_account()[0] == 0, reason="needs a kamailio account")
@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_kamailios_user_racing_the_root_socket_client_takes_no_root_file(kamailio: t.Any) -> None:
    calls, answered, _swaps = _race(kamailio, RpcEndpoints(kamailio.endpoints.socket, None))
    assert calls >= 100 and answered == calls


@pytest.mark.skipif(_account()[0] == 0, reason="needs a kamailio account")
@needs("kamailio", "unshare", "setpriv", "nsenter")
def test_root_fifo_client_hands_its_reply_fifo_over_by_fd_only(kamailio_fifo_in_run: t.Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The FIFO's reply lands in the run dir here (fifo_reply_dir), a directory Kamailio's user controls: the
    window between mkfifo and a chown by path is too short to race reliably in a test, so the rule itself is
    checked: no chown or chmod by path there (only fchown/fchmod on the FIFO it opened with O_NOFOLLOW)."""
    kamailio = kamailio_fifo_in_run
    by_path: list[str] = []
    for name in ("chown", "chmod", "lchown"):
        real = getattr(os, name)

        def record(path: t.Any, *args: t.Any, _real: t.Any = real, _name: str = name, **kwargs: t.Any) -> t.Any:
            if isinstance(path, (str, bytes, os.PathLike)) and kwargs.get("dir_fd") is None:
                by_path.append("%s(%s)" % (_name, os.fsdecode(path)))
            return _real(path, *args, **kwargs)
        monkeypatch.setattr(os, name, record)
    result = JsonRpc(RpcEndpoints(None, kamailio.endpoints.fifo, str(kamailio.run)), timeout_s=3).call("core.version")
    assert str(result).startswith("kamailio ")
    assert by_path == []
