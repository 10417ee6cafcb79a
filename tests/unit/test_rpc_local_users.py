# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 13 item 5: another local user can neither answer for Kamailio nor reach the client's reply path.

A real Kamailio (as user ``kamailio`` from its first instruction where that account exists, in a network
namespace of its own so it binds nothing on the machine) answers over its jsonrpcs datagram socket and FIFO.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (
    JsonRpc, RpcEndpoints, RpcError)
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
request_route {{ sl_send_reply("404", "nothing here"); }}
"""


def _account() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam("kamailio")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 0, 0


@pytest.fixture(name="kamailio")
def fixture_kamailio(tmp_path: Path) -> t.Iterator[t.Any]:
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
    cfg.write_text(CFG.format(run=run, replies=replies))
    log = open(tmp_path / "kamailio.log", "wb")  # pylint: disable=consider-using-with
    # As Debian's unit runs it (User=kamailio from the first instruction): its socket is kamailio's, 0660.
    proc = subprocess.Popen(["unshare", "--net", "sh", "-c", "ip link set lo up && exec setpriv --reuid=%d --regid=%d "
                             "--init-groups kamailio -f %s -DD -E -w %s -m 32 -M 4" % (uid, gid, cfg, tmp_path)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    endpoints = RpcEndpoints(str(run / "kamailio_rpc.sock"), str(run / "kamailio_rpc.fifo"), str(replies))
    try:
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
                             "uid": uid, "gid": gid})
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def _wait_for(predicate: t.Callable[[], t.Optional[str]], timeout_s: float = 5.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.005)
    raise AssertionError("not seen within %.1f s" % timeout_s)


def _reply_socket(run: Path) -> t.Optional[str]:
    for entry in os.listdir(run):
        candidate = run / entry / "c.sock"
        if entry.startswith("commsgw-rpc-") and candidate.exists():
            return str(candidate)
    return None


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


@needs("kamailio", "unshare", "setpriv")
def test_forged_datagram_reply_is_ignored_and_kamailios_own_is_taken(kamailio: t.Any) -> None:
    """Kamailio is frozen; a forger answers first from a socket of its own; the client keeps Kamailio's reply."""
    outcome: dict[str, t.Any] = {}
    forger = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    with _frozen(kamailio), forger:
        thread = _call_in_thread(kamailio.endpoints, outcome)
        target = _wait_for(lambda: _reply_socket(kamailio.run))
        # Mode 0600 and a 0700 directory: only root (this test) can reach it; root stands for a forger
        # that got there, the sender check is what must refuse it.
        forger.sendto(json.dumps({"jsonrpc": "2.0", "id": 1, "result": "forged 9.9.9"}).encode(), target)
        time.sleep(0.3)
    thread.join(timeout=10)
    assert "error" not in outcome, outcome
    assert outcome["result"].startswith("kamailio ") and "forged" not in outcome["result"]


@needs("kamailio", "unshare", "setpriv")
def test_only_forged_replies_end_in_a_clear_timeout(kamailio: t.Any) -> None:
    outcome: dict[str, t.Any] = {}
    forger = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    with _frozen(kamailio), forger:
        thread = _call_in_thread(RpcEndpoints(kamailio.endpoints.socket, None), outcome, timeout_s=1.0)
        target = _wait_for(lambda: _reply_socket(kamailio.run))
        forger.sendto(json.dumps({"jsonrpc": "2.0", "id": 1, "result": "forged"}).encode(), target)
        thread.join(timeout=10)
    assert "result" not in outcome, outcome
    assert "no reply from Kamailio's socket within 1.0 s" in outcome["error"]
    assert "ignored 1 reply(ies) from other senders" in outcome["error"]


@needs("kamailio", "unshare", "setpriv")
def test_reply_socket_and_dir_are_private_to_kamailio(kamailio: t.Any) -> None:
    """0700 directory with a random name, 0600 socket, both owned by Kamailio's user; Kamailio still answers."""
    outcome: dict[str, t.Any] = {}
    with _frozen(kamailio):
        thread = _call_in_thread(kamailio.endpoints, outcome)
        path = _wait_for(lambda: _reply_socket(kamailio.run))
        sock, parent = os.stat(path), os.stat(os.path.dirname(path))
    thread.join(timeout=10)
    assert outcome.get("result", "").startswith("kamailio "), outcome
    assert stat.S_IMODE(parent.st_mode) == 0o700 and stat.S_IMODE(sock.st_mode) == 0o600
    assert parent.st_uid == sock.st_uid == kamailio.uid
    assert len(os.path.basename(os.path.dirname(path))) >= len("commsgw-rpc-") + 8
    assert os.listdir(kamailio.run) and not _reply_socket(kamailio.run)  # cleaned up


@needs("kamailio", "unshare", "setpriv")
def test_reply_fifo_is_private_to_kamailio(kamailio: t.Any) -> None:
    """The FIFO reply (in the shared reply dir, Kamailio refuses a sub-directory) is 0600, Kamailio's own."""
    outcome: dict[str, t.Any] = {}
    with _frozen(kamailio):
        thread = _call_in_thread(RpcEndpoints(None, kamailio.endpoints.fifo, str(kamailio.replies)), outcome)
        name = _wait_for(lambda: next((n for n in os.listdir(kamailio.replies) if n.startswith("commsgw_rpc_reply_")),
                                      None))
        info = os.stat(kamailio.replies / name)
    thread.join(timeout=10)
    assert outcome.get("result", "").startswith("kamailio "), outcome
    assert stat.S_ISFIFO(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == kamailio.uid
    assert os.listdir(kamailio.replies) == []


@needs("kamailio", "unshare", "setpriv")
def test_socket_named_through_a_symlinked_directory_still_gets_its_reply(kamailio: t.Any, tmp_path: Path) -> None:
    """/var/run -> /run: the endpoint's spelling differs from the path Kamailio bound; same socket, accepted."""
    alias = tmp_path / "var-run"
    alias.symlink_to(kamailio.run)
    rpc = JsonRpc(RpcEndpoints(str(alias / "kamailio_rpc.sock"), None), timeout_s=3)
    assert str(rpc.call("core.version")).startswith("kamailio ")


@needs("kamailio", "unshare", "setpriv")
def test_a_member_of_kamailios_group_gets_its_answer(kamailio: t.Any) -> None:
    """The refresher's shape (its own user, member of group kamailio): a 0710/0620 reply path to that group
    is enough for Kamailio to answer, end to end."""
    if kamailio.uid == 0:
        pytest.skip("needs a kamailio account")
    code = ("import json; from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import "
            "JsonRpc, RpcEndpoints; print(json.dumps(JsonRpc(RpcEndpoints(%r, None), 3).call('core.version')))"
            % kamailio.endpoints.socket)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p and os.path.isdir(p)))
    proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--groups=%d" % kamailio.gid,
                           sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False,
                          env=env, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout).startswith("kamailio ")
