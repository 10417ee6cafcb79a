# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe logic without network: TLS error classes, Kamailio parsing, drift comparison, verdicts, JUnit."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import typing as t
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe import tls as probe_tls
from ansible_collections.commsgw.routing.plugins.module_utils.probe import verdicts as probe_verdicts
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import probe_view as probe_view_kamailio
from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import summary_lines, to_junit

REPO = Path(__file__).resolve().parents[3]


def verify_error(code: int, message: str) -> ssl.SSLCertVerificationError:
    exc = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    exc.verify_code = code
    exc.verify_message = message
    return exc


def ssl_error(reason: str) -> ssl.SSLError:
    exc = ssl.SSLError(1, "[SSL: %s] %s" % (reason, reason.lower()))
    exc.reason = reason
    return exc


@pytest.mark.parametrize("exc, failure", [
    (verify_error(20, "unable to get local issuer certificate"), probe.TLS_UNKNOWN_CA),
    (verify_error(19, "self-signed certificate in certificate chain"), probe.TLS_UNKNOWN_CA),
    (verify_error(10, "certificate has expired"), probe.TLS_EXPIRED),
    (verify_error(9, "certificate is not yet valid"), probe.TLS_EXPIRED),
    (verify_error(62, "hostname mismatch"), probe.TLS_HOSTNAME_MISMATCH),
    (verify_error(23, "certificate revoked"), probe.TLS_HANDSHAKE),
    (ssl_error("TLSV1_ALERT_UNKNOWN_CA"), probe.TLS_CLIENT_REJECTED),
    (ssl_error("TLSV13_ALERT_CERTIFICATE_REQUIRED"), probe.TLS_CLIENT_REJECTED),
    (ssl_error("TLSV1_ALERT_PROTOCOL_VERSION"), probe.TLS_PROTOCOL),
    (ssl_error("WRONG_VERSION_NUMBER"), probe.TLS_PROTOCOL),
    (ssl_error("SSLV3_ALERT_HANDSHAKE_FAILURE"), probe.TLS_PROTOCOL),
    (ssl_error("UNEXPECTED_EOF_WHILE_READING"), probe.TLS_HANDSHAKE),
    (TimeoutError("timed out"), probe.TLS_HANDSHAKE),
])
def test_ssl_errors_are_classified(exc: BaseException, failure: str) -> None:
    assert probe.classify_ssl_error(exc)[0] == failure


def test_name_matching_and_cert_summary() -> None:
    assert probe_tls.name_matches("*.acg.test", "r1.acg.test") and not probe_tls.name_matches("*.acg.test", "a.r1.acg.test")
    assert probe_tls.name_matches("R1.acg.test.", "r1.acg.test") and not probe_tls.name_matches("r2.acg.test", "r1.acg.test")
    cert = {"subject": ((("commonName", "r1.acg.test"),),), "issuer": ((("commonName", "Root"),),),
            "subjectAltName": (("DNS", "r1.acg.test"), ("IP Address", "192.0.2.1")),
            "notBefore": "Jan  1 00:00:00 2026 GMT", "notAfter": "Jan 31 00:00:00 2026 GMT"}
    summary = probe.cert_summary(cert, now=ssl.cert_time_to_seconds("Jan 21 00:00:00 2026 GMT"))
    assert summary["subject"] == {"commonName": "r1.acg.test"} and summary["san"] == ["r1.acg.test"]
    assert summary["days_to_expiry"] == 10


def test_sip_uri_and_dispatcher_parsing() -> None:
    assert probe.parse_sip_uri("sip:20.61.48.17:5061;transport=tls") == ("20.61.48.17", 5061, "tls")
    assert probe.parse_sip_uri("sip:Peer.Example") == ("peer.example", 5060, "udp")
    assert probe.parse_sip_uri("sips:[2001:db8::1]") == ("2001:db8::1", 5061, "tls")
    with pytest.raises(ValueError):
        probe.parse_sip_uri("http://x")
    # A port that is not ASCII digits is refused, not read as digits of another script or dropped for 5060.
    for hostile in ("sip:10.0.0.1:\u0663", "sip:10.0.0.1:\u00b9", "sip:10.0.0.1:50x60"):
        with pytest.raises(ValueError):
            probe.parse_sip_uri(hostile)
    text = "# comment\n1 sip:127.0.10.1:5061;transport=tls 8 20 rweight=60\n\n2 sip:127.0.11.1:5061;transport=tls 8\n"
    rows = probe_view_kamailio.parse_dispatcher_list(text)
    assert [(r.group, r.host, r.port, r.transport, r.state) for r in rows] == [
        ("1", "127.0.10.1", 5061, "tls", None), ("2", "127.0.11.1", 5061, "tls", None)]
    with pytest.raises(ValueError):
        probe_view_kamailio.parse_dispatcher_list("x sip:1.2.3.4\n")
    # The RPC result shape of Kamailio 5.6 / 6.0 (a single target is sometimes not a list).
    rpc = {"NRSETS": 2, "RECORDS": [
        {"SET": {"ID": 1, "TARGETS": [{"DEST": {"URI": "sip:127.0.10.1:5061;transport=tls", "FLAGS": "AP"}},
                                      {"DEST": {"URI": "sip:127.0.10.2:5061;transport=tls", "FLAGS": "IP"}}]}},
        {"SET": {"ID": 2, "TARGETS": {"DEST": {"URI": "sip:127.0.11.1:5061;transport=tls", "FLAGS": "DX"}}}}]}
    parsed = probe_view_kamailio.parse_dispatcher_rpc(rpc)
    # Kamailio's flags become the contract's neutral states; the set and the flags stay in the detail.
    assert [(d.group, d.host, d.state, d.detail) for d in parsed] == [
        ("1", "127.0.10.1", "active", "set 1, flags AP"), ("1", "127.0.10.2", "inactive", "set 1, flags IP"),
        ("2", "127.0.11.1", "disabled", "set 2, flags DX")]


def peer(address: str, port: int = 5061, healthy: bool = True, srv: str = "_sip._tls.r1.test",
         failure: t.Optional[str] = None, in_range: bool = True) -> probe.PeerResult:
    return probe.PeerResult(kind="sip", region="region1", srv_name=srv, target="p-%s.r1.test" % address,
                            address=address, port=port, priority=10, weight=10, transport="tls", in_range=in_range,
                            healthy=healthy, failure=failure)


def dest(set_id: int, address: str, port: int = 5061, state: t.Optional[str] = "active") -> probe.SbcDestination:
    return probe.SbcDestination(group=str(set_id), uri="sip:%s:%d;transport=tls" % (address, port), host=address,
                                port=port, transport="tls", state=state)


SETTINGS = probe.ProbeSettings()


def test_compare_view_drift_and_states() -> None:
    peers = [peer("10.0.0.1"), peer("10.0.0.2", failure=probe.NO_REPLY, healthy=False), peer("10.0.0.3"),
             peer("10.0.0.4", port=5062), peer("10.0.1.1", srv="_sip._tls.r2.test")]
    runtime = [dest(1, "10.0.0.1", state="active"), dest(1, "10.0.0.2", state="active"),
               dest(1, "10.0.0.4", port=5061), dest(1, "10.0.0.9"), dest(2, "10.0.1.1", state="inactive"),
               dest(3, "10.0.2.1")]
    view = probe.SbcView(platform="kamailio", source="test", runtime=runtime,
                         configured=[dest(1, "10.0.0.1", state=None)])
    out = probe.compare_view(view, peers, {"_sip._tls.r1.test"}, SETTINGS)
    assert [m["peer"] for m in out["missing"]] == ["tls 10.0.0.3:5061 (p-10.0.0.3.r1.test)"]
    # 10.0.1.1: its record did not resolve this time, so it is neither expected nor reported as extra.
    assert [e["address"] for e in out["extra"]] == ["10.0.0.9", "10.0.1.1", "10.0.2.1"]
    port_stale = [s for s in out["stale"] if "port" in s["why"]]
    assert [s["peer"] for s in port_stale] == ["tls 10.0.0.4:5062 (p-10.0.0.4.r1.test)"]
    assert any("not reloaded" in s["why"] for s in out["stale"])
    assert [(m["peer"].split()[1], m["sbc_state"], m["probe"]) for m in out["state_mismatch"]] == [
        ("10.0.0.2:5061", "active", "no_reply")]


def test_compare_view_in_sync_and_unreadable() -> None:
    peers = [peer("10.0.0.1"), peer("10.0.0.2", healthy=False, failure=probe.NO_REPLY)]
    runtime = [dest(1, "10.0.0.1"), dest(1, "10.0.0.2", state="inactive")]
    view = probe.SbcView(platform="kamailio", source="t", runtime=runtime,
                         configured=[dest(1, "10.0.0.1", state=None), dest(1, "10.0.0.2", state=None)])
    out = probe.compare_view(view, peers, {"_sip._tls.r1.test"}, SETTINGS)
    assert out["missing"] == out["extra"] == out["stale"] == out["state_mismatch"] == []
    empty = probe.compare_view(probe.SbcView(platform="kamailio", source="", errors=["nope"]), peers, set(), SETTINGS)
    assert empty["destinations"] == [] and empty["errors"] == ["nope"]


def group(peers: list[probe.PeerResult], th: probe.Thresholds, dns_ok: bool = True) -> dict[str, t.Any]:
    for item in peers:
        probe_verdicts.peer_verdict(item, th)
    data: dict[str, t.Any] = {"dns": {"ok": dns_ok, "kind": None if dns_ok else "timeout", "detail": "x"}}
    probe_verdicts.group_verdict(data, peers, th, mcp=False)
    return data


def test_region_verdicts_and_thresholds() -> None:
    th = probe.Thresholds()
    assert group([peer("10.0.0.1"), peer("10.0.0.2")], th)["verdict"] == "pass"
    degraded = group([peer("10.0.0.1"), peer("10.0.0.2", healthy=False, failure=probe.NO_REPLY)], th)
    assert degraded["verdict"] == "warn" and degraded["healthy"] == 1
    assert group([peer("10.0.0.1"), peer("10.0.0.2", healthy=False, failure=probe.NO_REPLY)],
                 probe.Thresholds(min_healthy_peers=2))["verdict"] == "fail"
    # A healthy peer outside the /28 is not counted and fails the region (or warns, if configured).
    outside = [peer("10.0.0.1"), peer("192.0.2.1", in_range=False)]
    assert group(outside, th)["verdict"] == "fail"
    assert group([peer("10.0.0.1"), peer("192.0.2.1", in_range=False)],
                 probe.Thresholds(fail_on_out_of_range=False))["verdict"] == "warn"
    bad_cert = [peer("10.0.0.1"), peer("10.0.0.2", healthy=False, failure=probe.TLS_HOSTNAME_MISMATCH)]
    assert group(bad_cert, th)["verdict"] == "fail"
    assert group([peer("10.0.0.1"), peer("10.0.0.2", healthy=False, failure=probe.TLS_HOSTNAME_MISMATCH)],
                 probe.Thresholds(fail_on_tls_verify=False))["verdict"] == "warn"
    assert group([], th, dns_ok=False)["verdict"] == "fail"
    slow = peer("10.0.0.1")
    slow.rtt_ms = 250.0
    assert group([slow], probe.Thresholds(max_rtt_ms=100.0))["verdict"] == "warn"


def report_for(peers: list[probe.PeerResult], verdict: str) -> dict[str, t.Any]:
    th = probe.Thresholds()
    data = group(peers, th)
    data.update(kind="sip", region="region1", role="local", hostname="r1.test", srv_name="_sip._tls.r1.test",
                transport="tls", peers=[p.as_dict() for p in peers])
    data["dns"].update(ttl=60, targets=[{}] * len(peers), lookup_ms=3.0)
    return {"deployment": "d", "site": "s", "host": "sbc-1", "regions": [data], "mcp": [], "provisioning_api": None,
            "sbc_view": {"platform": "kamailio", "source": "t", "verdict": "fail", "destinations": [],
                         "missing": [{"peer": "x"}], "extra": [], "stale": [], "state_mismatch": []},
            "settings": {"thresholds": {"fail_on_drift": True, "fail_on_state_mismatch": False}},
            "timings_ms": {"total": 12.0}, "verdict": verdict, "reasons": ["r"]}


def test_junit_and_summary() -> None:
    peers = [peer("10.0.0.1"), peer("10.0.0.2", healthy=False, failure=probe.NO_REPLY)]
    peers[0].code, peers[0].reason, peers[0].rtt_ms = 200, "OK", 4.2
    report = report_for(peers, "fail")
    root = ET.fromstring(to_junit([report]).split("\n", 1)[1])
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    region = suites["d.s.sbc-1.sip.region1"]
    # dns + 2 peers + the region verdict; the dead peer fails, the degraded region only warns.
    assert region.get("tests") == "4" and region.get("failures") == "1"
    assert "WARNING" in region.findall("testcase")[-1].find("system-out").text
    peer_cases = [c for c in region.findall("testcase") if c.get("name").startswith("tls ")]
    assert [c.find("failure") is not None for c in peer_cases] == [False, True]
    sbc = suites["d.s.sbc-1.sbc_view"]
    assert sbc.get("failures") == "1"  # drift "missing"
    lines = summary_lines(report)
    assert lines[0] == "site d/s on sbc-1: FAIL (12 ms)"
    assert any("ok   tls 10.0.0.1:5061" in line and "200 OK; 4.2 ms" in line for line in lines)
    assert any("FAIL tls 10.0.0.2:5061" in line and "no_reply" in line for line in lines)


def test_probe_imports_without_yaml_or_jinja2() -> None:
    """On the SBC host only the standard library and dnspython are present."""
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('yaml', 'jinja2'):\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe, report as probe_report\n"
            "print(probe.parse_sip_uri('sip:1.2.3.4'))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env={"PYTHONPATH": str(REPO / ".collections"), "PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 0, result.stderr
    assert "('1.2.3.4', 5060, 'udp')" in result.stdout


def test_the_report_filter_writes_what_the_module_writes() -> None:
    """playbooks/probe.yml writes an SBC-side probe's reports on the controller with the probe_report filter: the
    same JSON document and JUnit XML as the module's own report_json / report_junit files."""
    from ansible.errors import AnsibleFilterError
    from ansible_collections.commsgw.routing.plugins.filter.probe_report import probe_report
    from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import to_json

    report = report_for([peer("10.0.0.1")], "pass")
    assert json.loads(probe_report(report, "json")) == json.loads(to_json([report])) == {"reports": [report]}
    root = ET.fromstring(probe_report(report, "junit").split("\n", 1)[1])
    assert root.tag == "testsuites" and root.find("testsuite[@name='d.s.sbc-1.sip.region1']") is not None
    for bad in (("xml", report), ("json", "not a report")):
        with pytest.raises(AnsibleFilterError):
            probe_report(bad[1], bad[0])
