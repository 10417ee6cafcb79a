#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the rendered Kamailio configuration (prints figures; not a test).

(a) time from a peer going silent to being taken out, vs the configured window
    (OPTIONS interval x failure threshold)            target: <= window + 1 s
(b) extra post-dial delay when the first peer is silent, vs the ACG-leg INVITE timer
                                                       target: <= timer + 0.1 s
(c) sustained calls/s (highest offered rate with no failed call, climbing a ladder) through the
    generated config as a ratio to a bare stateful Kamailio proxy measured in the same run
                                                       target: >= 0.9
(d) Kamailio CPU per call (utime + stime of every Kamailio process, /proc/<pid>/stat) at each
    offered rate of --cpu-rates (default 100 and 1000 calls/s), generated config / bare proxy,
    measured before the cap of --kamailio-cpu applies (a capped Kamailio cannot take 1000 calls/s)
                                                       target: <= 1.1 at each rate

--transport udp (default): the host's Kamailio, UDP on both sides, (a) to (d).
--transport tls: Kamailio 6.0 (harness.rootfs: the host's on Debian 13, a cached Debian 13 rootfs on
Debian 12), UDP from the core, mutual TLS towards the peers (the production transport), (c) and (d).
The generated config is rendered with acg_transport tls and the TLS tests' PKI; the bare proxy is
tm + t_relay to one peer over TLS with SNI ($xavp(tls=>server_name)), with the same tls.cfg
(certificates, CA, ciphers) and tls_threads_mode. The peers are SIPp speaking TLS itself
(harness.rootfs.sipp_tls_runtime), requiring the SBC's client certificate; SIPp does not check SNI.
Addresses: 127.77.0.0/16, used by nothing else. Each proxy's TLS connection to the peer is shown
from its tls.list (SNI, cipher); the peer listens on TCP only, so a completed call went over TLS.

Every proxy runs under the memory manager of --memory-manager (default: the kamailio role's, TLSF); the variant
qm is the generated config under Kamailio's default manager, to see what TLSF saves.
After each run: Kamailio's shared memory after the warm-up and at most (core.shmmem) and the private memory
of its most used process (pkg.stats): the figures behind docs/kamailio-sizing.md. Both proxies start with
the shared memory the rendered kamailio.cfg was sized for (shm_mem_size).
(c) is meant to run with --kamailio-cpu (e.g. 0.25 cores, cgroup CPU quota on every Kamailio process):
Kamailio, not SIPp or the shared machine, is then what runs out; an uncapped ladder only measures the
rig, and the bench says so.
(c) and (d) are measured --runs times, each run printed, then the median. In a run both Kamailios
run at once (the bare one on addresses of its own), with the same peers, and take turns: at each
rate of the ladder, and in --cpu-turns slices of (d), who goes first alternating, so that a change
of the machine's load (other test runs share it) hits both alike. A ladder rate that fails is tried
--retries more times, for both alike. Each ladder step shows the CPU cores used by Kamailio, by the
peer taking the calls and by the whole machine. Same real software as the conformance suite (Knot
DNS, Kamailio, SIPp) on loopback; every loop is bounded. Run as root:
    PYTHONPATH=.collections:tests .venv/bin/python bench/kamailio_bench.py [--transport tls]
"""

from __future__ import annotations

import argparse
import dataclasses
import fcntl
import os
import re
import signal
import statistics
import sys
import tempfile
import time
import typing as t
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / ".collections"))

from harness import pki as pkimod  # noqa: E402
from harness import rootfs  # noqa: E402
from harness.kamailio import (BLOCK_LOCK_DIR, AcgLab, BlockLease, KamailioError, KamailioProcess,  # noqa: E402
                              Topology, cpu_ticks, rendered_path, tree_cpu_seconds, write_rendered)
from harness.sipp import SippCaller, SippPeer, parse_message_log  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (  # noqa: E402
    DEFAULT_MEMORY_MANAGER, MEMORY_MANAGERS)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import normalise_sbc_settings  # noqa: E402

# A bare stateful proxy: the reference for (c) and (d). The %(tls_*)s parts are empty over UDP.
BARE_PROXY = """#!KAMAILIO
# A bare stateful proxy: the reference for (c) and (d).
debug=%(debug)d
log_stderror=no
children=%(children)d
tcp_children=%(tcp_children)d
auto_aliases=no
dns=no
rev_dns=no
%(tls_globals)slisten=udp:%(listen)s:5060
loadmodule "jsonrpcs.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "siputils.so"
loadmodule "textops.so"
%(tls_modules)smodparam("jsonrpcs", "dgram_socket", "%(run)s/kamailio_rpc.sock")
modparam("jsonrpcs", "fifo_name", "%(run)s/kamailio_rpc.fifo")
request_route {
    if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
    if (is_method("CANCEL")) { if (t_check_trans()) { t_relay(); } exit; }
    if (has_totag()) {
        if (loose_route()) { %(to_peer)st_relay(); exit; }
        if (is_method("ACK")) { if (t_check_trans()) { t_relay(); } exit; }
        sl_send_reply("404", "Not Here"); exit;
    }
    t_check_trans();
    record_route();
    $du = "%(peer_uri)s";
    %(to_peer)st_relay();
}
"""
BARE_TLS_GLOBALS = """enable_tls=yes
%(threads_mode)slisten=tls:%(tls_listen)s
"""
BARE_TLS_MODULES = """loadmodule "tls.so"
modparam("tls", "config", "%(tls_cfg)s")
modparam("tls", "xavp_cfg", "tls")
"""
WORKERS = {"udp": 4, "tcp": 2}  # the collection's defaults (sbc_settings), for both proxies


def _drop_reply_check(cfg: str, sni: str) -> str:  # pylint: disable=unused-argument
    """reply_route without the R-24 check of every TLS reply's peer certificate host name."""
    return _sub(r"\n\tif \(\$proto == \"tls\"\) \{\n\t\troute\(COMMSGW_TLS_CHECK_REPLY\);\n\t\}", "", cfg)


def _fixed_sni(cfg: str, sni: str) -> str:
    """SNI (and the name the config keeps for it) set straight to region 1's name instead of the
    route that finds it for the next branch."""
    return _sub(r"route\(COMMSGW_TLS_SNI\);",
                '$var(commsgw_tls_name) = "%s"; $xavp(tls=>server_name) = "%s";' % (sni, sni), cfg)


def _drop_limits(cfg: str, sni: str) -> str:  # pylint: disable=unused-argument
    """route[FROM_CORE] without the R-25 emergency and R-27 size checks."""
    cfg = _sub(r"\n\t# R-25: emergency.*?\n\t\}\n", "\n", cfg)
    return _sub(r"\n\t# R-27: ACG's size limits.*?\n\tif \(is_present_hf\(\"Contact\"\).*?\n\t\}\n", "\n", cfg)


def _drop_dialog_name(cfg: str, sni: str) -> str:  # pylint: disable=unused-argument
    """No TLS name kept in the dialog: no Record-Route parameter per branch, no Route read per
    in-dialog request (which then finds the name by the next hop's range)."""
    cfg = _sub(r"\n\tt_on_branch\(\"COMMSGW_TLS_BRANCH\"\);", "", cfg)
    # The name's reset stays: without it a request would take the name an earlier one left in the process.
    return _sub(r"\n\t\tif \(\$var\(commsgw_from_acg\) == 0 && is_present_hf\(\"Route\"\)\) \{\n.*?\n\t\t\}\n", "\n", cfg)


def _no_hmac(cfg: str, sni: str) -> str:  # pylint: disable=unused-argument
    """The dialog name's MAC not computed (the claimed MAC taken as it is): the cost of its HMAC-SHA256."""
    return _sub(r"\nroute\[COMMSGW_TLS_MAC\] \{\n.*?\n\}\n",
                "\nroute[COMMSGW_TLS_MAC] {\n\t$var(commsgw_tls_mac_want) = $var(commsgw_tls_mac);\n}\n", cfg)


def _no_request_checks(cfg: str, sni: str) -> str:  # pylint: disable=unused-argument
    """request_route without the sanity checks and the Request-URI byte check (issue 13)."""
    cfg = _sub(r"\n\tif \(!sanity_check\(.*?\n\t\}\n", "\n", cfg)
    return _sub(r"\n\tif \(\$\(ru\{s\.encode\.hexa\}\).*?\n\t\}\n", "\n", cfg)


def _no_log_prefix(cfg: str, sni: str) -> str:  # pylint: disable=unused-argument
    """No log_prefix (evaluated for every message)."""
    return _sub(r"\nlog_prefix=.*?\n", "\n", cfg)


def _no_kex(cfg: str, sni: str) -> str:  # pylint: disable=unused-argument
    """Without the kex module (its per-process pkg statistics run on every pkg allocation): is_myself()
    replaced by a test that the Route exists (unsafe: diagnostic only)."""
    cfg = _sub(r'\nloadmodule "kex.so"', "", cfg)
    return _sub(r'is_myself\("\$route_uri"\)', '($route_uri != "")', cfg)


def _floor(cfg: str, sni: str) -> str:
    """Every part the other variants take out, at once (except the unsafe no-kex): what the generated config
    would cost without those checks, so the most any cheaper way of making them could save. It keeps the ACLs,
    the dispatcher's failover, the E.164 check, R-24 on requests and issue 21's in-dialog checks."""
    for part in (_drop_reply_check, _fixed_sni, _drop_limits, _drop_dialog_name, _no_request_checks, _no_log_prefix):
        cfg = part(cfg, sni)
    return cfg


def _sub(pattern: str, replacement: str, text: str) -> str:
    """re.sub that insists on a match: a variant that no longer applies to the templates must say so."""
    result, count = re.subn(pattern, lambda m: replacement, text, flags=re.S)
    if not count:
        raise ValueError("variant pattern %r matches nothing in the rendered kamailio.cfg" % pattern)
    return result


# Diagnostic variants of the generated config (--variants), run alongside it to find where its cost
# comes from; each is the rendered kamailio.cfg with one part taken out (never used for the targets).
VARIANTS: dict[str, tuple[str, t.Callable[[str, str], str]]] = {
    "no-reply-check": ("no R-24 host-name check of each TLS reply (reply_route)", _drop_reply_check),
    "fixed-sni": ("SNI set directly instead of route(COMMSGW_TLS_SNI)", _fixed_sni),
    "no-limits": ("no R-25/R-27 checks in route[FROM_CORE]", _drop_limits),
    "no-dialog-name": ("no TLS name in the Record-Route / read from the Route", _drop_dialog_name),
    "no-hmac": ("dialog names minted and checked without their HMAC-SHA256", _no_hmac),
    "no-request-checks": ("no sanity_check and no Request-URI byte check", _no_request_checks),
    "no-log-prefix": ("no log_prefix", _no_log_prefix),
    "no-kex": ("no kex module (is_myself replaced: unsafe)", _no_kex),
    "no-tls-script": ("no-reply-check + fixed-sni", lambda cfg, sni: _fixed_sni(_drop_reply_check(cfg, sni), sni)),
    "floor": ("no-reply-check, fixed-sni, no-limits, no-dialog-name, no-request-checks and no-log-prefix at once",
              _floor),
    "qm": ("the generated config under Kamailio's default memory manager, qm (before issue 25)", lambda cfg, sni: cfg),
}
# Variants that change how Kamailio starts rather than its config: the memory manager (-x/-X).
VARIANT_MEMORY_MANAGER = {"qm": "qm"}
TLS_PREFIX = "127.77"           # the TLS bench's /16: no test uses it
TLS_DOMAIN = "acg-bench.test"
SBC_TLS_PORT = 5061
PEER_PORT = 5060                # the SRV port of the lab records (Topology.dns_records)
# ACK -> BYE in the callers' calls. Not 0: with the two microseconds apart, a proxy's workers may
# relay them in either order, and the SIPp peer aborts a call whose BYE comes before its ACK (a real
# UAS would not). A call that still fails that way at the top of the ladder lost its ACK (UDP, never
# retransmitted) while the peer stalled: SIPp sleeps 200 ms whenever a TLS write would block.
HOLD_MS = 100
IDLE_SECONDS = 2.0              # Kamailio's own CPU use without calls, measured before (d), per proxy


def taken_out(work: Path, block: int, interval: int, threshold: int, runs: int) -> list[float]:
    routing = {"options_interval_s": interval, "failure_threshold": threshold, "recovery_threshold": 1,
               "invite_timer_ms": 1000}
    topo = Topology(block=block)
    lab = AcgLab(work / ("out-%dx%d" % (interval, threshold)), topo, routing).start()
    times = []
    peer: t.Optional[SippPeer] = None
    try:
        address = topo.region1(1)
        for run in range(runs):
            peer = SippPeer("p1-%d" % run, lab.workdir, address).start()
            lab.reset_peers()
            # Let it be seen alive by at least one probe, at a random phase of the ping timer.
            time.sleep(interval + 0.37 * run % interval)
            peer.stop(kill=True)
            elapsed = lab.wait_peer_state(address, False, interval * threshold + 10.0)
            times.append(float("nan") if elapsed is None else elapsed)
    finally:
        if peer is not None:
            peer.stop(kill=True)
        lab.stop()
    return times


def post_dial_delay(work: Path, block: int, timer_ms: int, calls: int) -> tuple[float, float]:
    """Median post-dial delay (INVITE -> 200 at the caller): healthy vs first peer silent."""
    # One peer per SRV tier, so the silent one is always tried first.
    topo = Topology(block=block, region1_peers=((1, 10, 100), (2, 20, 100)), region2_peers=((1, 10, 100),))
    lab = AcgLab(work / "pdd", topo, {"options_interval_s": 5, "failure_threshold": 3, "recovery_threshold": 1,
                                      "invite_timer_ms": timer_ms}).start()
    caller_address, target = topo.core_caller, "%s:5060" % topo.sbc_core
    second = first = silent_peer = None
    try:
        second = SippPeer("p2", lab.workdir, topo.region1(2)).start()
        first = SippPeer("p1", lab.workdir, topo.region1(1)).start()
        healthy = []
        for n in range(calls):
            lab.reset_peers()
            healthy += _pdd(SippCaller("healthy-%d" % n, lab.workdir, caller_address, target, hold_ms=0), 1)
        first.stop(kill=True)
        silent_peer = SippPeer("p1-silent", lab.workdir, topo.region1(1), code=None, answer_options=False).start()
        silent = []
        for n in range(calls):
            lab.reset_peers()  # the silent peer counts as alive again: its first INVITE must time out
            silent += _pdd(SippCaller("silent-%d" % n, lab.workdir, caller_address, target, hold_ms=0), 1)
    finally:
        for peer in (first, second, silent_peer):
            if peer is not None:
                peer.stop(kill=True)
        lab.stop()
    return statistics.median(healthy), statistics.median(silent)


def _pdd(caller: SippCaller, count: int) -> list[float]:
    result = caller.run(count, rate=10, timeout_s=20)
    sent: dict[str, float] = {}
    delays = []
    for message in parse_message_log(caller.message_log):
        if message.direction == "sent" and message.first_line.startswith("INVITE "):
            sent.setdefault(message.call_id or "", message.time)
        elif (message.direction == "received" and message.first_line.startswith("SIP/2.0 200")
              and message.cseq_method == "INVITE" and message.call_id in sent):
            delays.append(message.time - sent.pop(message.call_id or ""))
    if result.successful != count:
        print("  warning: %d of %d calls failed" % (count - result.successful, count))
    return delays


@dataclasses.dataclass
class Step:
    rate: int
    successful: int
    failed: int
    achieved: float
    sustained: bool
    cores: dict[str, float] = dataclasses.field(default_factory=dict)  # CPU seconds per second
    attempts: int = 1


CpuMeter = t.Callable[[], dict[str, float]]


def machine_busy_seconds() -> float:
    """CPU seconds used so far by every process of the machine (other test runs included): utime +
    stime + cutime + cstime of each in /proc. (/proc/stat's tick sampling undercounts processes that
    run in short bursts between ticks, as SIP proxies do.)"""
    return sum(cpu_ticks(int(e)) for e in os.listdir("/proc") if e.isdigit()) / float(os.sysconf("SC_CLK_TCK"))


def reaped_children_seconds() -> float:
    """CPU seconds of this process's children that exited and were waited for (the SIPp callers)."""
    times = os.times()
    return times.children_user + times.children_system


def ladder_step(caller: SippCaller, rate: int, seconds: float, cpu_meter: t.Optional[CpuMeter] = None) -> Step:
    """``rate`` calls/s for ``seconds`` (at least 200 calls). Sustained: no failed call and completed
    at >= 95 % of the offered rate.

    A rate where calls fail is not sustained, however many completed: at overload the generated
    config's own OPTIONS probes time out, the peer is taken out and calls fail fast, which would
    otherwise read as a high "completed calls per second".
    """
    caller.trace = False
    calls = max(200, int(rate * seconds))
    cpu_before = cpu_meter() if cpu_meter else {}
    started = time.monotonic()
    result = caller.run(calls, rate=rate, limit=2000, timeout_s=60, recv_timeout_ms=5000)
    elapsed = time.monotonic() - started
    cores = {}
    if cpu_meter is not None and elapsed > 0:
        after = cpu_meter()
        cores = {name: (after[name] - cpu_before[name]) / elapsed for name in cpu_before if name in after}
        # The busiest single Kamailio process: one TLS connection is read by one process at a time.
        per_process = [cores.pop(name) for name in list(cores) if name.startswith("pid:")]
        if per_process:
            cores["busiest kamailio process"] = max(per_process)
    achieved = result.successful / elapsed
    kept_up = result.failed == 0 and result.successful == calls and achieved >= 0.95 * rate * calls / (
        calls + rate)  # SIPp needs about one extra second to finish the last calls
    print("    %s at %4d calls/s offered: %d ok, %d failed, %.0f completed/s -> %s%s" % (
        caller.name, rate, result.successful, result.failed, achieved, "sustained" if kept_up else "not sustained",
        "  [CPU cores: %s]" % ", ".join("%s %.2f" % kv for kv in cores.items()) if cores else ""))
    return Step(rate, result.successful, result.failed, achieved, kept_up, cores)


@dataclasses.dataclass
class Proxy:
    """One Kamailio under test: its process, the address calls go to, what to do before each
    measurement, how to know it is ready for calls."""

    name: str
    kamailio: KamailioProcess
    target: str
    before_step: t.Callable[[], None]
    ready: t.Callable[[], None]
    short: str = ""  # in SIPp file names and step lines: gen, bar, v1, v2...

    def __post_init__(self) -> None:
        self.short = self.short or self.name[:3]


@dataclasses.dataclass
class CpuFigures:
    """(d) at one offered rate."""
    ms_per_call: float = float("nan")
    calls: int = 0
    failed: int = 0


@dataclasses.dataclass
class ProxyFigures:
    sustained: int = 0
    steps: list[Step] = dataclasses.field(default_factory=list)
    cpu: dict[int, CpuFigures] = dataclasses.field(default_factory=dict)  # offered calls/s -> (d)
    idle_ms_per_s: float = float("nan")
    transport_check: str = ""
    shm_start_mb: float = float("nan")  # shared memory in use after the warm-up calls (core.shmmem real_used)
    shm_max_mb: float = float("nan")  # the most shared memory Kamailio used in the run (core.shmmem max_used)
    pkg_max_mb: float = float("nan")  # the most private memory one process uses after the run (pkg.stats real_used)


class Rig:
    """What both proxies share in one bench: addresses, PKI, runtimes, peers, the generated config's
    lab (DNS + render) and the bare proxy's files. Both proxies run at the same time on their own
    addresses (the bare one on octets 32/33 of the topology) and take turns, so that a change of the
    machine's load (other test runs) hits both alike."""

    def __init__(self, work: Path, transport: str, topo: Topology, variants: t.Sequence[str] = (),
                 memory_manager: str = DEFAULT_MEMORY_MANAGER) -> None:
        self.work = work
        self.memory_manager = memory_manager
        self.transport = transport
        self.topo = topo
        self.variants = list(variants)
        self.peers: list[SippPeer] = []
        self.hold_ms = HOLD_MS
        self.kamailio_runtime: t.Optional[rootfs.KamailioRuntime] = None
        self.sipp_runtime: t.Optional[rootfs.KamailioRuntime] = None
        self.pki: t.Optional[pkimod.StandardPKI] = None
        settings: dict[str, t.Any] = {"udp_workers": WORKERS["udp"], "tcp_workers": WORKERS["tcp"]}
        kwargs: dict[str, t.Any] = {}
        if transport == "tls":
            self.kamailio_runtime = rootfs.kamailio6_runtime()
            self.sipp_runtime = rootfs.sipp_tls_runtime()
            kwargs = {"runtime": self.kamailio_runtime, "dns_address": "%s.53.1" % topo.prefix}
        self.lab = AcgLab(work / "generated", topo, settings=settings, transport=transport, **kwargs)
        if transport == "tls":
            # Under the config dir: bind-mounted into a Kamailio rootfs as it is (as in the TLS tests).
            self.pki = pkimod.standard_pki(self.lab.cfg_dir / "pki", [self.hostname(1), self.hostname(2)],
                                           sbc_hostname="sbc-ams-1.operator.test")
            self.lab.settings.update({
                "acg_listen": {"address": topo.sbc_acg, "port": SBC_TLS_PORT},
                "tls": {"certificate": str(self.pki.sbc.chain), "private_key": str(self.pki.sbc.key),
                        "ca_bundle": str(self.pki.acg_ca.cert)}})
        # Shared memory as the collection sets it (sized from the plan: set in prepare()), for every proxy.
        self.lab.shared_memory_mb = normalise_sbc_settings(self.lab.settings, transport)["shared_memory_mb"] or 0
        self.bare_dir = work / "bare"
        self.bare_core = topo.net(32, 1)
        self.bare_acg = topo.net(33, 1)

    def hostname(self, region: int) -> str:
        return "pstn-region%d.%s" % (region, self.topo.domain)

    @property
    def kamailio_version(self) -> str:
        return self.lab.version

    def prepare(self) -> None:
        """DNS + render for the generated config, then the bare proxy's files (same tls.cfg)."""
        self.lab.prepare()
        assert self.lab.kamailio is not None
        # The shared memory the role starts Kamailio with: the rendered figure (shm_mem_size), for every proxy.
        sized = re.search(r"^shm_mem_size=([0-9]+)$", self.lab.files["kamailio.cfg"], re.M)
        if sized:
            self.lab.shared_memory_mb = self.lab.kamailio.shared_memory_mb = int(sized.group(1))
        self.lab.kamailio.memory_manager = self.memory_manager
        (self.bare_dir / "run").mkdir(parents=True, exist_ok=True)
        values: dict[str, t.Any] = {
            "debug": _rendered_debug(self.lab.files["kamailio.cfg"]),
            "children": WORKERS["udp"], "tcp_children": WORKERS["tcp"], "listen": self.bare_core,
            "run": self.bare_dir / "run", "tls_globals": "", "tls_modules": "", "to_peer": "",
            "peer_uri": "sip:%s:%d" % (self.topo.region1(1), PEER_PORT)}
        if self.transport == "tls":
            tls_cfg = self.bare_dir / "tls.cfg"
            tls_cfg.write_text(self.lab.files["tls.cfg"])  # same certificates, CA, method and ciphers
            threads = [line for line in self.lab.files["kamailio.cfg"].splitlines()
                       if line.startswith("tls_threads_mode=")]
            values.update({
                "tls_globals": BARE_TLS_GLOBALS % {"threads_mode": "".join(line + "\n" for line in threads),
                                                   "tls_listen": "%s:%d" % (self.bare_acg, SBC_TLS_PORT)},
                "tls_modules": BARE_TLS_MODULES % {"tls_cfg": tls_cfg},
                # SNI, and the ACG-facing socket as the connection's source (the dispatcher's rows
                # name it for the generated config).
                "to_peer": '$xavp(tls=>server_name) = "%s"; $fs = "tls:%s:%d"; ' % (
                    self.hostname(1), self.bare_acg, SBC_TLS_PORT),
                "peer_uri": "sip:%s:%d;transport=tls" % (self.topo.region1(1), PEER_PORT)})
        (self.bare_dir / "kamailio.cfg").write_text(BARE_PROXY % values)

    def stop(self) -> None:
        self.lab.stop()

    def proxies(self) -> list[Proxy]:
        """The proxies of one run (not started): the generated config, the bare proxy, then any
        --variants, each on addresses of its own."""
        assert self.lab.kamailio is not None
        lab = self.lab
        proxies = [Proxy("generated", lab.kamailio, "%s:5060" % self.topo.sbc_core, lab.reset_peers,
                         lambda: self._ready(lab.kamailio))]
        binds = [lab.cfg_dir / "pki"] if self.transport == "tls" else []
        kamailio = KamailioProcess(self.bare_dir / "kamailio.cfg", self.bare_dir, self.bare_dir / "run",
                                   shared_memory_mb=lab.shared_memory_mb,
                                   rootfs=self.kamailio_runtime.rootfs if self.kamailio_runtime else None,
                                   binds=binds, memory_manager=self.memory_manager)
        proxies.append(Proxy("bare", kamailio, "%s:5060" % self.bare_core, lambda: None, lambda: None))
        for index, name in enumerate(self.variants):
            proxies.append(self._variant(index, name))
        return proxies

    def _variant(self, index: int, name: str) -> Proxy:
        """The rendered config with VARIANTS[name] applied, on its own sockets and run dir (octets
        40 + 2 * index and the next one); the generated config's other files as they are."""
        lab = self.lab
        core, acg = self.topo.net(40 + 2 * index, 1), self.topo.net(41 + 2 * index, 1)
        workdir = self.work / ("variant-" + name)
        (workdir / "cfg").mkdir(parents=True, exist_ok=True)
        replacements = [(str(lab.run_dir), str(workdir / "run")),
                        (str(rendered_path(lab.cfg_dir, "dispatcher.list")),
                         str(rendered_path(workdir / "cfg", "dispatcher.list"))),
                        (self.topo.sbc_core, core), (self.topo.sbc_acg, acg)]
        variant: dict[str, str] = {}
        for filename in ("kamailio.cfg", "dispatcher.list"):
            text = lab.files[filename]
            for old, new in replacements:
                text = re.sub(re.escape(old) + r"(?![0-9])", new, text)
            if filename == "kamailio.cfg":
                text = VARIANTS[name][1](text, self.hostname(1))
            variant[filename] = text
        write_rendered(workdir / "cfg", variant)
        kamailio = KamailioProcess(workdir / "cfg" / "kamailio.cfg", workdir, workdir / "run",
                                   resolv_conf=lab.dns.resolv_conf, shared_memory_mb=lab.shared_memory_mb,
                                   rootfs=self.kamailio_runtime.rootfs if self.kamailio_runtime else None,
                                   # The configuration and the SBC's secret (ping relay, dialog names), as the lab's.
                                   binds=[lab.cfg_dir] + ([Path(lab.settings["secret_file"]).parent]
                                                          if "secret_file" in lab.settings else []),
                                   memory_manager=VARIANT_MEMORY_MANAGER.get(name, self.memory_manager))
        return Proxy(name, kamailio, "%s:5060" % core, lambda: lab.reset_peers(kamailio),
                     lambda: self._ready(kamailio), short="v%d" % (index + 1))

    def _ready(self, kamailio: t.Optional[KamailioProcess]) -> None:
        """A generated config (or a variant) has both peers active, then every row reset."""
        assert kamailio is not None
        for address in (self.topo.region1(1), self.topo.region2(1)):
            if self.lab.wait_peer_state(address, True, 15.0, kamailio) is None:
                raise KamailioError("peer %s not active: %s" % (address, kamailio.dispatcher_states()))
        self.lab.reset_peers(kamailio)

    def start_peers(self, workdir: Path) -> None:
        """One SIPp UAS per region (region 1 gets the calls; region 2 only OPTIONS from the generated
        config), over the bench's transport; with TLS each presents its region's certificate and
        requires the SBC's (signed by the operator CA)."""
        for region, address in ((1, self.topo.region1(1)), (2, self.topo.region2(1))):
            kwargs: dict[str, t.Any] = {}
            if self.transport == "tls":
                assert self.pki is not None
                cert = self.pki.peers[self.hostname(region)]
                kwargs = {"runtime": self.sipp_runtime, "tls": (cert.cert, cert.key, self.pki.operator_ca.cert)}
            peer = SippPeer("p%d" % region, workdir, address, port=PEER_PORT, transport=self.transport, **kwargs)
            peer.trace = False
            self.peers.append(peer)
            peer.start()

    def revive_peers(self) -> list[str]:
        """Restart any peer that exited (SIPp exits when a TLS handshake fails, e.g. when a Kamailio
        under overload runs out of memory mid-handshake), so that one proxy's overload does not
        fail the next proxy's step. Returns the names of the peers restarted."""
        revived = []
        for peer in self.peers:
            if peer.proc is None or peer.proc.poll() is not None:
                peer.stop(kill=True)
                peer.start()
                revived.append(peer.name)
        return revived

    def stop_peers(self) -> None:
        for peer in self.peers:
            peer.stop(kill=True)
        self.peers = []

    def caller(self, name: str, workdir: Path, target: str) -> SippCaller:
        caller = SippCaller(name, workdir, self.topo.core_caller, target, hold_ms=self.hold_ms)
        caller.trace = False
        return caller

    def transport_check(self, kamailio: KamailioProcess) -> str:
        """Evidence that calls went to the peer over TLS: Kamailio's own TLS connection list."""
        if self.transport != "tls":
            return "udp"
        peer = self.topo.region1(1)
        try:
            connections = kamailio.rpc("tls.list") or []
        except (OSError, ValueError, KamailioError) as exc:
            return "tls.list failed: %s" % exc
        if isinstance(connections, dict):
            connections = [connections]
        # tls.list names the remote end src_ip/src_port and the local one dst_ip/dst_port.
        to_peer = [c for c in connections if isinstance(c, dict) and peer in (c.get("src_ip"), c.get("dst_ip"))]
        if not to_peer:
            return "NO TLS connection to %s in tls.list: %s" % (peer, connections)
        c = to_peer[0]
        cipher = " ".join(str(c.get("cipher", "")).split()[:2])
        return "tls.list: %d connection(s) with the peer %s, e.g. %s %s, SNI %s, %s" % (
            len(to_peer), peer, "/".join(str(c.get(k)) for k in ("src_ip", "src_port", "dst_ip", "dst_port")),
            c.get("state"), c.get("sni"), cipher)


def _rendered_debug(cfg: str) -> int:
    """The generated config's log level, so that the bare proxy logs exactly as much."""
    for line in cfg.splitlines():
        if line.startswith("debug="):
            return int(line.split("=", 1)[1])
    return 2


def _meter(rig: Rig, kamailio: KamailioProcess) -> CpuMeter:
    """CPU seconds so far of Kamailio (every process), of the peer taking the calls, of the SIPp
    callers that finished and of the whole machine (other test runs included), to see what limits
    the top of the ladder."""
    hz = float(os.sysconf("SC_CLK_TCK"))

    def meter() -> dict[str, float]:
        peer = rig.peers[0].proc
        figures = {"kamailio": kamailio.cpu_seconds(), "peer": tree_cpu_seconds(peer.pid) if peer else 0.0,
                   "caller": reaped_children_seconds(), "machine": machine_busy_seconds()}
        figures.update(("pid:%d" % pid, cpu_ticks(pid) / hz) for pid in kamailio.pids())
        return figures
    return meter


def _turns(proxies: t.Sequence[Proxy], index: int) -> list[Proxy]:
    """Who goes first rotates, so that none always follows another's load."""
    k = index % len(proxies) if proxies else 0
    return list(proxies[k:]) + list(proxies[:k])


def _revive(rig: Rig, before: str) -> None:
    revived = rig.revive_peers()
    if revived:
        print("    (peer %s had exited and was restarted before %s)" % (", ".join(revived), before))


def measure_idle(proxies: t.Sequence[Proxy], figures: dict[str, ProxyFigures]) -> None:
    """Kamailio's own CPU use without calls (timers, pings), per proxy."""
    for proxy in proxies:
        idle_before, idle_started = proxy.kamailio.cpu_seconds(), time.monotonic()
        time.sleep(IDLE_SECONDS)
        figures[proxy.name].idle_ms_per_s = (proxy.kamailio.cpu_seconds() - idle_before) * 1000.0 / (
            time.monotonic() - idle_started)


def measure_cpu(rig: Rig, proxies: t.Sequence[Proxy], figures: dict[str, ProxyFigures], label: str,
                workdir: Path, rate: int, seconds: float, chunks: int, run: int) -> None:
    """(d): ``rate`` calls/s for ``seconds`` per proxy, in ``chunks`` turns; Kamailio CPU (every
    process, before/after each turn) per completed call."""
    used = {proxy.name: 0.0 for proxy in proxies}
    cpu = {proxy.name: CpuFigures() for proxy in proxies}
    per_chunk = max(1, int(rate * seconds / chunks))
    for chunk in range(chunks):
        for proxy in _turns(proxies, chunk + run):
            name = "%s-%s-cpu%d-%d" % (proxy.short, label, rate, chunk + 1)
            _revive(rig, name)
            proxy.before_step()
            before = proxy.kamailio.cpu_seconds()
            result = rig.caller(name, workdir, proxy.target).run(
                per_chunk, rate=rate, limit=max(2000, rate * 4), timeout_s=int(seconds) + 60, recv_timeout_ms=5000)
            used[proxy.name] += proxy.kamailio.cpu_seconds() - before
            cpu[proxy.name].calls += result.successful
            cpu[proxy.name].failed += per_chunk - result.successful
    for proxy in proxies:
        f = cpu[proxy.name]
        f.ms_per_call = used[proxy.name] * 1000.0 / f.calls if f.calls else float("nan")
        figures[proxy.name].cpu[rate] = f
        print("    %s: %d calls at %d calls/s in %d turns: %d failed, Kamailio CPU %.2f s = %.3f ms/call" % (
            proxy.name, per_chunk * chunks, rate, chunks, f.failed, used[proxy.name], f.ms_per_call))


def measure_ladder(rig: Rig, proxies: t.Sequence[Proxy], figures: dict[str, ProxyFigures], label: str,
                   workdir: Path, rates: t.Sequence[int], seconds: float, retries: int, run: int) -> None:
    """(c): the proxies climb ``rates`` taking turns at each rate; a proxy stops at the first rate it
    does not sustain (after ``retries`` more tries of that rate: one failed step can be another test
    run's burst on this shared machine, and the same retry applies to every proxy)."""
    climbing = {proxy.name for proxy in proxies}
    meters = {proxy.name: _meter(rig, proxy.kamailio) for proxy in proxies}
    for index, rate in enumerate(rates):
        for proxy in _turns([p for p in proxies if p.name in climbing], index + run):
            for attempt in range(1 + retries):
                name = "%s-%s-%d" % (proxy.short, label, rate)
                _revive(rig, name)
                proxy.before_step()
                step = ladder_step(rig.caller(name, workdir, proxy.target), rate, seconds, meters[proxy.name])
                step.attempts = attempt + 1
                if step.sustained:
                    break
            figures[proxy.name].steps.append(step)
            if step.sustained:
                figures[proxy.name].sustained = rate
            else:
                climbing.discard(proxy.name)
        if not climbing:
            break


def measure_run(rig: Rig, run: int, rates: t.Sequence[int], seconds: float, cpu_rates: t.Sequence[int],
                cpu_seconds: float, cpu_chunks: int, retries: int, kamailio_cpu: float = 0.0) -> dict[str, ProxyFigures]:
    """One run: fresh peers and fresh Kamailios (all at once); warm-up calls (open the TLS
    connection, check it), (d) at each of ``cpu_rates``, then every Kamailio capped at
    ``kamailio_cpu`` cores (when given) and (c). Everything stopped on return."""
    label = "r%d" % run
    workdir = rig.work / "sipp" / label
    proxies = rig.proxies()
    figures = {proxy.name: ProxyFigures() for proxy in proxies}
    caps: list[CpuCap] = []
    try:
        rig.start_peers(workdir)
        for proxy in proxies:
            proxy.kamailio.start()
        for proxy in proxies:
            proxy.ready()
            warm = rig.caller("%s-%s-warm" % (proxy.short, label), workdir, proxy.target).run(
                40, rate=20, timeout_s=30, recv_timeout_ms=5000)
            figures[proxy.name].transport_check = rig.transport_check(proxy.kamailio)
            figures[proxy.name].shm_start_mb = shm_mb(proxy.kamailio, "real_used")
            print("    %s (%s): warm-up %d ok, %d failed; %s" % (
                proxy.name, proxy.short, warm.successful, warm.failed, figures[proxy.name].transport_check))
        measure_idle(proxies, figures)
        for cpu_rate in cpu_rates:
            measure_cpu(rig, proxies, figures, label, workdir, cpu_rate, cpu_seconds, cpu_chunks, run)
        if rates:
            if kamailio_cpu:
                for proxy in proxies:
                    caps.append(CpuCap(proxy.short, kamailio_cpu))
                    caps[-1].add(proxy.kamailio.pids())
            measure_ladder(rig, proxies, figures, label, workdir, rates, seconds, retries, run)
        for proxy in proxies:
            figures[proxy.name].shm_max_mb = shm_mb(proxy.kamailio, "max_used")
            figures[proxy.name].pkg_max_mb = pkg_max_mb(proxy.kamailio)
    finally:
        _all([proxy.kamailio.stop for proxy in proxies] + [rig.stop_peers] + [cap.close for cap in caps])
    return figures


def pkg_max_mb(kamailio: KamailioProcess) -> float:
    """The private memory of Kamailio's most used process in MB (pkg.stats real_used); NaN when the RPC fails."""
    try:
        answer = kamailio.rpc("pkg.stats") or []
        return max(float(p["real_used"]) for p in (answer if isinstance(answer, list) else [answer])) / 1048576.0
    except (OSError, ValueError, KeyError, TypeError, KamailioError):
        return float("nan")


def shm_mb(kamailio: KamailioProcess, figure: str) -> float:
    """A figure of Kamailio's shared memory in MB (core.shmmem: real_used now, max_used since the start);
    NaN when the RPC fails."""
    try:
        answer = kamailio.rpc("core.shmmem") or {}
        return float(answer[figure]) / (1024.0 * 1024.0)
    except (OSError, ValueError, KeyError, TypeError, KamailioError):
        return float("nan")


def _all(actions: t.Sequence[t.Callable[[], None]]) -> None:
    """Run every cleanup action even when one fails or is interrupted; then raise the first error."""
    error: t.Optional[BaseException] = None
    for action in actions:
        try:
            action()
        except BaseException as exc:  # pylint: disable=broad-except
            error = error or exc
    if error is not None:
        raise error


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def _ladder(steps: t.Sequence[Step]) -> str:
    """"600 900 1100+ 1200x(12 failed, 950/s)": + sustained at a retry, x not sustained (last try)."""
    return " ".join("%d%s" % (s.rate, ("+" if s.attempts > 1 else "") if s.sustained else
                              "x(%d failed, %.0f/s)" % (s.failed, s.achieved)) for s in steps)


def _median_ratio(results: t.Sequence[dict[str, ProxyFigures]], name: str, base: str,
                  figure: t.Callable[[ProxyFigures], float]) -> float:
    return statistics.median(_ratio(figure(f[name]), figure(f[base])) for f in results)


def _cpu_ms(rate: int) -> t.Callable[[ProxyFigures], float]:
    return lambda f: f.cpu[rate].ms_per_call if rate in f.cpu else float("nan")


def print_table(results: list[dict[str, ProxyFigures]], rates: t.Sequence[int], cpu_rates: t.Sequence[int],
                kamailio_cpu: float) -> None:
    """Each run's figures, then each target as the median of the runs' own ratios (generated and bare
    measured in turns within a run, so a run's ratio is not moved by the machine's load drifting
    between runs), the ratio of the medians beside it."""
    if not results:
        return
    names = [n for n in results[0] if n not in ("generated", "bare")]
    print("    run  sustained calls/s gen / bare  ratio  %s  idle CPU ms/s gen / bare  shm MB after warm-up, max gen / bare"
          "  pkg MB max gen / bare  ladder gen | bare (x: not sustained)" % "  ".join(
              "CPU ms/call @%d gen / bare  ratio" % rate for rate in cpu_rates))
    for run, figures in enumerate(results, start=1):
        gen, bare = figures["generated"], figures["bare"]
        cpu = "  ".join("%13.3f / %-6.3f  %5.2f" % (
            _cpu_ms(rate)(gen), _cpu_ms(rate)(bare), _ratio(_cpu_ms(rate)(gen), _cpu_ms(rate)(bare)))
            for rate in cpu_rates)
        print("    %3d  %13d / %-5d  %5.2f  %s  %13.1f / %-6.1f  %5.1f, %5.1f / %5.1f, %5.1f  %5.2f / %-5.2f  %s | %s" % (
            run, gen.sustained, bare.sustained, _ratio(gen.sustained, bare.sustained), cpu, gen.idle_ms_per_s,
            bare.idle_ms_per_s, gen.shm_start_mb, gen.shm_max_mb, bare.shm_start_mb, bare.shm_max_mb,
            gen.pkg_max_mb, bare.pkg_max_mb, _ladder(gen.steps), _ladder(bare.steps)))
        for name, f in figures.items():
            for rate, c in sorted(f.cpu.items()):
                if c.failed:
                    print("         warning: %s had %d failed calls in the CPU measurement at %d calls/s" % (
                        name, c.failed, rate))
    if rates:
        ratio = _median_ratio(results, "generated", "bare", lambda f: float(f.sustained))
        gen_med = statistics.median(f["generated"].sustained for f in results)
        bare_med = statistics.median(f["bare"].sustained for f in results)
        print("(c) sustained calls/s, %s: ratio %.2f (median of the runs' ratios; target >= 0.90) -> %s; medians "
              "generated %.0f, bare %.0f (ratio %.2f)%s" % (
                  "Kamailio capped at %.2f cores" % kamailio_cpu if kamailio_cpu else
                  "Kamailio NOT capped (this measures the rig, not Kamailio: use --kamailio-cpu)",
                  ratio, "OK" if ratio >= 0.9 else "MISSED", gen_med, bare_med, _ratio(gen_med, bare_med),
                  " (both sustained the top rate: raise --rates)" if gen_med == bare_med == rates[-1] else ""))
    for rate in cpu_rates:
        ratio = _median_ratio(results, "generated", "bare", _cpu_ms(rate))
        gen_med = statistics.median(_cpu_ms(rate)(f["generated"]) for f in results)
        bare_med = statistics.median(_cpu_ms(rate)(f["bare"]) for f in results)
        print("(d) Kamailio CPU per call at %d calls/s: ratio %.2f (median of the runs' ratios; target <= 1.10) -> %s; "
              "medians generated %.3f ms, bare %.3f ms (ratio %.2f)" % (
                  rate, ratio, "OK" if ratio <= 1.1 else "MISSED", gen_med, bare_med, _ratio(gen_med, bare_med)))
    for name in names:
        parts = []
        if rates:
            parts.append("sustained %s calls/s, /bare %.2f, /generated %.2f" % (
                "/".join(str(f[name].sustained) for f in results),
                _median_ratio(results, name, "bare", lambda f: float(f.sustained)),
                _median_ratio(results, name, "generated", lambda f: float(f.sustained))))
        for rate in cpu_rates:
            parts.append("CPU @%d %s ms/call, /bare %.2f, /generated %.2f" % (
                rate, "/".join("%.3f" % _cpu_ms(rate)(f[name]) for f in results),
                _median_ratio(results, name, "bare", _cpu_ms(rate)),
                _median_ratio(results, name, "generated", _cpu_ms(rate))))
        print("    variant %s (%s): %s (per run; ratios: medians of the runs' ratios)" % (
            name, VARIANTS[name][0], "; ".join(parts)))


def describe(rig: Rig, args: argparse.Namespace, rates: t.Sequence[int], cpu_rates: t.Sequence[int]) -> str:
    """The run's parameters, printed before its figures."""
    kamailio = rig.kamailio_runtime
    sipp = rig.sipp_runtime
    return ("(c)/(d) generated config vs bare stateful proxy, %s towards the peers: Kamailio %s%s, workers udp %d "
            "tcp %d, shared memory %d MB, memory manager %s, CPU cap in (c) %s; peers SIPp %s; calls held %d ms; ladder %s calls/s, %.0f "
            "s steps, %d retries; CPU (uncapped) at %s calls/s for %.0f s each in %d turns; %d run(s)%s" % (
                args.transport, rig.kamailio_version,
                " (%s)" % kamailio.origin.split(" (", maxsplit=1)[0] if kamailio else "",
                WORKERS["udp"], WORKERS["tcp"], rig.lab.shared_memory_mb, rig.memory_manager,
                "%.2f cores" % args.kamailio_cpu if args.kamailio_cpu else "none",
                "%s (%s%s)" % (sipp.version, sipp.origin.split(" (", maxsplit=1)[0],
                               ", wolfSSL fix preloaded" if sipp.preload else "") if sipp else "(host, udp)",
                rig.hold_ms, ",".join(map(str, rates)) or "-", args.step_seconds, args.retries,
                ",".join(map(str, cpu_rates)) or "-",
                args.cpu_seconds, args.cpu_turns, args.runs,
                "; variants %s" % ", ".join(rig.variants) if rig.variants else ""))


class CpuCap:
    """Caps a running Kamailio (every process) at ``cores`` CPUs with a cgroup of its own (cgroup v1
    "cpu" controller, CFS quota over a short period so that throttling stalls stay a few ms). With a
    cap well below what the machine and the SIPp peers can do, the top of the ladder is where
    Kamailio's own CPU runs out, not where the shared machine does."""

    ROOT = Path("/sys/fs/cgroup/cpu")
    PERIOD_US = 10000

    def __init__(self, name: str, cores: float) -> None:
        if not (self.ROOT / "cpu.cfs_quota_us").exists():
            raise RuntimeError("--kamailio-cpu needs the cgroup v1 cpu controller at %s" % self.ROOT)
        self.path = self.ROOT / ("commsgw-bench-%d-%s" % (os.getpid(), name))
        self.path.mkdir(exist_ok=True)
        (self.path / "cpu.cfs_period_us").write_text("%d\n" % self.PERIOD_US)
        (self.path / "cpu.cfs_quota_us").write_text("%d\n" % int(cores * self.PERIOD_US))

    def add(self, pids: t.Iterable[int]) -> None:
        for pid in pids:
            try:
                (self.path / "cgroup.procs").write_text("%d\n" % pid)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Remove the cgroup once its processes are gone (bounded wait)."""
        for dummy in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        print("    warning: could not remove %s" % self.path)


class PrefixLease:
    """An exclusive claim on a whole 127.N.0.0/16 across processes (flock, freed on close/exit)."""

    def __init__(self, prefix: str) -> None:
        BLOCK_LOCK_DIR.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(str(BLOCK_LOCK_DIR / ("prefix-%s.lock" % prefix)), os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise KamailioError("%s.0.0/16 is in use by another bench run" % prefix)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--transport", choices=("udp", "tls"), default="udp",
                        help="towards the peers; tls: Kamailio 6.0, figures (c) and (d) only")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parts", default=None, help="which figures to measure, e.g. 'cd' (default: abcd, tls: cd)")
    parser.add_argument("--rates", default=None, help="offered calls/s climbed in (c), comma-separated "
                        "(default udp: 300,500,...,1400; tls: 1000,1200,1400,1500,...,2400; tls with --kamailio-cpu C: "
                        "400,500,...,2000 x C / 0.25)")
    parser.add_argument("--step-seconds", type=float, default=4.0, help="length of each (c) step")
    parser.add_argument("--cpu-rates", default="100,1000", help="offered calls/s of the (d) measurements, "
                        "comma-separated")
    parser.add_argument("--cpu-seconds", type=float, default=20.0, help="length of each (d) measurement")
    parser.add_argument("--cpu-turns", type=int, default=4, help="(d) is measured in this many turns per proxy")
    parser.add_argument("--retries", type=int, default=1, help="more tries of a (c) rate not sustained")
    parser.add_argument("--variants", default="", help="tls only, diagnostic: also run these variants of the "
                        "generated config (comma-separated: %s)" % ", ".join(VARIANTS))
    parser.add_argument("--kamailio-cpu", type=float, default=0.0, metavar="CORES",
                        help="cap every Kamailio at this many CPUs (cgroup) for (c), so that (c) finds Kamailio's limit "
                        "rather than the rig's (default: no cap)")
    parser.add_argument("--memory-manager", choices=MEMORY_MANAGERS, default=DEFAULT_MEMORY_MANAGER,
                        help="Kamailio's memory manager (-x/-X) for every proxy, the bare one too (default: the one "
                        "the kamailio role starts Kamailio with, %(default)s)")
    parser.add_argument("--hold-ms", type=int, default=HOLD_MS, help="ACK -> BYE in the (c)/(d) calls")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, configs) and print it")
    args = parser.parse_args()
    # SIGTERM (e.g. from timeout(1)) unwinds like Ctrl-C, so every Kamailio and SIPp is stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    tls = args.transport == "tls"
    parts = args.parts if args.parts is not None else ("cd" if tls else "abcd")
    if tls and set(parts) & set("ab"):
        parser.error("(a) and (b) are measured over UDP only")
    default_rates = ("300,500,600,700,800,850,900,950,1000,1100,1200,1400" if not tls else
                     "1000,1200,1400,1500,1600,1700,1800,1900,2000,2200,2400" if not args.kamailio_cpu else
                     ",".join(str(int(r * args.kamailio_cpu / 0.25)) for r in range(400, 2100, 100)))
    rates = [int(r) for r in (args.rates or default_rates).split(",")]
    rates = rates if "c" in parts else []
    variants = [v for v in args.variants.split(",") if v]
    if variants and not tls:
        parser.error("--variants needs --transport tls (the UDP labs have no addresses to spare)")
    for variant in variants:
        if variant not in VARIANTS:
            parser.error("unknown variant %r (known: %s)" % (variant, ", ".join(VARIANTS)))
    cpu_rates = [int(r) for r in args.cpu_rates.split(",") if r] if "d" in parts else []
    lease: t.Union[BlockLease, PrefixLease] = PrefixLease(TLS_PREFIX) if tls else BlockLease()
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="kamailio-bench-") as tmp:
            work = Path(tempfile.mkdtemp(prefix="kamailio-bench-")) if args.keep else Path(tmp)
            if args.keep:
                print("work directory (kept): %s" % work)
            if "a" in parts:
                print("(a) silent peer taken out (target: within window + 1 s)")
            for interval, threshold in ((1, 1), (1, 2), (2, 2)) if "a" in parts else ():
                assert isinstance(lease, BlockLease)
                times = taken_out(work, lease.block, interval, threshold, args.runs)
                window = interval * threshold
                print("    interval %d s x threshold %d = window %d s: median %.2f s, max %.2f s, runs %s -> %s" % (
                    interval, threshold, window, statistics.median(times), max(times),
                    ", ".join("%.2f" % x for x in times), "OK" if max(times) <= window + 1.0 else "MISSED"))
            if "b" in parts:
                print("(b) extra post-dial delay with the first peer silent (target: within timer + 0.1 s)")
            for timer_ms in (1000, 1500) if "b" in parts else ():
                assert isinstance(lease, BlockLease)
                healthy, silent = post_dial_delay(work, lease.block, timer_ms, max(3, args.runs))
                extra = silent - healthy
                print("    INVITE timer %d ms: healthy PDD %.1f ms, first peer silent %.1f ms, extra %.1f ms -> %s" % (
                    timer_ms, healthy * 1000, silent * 1000, extra * 1000,
                    "OK" if extra <= timer_ms / 1000.0 + 0.1 else "MISSED"))
            if rates or cpu_rates:
                # One peer per region; calls all go to the region 1 peer (one UAS is the limit here).
                peers = ((1, 10, 100),)
                topo = (Topology(prefix=TLS_PREFIX, domain=TLS_DOMAIN, region1_peers=peers, region2_peers=peers)
                        if tls else Topology(block=lease.block, region1_peers=peers, region2_peers=peers))  # type: ignore[union-attr]
                rig = Rig(work, args.transport, topo, variants, args.memory_manager)
                rig.hold_ms = args.hold_ms
                try:
                    rig.prepare()
                    print(describe(rig, args, rates, cpu_rates))
                    results = []
                    for run in range(1, args.runs + 1):
                        print("  run %d" % run)
                        results.append(measure_run(rig, run, rates, args.step_seconds, cpu_rates, args.cpu_seconds,
                                                   args.cpu_turns, args.retries, args.kamailio_cpu))
                finally:
                    _all([rig.stop_peers, rig.stop])
                print_table(results, rates, cpu_rates, args.kamailio_cpu)
    finally:
        lease.close()
    print("elapsed %.0f s" % (time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
