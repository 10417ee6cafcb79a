# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC's own peer states in the probe's verdicts, through run_probe without network.

DNS, the per-peer OPTIONS and the SBC view are fakes: ``_resolve_record`` and ``probe_peer`` are
replaced by table lookups and the SBC view is a hook in ``SBC_VIEWS`` that returns the states the
test chose. Everything between (region verdicts, drift, state comparison, site verdict) is the real
code. Site: region1 local (10.0.1.1-3), region2 remote (10.0.2.1-3), one MCP target (10.0.9.1).
"""

from __future__ import annotations

import typing as t
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils import probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe_report import summary_lines, to_junit

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
    "mcp": {"records": [{"region": "region1", "role": "local", "hostname": "mcp1.test",
                         "srv_name": "_sip._tls.mcp1.test"}]},
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
        result = probe._result(target)
        if target.address in DEAD:
            result.failure, result.detail = probe.NO_REPLY, "no reply to OPTIONS within 3.0 s"
        else:
            result.healthy = True
            if target.kind == "sip":
                result.code, result.reason, result.rtt_ms = 200, "OK", 5.0
        return result

    monkeypatch.setattr(probe, "_resolve_record", resolve)
    monkeypatch.setattr(probe, "probe_peer", probe_peer)
    DEAD.clear()


DEAD: set[str] = set()


def view(states: t.Mapping[str, t.Optional[str]]) -> probe.SbcView:
    """The SBC's view: every target of TARGETS listed, in ``states[address]`` (default active)."""
    runtime = []
    for srv_name, addresses in TARGETS.items():
        for address in addresses:
            runtime.append(probe.SbcDestination(
                set_id=SET_IDS[srv_name], uri="sip:%s:5061;transport=tls" % address, host=address, port=5061,
                transport="tls", state=states.get(address, "active")))
    return probe.SbcView(platform="fake", source="fake rpc", runtime=runtime)


def run(monkeypatch: pytest.MonkeyPatch, *readings: t.Mapping[str, t.Optional[str]],
        **kwargs: t.Any) -> dict[str, t.Any]:
    """run_probe with an SBC whose successive readings show ``readings`` (the last one repeats)."""
    calls: list[int] = []

    def hook(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        calls.append(1)
        return view(readings[min(len(calls), len(readings)) - 1])

    monkeypatch.setitem(probe.SBC_VIEWS, "fake", hook)
    report = probe.run_probe(PLAN, kwargs.pop("settings", SETTINGS), host="sbc-1", sbc_platform="fake", **kwargs)
    report["sbc_view"]["_readings"] = len(calls)
    return report


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


def test_every_acg_peer_trying_is_never_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # The production case: the probe reached every peer, the SBC had them all in "trying" and answered 503.
    report = run(monkeypatch, {address: "trying" for address in R1 + R2})
    assert report["verdict"] == "fail", report["reasons"]
    assert report["sbc_view"]["verdict"] == "fail"
    text = sbc_reasons(report)
    assert "the SBC sees none of the 6 ACG peer(s) active (6 trying): it cannot send calls to ACG" in text
    for address in R1 + R2:
        assert "tls %s:5061 (p-%s) trying" % (address, address) in text
    assert any(reason.startswith("SBC view fail: ") for reason in report["reasons"])
    # JUnit: the peer states are a failing case of the SBC view suite; the summary counts them.
    root = ET.fromstring(to_junit([report]).split("\n", 1)[1])
    suite = next(s for s in root.findall("testsuite") if s.get("name") == "d.s.sbc-1.sbc_view")
    case = next(c for c in suite.findall("testcase") if c.get("name") == "not_active")
    assert case.find("failure").get("message") == "0 of 6 ACG peer(s) active in the SBC's view"  # type: ignore
    assert any("not active 6, state mismatch 6" in line for line in summary_lines(report))


def test_local_trunk_group_with_no_active_peer_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    report = run(monkeypatch, {R1[0]: "trying", R1[1]: "inactive", R1[2]: "disabled"})
    assert report["verdict"] == "fail", report["reasons"]
    text = sbc_reasons(report)
    assert ("the SBC sees no peer of the local trunk group region1 active (0 of 3: 1 disabled, 1 inactive, "
            "1 trying): it cannot send calls to its local region") in text
    assert "cannot send calls to ACG" not in text  # region2 is still usable


def test_remote_group_down_in_the_sbc_is_a_warning_naming_peer_and_state(monkeypatch: pytest.MonkeyPatch) -> None:
    report = run(monkeypatch, {R2[0]: "trying", R2[1]: "inactive", R2[2]: "disabled", R1[1]: None})
    sbc = report["sbc_view"]
    assert report["verdict"] == "warn" and sbc["verdict"] == "warn", report["reasons"]
    text = sbc_reasons(report)
    # A runtime entry without a state is "unknown", and counts as not active.
    assert ("not active in the SBC's view: tls 10.0.1.2:5061 (p-10.0.1.2) unknown, tls 10.0.2.1:5061 (p-10.0.2.1) "
            "trying, tls 10.0.2.2:5061 (p-10.0.2.2) inactive, tls 10.0.2.3:5061 (p-10.0.2.3) disabled") in text
    assert "local trunk group" not in text and "cannot send calls" not in text
    # Disabled (an operator's choice) is not a mismatch; trying/inactive for a healthy peer is.
    assert [(m["peer"].split()[1], m["sbc_state"]) for m in sbc["state_mismatch"]] == [
        ("10.0.2.1:5061", "trying"), ("10.0.2.2:5061", "inactive")]


def test_trying_peer_the_probe_found_dead_is_not_active_and_no_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    DEAD.add(R1[0])
    report = run(monkeypatch, {R1[0]: "trying"})
    sbc = report["sbc_view"]
    assert sbc["state_mismatch"] == []  # both see the peer failing
    assert [(e["peer"].split()[1], e["sbc_state"], e["probe"]) for e in sbc["not_active"]] == [
        ("10.0.1.1:5061", "trying", "no_reply")]
    assert sbc["verdict"] == "warn" and report["verdict"] == "warn"


def test_peer_missing_from_the_sbc_counts_as_not_active(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SBC lists only region1's .1 (inactive): the other two local peers are drift, and none is active.
    def hook(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        full = view({R1[0]: "inactive"})
        full.runtime = [d for d in full.runtime or [] if d.host not in R1[1:]]
        return full

    monkeypatch.setitem(probe.SBC_VIEWS, "fake", hook)
    # Drift only warns here, so the failure comes from the states alone.
    lenient = probe.ProbeSettings(check_provisioning_ttl=False, thresholds=probe.Thresholds(fail_on_drift=False))
    report = probe.run_probe(PLAN, lenient, sbc_platform="fake")
    text = sbc_reasons(report)
    assert "no peer of the local trunk group region1 active (0 of 3: 1 inactive, 2 not in its list)" in text
    assert report["verdict"] == "fail"


def test_file_only_view_judges_no_state(monkeypatch: pytest.MonkeyPatch) -> None:
    def hook(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        configured = [probe.SbcDestination(set_id=d.set_id, uri=d.uri, host=d.host, port=d.port, transport=d.transport)
                      for d in view({}).runtime or []]
        return probe.SbcView(platform="fake", source="file", configured=configured, errors=["no socket"])

    monkeypatch.setitem(probe.SBC_VIEWS, "fake", hook)
    report = probe.run_probe(PLAN, SETTINGS, sbc_platform="fake")
    sbc = report["sbc_view"]
    assert sbc["verdict"] == "warn" and sbc["not_active"] == [] and sbc["active_peers"] == {}
    assert sbc_reasons(report).startswith("peer states unknown")
