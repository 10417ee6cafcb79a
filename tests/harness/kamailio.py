# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a rendered Kamailio for tests: foreground, own mount namespace, own resolv.conf.

Kamailio uses libc's resolver (/etc/resolv.conf, no per-process setting), so it runs under
``unshare --mount`` with a test resolv.conf bind-mounted over /etc/resolv.conf inside that
namespace only; the machine's file is never touched. With ``rootfs`` (a Debian 13 tree with
Kamailio 6.0, see harness.rootfs) the config dir, run dir and resolv.conf are bind-mounted into
the tree at the same paths and Kamailio runs chrooted there, on the host's network.

Usage::

    kam = KamailioProcess(cfg_dir / "kamailio.cfg", workdir, resolv_conf=dns.resolv_conf,
                          run_dir=run_dir).start()
    kam.rpc("dispatcher.list")
    kam.stop(); print(kam.log_text())
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import typing as t
from pathlib import Path

KAMAILIO = shutil.which("kamailio") or "/usr/sbin/kamailio"
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0


class KamailioError(RuntimeError):
    pass


def kamailio_version(binary: str = KAMAILIO) -> str:
    """The machine's Kamailio version ("5.6.3") via the collection's parser."""
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import parse_kamailio_version
    out = subprocess.run([binary, "-v"], capture_output=True, text=True, timeout=10, check=False)
    return parse_kamailio_version(out.stdout + out.stderr)


class KamailioProcess:
    def __init__(self, cfg: Path, workdir: Path, run_dir: Path, resolv_conf: t.Optional[Path] = None,
                 shared_memory_mb: int = 128, private_memory_mb: int = 8, rootfs: t.Optional[Path] = None,
                 binary: str = "/usr/sbin/kamailio") -> None:
        self.cfg = Path(cfg)
        self.workdir = Path(workdir)
        self.run_dir = Path(run_dir)
        self.resolv_conf = resolv_conf
        self.shared_memory_mb = shared_memory_mb
        self.private_memory_mb = private_memory_mb
        self.rootfs = rootfs
        self.binary = binary if rootfs else (shutil.which("kamailio") or binary)
        self.proc: t.Optional[subprocess.Popen[bytes]] = None
        self.log_path = self.workdir / "kamailio.log"
        self._log: t.Optional[t.BinaryIO] = None

    # -- process ---------------------------------------------------------------------------------
    def _script(self) -> str:
        cfg_dir = str(self.cfg.parent)
        cmd = [self.binary, "-f", str(self.cfg), "-DD", "-E", "-w", str(self.workdir), "-P",
               str(self.run_dir / "kamailio.pid"), "-m", str(self.shared_memory_mb), "-M",
               str(self.private_memory_mb)]
        lines = ["set -e"]
        if self.rootfs is None:
            if self.resolv_conf is not None:
                lines.append("mount --bind %s /etc/resolv.conf" % shlex.quote(str(self.resolv_conf)))
            lines.append("exec " + " ".join(shlex.quote(c) for c in cmd))
            return "\n".join(lines)
        root = str(self.rootfs)
        for path in sorted({cfg_dir, str(self.run_dir), str(self.workdir)}):
            lines.append("mkdir -p %s" % shlex.quote(root + path))
            lines.append("mount --bind %s %s" % (shlex.quote(path), shlex.quote(root + path)))
        if self.resolv_conf is not None:
            lines.append("touch %s" % shlex.quote(root + "/etc/resolv.conf"))
            lines.append("mount --bind %s %s" % (shlex.quote(str(self.resolv_conf)), shlex.quote(root + "/etc/resolv.conf")))
        lines.append("exec chroot %s %s" % (shlex.quote(root), " ".join(shlex.quote(c) for c in cmd)))
        return "\n".join(lines)

    def start(self, timeout_s: float = START_TIMEOUT_S) -> "KamailioProcess":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        # --propagation private: mounts made inside never leak to the machine.
        self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", self._script()],
                                     stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout_s
        last_error = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise KamailioError("kamailio exited with %s during start:\n%s" % (self.proc.returncode,
                                                                                    self.log_tail()))
            try:
                self.rpc("core.uptime", timeout_s=1.0)
                return self
            except (OSError, ValueError, KamailioError) as exc:
                last_error = str(exc)
            time.sleep(0.2)
        self.stop()
        raise KamailioError("kamailio did not answer core.uptime within %.0f s (%s):\n%s" % (
            timeout_s, last_error, self.log_tail()))

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=STOP_TIMEOUT_S)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "KamailioProcess":
        return self.start()

    def __exit__(self, *exc: t.Any) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    # -- runtime control -------------------------------------------------------------------------
    @property
    def rpc_socket(self) -> Path:
        return self.run_dir / "kamailio_rpc.sock"

    def rpc(self, method: str, params: t.Optional[list[t.Any]] = None, timeout_s: float = 5.0) -> t.Any:
        """One jsonrpcs call over the UNIX datagram socket; returns ``result`` or raises."""
        request: dict[str, t.Any] = {"jsonrpc": "2.0", "method": method, "id": 1}
        if params:
            request["params"] = params
        tmp = tempfile.mkdtemp(prefix="k1-rpc-")
        client = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            path = os.path.join(tmp, "c.sock")
            client.bind(path)
            client.settimeout(timeout_s)
            client.sendto(json.dumps(request).encode(), str(self.rpc_socket))
            reply = json.loads(client.recv(1 << 20).decode())
        finally:
            client.close()
            shutil.rmtree(tmp, ignore_errors=True)
        if "error" in reply:
            raise KamailioError("%s: %s" % (method, reply["error"]))
        return reply.get("result")

    def dispatcher_states(self) -> dict[str, str]:
        """Destination URI -> dispatcher flags ("AP" active+probing, "IP" inactive+probing...)."""
        result = self.rpc("dispatcher.list")
        states: dict[str, str] = {}
        for record in (result or {}).get("RECORDS", []):
            for target in record["SET"].get("TARGETS", []):
                dest = target["DEST"]
                states[dest["URI"]] = dest["FLAGS"]
        return states

    def peer_active(self, address: str) -> t.Optional[bool]:
        for uri, flags in self.dispatcher_states().items():
            if uri.startswith("sip:%s:" % address):
                return flags.startswith("A")
        return None
