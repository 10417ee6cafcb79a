# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The simulated ACG as a daemon (``harness.acg_sim``): ``serve`` runs the model behind a UNIX control
socket (one JSON request per connection, one JSON answer); ``up``/``down``/``request`` drive it from
outside, ``place_calls`` places test calls through an SBC. Everything is bounded (timeouts, lifetime)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import typing as t
from pathlib import Path

from harness.acg_sim_inventory import read_inventory
from harness.acg_sim_model import (
    MAX_REQUEST, REPO, START_TIMEOUT_S, STOP_TIMEOUT_S, AcgSim, SimError, _local, _write_json)
from harness.sipp import SippCaller

from ansible_collections.commsgw.routing.plugins.module_utils.core.host_port import HostPortError, split_host_port


def control_path(state_dir: Path) -> Path:
    """The control socket; UNIX socket paths are limited to 107 bytes, long state dirs use /tmp."""
    path = Path(state_dir).resolve() / "control.sock"
    if len(str(path)) < 100:
        return path
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:16]
    return Path("/tmp/commsgw-acg-sim-%s.sock" % digest)


def _pid_file(state_dir: Path) -> Path:
    return Path(state_dir) / "acg-sim.pid"


def request(state_dir: Path, payload: t.Mapping[str, t.Any], timeout_s: float = 30.0) -> dict[str, t.Any]:
    """One request to a running simulator; raises SimError when none runs or it refuses."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        try:
            sock.connect(str(control_path(state_dir)))
        except OSError as exc:
            raise SimError("no simulator runs for %s (%s): start it with scripts/acg-sim up" % (state_dir, exc))
        sock.sendall(json.dumps(payload).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n") and len(data) < (1 << 22):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        sock.close()
    if not data:
        raise SimError("the simulator closed the connection without an answer")
    answer = json.loads(data.decode())
    if not answer.get("ok"):
        raise SimError(answer.get("error") or "refused")
    return t.cast("dict[str, t.Any]", answer)


def serve(sim: AcgSim, state_dir: Path, ttl_s: float) -> None:
    """Run the simulator until ``shutdown``, SIGTERM/SIGINT or the end of its lifetime."""
    state_dir = Path(state_dir)
    stopping = {"why": ""}

    def on_signal(signum: int, _frame: t.Any) -> None:
        stopping["why"] = "signal %d" % signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    path = control_path(state_dir)
    if path.exists():
        path.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    server.settimeout(0.5)
    deadline = time.monotonic() + ttl_s
    try:
        sim.start()
        _write_json(state_dir / "children.json", {"pids": sim.child_pids()})
        _write_json(state_dir / "extra-vars.json", {"commsgw_dns_nameservers": [sim.dns.address if sim.dns else ""]})
        _write_json(state_dir / "status.json", sim.status())
        print("acg-sim: ready (dns %s, %d peers)" % (sim.dns.address if sim.dns else "?", len(sim.peers)), flush=True)
        while not stopping["why"]:
            if time.monotonic() > deadline:
                stopping["why"] = "lifetime of %.0f s reached" % ttl_s
                break
            try:
                conn = server.accept()[0]
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            with conn:
                conn.settimeout(10)
                answer = _handle(sim, conn, stopping)
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps(answer).encode() + b"\n")
            _write_json(state_dir / "children.json", {"pids": sim.child_pids()})
    finally:
        print("acg-sim: stopping (%s)" % (stopping["why"] or "error"), flush=True)
        server.close()
        with contextlib.suppress(OSError):
            path.unlink()
        sim.stop()
        with contextlib.suppress(OSError):
            (state_dir / "children.json").unlink()


def _handle(sim: AcgSim, conn: socket.socket, stopping: dict[str, str]) -> dict[str, t.Any]:
    data = b""
    try:
        while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        req = json.loads(data.decode() or "{}")
        command = req.get("command")
        if command == "status":
            return {"ok": True, "status": sim.status()}
        if command == "set-peer":
            sim.set_peer(str(req["peer"]), str(req["behaviour"]))
            return {"ok": True, "status": sim.status()}
        if command in ("region-down", "region-up"):
            sim.set_region(str(req["region"]), up=command == "region-up", mode=str(req.get("mode") or "silent"))
            return {"ok": True, "status": sim.status()}
        if command == "shutdown":
            stopping["why"] = "shutdown requested"
            return {"ok": True}
        return {"ok": False, "error": "unknown command %r" % command}
    except (SimError, KeyError, ValueError, RuntimeError, OSError) as exc:
        return {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}


def _alive(pid: int, needle: bytes = b"") -> bool:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return needle in handle.read()
    except OSError:
        return False


def _read_pid(state_dir: Path) -> int:
    try:
        return int(_pid_file(state_dir).read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def up(inventory: Path, state_dir: Path, peers: int, ttl_s: float, deployment: t.Optional[str],
       extra_vars: t.Mapping[str, t.Any], timeout_s: float = START_TIMEOUT_S) -> dict[str, t.Any]:
    """Start the daemon for ``inventory`` and wait until it serves; returns its status."""
    state_dir.mkdir(parents=True, exist_ok=True)
    pid = _read_pid(state_dir)
    if pid and _alive(pid, b"harness.acg_sim"):
        raise SimError("a simulator already runs for %s (pid %d): scripts/acg-sim down first" % (state_dir, pid))
    facts = read_inventory(inventory, extra_vars, deployment)  # fail here, in the caller, on a bad inventory
    log = open(state_dir / "acg-sim.log", "ab")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), str(REPO / ".collections"), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "harness.acg_sim", "--state-dir", str(state_dir), "serve", "--inventory",
           str(inventory), "--peers", str(peers), "--ttl", str(ttl_s)]
    if deployment:
        cmd += ["--deployment", deployment]
    if extra_vars:
        cmd += ["--extra-vars", json.dumps(dict(extra_vars))]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO),
                            env=env, start_new_session=True)
    log.close()
    _pid_file(state_dir).write_text("%d\n" % proc.pid)
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SimError("the simulator exited with %s while starting; log %s:\n%s" % (
                proc.returncode, state_dir / "acg-sim.log", _tail(state_dir / "acg-sim.log")))
        try:
            return request(state_dir, {"command": "status"}, timeout_s=5)["status"]
        except SimError as exc:
            last = str(exc)
        time.sleep(0.2)
    down(state_dir)
    raise SimError("the simulator did not become ready within %.0f s (%s); log:\n%s" % (
        timeout_s, last, _tail(state_dir / "acg-sim.log")))


def down(state_dir: Path, timeout_s: float = STOP_TIMEOUT_S) -> bool:
    """Stop the simulator of ``state_dir`` and everything it started; True if something was running."""
    was_running = False
    with contextlib.suppress(SimError, OSError, ValueError):
        request(state_dir, {"command": "shutdown"}, timeout_s=5)
        was_running = True
    pid = _read_pid(state_dir)
    if pid and _alive(pid, b"harness.acg_sim"):
        was_running = True
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _alive(pid, b"harness.acg_sim"):
            time.sleep(0.1)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if _alive(pid, b"harness.acg_sim"):
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
                time.sleep(1.0)
    # A daemon killed hard leaves its SIPp and knotd children: they were recorded.
    with contextlib.suppress(OSError, ValueError):
        children = json.loads((state_dir / "children.json").read_text()).get("pids", [])
        for child in children:
            if _alive(int(child), b"sipp") or _alive(int(child), b"knotd"):
                was_running = True
                with contextlib.suppress(OSError):
                    os.kill(int(child), signal.SIGKILL)
        (state_dir / "children.json").unlink()
    with contextlib.suppress(OSError):
        _pid_file(state_dir).unlink()
    with contextlib.suppress(OSError):
        control_path(state_dir).unlink()
    shutil.rmtree(state_dir / "run", ignore_errors=True)
    return was_running


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def place_calls(state_dir: Path, target: str, source: str, count: int, rate: float = 5.0,
                name: str = "calls") -> dict[str, t.Any]:
    """``count`` calls from ``source`` (the operator core) to ``target`` (an SBC's core side); bounded."""
    try:
        host, port = split_host_port(target, default_port=5060)
    except HostPortError as exc:
        raise SimError("call target %s" % exc) from None
    _local(host)
    _local(source)
    if not 1 <= count <= 1000:
        raise SimError("count must be 1..1000")
    workdir = Path(state_dir) / "calls"
    caller = SippCaller("%s-%d" % (name, int(time.time() * 1000)), workdir, source, "%s:%s" % (host, port))
    timeout_s = int(count / max(rate, 0.1)) + 30
    result = caller.run(count, rate=rate, timeout_s=timeout_s)
    codes: dict[str, int] = {}
    for code, n in result.codes().items():
        codes[str(code) if code is not None else "none"] = n
    return {"count": count, "codes": codes, "successful": result.successful, "failed": result.failed,
            "returncode": result.returncode}
