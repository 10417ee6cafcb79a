# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile SIP sent to the rendered Kamailio (issue 13 item 10, SIP half).

The lab is the conformance lab (harness.kamailio.AcgLab: Knot DNS -> SRV -> plan -> rendered config ->
the machine's Kamailio), once with UDP on both sides and once with TCP. Python SIP sinks
(harness.hostile_sip.SipSink) stand in for the ACG peers and the operator core's next hop; they
answer the dispatcher's OPTIONS and count every other message they receive, per hostile class.

Sources: outside every ACG /28 and inside one, on the ACG-facing socket; the core caller and an
address outside the ACG ranges on the core-facing socket. Classes: see hostile_sip.corpus, plus
OPTIONS/INVITE floods (bounded). Asserted: same Kamailio PIDs before and after, a valid OPTIONS and a
real SIPp call each way still work afterwards, nothing from outside the ACG ranges reaches the core
sink, malformed classes reach no sink at all, and shared memory returns to within a bound.
Expected refusals: 403 (ACL, outside the /28s), 400 (sanity_check: missing/malformed mandatory
headers, bad Content-Length, bad Via/CSeq, Request-URI scheme not sip/sips/tel; a NUL, control or
8-bit byte in the Request-URI), 483 (Max-Forwards 0), 513 (too large, core side); replies matching no transaction and unparsable bytes are dropped
silently. TLS is covered by the same request route (the TLS lab costs a rootfs and certificates).

``COMMSGW_HOSTILE_K6=1`` runs the UDP lab once more on the Kamailio 6.0 rootfs (harness.rootfs).
"""

from __future__ import annotations

import os
import time
import typing as t
from pathlib import Path

import pytest

from harness.tools import needs
from harness.kamailio import AcgLab, BlockLease, Topology
from harness import hostile_sip as hs
from harness.sipp import SippCaller, SippPeer

pytestmark = [
    pytest.mark.integration,
    needs("kamailio", "sipp", "knotd", "unshare"),
]

LABS = ["udp", "tcp"] + (["udp-k6"] if os.environ.get("COMMSGW_HOSTILE_K6") == "1" else [])
SHM_BOUND = 2 * 1024 * 1024
TOTAL_BUDGET_S = 120.0


@pytest.fixture(scope="module", params=LABS)
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[AcgLab]:
    proto, dummy, flavour = request.param.partition("-")
    runtime = None
    if flavour == "k6":
        from harness import rootfs
        try:
            runtime = rootfs.kamailio6_runtime()
        except rootfs.RootfsUnavailable as exc:
            pytest.skip(str(exc))
    lease = BlockLease()
    topo = Topology(block=lease.block)
    settings = {"core_listen": {"address": topo.sbc_core, "port": 5060, "transport": proto}}
    lab = AcgLab(tmp_path_factory.mktemp("hostile-sip"), topo, transport=proto, settings=settings, runtime=runtime)
    try:
        lab.start()
        yield lab
    finally:
        lab.stop()
        lease.close()


def shm_used(lab: AcgLab) -> int:
    assert lab.kamailio is not None
    return int(lab.kamailio.rpc("core.shmmem")["real_used"])


def wait_shm(lab: AcgLab, bound: int, timeout_s: float = 20.0) -> int:
    deadline = time.monotonic() + timeout_s
    used = shm_used(lab)
    while used > bound and time.monotonic() < deadline:
        time.sleep(0.5)
        used = shm_used(lab)
    return used


def test_hostile_sip_never_crashes_leaks_or_grows(lab: AcgLab, tmp_path: Path) -> None:
    topo, proto = lab.topo, lab.transport
    assert lab.kamailio is not None
    acg_peers = [topo.region1(h) for h, dummy, dummy2 in topo.region1_peers] + \
                [topo.region2(h) for h, dummy, dummy2 in topo.region2_peers]
    ctx_args = {"core_hop": topo.core_next_hop, "acg_peer": acg_peers[0]}
    outside, inside = topo.net(12, 1), topo.net(10, 9)
    # (label, source, SBC socket, sink that must not see the malformed classes, everything refused?)
    runs = [("acg-side/outside-28s", outside, topo.sbc_acg, "core", True),
            ("acg-side/inside-28", inside, topo.sbc_acg, "core", False),
            ("core-side/core-caller", topo.core_caller, topo.sbc_core, "acg", False),
            ("core-side/outside", outside, topo.sbc_core, "acg", True)]
    core = hs.SipSink(topo.core_next_hop).start()
    acg = [hs.SipSink(address).start() for address in acg_peers]
    started = time.monotonic()
    table: dict[tuple[str, str], hs.Outcome] = {}
    leaks: dict[str, dict[str, int]] = {}
    try:
        lab.reset_peers()
        assert lab.wait_peer_state(acg_peers[0], True, 5.0) is not None, "ACG sinks never became active"
        pids = lab.kamailio.pids()
        shm_before = shm_used(lab)
        for label, source, sbc, watched, all_refused in runs:
            core_before, acg_before = dict(core.counts), [dict(s.counts) for s in acg]
            for cls, messages in hs.corpus(hs.Ctx(proto, source, 0, sbc, 5060, **ctx_args)).items():
                assert time.monotonic() - started < TOTAL_BUDGET_S, "hostile run over its time budget"
                answers = hs.send(proto, source, sbc, 5060, lambda c, k=cls: hs.corpus(c)[k], ctx_args, wait_s=0.25)
                outcome = table.setdefault((label, cls), hs.Outcome())
                for answer in answers:
                    outcome.add(answer)
                if all_refused:
                    assert set(outcome.answers) <= {"403", "400", "416", "483", "513", "dropped"}, (label, cls, outcome)
            time.sleep(0.5)      # let the last relayed messages land
            leaks[label] = _delta(core.counts, core_before) if watched == "core" else \
                _sum_deltas([s.counts for s in acg], acg_before)
            # Flood, bounded: OPTIONS x200 and INVITE x100 on one socket / connection.
            for method, count in (("OPTIONS", 200), ("INVITE", 100)):
                ctx = hs.Ctx(proto, source, 5999, sbc, 5060, **ctx_args)
                ruri = b"sip:%s:5060" % sbc.encode() if method == "OPTIONS" else None
                flood = [hs.request(ctx, "flood-" + method.lower(), method=method, ruri=ruri) for dummy in range(count)]
                codes = hs.flood(proto, source, sbc, 5060, flood)
                outcome = table.setdefault((label, "flood-" + method.lower()), hs.Outcome())
                outcome.sent += count
                for code in codes:
                    outcome.answers[str(code)] = outcome.answers.get(str(code), 0) + 1
            time.sleep(0.5)
            leaks[label + "+floods"] = _delta(core.counts, core_before) if watched == "core" else \
                _sum_deltas([s.counts for s in acg], acg_before)
        alive_after = lab.kamailio.pids()
    finally:
        core.stop()
        for sink in acg:
            sink.stop()
    _print(table, leaks, proto)
    print("Kamailio processes before %d, after %d, crashed or restarted: %d"
          % (len(pids), len(alive_after), len(set(pids) ^ set(alive_after))))

    # -- no crash: same processes, still answering OPTIONS and calls --------------------------------
    assert alive_after == pids, "Kamailio processes changed (crash?): %s -> %s" % (pids, alive_after)
    for sbc in (topo.sbc_acg, topo.sbc_core):
        ok = hs.send(proto, topo.core_caller if sbc == topo.sbc_core else inside, sbc, 5060,
                     lambda c: [hs.request(c, "valid", method="OPTIONS", ruri=b"sip:%s:5060" % c.dst.encode())],
                     ctx_args, wait_s=2.0)
        assert ok == [200], (sbc, ok)
    _valid_calls(lab, tmp_path, proto, inside)

    # -- nothing from outside reaches the core; malformed classes reach nobody ---------------------
    assert leaks["acg-side/outside-28s+floods"] == {}, leaks
    assert leaks["core-side/outside+floods"] == {}, leaks
    for label, counts in leaks.items():
        bad = {cls: n for cls, n in counts.items() if cls not in hs.MAY_PASS and not cls.startswith("flood")}
        if label.split("+")[0] in ("acg-side/inside-28", "core-side/core-caller"):
            # In-dialog requests follow their Route set: legitimate from ACG and from the core. From an
            # unlisted address (outside the /28s, or outside core_allowed_sources) they are refused.
            bad.pop("fake-in-dialog", None)
        assert bad == {}, "malformed classes passed the SBC (%s): %s" % (label, bad)
    for (label, cls), outcome in table.items():
        if cls == "max-forwards-0":
            assert outcome.answers == {"483": outcome.sent}, (label, outcome)
        if cls in ("bad-ruri-scheme", "bad-bytes-in-ruri") or (cls == "content-length-bigger" and proto == "udp"):
            assert set(outcome.answers) <= {"400", "416"}, (label, cls, outcome)
        if label in ("acg-side/outside-28s", "core-side/outside") and cls.startswith("flood"):
            assert set(outcome.answers) <= {"403"}, (label, cls, outcome)

    # -- no hostile request made the SBC take a healthy ACG peer out (a relay that fails locally marks
    # the peer "ip": with enough of them every peer is out, a denial of service) --------------------
    marked = [line for line in lab.kamailio.log_text().splitlines() if "unreachable for" in line and " h13-" in line]
    assert not marked, "hostile requests marked ACG peers inactive:\n%s" % "\n".join(marked[:5])

    # -- memory: back within a bound once transactions expired -------------------------------------
    shm_after = wait_shm(lab, shm_before + SHM_BOUND)
    print("shm real_used before %d after %d (bound +%d)" % (shm_before, shm_after, SHM_BOUND))
    assert shm_after <= shm_before + SHM_BOUND, (shm_before, shm_after)


def _delta(now: t.Mapping[str, int], before: t.Mapping[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in now.items() if v - before.get(k, 0)}


def _sum_deltas(nows: t.Sequence[t.Mapping[str, int]], befores: t.Sequence[t.Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for now, before in zip(nows, befores):
        for k, v in _delta(now, before).items():
            total[k] = total.get(k, 0) + v
    return total


def _valid_calls(lab: AcgLab, tmp_path: Path, proto: str, inside: str) -> None:
    """A real call each way (SIPp): core -> ACG peer, ACG range -> core next hop."""
    topo = lab.topo
    peers = [SippPeer("peer-%d" % n, tmp_path, topo.region1(n), code=200, transport=proto).start() for n in (1, 2)]
    core = SippPeer("core", tmp_path, topo.core_next_hop, code=200, transport=proto).start()
    try:
        lab.reset_peers()
        assert lab.wait_peer_state(topo.region1(1), True, 5.0) is not None
        to_acg = SippCaller("to-acg", tmp_path, topo.core_caller, "%s:5060" % topo.sbc_core,
                            hold_ms=0, transport=proto).run(1, rate=1, timeout_s=20)
        to_core = SippCaller("to-core", tmp_path, inside, "%s:5060" % topo.sbc_acg,
                             hold_ms=0, transport=proto).run(1, rate=1, timeout_s=20)
    finally:
        for peer in peers + [core]:
            peer.stop(kill=True)
    assert to_acg.codes() == {200: 1}, to_acg.codes()
    assert to_core.codes() == {200: 1}, to_core.codes()


def _print(table: t.Mapping[tuple[str, str], hs.Outcome], leaks: t.Mapping[str, t.Mapping[str, int]],
           proto: str) -> None:
    print("\nhostile SIP over %s: messages tried per class and what the SBC answered" % proto)
    total = 0
    for (label, cls), outcome in sorted(table.items()):
        total += outcome.sent
        print("  %-24s %-24s sent %4d  %s" % (label, cls, outcome.sent, outcome.answers))
    for label, counts in leaks.items():
        print("  reached the far side from %-30s %s" % (label, dict(counts) or 0))
    print("hostile SIP over %s: %d messages tried" % (proto, total))
