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

import dataclasses
import json
import os
import re
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


def rendered_path(cfg_dir: t.Union[str, Path], name: str) -> Path:
    """Where the push puts the rendered file ``name`` (dispatcher.list: in ``cfg_dir``/peers)."""
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path
    return Path(file_path(str(cfg_dir), name))


def write_rendered(cfg_dir: t.Union[str, Path], files: t.Mapping[str, str]) -> None:
    """The rendered ``files`` in ``cfg_dir`` at the places the push puts them."""
    for name, content in files.items():
        path = rendered_path(cfg_dir, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


_VERSION_RE = re.compile(r"version:\s*kamailio\s+(\d+)\.(\d+)\.(\d+)", re.IGNORECASE)


def parse_kamailio_version(output: str) -> str:
    """The "5.6.3" of ``kamailio -v`` output ("version: kamailio 5.6.3 (x86_64/linux) ...").

    Tests only: the role reads the version with its own regex_search (roles/kamailio/tasks/render.yml)."""
    match = _VERSION_RE.search(output or "")
    if not match:
        raise ValueError("no 'version: kamailio X.Y.Z' line in: %r" % (output or "")[:200])
    return ".".join(match.groups())


def kamailio_version(binary: str = KAMAILIO) -> str:
    """The machine's Kamailio version ("5.6.3") of ``kamailio -v``."""
    out = subprocess.run([binary, "-v"], capture_output=True, text=True, timeout=10, check=False)
    return parse_kamailio_version(out.stdout + out.stderr)


class KamailioProcess:
    def __init__(self, cfg: Path, workdir: Path, run_dir: Path, resolv_conf: t.Optional[Path] = None,
                 shared_memory_mb: int = 128, private_memory_mb: int = 8, rootfs: t.Optional[Path] = None,
                 binary: str = "/usr/sbin/kamailio", binds: t.Sequence[Path] = (),
                 memory_manager: t.Optional[str] = None) -> None:
        self.cfg = Path(cfg)
        self.workdir = Path(workdir)
        self.run_dir = Path(run_dir)
        self.resolv_conf = resolv_conf
        self.shared_memory_mb = shared_memory_mb
        self.private_memory_mb = private_memory_mb
        # Kamailio's memory manager (-x, -X: tlsf, qm or fm); None: the one the kamailio role starts it with.
        self.memory_manager = memory_manager
        self.rootfs = rootfs
        # More host directories visible inside ``rootfs`` (e.g. certificates outside the config dir).
        self.binds = [Path(b) for b in binds]
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
        from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (
            DEFAULT_MEMORY_MANAGER, memory_manager_args)
        cmd += memory_manager_args(self.memory_manager or DEFAULT_MEMORY_MANAGER)
        lines = ["set -e"]
        if self.rootfs is None:
            if self.resolv_conf is not None:
                lines.append("mount --bind %s /etc/resolv.conf" % shlex.quote(str(self.resolv_conf)))
            lines.append("exec " + " ".join(shlex.quote(c) for c in cmd))
            return "\n".join(lines)
        root = str(self.rootfs)
        for path in sorted({cfg_dir, str(self.run_dir), str(self.workdir)} | {str(b) for b in self.binds}):
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
                raise KamailioError("kamailio exited with %s during start:\n%s"
                                    % (self.proc.returncode, self.log_tail()))
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

    def pids(self) -> list[int]:
        """Kamailio's main process and every process below it (its SIP and TCP workers, timers...).
        The started process execs Kamailio (via ``sh -c exec`` and chroot), so it is the main one."""
        return process_tree(self.proc.pid) if self.running and self.proc is not None else []

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by every Kamailio process (see tree_cpu_seconds)."""
        return tree_cpu_seconds(self.proc.pid) if self.running and self.proc is not None else 0.0

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
        # The reply goes to the client's socket path as Kamailio sees it: inside the run dir, that
        # path is the same in a chroot rootfs (bind-mounted) as on the host.
        tmp = tempfile.mkdtemp(prefix="rpc-", dir=str(self.run_dir))
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
                # A = active, T = trying (a probe failed, threshold not reached): both still get calls.
                return flags[:1] in ("A", "T")
        return None


def sbc_secret(directory: Path) -> Path:
    """The SBC's own secret file (dialog-name MAC key, ping token) in ``directory``, made the way the role's
    commsgw.routing.kamailio_secret makes it on an SBC host (kamailio.secret.ensure_secret)."""
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import ensure_secret
    path = Path(directory) / "secret.cfg"
    ensure_secret(str(path), os.getuid())
    return path


def _proc_stat(pid: int) -> list[str]:
    """/proc/<pid>/stat fields after "(comm)": [0] state, [1] ppid, ... [11] utime, [12] stime,
    [13] cutime, [14] cstime (clock ticks)."""
    with open("/proc/%d/stat" % pid) as fh:
        text = fh.read()
    return text[text.rindex(")") + 2:].split()


def process_tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(_proc_stat(int(entry))[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, grew = {root}, True
    while grew:
        children = {pid for pid, ppid in parents.items() if ppid in tree} - tree
        grew = bool(children)
        tree |= children
    return sorted(tree)


def tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system) used so far by ``root`` and every process below it: utime + stime of
    each (all its threads), plus cutime + cstime (children that already exited and were reaped)."""
    return sum(cpu_ticks(pid) for pid in process_tree(root)) / float(os.sysconf("SC_CLK_TCK"))


def cpu_ticks(pid: int) -> int:
    """utime + stime + cutime + cstime of ``pid`` in clock ticks (0 once it is gone)."""
    try:
        fields = _proc_stat(pid)
    except OSError:
        return 0
    return sum(int(fields[i]) for i in (11, 12, 13, 14))


# -- a whole lab: DNS + plan + rendered config + Kamailio ------------------------------------------
@dataclasses.dataclass
class Topology:
    """Loopback addresses of one lab. ``block`` shifts every third octet so that concurrently
    running test modules (and the bench) never share an address."""

    block: int = 0
    region1_peers: t.Sequence[tuple[str, int, int]] = ((1, 10, 60), (2, 10, 40), (3, 20, 0))  # (host, SRV prio, weight)
    region2_peers: t.Sequence[tuple[str, int, int]] = ((1, 10, 50), (2, 10, 50))
    domain: str = "acg-k1.test"
    # First two octets: 127.0 for the tests; a bench may take a /16 of its own (e.g. "127.77").
    prefix: str = "127.0"

    def net(self, octet: int, host: int) -> str:
        return "%s.%d.%d" % (self.prefix, octet + self.block, host)

    @property
    def region1_range(self) -> str:
        return "%s.%d.0/28" % (self.prefix, 10 + self.block)

    @property
    def region2_range(self) -> str:
        return "%s.%d.0/28" % (self.prefix, 11 + self.block)

    def region1(self, host: int) -> str:
        return self.net(10, host)

    def region2(self, host: int) -> str:
        return self.net(11, host)

    @property
    def sbc_acg(self) -> str:
        return self.net(20, 1)

    @property
    def sbc_core(self) -> str:
        return self.net(30, 1)

    @property
    def core_next_hop(self) -> str:
        return self.net(31, 1)

    @property
    def core_caller(self) -> str:
        return self.net(31, 2)

    @property
    def core_network(self) -> str:
        """The operator core's /24 (next hop .1, caller .2): commsgw_sbc.core_allowed_sources of the lab."""
        return "%s.%d.0/24" % (self.prefix, 31 + self.block)

    def outsider(self, host: int = 9) -> str:
        """A loopback address outside the core network and the ACG ranges (a toll-fraud caller)."""
        return self.net(32, host)

    def deployment_raw(self, routing: t.Mapping[str, int], transport: str = "udp") -> dict[str, t.Any]:
        # A two-region test rig; plain UDP/TCP is explicitly allowed (a warning, R-09), TLS is not.
        return {
            "name": "k1", "type": "production", "base_domain": self.domain, "management_region": "West Europe",
            "allow_non_public_ranges": True, "allow_plain_transport": True,
            "acg_transport": transport,
            "service_regions": [
                {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1." + self.domain,
                 "ip_ranges": [self.region1_range]},
                {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2." + self.domain,
                 "ip_ranges": [self.region2_range]}],
            "sites": [{"name": "ams", "service_region": "region1"}, {"name": "fra", "service_region": "region2"}],
            "routing": dict(routing),
            "emergency_dial_strings": ["112", "911", "999"],
            # Every peer of the rig listens on 5060, TLS included (dns_records); a TLS deployment expects
            # 5061 unless srv_limits says otherwise.
            "srv_limits": {"ports": [5060]},
        }

    def dns_records(self) -> tuple[dict[str, list[tuple[int, int, int, str]]], dict[str, list[str]]]:
        srv: dict[str, list[tuple[int, int, int, str]]] = {}
        a: dict[str, list[str]] = {}
        for region, peers, address in (("region1", self.region1_peers, self.region1),
                                       ("region2", self.region2_peers, self.region2)):
            name = "_sip._tls.pstn-%s.%s" % (region, self.domain)
            srv[name] = []
            for host, prio, weight in peers:
                target = "%s-sip%d.%s" % (region, host, self.domain)
                srv[name].append((prio, weight, 5060, target))
                a[target] = [address(host)]
        a["core." + self.domain] = [self.core_next_hop]
        return srv, a


BLOCK_LOCK_DIR = Path("/tmp/commsgw-kamailio-lab")
# Third-octet offsets a lab may use (addresses 127.0.(10..32)+offset.x); other helpers' tests use
# +100 and +150, so these stay below. Not 50: its 127.0.60-82.x are scripts/lab's (inventory/demo), whose
# core side udp:127.0.80.1:5060 is block 50's SBC core socket; test_lab runs beside these modules
# (tests/unit/test_parallel_safety.py keeps the blocks off every module's fixed addresses).
LAB_BLOCKS = (0, 7, 25, 75)


BLOCK_WAIT_S = 600.0


class BlockLease:
    """An exclusive claim on one Topology block across processes (flock, freed on close/exit). When every
    block is taken (parallel pytest workers, another run, the bench), waits up to ``wait_s`` for one."""

    def __init__(self, blocks: t.Sequence[int] = LAB_BLOCKS, wait_s: float = BLOCK_WAIT_S) -> None:
        import fcntl
        BLOCK_LOCK_DIR.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait_s
        while True:
            for block in blocks:
                fd = os.open(str(BLOCK_LOCK_DIR / ("block-%d.lock" % block)), os.O_CREAT | os.O_RDWR, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                self.block = block
                self._fd = fd
                return
            if time.monotonic() >= deadline:
                raise KamailioError("every lab address block %s stayed in use by other tests for %.0f s"
                                    % (list(blocks), wait_s))
            time.sleep(0.5)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class AcgLab:
    """DNS (harness.dns) -> SRV resolution (module_utils.srv) -> plan -> render -> Kamailio."""

    def __init__(self, workdir: Path, topology: t.Optional[Topology] = None,
                 routing: t.Optional[t.Mapping[str, int]] = None, settings: t.Optional[dict[str, t.Any]] = None,
                 transport: str = "udp", runtime: t.Any = None, dns_address: t.Optional[str] = None,
                 shared_memory_mb: int = 128) -> None:
        """``runtime``: a harness.rootfs.KamailioRuntime (e.g. Kamailio 6.0 for TLS), default the host's
        Kamailio; ``dns_address``: the DNS server's own address instead of a free one of 127.0.53.x."""
        self.workdir = Path(workdir)
        self.topo = topology or Topology()
        self.routing = dict(routing or {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1,
                                        "invite_timer_ms": 1000})
        self.transport = transport
        self.cfg_dir = self.workdir / "cfg"
        self.run_dir = self.workdir / "run"
        self.settings = {
            "acg_listen": {"address": self.topo.sbc_acg, "port": 5060},
            "core_listen": {"address": self.topo.sbc_core, "port": 5060, "transport": "udp"},
            # A name, so Kamailio's own resolver (the private resolv.conf) is exercised too.
            "core_next_hop": "core.%s:5060" % self.topo.domain,
            "config_dir": str(self.cfg_dir), "run_dir": str(self.run_dir), "udp_workers": 4,
            # The core side's source ACL: every core-side caller of the tests is in the core /24.
            "core_allowed_sources": [self.topo.core_network],
        }
        self.settings.update(settings or {})
        self.dns: t.Any = None
        self.kamailio: t.Optional[KamailioProcess] = None
        self.plan: dict[str, t.Any] = {}
        self.files: dict[str, str] = {}
        self.runtime = runtime
        self.dns_address = dns_address
        self.shared_memory_mb = shared_memory_mb
        self.version = runtime.version if runtime is not None else kamailio_version()

    def prepare(self) -> "AcgLab":
        """DNS, SRV resolution, plan and rendered files in ``cfg_dir``; Kamailio not started yet."""
        from harness.dns import DnsServer
        from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
        from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
        from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings, resolve_deployment
        from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
        from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio

        if self.dns_address:
            self.dns = DnsServer(self.workdir / "dns", address=self.dns_address).start()
        else:
            self.dns = DnsServer.start_on_free_address(self.workdir / "dns", first=(os.getpid() * 7 + 31) % 254)
        srv, a = self.topo.dns_records()
        self.dns.set_records(srv=srv, a=a, ttl=60)
        deployment, findings = validate_deployment(self.topo.deployment_raw(self.routing, self.transport),
                                                   [Sbc(host="sbc-ams-1", site="ams"), Sbc(host="sbc-fra-1", site="fra")])
        if findings.errors:
            raise RuntimeError("lab deployment invalid: %s" % [f.render() for f in findings.errors])
        resolved, problems = resolve_deployment(deployment, ResolverSettings(nameservers=[self.dns.address]))
        if [p for p in problems if p.severity == "error"]:
            raise RuntimeError("SRV resolution failed: %s" % [p.render() for p in problems])
        self.plan = build_site_plan(deployment, deployment.sites[0], resolved)
        binds = []
        if self.transport == "tls" and "secret_file" not in self.settings:
            self.settings["secret_file"] = str(sbc_secret(self.workdir / "secret"))
            binds.append(self.workdir / "secret")
        self.files = render_kamailio(self.plan, self.settings, self.version)
        write_rendered(self.cfg_dir, self.files)
        self.kamailio = KamailioProcess(self.cfg_dir / "kamailio.cfg", self.workdir / "kamailio", self.run_dir,
                                        resolv_conf=self.dns.resolv_conf, shared_memory_mb=self.shared_memory_mb,
                                        rootfs=self.runtime.rootfs if self.runtime is not None else None,
                                        binds=binds)
        return self

    def start(self) -> "AcgLab":
        if self.kamailio is None:
            self.prepare()
        assert self.kamailio is not None
        self.kamailio.start()
        return self

    def stop(self) -> None:
        if self.kamailio is not None:
            self.kamailio.stop()
        if self.dns is not None:
            self.dns.stop()

    def reset_peers(self, kamailio: t.Optional[KamailioProcess] = None) -> None:
        """Every destination back to active+probing. (dispatcher.reload would do it too, but the
        module refuses reloads closer than reload_delta, 5 s, to each other.) ``kamailio``: another
        Kamailio running this lab's dispatcher.list (default: the lab's own)."""
        kamailio = kamailio or self.kamailio
        assert kamailio is not None
        for line in self.files["dispatcher.list"].splitlines():
            if line.strip() and not line.startswith("#"):
                set_id, uri = line.split()[:2]
                kamailio.rpc("dispatcher.set_state", ["ap", int(set_id), uri])

    def wait_peer_state(self, address: str, active: bool, timeout_s: float,
                        kamailio: t.Optional[KamailioProcess] = None) -> t.Optional[float]:
        """Seconds until ``address`` is (in)active per dispatcher.list, or None on timeout (bounded)."""
        kamailio = kamailio or self.kamailio
        assert kamailio is not None
        start = time.monotonic()
        while time.monotonic() - start < timeout_s:
            if kamailio.peer_active(address) is active:
                return time.monotonic() - start
            time.sleep(0.05)
        return None
