# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC's own peer states in the probe's verdicts, through run_probe without network.

DNS, the per-peer OPTIONS and the SBC view are fakes: ``_resolve_record`` and ``probe_peer`` are
replaced by table lookups and the SBC view is the hook ``sbc_view_reader`` gives, which returns the states the
test chose. Everything between (region verdicts, drift, state comparison, site verdict) is the real
code. Site: region1 local (10.0.1.1-3), region2 remote (10.0.2.1-3), one MCP target (10.0.9.1).
The SBC-view settle wait runs on a fake clock whose sleep only advances it: no test really waits.
"""

from __future__ import annotations

import typing as t
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe import settings as probe_settings
from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import summary_lines, to_junit
from harness.tools import run_module

R1 = ["10.0.1.1", "10.0.1.2", "10.0.1.3"]
R2 = ["10.0.2.1", "10.0.2.2", "10.0.2.3"]
MCP = "10.0.9.1"
TARGETS = {"_sip._tls.r1.test": R1, "_sip._tls.r2.test": R2, "_sip._tls.mcp1.test": [MCP]}
SET_IDS = {"_sip._tls.r1.test": 1, "_sip._tls.r2.test": 2, "_sip._tls.mcp1.test": 1000}

PLAN: dict[str, t.Any] = {
    "deployment": {"name": "d"},
    "site": {"name": "s", "local_region": "region1"},
    "trunk_groups": [
        {"region": "region1", "role": "local", "hostname": "r1.test", "srv_name": "_sip._tls.r1.test",
         "transport": "tls", "ip_ranges": ["10.0.1.0/28"]},
        {"region": "region2", "role": "remote", "hostname": "r2.test", "srv_name": "_sip._tls.r2.test",
         "transport": "tls", "ip_ranges": ["10.0.2.0/28"]},
    ],
    "acl": {"ranges": [{"network": "10.0.1.0/28", "region": "region1"},
                       {"network": "10.0.2.0/28", "region": "region2"},
                       {"network": "10.0.9.0/28", "region": "region1"}]},
    "mcp": {"transport": "tls",
            "records": [{"region": "region1", "role": "local", "hostname": "mcp1.test", "srv_name": "_sip._tls.mcp1.test",
                         "tls": {"sni": "mcp1.test", "verify_hostname": "mcp1.test"},
                         "ip_ranges": ["10.0.1.0/28", "10.0.2.0/28", "10.0.9.0/28"]}]},
    "health": {"method": "OPTIONS", "interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1,
               "window_s": 2},
    "provisioning_api": None,
}
SETTINGS = probe.ProbeSettings(check_provisioning_ttl=False)


@pytest.fixture(autouse=True)
def fake_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS answers from TARGETS; every peer answers 200 unless its address is in ``DEAD``."""
    def resolve(record: t.Mapping[str, t.Any], ranges: t.Sequence[str], kind: str, transport: str,
                settings: probe.ProbeSettings, path: str) -> tuple[dict[str, t.Any], list[probe.PeerTarget]]:
        addresses = TARGETS[record["srv_name"]]
        report = {"srv_name": record["srv_name"], "ok": True, "kind": None, "detail": "", "ttl": 60,
                  "targets": [{"target": "p-%s" % a, "addresses": [a]} for a in addresses], "out_of_range": [],
                  "findings": []}
        return report, [probe.PeerTarget(kind=kind, region=record["region"], srv_name=record["srv_name"],
                                         hostname=record["hostname"], verify_hostname=record["hostname"],
                                         target="p-%s" % a, address=a, port=5061, priority=10, weight=10,
                                         transport=transport, in_range=True) for a in addresses]

    def probe_peer(target: probe.PeerTarget, settings: probe.ProbeSettings,
                   contexts: t.Optional[probe.TlsContexts] = None) -> probe.PeerResult:
        result = probe_settings.result_for(target)
        if target.address in DEAD:
            result.failure, result.detail = probe.NO_REPLY, "no reply to OPTIONS within 3.0 s"
        else:
            result.healthy = True
            if target.kind == "sip":
                result.code, result.reason, result.rtt_ms = 200, "OK", 5.0
        return result

    monkeypatch.setattr(probe, "resolve_record", resolve)
    monkeypatch.setattr(probe, "probe_peer", probe_peer)
    DEAD.clear()


DEAD: set[str] = set()


def view(states: t.Mapping[str, t.Optional[str]]) -> probe.SbcView:
    """The SBC's view: every target of TARGETS listed, in ``states[address]`` (default active)."""
    runtime = []
    for srv_name, addresses in TARGETS.items():
        for address in addresses:
            runtime.append(probe.SbcDestination(
                group=str(SET_IDS[srv_name]), uri="sip:%s:5061;transport=tls" % address, host=address, port=5061,
                transport="tls", state=states.get(address, "active")))
    return probe.SbcView(platform="fake", source="fake rpc", runtime=runtime)


class FakeClock:
    """monotonic() and sleep() for the settle wait: sleeping advances the clock, nothing else does."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.reads_at: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.sleeps.append(seconds)
        self.now += seconds


def run(monkeypatch: pytest.MonkeyPatch, *readings: t.Mapping[str, t.Optional[str]],
        clock: t.Optional[FakeClock] = None, **kwargs: t.Any) -> dict[str, t.Any]:
    """run_probe with an SBC whose successive readings show ``readings`` (the last one repeats)."""
    clock = clock or FakeClock()

    def hook(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        clock.reads_at.append(clock.now)
        return view(readings[min(len(clock.reads_at), len(readings)) - 1])

    monkeypatch.setattr(probe, "sbc_view_reader", lambda name: hook if name == "fake" else None)
    return probe.run_probe(PLAN, kwargs.pop("settings", SETTINGS), host="sbc-1", sbc_platform="fake",
                           clock=clock, sleep=clock.sleep, **kwargs)


def sbc_reasons(report: t.Mapping[str, t.Any]) -> str:
    return "; ".join(report["sbc_view"]["reasons"])


def test_all_active_passes_and_mcp_state_is_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    # MCP is never pinged: whatever state the SBC shows for it is not a finding.
    report = run(monkeypatch, {MCP: "inactive"})
    sbc = report["sbc_view"]
    assert report["verdict"] == "pass", report["reasons"]
    assert sbc["verdict"] == "pass" and sbc["not_active"] == [] and sbc["state_mismatch"] == []
    assert sbc["active_peers"] == {"_sip._tls.r1.test": {"region": "region1", "active": 3, "total": 3},
                                   "_sip._tls.r2.test": {"region": "region2", "active": 3, "total": 3}}


def test_every_acg_peer_probing_is_never_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production case: the probe reached every peer, the SBC had them all in "probing" and answered 503.
    report = run(monkeypatch, {address: "probing" for address in R1 + R2})
    assert report["verdict"] == "fail", report["reasons"]
    assert report["sbc_view"]["verdict"] == "fail"
    text = sbc_reasons(report)
    assert "the SBC sees none of the 6 ACG peer(s) active (6 probing): it cannot send calls to ACG" in text
    for address in R1 + R2:
        assert "tls %s:5061 (p-%s) probing" % (address, address) in text
    assert any(reason.startswith("SBC view fail: ") for reason in report["reasons"])
    # JUnit: the peer states are a failing case of the SBC view suite; the summary counts them.
    root = ET.fromstring(to_junit([report]).split("\n", 1)[1])
    suite = next(s for s in root.findall("testsuite") if s.get("name") == "d.s.sbc-1.sbc_view")
    case = next(c for c in suite.findall("testcase") if c.get("name") == "not_active")
    assert case.find("failure").get("message") == "0 of 6 ACG peer(s) active in the SBC's view"  # type: ignore
    assert any("not active 6, state mismatch 6" in line for line in summary_lines(report))


def test_local_trunk_group_with_no_active_peer_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    report = run(monkeypatch, {R1[0]: "probing", R1[1]: "inactive", R1[2]: "disabled"})
    assert report["verdict"] == "fail", report["reasons"]
    text = sbc_reasons(report)
    assert ("the SBC sees no peer of the local trunk group region1 active (0 of 3: 1 disabled, 1 inactive, "
            "1 probing): it cannot send calls to its local region") in text
    assert "cannot send calls to ACG" not in text  # region2 is still usable


def test_remote_group_down_in_the_sbc_is_a_warning_naming_peer_and_state(monkeypatch: pytest.MonkeyPatch) -> None:
    report = run(monkeypatch, {R2[0]: "probing", R2[1]: "inactive", R2[2]: "disabled", R1[1]: None}, sbc_settle_s=0)
    sbc = report["sbc_view"]
    assert report["verdict"] == "warn" and sbc["verdict"] == "warn", report["reasons"]
    text = sbc_reasons(report)
    # A runtime entry without a state is "unknown", and counts as not active.
    assert ("not active in the SBC's view: tls 10.0.1.2:5061 (p-10.0.1.2) unknown, tls 10.0.2.1:5061 (p-10.0.2.1) "
            "probing, tls 10.0.2.2:5061 (p-10.0.2.2) inactive, tls 10.0.2.3:5061 (p-10.0.2.3) disabled") in text
    assert "local trunk group" not in text and "cannot send calls" not in text
    # Disabled (an operator's choice) is not a mismatch; probing/inactive for a healthy peer is.
    assert [(m["peer"].split()[1], m["sbc_state"]) for m in sbc["state_mismatch"]] == [
        ("10.0.2.1:5061", "probing"), ("10.0.2.2:5061", "inactive")]


def test_probing_peer_the_probe_found_dead_is_not_active_and_no_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    DEAD.add(R1[0])
    report = run(monkeypatch, {R1[0]: "probing"})
    sbc = report["sbc_view"]
    assert sbc["state_mismatch"] == []  # both see the peer failing
    assert [(e["peer"].split()[1], e["sbc_state"], e["probe"]) for e in sbc["not_active"]] == [
        ("10.0.1.1:5061", "probing", "no_reply")]
    assert sbc["verdict"] == "warn" and report["verdict"] == "warn"


def test_peer_missing_from_the_sbc_counts_as_not_active(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SBC lists only region1's .1 (inactive): the other two local peers are drift, and none is active.
    def hook(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        full = view({R1[0]: "inactive"})
        full.runtime = [d for d in full.runtime or [] if d.host not in R1[1:]]
        return full

    monkeypatch.setattr(probe, "sbc_view_reader", lambda name: hook if name == "fake" else None)
    # Drift only warns here, so the failure comes from the states alone.
    lenient = probe.ProbeSettings(check_provisioning_ttl=False, thresholds=probe.Thresholds(fail_on_drift=False))
    report = probe.run_probe(PLAN, lenient, sbc_platform="fake", sbc_settle_s=0)
    text = sbc_reasons(report)
    assert "no peer of the local trunk group region1 active (0 of 3: 1 inactive, 2 not in its list)" in text
    assert report["verdict"] == "fail"


def test_file_only_view_judges_no_state(monkeypatch: pytest.MonkeyPatch) -> None:
    def hook(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        configured = [probe.SbcDestination(group=d.group, uri=d.uri, host=d.host, port=d.port, transport=d.transport)
                      for d in view({}).runtime or []]
        return probe.SbcView(platform="fake", source="file", configured=configured, errors=["no socket"])

    monkeypatch.setattr(probe, "sbc_view_reader", lambda name: hook if name == "fake" else None)
    report = probe.run_probe(PLAN, SETTINGS, sbc_platform="fake")
    sbc = report["sbc_view"]
    assert sbc["verdict"] == "warn" and sbc["not_active"] == [] and sbc["active_peers"] == {}
    assert sbc_reasons(report).startswith("peer states unknown")


def test_default_settle_limit_follows_the_plan_and_is_capped() -> None:
    assert probe.default_settle_s(PLAN) == 4.0  # window 2 s + interval 1 s + 1 s
    production = dict(PLAN, health={"interval_s": 5, "failure_threshold": 2, "window_s": 10})
    assert probe.default_settle_s(production) == probe.SETTLE_CAP_S == 15.0
    assert probe.default_settle_s({}) == 1.0


def test_unsettled_view_read_again_until_active_then_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Right after a restart: the SBC has not pinged yet. Third re-read: everything active.
    probing = {address: "probing" for address in R1 + R2}
    inactive = {address: "inactive" for address in R1 + R2}
    clock = FakeClock()
    report = run(monkeypatch, inactive, probing, dict(probing, **{R1[0]: "active"}), {}, clock=clock)
    assert report["verdict"] == "pass", report["reasons"]
    settle = report["sbc_view"]["settle"]
    assert settle == {"limit_s": 4.0, "waited_s": 1.5, "readings": 4, "settled": True, "unsettled": [],
                      "text": "settled after 1.5 s (4 readings)"}
    assert clock.sleeps == [0.5, 0.5, 0.5]
    assert report["settings"]["sbc_settle_s"] == 4.0
    assert any("SBC view" in line and line.endswith("settled after 1.5 s (4 readings)")
               for line in summary_lines(report))


def test_view_that_never_settles_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    report = run(monkeypatch, {address: "probing" for address in R1 + R2}, clock=clock)
    settle = report["sbc_view"]["settle"]
    # Limit 4 s, re-read every 0.5 s: the first reading plus 8 more, 4 s waited, never longer.
    assert settle["readings"] == len(clock.reads_at) == 9 and settle["waited_s"] == 4.0
    assert sum(clock.sleeps) == 4.0 and not settle["settled"] and len(settle["unsettled"]) == 6
    assert settle["text"] == "not settled after 4.0 s (9 readings, limit 4.0 s)"
    assert report["verdict"] == "fail"
    assert "not active in the SBC's view after a 4.0 s wait: tls 10.0.1.1:5061 (p-10.0.1.1) probing" in sbc_reasons(report)


def test_settle_keeps_the_last_reading_with_states_when_a_re_read_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    readings = [view({address: "probing" for address in R1 + R2}),
                probe.SbcView(platform="fake", source="fake rpc", errors=["rpc timed out"])]

    def hook(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        clock.reads_at.append(clock.now)
        return readings[min(len(clock.reads_at), 2) - 1]

    monkeypatch.setattr(probe, "sbc_view_reader", lambda name: hook if name == "fake" else None)
    report = probe.run_probe(PLAN, SETTINGS, sbc_platform="fake", clock=clock, sleep=clock.sleep)
    assert len(clock.reads_at) == 2
    assert report["sbc_view"]["settle"]["text"] == (
        "not settled, stopped after 0.5 s: reading 2 had no runtime states (rpc timed out)")
    # The verdict is that of the reading with states: nothing active, so the site fails.
    assert report["verdict"] == "fail" and "cannot send calls to ACG" in sbc_reasons(report)


def test_settle_limit_is_a_parameter_and_zero_reads_once(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    report = run(monkeypatch, {R2[0]: "inactive"}, {}, clock=clock, sbc_settle_s=0)
    assert len(clock.reads_at) == 1 and clock.sleeps == []
    assert report["sbc_view"]["settle"]["text"] == "not settled, no wait (limit 0.0 s)"
    assert report["verdict"] == "warn"
    clock = FakeClock()
    report = run(monkeypatch, {R2[0]: "inactive"}, clock=clock, sbc_settle_s=1.2)
    assert sum(clock.sleeps) == pytest.approx(1.2) and clock.sleeps[-1] == pytest.approx(0.2)
    assert report["sbc_view"]["settle"]["waited_s"] == 1.2 and report["sbc_view"]["settle"]["readings"] == 4


def test_no_wait_for_peers_the_probe_could_not_reach_or_disabled_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # Inactive because it is dead, or disabled by an operator: waiting would not change either.
    DEAD.add(R1[0])
    clock = FakeClock()
    report = run(monkeypatch, {R1[0]: "inactive", R2[0]: "disabled"}, clock=clock)
    assert len(clock.reads_at) == 1 and clock.sleeps == []
    assert report["sbc_view"]["settle"]["text"] == "settled at the first reading"
    assert report["verdict"] == "warn"


def test_module_option_sbc_settle_timeout(tmp_path: Path) -> None:
    plan = dict(PLAN, trunk_groups=[], mcp=None, acl={"ranges": []})
    code, result = run_module("probe", {"plan": plan, "sbc_settle_timeout": -1}, tmp_path)
    assert code != 0 and "sbc_settle_timeout must not be negative" in result["msg"]
    # Nothing to probe and no Kamailio where it looks: the limit reaches the report, nothing is waited for.
    nowhere = str(tmp_path / "nowhere")
    args = {"plan": plan, "platform": "kamailio", "sbc_settle_timeout": 2.5, "check_provisioning_ttl": False,
            "platform_options": {"config_dir": nowhere, "run_dir": nowhere}}
    code, result = run_module("probe", args, tmp_path)
    assert code == 0, result
    assert result["report"]["settings"]["sbc_settle_s"] == 2.5
    assert result["report"]["sbc_view"]["settle"]["text"] == "no runtime states read"
    code, result = run_module("probe", dict(args, sbc_settle_timeout=None), tmp_path)
    assert result["report"]["settings"]["sbc_settle_s"] == 4.0  # the plan's default
