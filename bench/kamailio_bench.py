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

Same real software as the conformance suite (Knot DNS, Kamailio, SIPp) on loopback; every loop is
bounded. Run as root:  PYTHONPATH=.collections:tests .venv/bin/python bench/kamailio_bench.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import typing as t
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / ".collections"))

from harness.kamailio import AcgLab, BlockLease, KamailioProcess, Topology  # noqa: E402
from harness.sipp import SippCaller, SippPeer, parse_message_log  # noqa: E402

BARE_PROXY = """#!KAMAILIO
# A bare stateful proxy: the reference for (c).
debug=1
log_stderror=no
children=%(children)d
auto_aliases=no
dns=no
rev_dns=no
listen=udp:%(listen)s:5060
loadmodule "jsonrpcs.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "siputils.so"
loadmodule "textops.so"
modparam("jsonrpcs", "dgram_socket", "%(run)s/kamailio_rpc.sock")
modparam("jsonrpcs", "fifo_name", "%(run)s/kamailio_rpc.fifo")
request_route {
    if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
    if (is_method("CANCEL")) { if (t_check_trans()) { t_relay(); } exit; }
    if (has_totag()) {
        if (loose_route()) { t_relay(); exit; }
        if (is_method("ACK")) { if (t_check_trans()) { t_relay(); } exit; }
        sl_send_reply("404", "Not Here"); exit;
    }
    t_check_trans();
    record_route();
    $du = "sip:%(peer)s:5060";
    t_relay();
}
"""


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


def sustained_rate(make_caller: t.Callable[[int], SippCaller], rates: t.Sequence[int], seconds: float,
                   before_step: t.Callable[[], None]) -> int:
    """The highest offered rate (calls/s) completed with no failed call and at >= 95 % of the offered
    rate, climbing ``rates`` and stopping at the first step that misses (0: none made it).

    A rate where calls fail is not sustained, however many completed: at overload the generated
    config's own OPTIONS probes time out, the peer is taken out and calls fail fast, which would
    otherwise read as a high "completed calls per second".
    """
    best = 0
    for rate in rates:
        before_step()
        caller = make_caller(rate)
        caller.trace = False
        calls = max(200, int(rate * seconds))
        started = time.monotonic()
        result = caller.run(calls, rate=rate, limit=2000, timeout_s=60, recv_timeout_ms=5000)
        achieved = result.successful / (time.monotonic() - started)
        kept_up = result.failed == 0 and result.successful == calls and achieved >= 0.95 * rate * calls / (
            calls + rate)  # SIPp needs about one extra second to finish the last calls
        print("    %s at %4d calls/s offered: %d ok, %d failed, %.0f completed/s -> %s" % (
            caller.name, rate, result.successful, result.failed, achieved, "sustained" if kept_up else "not sustained"))
        if not kept_up:
            break
        best = rate
    return best


def cps_ratio(work: Path, block: int, rates: t.Sequence[int], seconds: float) -> tuple[int, int]:
    # One local peer, so both proxies send every call to the same SIPp (one UAS is the limit here).
    topo = Topology(block=block, region1_peers=((1, 10, 100),), region2_peers=((1, 10, 100),))
    peers: list[SippPeer] = []
    target = "%s:5060" % topo.sbc_core
    try:
        lab = AcgLab(work / "cps", topo).start()
        try:
            peer = SippPeer("p1", lab.workdir, topo.region1(1))
            peer.trace = False
            peers.append(peer.start())
            generated = sustained_rate(lambda rate: SippCaller("gen-%d" % rate, lab.workdir, topo.core_caller,
                                                               target, hold_ms=0), rates, seconds, lab.reset_peers)
        finally:
            lab.stop()
        bare_dir = work / "bare"
        (bare_dir / "run").mkdir(parents=True, exist_ok=True)
        (bare_dir / "kamailio.cfg").write_text(BARE_PROXY % {
            "children": 4, "listen": topo.sbc_core, "run": bare_dir / "run", "peer": topo.region1(1)})
        bare_kam = KamailioProcess(bare_dir / "kamailio.cfg", bare_dir, bare_dir / "run").start()
        try:
            bare = sustained_rate(lambda rate: SippCaller("bare-%d" % rate, bare_dir, topo.core_caller, target,
                                                          hold_ms=0), rates, seconds, lambda: None)
        finally:
            bare_kam.stop()
    finally:
        for peer in peers:
            peer.stop(kill=True)
    return generated, bare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parts", default="abc", help="which figures to measure, e.g. 'c'")
    parser.add_argument("--rates", default="300,500,600,700,800,850,900,950,1000,1100,1200,1400",
                        help="offered calls/s climbed in (c), comma-separated")
    parser.add_argument("--step-seconds", type=float, default=4.0, help="length of each (c) step")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    lease = BlockLease()
    try:
        with tempfile.TemporaryDirectory(prefix="kamailio-bench-") as tmp:
            work = Path(tmp)
            print("(a) silent peer taken out (target: within window + 1 s)")
            for interval, threshold in ((1, 1), (1, 2), (2, 2)) if "a" in args.parts else ():
                times = taken_out(work, lease.block, interval, threshold, args.runs)
                window = interval * threshold
                print("    interval %d s x threshold %d = window %d s: median %.2f s, max %.2f s, runs %s -> %s" % (
                    interval, threshold, window, statistics.median(times), max(times),
                    ", ".join("%.2f" % x for x in times), "OK" if max(times) <= window + 1.0 else "MISSED"))
            print("(b) extra post-dial delay with the first peer silent (target: within timer + 0.1 s)")
            for timer_ms in (1000, 1500) if "b" in args.parts else ():
                healthy, silent = post_dial_delay(work, lease.block, timer_ms, max(3, args.runs))
                extra = silent - healthy
                print("    INVITE timer %d ms: healthy PDD %.1f ms, first peer silent %.1f ms, extra %.1f ms -> %s" % (
                    timer_ms, healthy * 1000, silent * 1000, extra * 1000,
                    "OK" if extra <= timer_ms / 1000.0 + 0.1 else "MISSED"))
            print("(c) sustained calls/s, generated config vs bare stateful proxy (target: ratio >= 0.9)")
            rates = [int(r) for r in args.rates.split(",")] if "c" in args.parts else []
            generated, bare = cps_ratio(work, lease.block, rates, args.step_seconds) if rates else (0, 0)
            ratio = generated / bare if bare else 0.0
            print("    sustained: generated config %d calls/s, bare proxy %d calls/s, ratio %.2f -> %s%s" % (
                generated, bare, ratio, "OK" if ratio >= 0.9 else "MISSED",
                " (both sustained the top rate: raise --rates)" if generated == bare == rates[-1] else ""))
    finally:
        lease.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
