# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Conformance of the rendered Kamailio configuration (non-TLS), black-box.

Real software only: Knot DNS serves the ACG SRV/A records, module_utils.srv resolves them, the plan
is built and rendered with render_kamailio, the machine's Kamailio runs the result in a private
mount namespace (its own resolv.conf), SIPp plays the ACG peers of two regions and the operator
core. Every assertion is on what the peers and the caller actually received.

Lab (harness.kamailio.Topology, block 0): region 1 (local) peers 127.0.10.1 (SRV prio 10, weight 60),
.2 (10, 40), .3 (20, 0); region 2 peers 127.0.11.1/.2 (10, 50/50); SBC ACG side 127.0.20.1, core
side 127.0.30.1; core next hop core.acg-k1.test -> 127.0.31.1. Timers: OPTIONS every 1 s,
2 failures out, 1 success back, ACG-leg INVITE timer 1000 ms.
"""

from __future__ import annotations

import time
import typing as t
from pathlib import Path

import pytest

from harness.tools import needs
from harness.kamailio import AcgLab, BlockLease, Topology
from harness.sipp import PeerGroup as Peers, SippCaller, SippPeer, emergency_forms, parse_message_log, udp_invite

pytestmark = [
    pytest.mark.integration,
    needs("kamailio", "sipp", "knotd", "unshare"),
]

# Filled in by the lab fixture from the address block it leased (concurrent runs never share one).
TOPO = Topology(block=0)
R1: list[str] = []
R2: list[str] = []
CORE_TARGET = ""
ACG_TARGET = ""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[AcgLab]:
    global TOPO, CORE_TARGET, ACG_TARGET
    lease = BlockLease()
    TOPO = Topology(block=lease.block)
    R1[:] = [TOPO.region1(1), TOPO.region1(2), TOPO.region1(3)]
    R2[:] = [TOPO.region2(1), TOPO.region2(2)]
    CORE_TARGET = "%s:5060" % TOPO.sbc_core
    ACG_TARGET = "%s:5060" % TOPO.sbc_acg
    lab = AcgLab(tmp_path_factory.mktemp("kamailio-lab"), TOPO)
    try:
        lab.start()
        yield lab
    finally:
        lab.stop()
        lease.close()


def everyone(code: t.Optional[int] = 200, **overrides: t.Optional[int]) -> dict[str, t.Optional[int]]:
    behaviours = {address: code for address in R1 + R2}
    for key, value in overrides.items():
        behaviours[{"p1": R1[0], "p2": R1[1], "p3": R1[2], "q1": R2[0], "q2": R2[1]}[key]] = value
    return behaviours


def settle(lab: AcgLab, alive: t.Iterable[str] = (), dead: t.Iterable[str] = ()) -> None:
    """Reset dispatcher state, then wait (bounded) until the named peers are in the wanted state."""
    lab.reset_peers()
    for address in alive:
        assert lab.wait_peer_state(address, True, 5.0) is not None, "%s never became active" % address
    for address in dead:
        assert lab.wait_peer_state(address, False, 8.0) is not None, "%s never taken out" % address


def call(workdir: Path, name: str, count: int, rate: float = 20.0, **kwargs: t.Any):
    caller_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in ("user", "expect", "hold_ms", "extra_headers",
                                                                     "contact_user")}
    address = kwargs.pop("address", None) or TOPO.core_caller
    target = kwargs.pop("target", CORE_TARGET)
    return SippCaller(name, workdir, address, target, **caller_kwargs).run(count, rate, **kwargs)


def ordinary_call(lab: AcgLab, workdir: Path, name: str) -> int:
    """One ordinary call, which must be answered 200; returns how many tries it took (1 or 2). The lab's peers answer
    OPTIONS every second and two misses take one out: on a machine other suites load (CI boots the SBC hosts'
    guests meanwhile) both local peers can be out at that moment, and the call gets the SBC's 503. Then once more,
    after they are back."""
    first = call(workdir, name, 1, rate=10, hold_ms=0)
    if first.codes() == {200: 1}:
        return 1
    states = lab.kamailio.dispatcher_states() if lab.kamailio else None
    settle(lab, alive=R1[:2])
    again = call(workdir, name + "-again", 1, rate=10, hold_ms=0)
    assert again.codes() == {200: 1}, "first try %s (peers then: %s), second try %s" % (
        first.codes(), states, again.codes())
    return 2


# ---- healthy --------------------------------------------------------------------------------
def test_healthy_calls_go_to_local_best_tier_by_weight(lab: AcgLab, tmp_path: Path) -> None:
    """R-11, R-12: only local-region peers of the best SRV priority, split per SRV weight (60/40)."""
    with Peers(tmp_path, everyone(200)) as peers:
        settle(lab, alive=R1 + R2)
        result = call(tmp_path, "healthy", 200, rate=100, hold_ms=0)
        got = peers.invites()
    assert result.codes() == {200: 200}, result.codes()
    assert got[R1[2]] == 0 and got[R2[0]] == 0 and got[R2[1]] == 0, got
    assert got[R1[0]] + got[R1[1]] == 200, got
    share = got[R1[0]] / 200.0
    assert 0.50 <= share <= 0.70, "weight 60 peer got %.2f of the calls: %s" % (share, got)


# ---- retry on 408 / 503 / 504 / no response -------------------------------------------------
@pytest.mark.parametrize("failure", [408, 503, 504, None], ids=["408", "503", "504", "no-response"])
def test_local_failure_retried_on_another_local_peer(lab: AcgLab, tmp_path: Path, failure: t.Optional[int]) -> None:
    """R-14, R-17: the call completes on another local peer; the caller never sees the error;
    the other region is untouched. A silent peer still answers OPTIONS: it is alive for the
    dispatcher and must be tried (the OPTIONS test covers peers that stop answering those)."""
    with Peers(tmp_path, everyone(200, p1=failure), pinged=[R1[0]]) as peers:
        settle(lab, alive=R1[:2])
        result = call(tmp_path, "retry", 10, rate=10, hold_ms=0)
        got = peers.invites()
    assert result.codes() == {200: 10}, result.codes()
    assert got[R1[0]] >= 1, "the failing peer was never tried, the scenario proved nothing: %s" % got
    assert got[R1[1]] == 10, got
    assert got[R2[0]] == got[R2[1]] == 0, got
    received = [m.first_line for m in parse_message_log(tmp_path / "retry.messages.log")
                if m.direction == "received" and m.first_line.startswith("SIP/2.0 ")]
    assert not [line for line in received if line.split()[1] in ("408", "503", "504")], received


# ---- never retried ----------------------------------------------------------------------------
@pytest.mark.parametrize("code", [486, 404, 500, 603, 480, 502])
def test_other_errors_are_relayed_after_exactly_one_attempt(lab: AcgLab, tmp_path: Path, code: int) -> None:
    """R-16: one attempt per call, the peer's code reaches the caller unchanged."""
    with Peers(tmp_path, everyone(code)) as peers:
        settle(lab, alive=R1[:2])
        result = call(tmp_path, "norety", 5, rate=10, expect=code)
        got = peers.invites()
    assert result.codes() == {code: 5}, result.codes()
    assert sum(got.values()) == 5, got
    assert got[R2[0]] == got[R2[1]] == got[R1[2]] == 0, got


# ---- hunting to the other region ------------------------------------------------------------
def test_other_region_only_after_every_local_peer_was_tried(lab: AcgLab, tmp_path: Path) -> None:
    """R-15: local peers answering 503, 408 and nothing -> each tried once, then region 2 answers.
    The silent one still answers OPTIONS, so it is alive when the call comes and must be tried."""
    with Peers(tmp_path, everyone(200, p1=503, p2=408, p3=None), pinged=[R1[2]]) as peers:
        settle(lab, alive=R1)
        result = call(tmp_path, "hunt", 1, rate=1, hold_ms=0)
        got = peers.invites()
        remote_times = peers.invite_times(R2[0]) + peers.invite_times(R2[1])
        local_times = [tm for address in R1 for tm in peers.invite_times(address)]
    assert result.codes() == {200: 1}, result.codes()
    assert got[R1[0]] == got[R1[1]] == got[R1[2]] == 1, got
    assert got[R2[0]] + got[R2[1]] == 1, got
    assert max(local_times) <= min(remote_times), (local_times, remote_times)


def test_other_region_when_local_peers_are_known_dead(lab: AcgLab, tmp_path: Path) -> None:
    """R-13, R-15: peers already taken out by OPTIONS are skipped; the last live local peer (503)
    is tried, then region 2."""
    with Peers(tmp_path, everyone(200, p1=None, p2=None, p3=503)) as peers:
        settle(lab, alive=[R1[2]], dead=R1[:2])
        result = call(tmp_path, "dead", 3, rate=5, hold_ms=0)
        got = peers.invites()
    assert result.codes() == {200: 3}, result.codes()
    assert got[R1[0]] == got[R1[1]] == 0, got
    assert got[R1[2]] >= 1, got
    assert got[R2[0]] + got[R2[1]] == 3, got


# ---- OPTIONS monitoring ------------------------------------------------------------------------
def test_options_take_a_silent_peer_out_and_back(lab: AcgLab, tmp_path: Path) -> None:
    """R-13: a peer that stops answering OPTIONS is out within the window; back once it answers."""
    window = lab.plan["health"]["window_s"]
    interval = lab.plan["health"]["interval_s"]
    behaviours = everyone(200)
    with Peers(tmp_path, behaviours) as peers:
        settle(lab, alive=R1[:2])
        p1 = peers.peers[R1[0]]
        p1.stop(kill=True)
        mute = SippPeer("p1-mute", tmp_path, R1[0], code=200, answer_options=False).start()
        try:
            out_after = lab.wait_peer_state(R1[0], False, window + 5.0)
            during = call(tmp_path, "while-out", 10, rate=20, hold_ms=0)
            invites_while_out = mute.received_invites()
        finally:
            mute.stop(kill=True)
        back = SippPeer("p1-back", tmp_path, R1[0], code=200).start()
        try:
            back_after = lab.wait_peer_state(R1[0], True, interval * 3 + 5.0)
            after = call(tmp_path, "after-back", 20, rate=20, hold_ms=0)
            invites_after = back.received_invites()
        finally:
            back.stop(kill=True)
    assert out_after is not None and out_after <= window + 1.0, "taken out after %s s (window %s s)" % (out_after, window)
    assert during.codes() == {200: 10} and invites_while_out == 0, (during.codes(), invites_while_out)
    assert back_after is not None and back_after <= interval * lab.plan["health"]["recovery_threshold"] + 1.0, back_after
    assert after.codes() == {200: 20} and invites_after >= 1, (after.codes(), invites_after)


# ---- ACL --------------------------------------------------------------------------------------
@pytest.mark.parametrize("where,allowed", [
    ((10, 9), True),      # inside region 1's /28, not an SRV target
    ((11, 14), True),     # inside region 2's /28
    ((10, 16), False),    # first address after region 1's /28
    ((12, 1), False),     # elsewhere
], ids=["region1-not-a-target", "region2-last", "after-the-28", "elsewhere"])
def test_acl_on_the_acg_side(lab: AcgLab, tmp_path: Path, where: tuple[int, int], allowed: bool) -> None:
    """R-08: any address of every ACG /28 is accepted (to the core next hop), others get 403."""
    source = TOPO.net(*where)
    core = SippPeer("core", tmp_path, TOPO.core_next_hop, code=200).start()
    try:
        result = call(tmp_path, "from-acg", 3, rate=10, hold_ms=0, address=source, target=ACG_TARGET,
                      expect=200 if allowed else 403)
        reached_core = core.received_invites()
    finally:
        core.stop(kill=True)
    assert result.codes() == {200 if allowed else 403: 3}, result.codes()
    assert reached_core == (3 if allowed else 0), reached_core
    if allowed:
        assert result.successful == 3, "in-dialog BYE did not follow the record-route: %s" % result


# ---- emergency ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dial", ["112", "911", "+999"])
def test_emergency_dial_strings_never_reach_acg(lab: AcgLab, tmp_path: Path, dial: str) -> None:
    """R-25: refused locally (403); no ACG peer sees the INVITE; an ordinary number still goes."""
    with Peers(tmp_path, everyone(200)) as peers:
        settle(lab, alive=R1[:2])
        refused = call(tmp_path, "sos", 2, rate=10, user=dial, expect=403)
        after_refused = peers.invites()
        tries = ordinary_call(lab, tmp_path, "normal")
        got = peers.invites()
    assert refused.codes() == {403: 2}, refused.codes()
    assert sum(after_refused.values()) == 0, after_refused
    # One INVITE for the answered call (a first try that failed may have reached a peer too).
    assert 1 <= sum(got.values()) <= tries and (tries == 2 or sum(got.values()) == 1), (tries, got)


def test_no_emergency_dial_string_reaches_acg_without_normalisation(lab: AcgLab, tmp_path: Path) -> None:
    """R-25 without number_normalisation (issue 21 item 10): a dial string as is or with + is an emergency
    (403); behind a dialling prefix it is no E.164 number (484): in no form does it reach ACG."""
    dials = list(lab.plan["emergency"]["dial_strings"])
    with Peers(tmp_path, everyone(200)) as peers:
        settle(lab, alive=R1[:2])
        answers = {form: udp_invite(TOPO.core_caller, TOPO.sbc_core, form)
                   for dial in dials for form in emergency_forms(dial, None)}
        got = peers.invites()
    emergency, not_e164 = "SIP/2.0 403 Emergency Calls Not Routed To ACG", "SIP/2.0 484 Address Incomplete (E.164 " \
        "Number Required)"
    assert {f: a for f, a in answers.items() if f.lstrip("+") in dials} == {
        f: emergency for f in answers if f.lstrip("+") in dials}, answers
    assert set(answers.values()) == {emergency, not_e164}, answers
    assert sum(got.values()) == 0, got


# ---- size limits --------------------------------------------------------------------------------
@pytest.mark.parametrize("case,kwargs,code", [
    ("message", {"extra_headers": "X-Pad: %s\r\n" % ("x" * 10000)}, 513),
    ("request-uri", {"user": "4" * 260}, 414),
    ("contact", {"contact_user": "c" * 260}, 400),
])
def test_oversize_requests_refused_locally(lab: AcgLab, tmp_path: Path, case: str, kwargs: dict[str, t.Any],
                                           code: int) -> None:
    """R-27: refused by the SBC with the matching code; no ACG peer sees it; a 9 KB request passes."""
    with Peers(tmp_path, everyone(200)) as peers:
        settle(lab, alive=R1[:2])
        refused = call(tmp_path, "big-" + case, 1, rate=10, expect=code, **kwargs)
        fine = call(tmp_path, "fine", 1, rate=10, hold_ms=0, extra_headers="X-Pad: %s\r\n" % ("x" * 9000))
        got = peers.invites()
    assert refused.codes() == {code: 1}, refused.codes()
    assert fine.codes() == {200: 1}, fine.codes()
    assert sum(got.values()) == 1, got


# ---- region down under load ----------------------------------------------------------------------
def test_region_down_under_load_new_calls_all_succeed(lab: AcgLab, tmp_path: Path) -> None:
    """R-17, R-22: 20 calls/s for 10 s; region 1 goes silent at 4 s; only calls in progress may
    fail, every call started afterwards completes (in region 2)."""
    with Peers(tmp_path, everyone(200)) as peers:
        settle(lab, alive=R1[:2] + R2)
        caller = SippCaller("load", tmp_path, TOPO.core_caller, CORE_TARGET, hold_ms=1000)
        caller.start(200, rate=20, limit=200, recv_timeout_ms=10000, timeout_s=60)
        time.sleep(4.0)
        down_at = time.time()
        for address in R1:
            peers.peers[address].stop(kill=True)
        result = caller.wait(90)
        remote_times = peers.invite_times(R2[0]) + peers.invite_times(R2[1])
    assert len(result.calls) == 200, len(result.calls)
    started_after = {cid: code for cid, (sent, code) in result.calls.items() if sent > down_at}
    assert len(started_after) >= 100, len(started_after)
    assert set(started_after.values()) == {200}, dict(result.codes())
    failed_before = [cid for cid, (sent, code) in result.calls.items() if code != 200 and sent <= down_at]
    # Calls established before the outage may lose their BYE; none started before may exceed those.
    assert all(sent <= down_at for cid, (sent, code) in result.calls.items() if code != 200), failed_before
    assert remote_times and min(remote_times) >= down_at - 0.05, "region 2 used before the outage"
