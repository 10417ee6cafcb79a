# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mobile Control Point on real Kamailio and SIP peers (issue 5; R-18..R-20; docs/mcp.md).

Same harness as the SBC conformance suite: Knot DNS serves the ACG and MCP SRV records, the plan
is built from them and rendered, the machine's Kamailio runs it, SIPp plays the ACG peers, the two
MCPs, the operator core (caller) and the "continue" next hop. Assertions are on what each peer
actually received.

Topology (block 92, third octets 102..123, away from the conformance blocks 0/7/25/75, K2's 100
and P's 150): region 1 SBC peers 127.0.102.1/.2, MCP of region 1 127.0.102.9; region 2 SBC peer
127.0.103.1/.2, MCP of region 2 127.0.103.9. SRV _sip._tls.mcp-region1 lists MCP1 (prio 10) and
MCP2 (prio 20); _sip._tls.mcp-region2 the other way round (R-18). SBC ACG side 127.0.112.1, core side
127.0.122.1, caller 127.0.123.2, continue next hop 127.0.123.5. ACG-leg INVITE timer 1 s, MCP
hold-down 4 s, OPTIONS every 1 s.

Requests reach MCP as an S-CSCF sends them to an AS (acg-facts 3.2): the iFC ServerName
``sip:<mcp-hostname>;lr;orig;service=mcp`` is the top Route, the S-CSCF's own entry the next one.
"""

from __future__ import annotations

import dataclasses
import time
import typing as t
from pathlib import Path

import pytest

from harness.tools import needs
from harness.kamailio import AcgLab, BlockLease, Topology
from harness.sipp import PeerGroup, SippCaller

pytestmark = [
    pytest.mark.integration,
    needs("kamailio", "sipp", "knotd", "unshare"),
]

BLOCK = 92
DOMAIN = "acg-mcp.test"
HOLD_DOWN_S = 4
INVITE_TIMER_MS = 1000
ROUTING = {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1,
           "invite_timer_ms": INVITE_TIMER_MS}
SCSCF_ROUTE = "<sip:scscf.core.test;lr;odi=mcp-test-1>"


@dataclasses.dataclass
class McpTopology(Topology):
    """The conformance topology plus one MCP per region and its SRV record (R-18)."""

    mcp: t.Mapping[str, t.Any] = dataclasses.field(default_factory=dict)

    def mcp_hostname(self, region: int) -> str:
        return "mcp-region%d.%s" % (region, self.domain)

    def mcp_address(self, region: int) -> str:
        return self.region1(9) if region == 1 else self.region2(9)

    @property
    def continue_hop(self) -> str:
        return self.net(31, 5)

    def deployment_raw(self, routing: t.Mapping[str, int], transport: str = "udp") -> dict[str, t.Any]:
        raw = super().deployment_raw(routing, transport)
        for index, region in enumerate(raw["service_regions"], start=1):
            region["mcp_hostname"] = self.mcp_hostname(index)
        raw["mcp"] = dict(self.mcp)
        return raw

    def dns_records(self) -> tuple[dict[str, list[tuple[int, int, int, str]]], dict[str, list[str]]]:
        srv, a = super().dns_records()
        for own, other in ((1, 2), (2, 1)):
            # Each region's record: its own MCP at top priority, the other region's lower.
            srv["_sip._tls." + self.mcp_hostname(own)] = [
                (10, 50, 5060, "mcp%d-sip.%s" % (own, self.domain)),
                (20, 50, 5060, "mcp%d-sip.%s" % (other, self.domain))]
            a["mcp%d-sip.%s" % (own, self.domain)] = [self.mcp_address(own)]
        return srv, a


TOPO = McpTopology(block=BLOCK, domain=DOMAIN)
P1, P2 = TOPO.region1(1), TOPO.region1(2)
Q1, Q2 = TOPO.region2(1), TOPO.region2(2)
MCP1, MCP2 = TOPO.mcp_address(1), TOPO.mcp_address(2)
CORE_TARGET = "%s:5060" % TOPO.sbc_core


def mcp_route(region: int = 1, service: bool = True) -> str:
    """The Route set an S-CSCF sends to an AS: the iFC's ServerName on top (acg-facts 3.2)."""
    return "Route: <sip:%s;lr;orig%s>, %s\r\n" % (TOPO.mcp_hostname(region), ";service=mcp" if service else "",
                                                  SCSCF_ROUTE)


def start_lab(workdir: Path, **mcp: t.Any) -> tuple[AcgLab, BlockLease]:
    lease = BlockLease(blocks=(BLOCK,))
    topo = dataclasses.replace(TOPO, mcp=dict(hold_down_s=HOLD_DOWN_S, **mcp))
    lab = AcgLab(workdir, topo, routing=ROUTING)
    try:
        lab.start()
    except BaseException:
        lab.stop()
        lease.close()
        raise
    return lab, lease


@pytest.fixture(scope="class")
def retry_lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[AcgLab]:
    """policy retry; on_all_failed left at its default (continue, since a next hop is set)."""
    lab, lease = start_lab(tmp_path_factory.mktemp("mcp-retry"), policy="retry",
                           continue_next_hop="%s:5060" % TOPO.continue_hop)
    try:
        yield lab
    finally:
        lab.stop()
        lease.close()


@pytest.fixture(scope="class")
def continue_lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[AcgLab]:
    """policy continue; on_all_failed reject (the 'clear error' configuration)."""
    lab, lease = start_lab(tmp_path_factory.mktemp("mcp-continue"), policy="continue", on_all_failed="reject",
                           continue_next_hop="%s:5060" % TOPO.continue_hop)
    try:
        yield lab
    finally:
        lab.stop()
        lease.close()


class Peers(PeerGroup):
    """MCP peers never answer OPTIONS (R-19)."""

    def __init__(self, workdir: Path, behaviours: t.Mapping[str, t.Optional[int]]) -> None:
        super().__init__(workdir, behaviours, no_options=(MCP1, MCP2))


def behaviours(mcp1: t.Optional[int] = 200, mcp2: t.Optional[int] = 200, hop: t.Optional[int] = 200
               ) -> dict[str, t.Optional[int]]:
    """SBC peers of both regions answer 200; the MCPs and the continue next hop as given."""
    return {P1: 200, P2: 200, Q1: 200, Q2: 200, MCP1: mcp1, MCP2: mcp2, TOPO.continue_hop: hop}


def settle(lab: AcgLab) -> None:
    """Forget every hold-down; SBC peers back to active+probing. MCP rows are never touched (they
    must stay active and unprobed by themselves)."""
    assert lab.kamailio is not None
    lab.kamailio.rpc("htable.flush", ["commsgw_mcp_hold"])
    for line in lab.files["dispatcher.list"].splitlines():
        if line.strip() and not line.startswith("#"):
            set_id, uri, flags = line.split()[:3]
            if int(flags) & 8:
                lab.kamailio.rpc("dispatcher.set_state", ["ap", int(set_id), uri])


def held_down(lab: AcgLab) -> list[str]:
    assert lab.kamailio is not None
    result = lab.kamailio.rpc("htable.dump", ["commsgw_mcp_hold"]) or []
    return sorted(str(entry["name"]) for slot in result for entry in slot.get("slot", []))


def call(workdir: Path, name: str, count: int = 1, rate: float = 10.0, route: t.Optional[str] = None,
         expect: int = 200) -> t.Any:
    return SippCaller(name, workdir, TOPO.core_caller, CORE_TARGET, expect=expect, hold_ms=0,
                      extra_headers=route if route is not None else mcp_route()).run(count, rate, timeout_s=30)


def mcp_states(lab: AcgLab) -> list[tuple[int, str, str]]:
    """(set id, URI, dispatcher flags) of every MCP row Kamailio holds."""
    assert lab.kamailio is not None
    rows = []
    for record in (lab.kamailio.rpc("dispatcher.list") or {}).get("RECORDS", []):
        for target in record["SET"].get("TARGETS", []):
            dest = target["DEST"]
            if dest["URI"].startswith("sip:%s:" % MCP1) or dest["URI"].startswith("sip:%s:" % MCP2):
                rows.append((int(record["SET"]["ID"]), dest["URI"], dest["FLAGS"]))
    return sorted(rows)


# ---- policy retry (and on_all_failed continue) -------------------------------------------------
@pytest.mark.usefixtures("retry_lab")
class TestRetryPolicy:

    def test_mcp_targets_are_never_sent_options(self, retry_lab: AcgLab, tmp_path: Path) -> None:
        """R-19: MCP peers that never answer OPTIONS are never sent any, so never taken out for it,
        and still get the MCP calls; the SBC peers' OPTIONS probing goes on unaffected (R-13)."""
        with Peers(tmp_path, behaviours()) as peers:
            settle(retry_lab)
            time.sleep(4 * ROUTING["options_interval_s"] + 0.5)
            result = call(tmp_path, "mcp-no-options", 3)
            got = peers.invites()
            options = {address: peers.options(address) for address in (MCP1, MCP2, P1, Q1)}
            states = mcp_states(retry_lab)
        assert result.codes() == {200: 3}, result.codes()
        assert got[MCP1] == 3 and got[MCP2] == 0, got
        assert sum(got[a] for a in (P1, P2, Q1, Q2, TOPO.continue_hop)) == 0, got
        assert options[MCP1] == options[MCP2] == 0, options
        assert options[P1] >= 3 and options[Q1] >= 3, options
        # Four rows (each MCP in both records), all active and without the probing flag.
        assert [(set_id, uri.split(":")[1]) for set_id, uri, dummy in states] == [
            (1101, MCP1), (1102, MCP2), (1201, MCP2), (1202, MCP1)], states
        assert all(state[2] == "AX" for state in states), states

    @pytest.mark.parametrize("route,first", [
        (mcp_route(1), MCP1),                  # iFC names region 1's MCP: record 1 (MCP1 first)
        (mcp_route(2), MCP2),                  # the subscriber's preferred region is region 2: its record
        (mcp_route(1, service=False), MCP1),   # route_host alone is enough
        ("Route: <sip:mcp-as.core.test;lr;orig;service=mcp>, %s\r\n" % SCSCF_ROUTE, MCP1),  # service=mcp only
    ], ids=["host-region1", "host-region2", "host-no-service", "service-param-only"])
    def test_classification_and_record_choice(self, retry_lab: AcgLab, tmp_path: Path, route: str,
                                              first: str) -> None:
        """R-18: a request the iFC sends to MCP goes to the targets of the record it names (its own MCP
        first); service=mcp with an unknown host uses the local record. ACG trunks see nothing."""
        with Peers(tmp_path, behaviours()) as peers:
            settle(retry_lab)
            result = call(tmp_path, "classify", 2, route=route)
            got = peers.invites()
        assert result.codes() == {200: 2}, result.codes()
        assert got[first] == 2 and sum(got.values()) == 2, got

    def test_silent_local_mcp_held_down_then_tried_again(self, retry_lab: AcgLab, tmp_path: Path) -> None:
        """R-18, R-19: local MCP silent -> the call completes on the other region's MCP (from the same
        SRV record, no second cross-region hop); the next call skips the dead one; after the hold-down
        the next call tries it again."""
        with Peers(tmp_path, behaviours(mcp1=None)) as peers:
            settle(retry_lab)
            first = call(tmp_path, "first", 1)
            assert held_down(retry_lab) == ["sip:%s:5060;transport=udp" % MCP1]
            failed_at = peers.invite_times(MCP1)[0] + INVITE_TIMER_MS / 1000.0
            second = call(tmp_path, "second", 3)
            after_second = peers.invites()
            time.sleep(max(0.0, failed_at + HOLD_DOWN_S + 1.5 - time.time()))
            third = call(tmp_path, "third", 1)
            got = peers.invites()
            mcp1_times = peers.invite_times(MCP1)
        assert first.codes() == {200: 1} and second.codes() == {200: 3} and third.codes() == {200: 1}
        assert after_second[MCP1] == 1, "held-down MCP1 was tried again too early: %s" % after_second
        assert after_second[MCP2] == 4, after_second
        assert got[MCP1] == 2 and got[MCP2] == 5, got
        assert mcp1_times[1] - failed_at >= HOLD_DOWN_S - 0.1, (mcp1_times, failed_at)
        assert sum(got[a] for a in (P1, P2, Q1, Q2, TOPO.continue_hop)) == 0, got

    @pytest.mark.parametrize("code", [500, 503])
    def test_mcp_5xx_retry_sends_to_the_other_mcp(self, retry_lab: AcgLab, tmp_path: Path, code: int) -> None:
        """R-20 (retry): MCP1's 5xx is not relayed; the request goes to MCP2 and completes. A 5xx is an
        answer, not an outage: MCP1 is not held down and gets the next call too."""
        with Peers(tmp_path, behaviours(mcp1=code)) as peers:
            settle(retry_lab)
            result = call(tmp_path, "retry-%d" % code, 2, rate=2)
            got = peers.invites()
            held = held_down(retry_lab)
        assert result.codes() == {200: 2}, result.codes()
        assert got[MCP1] == 2 and got[MCP2] == 2, got
        assert got[TOPO.continue_hop] == 0 and held == [], (got, held)

    def test_mcp_5xx_from_both_is_relayed_under_retry(self, retry_lab: AcgLab, tmp_path: Path) -> None:
        """R-20 (retry): each MCP target is tried once; when the last one answers 5xx too, the caller
        gets it (MCP is reachable; continuing is the other policy)."""
        with Peers(tmp_path, behaviours(mcp1=500, mcp2=500)) as peers:
            settle(retry_lab)
            result = call(tmp_path, "retry-both-500", 1, expect=500)
            got = peers.invites()
        assert result.codes() == {500: 1}, result.codes()
        assert got[MCP1] == 1 and got[MCP2] == 1 and got[TOPO.continue_hop] == 0, got

    def test_all_mcp_dead_continues_without_acg(self, retry_lab: AcgLab, tmp_path: Path) -> None:
        """R-19, R-20: both MCP targets silent -> each tried once, then the call continues to the
        configured next hop without ACG (on_all_failed continue), minus the MCP Route entry and with
        the S-CSCF's; the next call goes there at once, both targets being held down."""
        with Peers(tmp_path, behaviours(mcp1=None, mcp2=None)) as peers:
            settle(retry_lab)
            first = call(tmp_path, "all-dead-1", 1)
            started = time.time()
            second = call(tmp_path, "all-dead-2", 2)
            second_took = time.time() - started
            got = peers.invites()
            continued = peers.peers[TOPO.continue_hop].received_requests("INVITE")
        assert first.codes() == {200: 1} and second.codes() == {200: 2}, (first.codes(), second.codes())
        assert got[MCP1] == 1 and got[MCP2] == 1, got
        assert got[TOPO.continue_hop] == 3, got
        assert sum(got[a] for a in (P1, P2, Q1, Q2)) == 0, got
        assert second_took < 2 * INVITE_TIMER_MS / 1000.0, "held-down targets were waited for: %.2f s" % second_took
        for message in continued:
            routes = message.header("Route") or ""
            assert TOPO.mcp_hostname(1) not in routes and "scscf.core.test" in routes, message.text

    def test_calls_without_mcp_keep_the_sbc_trunk_rules(self, retry_lab: AcgLab, tmp_path: Path) -> None:
        """R-14, R-16 unchanged by MCP: a call without the MCP Route goes to the ACG trunks; a 503 there
        is retried on the other local peer; MCP never sees it."""
        behaviour = behaviours()
        behaviour[P1] = 503
        with Peers(tmp_path, behaviour) as peers:
            settle(retry_lab)
            results = []
            # At least 4 calls, and on until P1 (SRV weight 60 of 100) was tried: a fixed 4 left it
            # untried in 0.4^4 = 2.6 % of runs. Bounded: P2 first 10 times in a row is 0.4^10.
            for attempt in range(10):
                results.append(call(tmp_path, "plain-%d" % attempt, 1, route=""))
                if attempt >= 3 and peers.invites()[P1] >= 1:
                    break
            got = peers.invites()
        assert all(r.codes() == {200: 1} for r in results), [r.codes() for r in results]
        assert got[P2] == len(results) and got[P1] >= 1, got
        assert got[MCP1] == got[MCP2] == got[TOPO.continue_hop] == 0, got


# ---- policy continue (and on_all_failed reject) ------------------------------------------------
@pytest.mark.usefixtures("continue_lab")
class TestContinuePolicy:

    @pytest.mark.parametrize("code", [500, 503])
    def test_mcp_5xx_continue_sends_the_call_on_without_acg(self, continue_lab: AcgLab, tmp_path: Path,
                                                            code: int) -> None:
        """R-20 (continue): MCP1's 5xx -> the call goes to the continue next hop, not to MCP2 nor to
        any ACG trunk, without the MCP Route entry."""
        with Peers(tmp_path, behaviours(mcp1=code)) as peers:
            settle(continue_lab)
            result = call(tmp_path, "continue-%d" % code, 2, rate=2)
            got = peers.invites()
            continued = peers.peers[TOPO.continue_hop].received_requests("INVITE")
        assert result.codes() == {200: 2}, result.codes()
        assert got[MCP1] == 2 and got[MCP2] == 0 and got[TOPO.continue_hop] == 2, got
        assert sum(got[a] for a in (P1, P2, Q1, Q2)) == 0, got
        assert all(TOPO.mcp_hostname(1) not in (m.header("Route") or "") for m in continued), continued[0].text

    def test_all_mcp_dead_rejected_when_so_configured(self, continue_lab: AcgLab, tmp_path: Path) -> None:
        """R-19 with on_all_failed: reject: every MCP target silent -> the caller gets 503 (a clear error;
        an IMS core applies the iFC's default handling), the next call is refused at once."""
        with Peers(tmp_path, behaviours(mcp1=None, mcp2=None)) as peers:
            settle(continue_lab)
            first = call(tmp_path, "reject-1", 1, expect=503)
            started = time.time()
            second = call(tmp_path, "reject-2", 1, expect=503)
            second_took = time.time() - started
            got = peers.invites()
        assert first.codes() == {503: 1} and second.codes() == {503: 1}, (first.codes(), second.codes())
        assert got[MCP1] == 1 and got[MCP2] == 1 and got[TOPO.continue_hop] == 0, got
        assert second_took < INVITE_TIMER_MS / 1000.0, second_took
