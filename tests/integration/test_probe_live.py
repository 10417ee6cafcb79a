# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The live probe against real peers on loopback.

Peers are real SIP software: SIPp UAS processes (answering OPTIONS with 200 or 503, or never) behind
real mutual-TLS fronts (tests/harness/tls_front.py, OpenSSL), certificates from a test PKI made by
the test (tests/harness/pki.py) and SRV records served by a real DNS server (Knot, tests/harness/dns.py).
The SBC's own view (a real Kamailio) is tested in test_probe_kamailio.py.

Addresses (the probe's block is third octet 150-199, away from other test modules): 127.0.150.0/28
and 127.0.151.0/28 are the two regions' /28s, 127.0.152.x lies outside them, SIPp listens on
127.0.199.1.
"""

from __future__ import annotations

import subprocess
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as probe_limits
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import summary_lines, to_junit
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from harness.dns import DnsServer
from harness.pki import StandardPKI, standard_pki
from harness.tls_front import TlsFront

pytestmark = pytest.mark.integration

SIPP_DIR = Path(__file__).resolve().parents[1] / "harness" / "sipp"
BASE = "p150.commsgw.test"
HOST1, HOST2 = "pstn-region1." + BASE, "pstn-region2." + BASE
SRV1, SRV2 = "_sip._tls." + HOST1, "_sip._tls." + HOST2
SIPP_HOST = "127.0.199.1"
SIPP_PORTS = {"200": 15160, "503": 15161, "silent": 15162}
TIMEOUT_S = 2.0


def production(transport: str = "tls") -> dict[str, t.Any]:
    return {
        "name": "p150", "type": "production", "base_domain": BASE, "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True,
        "acg_transport": transport,
        "service_regions": [
            {"name": "region1", "azure_region": "westeurope", "hostname": HOST1, "ip_ranges": ["127.0.150.0/28"]},
            {"name": "region2", "azure_region": "northeurope", "hostname": HOST2, "ip_ranges": ["127.0.151.0/28"]},
        ],
        "sites": [{"name": "amsterdam", "service_region": "region1"},
                  {"name": "dublin", "service_region": "region2"}],
    }


def site_plan(raw: t.Mapping[str, t.Any], site: str = "amsterdam") -> dict[str, t.Any]:
    sbcs = [Sbc(host="sbc-%s-1" % s["name"][:3], site=s["name"], platform="kamailio") for s in raw["sites"]]
    deployment, findings = validate_deployment(raw, sbcs)
    assert not findings.errors, [f.render() for f in findings.errors]
    return build_site_plan(deployment, next(s for s in deployment.sites if s.name == site))


class SippPeer:
    """One SIPp UAS on UDP answering every OPTIONS per a scenario of tests/harness/sipp/."""

    def __init__(self, workdir: Path, behaviour: str, port: int) -> None:
        self.workdir = workdir
        args = ["sipp", "-sf", str(SIPP_DIR / ("probe_options_%s.xml" % behaviour)),
                "-i", SIPP_HOST, "-p", str(port), "-t", "u1", "-nostdin", "-trace_err",
                "-error_file", str(workdir / ("sipp-%s.err" % behaviour)), "-timeout", "600"]
        workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(args, cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(0.3)
        if self.proc.poll() is not None:
            raise RuntimeError("sipp %s exited with %s" % (behaviour, self.proc.returncode))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> StandardPKI:
    return standard_pki(tmp_path_factory.mktemp("pki"), [HOST1, HOST2], sbc_hostname="sbc-ams.operator.test")


@pytest.fixture(scope="module")
def dns(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[DnsServer]:
    server = DnsServer.start_on_free_address(tmp_path_factory.mktemp("dns"), first=150)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def sipp(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[dict[str, tuple[str, int, str]]]:
    workdir = tmp_path_factory.mktemp("sipp")
    peers = {name: SippPeer(workdir, name, port) for name, port in SIPP_PORTS.items()}
    yield {name: (SIPP_HOST, port, "udp") for name, port in SIPP_PORTS.items()}
    for peer in peers.values():
        peer.stop()


class Fronts:
    """TLS fronts by address, each presenting a chosen certificate and relaying to a chosen SIPp."""

    def __init__(self, pki: StandardPKI, sipp: dict[str, tuple[str, int, str]]) -> None:
        self.pki, self.sipp = pki, sipp
        self.fronts: dict[str, TlsFront] = {}

    def add(self, address: str, behaviour: str = "200", cert: str = "peer1", port: int = 5061) -> TlsFront:
        issued = {"peer1": self.pki.peers[HOST1], "peer2": self.pki.peers[HOST2], "rogue": self.pki.rogue_peer,
                  "wrong_host": self.pki.wrong_host, "expired": self.pki.expired_peer}[cert]
        front = TlsFront(listen=(address, port), backend=self.sipp[behaviour], cert=issued.chain, key=issued.key,
                         client_ca=self.pki.operator_ca.cert).start()
        self.fronts[address] = front
        return front

    def stop(self) -> None:
        for front in self.fronts.values():
            front.stop()


@pytest.fixture
def fronts(pki: StandardPKI, sipp: dict[str, tuple[str, int, str]]) -> t.Iterator[Fronts]:
    holder = Fronts(pki, sipp)
    yield holder
    holder.stop()


def settings(dns: DnsServer, pki: StandardPKI, **overrides: t.Any) -> probe.ProbeSettings:
    values: dict[str, t.Any] = dict(timeout_s=TIMEOUT_S, client_cert=str(pki.sbc.cert), client_key=str(pki.sbc.key),
                                    ca_bundle=str(pki.acg_ca.cert),
                                    resolver=ResolverSettings(nameservers=[dns.address], port=dns.port, timeout_s=2.0),
                                    # The test PKI issues 30-day certificates: warn only below a week here.
                                    thresholds=probe.Thresholds(cert_expiry_warn_days=7))
    values.update(overrides)
    return probe.ProbeSettings(**values)


def peer(report: dict[str, t.Any], target: str) -> dict[str, t.Any]:
    for group in report["regions"] + report["mcp"]:
        for item in group["peers"]:
            if item["target"] == target:
                return item
    raise AssertionError("no peer %s in %s" % (target, [p["target"] for g in report["regions"] for p in g["peers"]]))


def region(report: dict[str, t.Any], name: str) -> dict[str, t.Any]:
    return next(g for g in report["regions"] if g["region"] == name)


# ---------------------------------------------------------------------------------------------------------
# One site with every failure class at once: also proves the probe waits once, not once per dead peer.

MIXED = {
    # target name: (address, SRV priority, behaviour, certificate)
    "ok1.r1": ("127.0.150.1", 10, "200", "peer1"),
    "silent.r1": ("127.0.150.2", 10, "silent", "peer1"),
    "busy.r1": ("127.0.150.3", 10, "503", "peer1"),
    "rogue.r1": ("127.0.150.4", 20, "200", "rogue"),
    "wronghost.r1": ("127.0.150.5", 20, "200", "wrong_host"),
    "expired.r1": ("127.0.150.6", 20, "200", "expired"),
    "refused.r1": ("127.0.150.7", 30, None, None),
    "ok1.r2": ("127.0.151.1", 10, "200", "peer2"),
    "ok2.r2": ("127.0.151.2", 10, "200", "peer2"),
    "silent.r2": ("127.0.151.3", 10, "silent", "peer2"),
}


@pytest.fixture(scope="module")
def mixed_report(pki: StandardPKI, dns: DnsServer, sipp: dict[str, tuple[str, int, str]]
                 ) -> t.Iterator[tuple[dict[str, t.Any], Fronts]]:
    holder = Fronts(pki, sipp)
    try:
        for name, (address, _prio, behaviour, cert) in MIXED.items():
            if behaviour is not None:
                holder.add(address, behaviour, cert)
        srv = {SRV1: [], SRV2: []}  # type: dict[str, list[tuple[int, int, int, str]]]
        for name, (address, prio, _b, _c) in MIXED.items():
            srv[SRV1 if name.endswith(".r1") else SRV2].append((prio, 10, 5061, "%s.%s" % (name, BASE)))
        dns.set_records(srv=srv, a=dict({"%s.%s" % (n, BASE): [v[0]] for n, v in MIXED.items()},
                                        **{"provapi." + BASE: ["127.0.150.14"]}), ttl=60)
        report = probe.run_probe(site_plan(production()), settings(dns, pki), host="sbc-ams-1")
        yield report, holder
    finally:
        holder.stop()


def t_(name: str) -> str:
    return "%s.%s" % (name, BASE)


def test_healthy_peer_over_mutual_tls(mixed_report: t.Any, pki: StandardPKI) -> None:
    report, fronts = mixed_report
    ok = peer(report, t_("ok1.r1"))
    assert ok["healthy"] and ok["code"] == 200 and ok["failure"] is None and ok["verdict"] == "pass"
    assert ok["server"] == "sipp-probe-peer"  # the reply came from SIPp behind the front
    assert ok["tls"]["version"] in ("TLSv1.2", "TLSv1.3")
    assert ok["tls"]["san"] == [HOST1] and ok["tls"]["verified_against"] == HOST1
    assert 28 <= ok["tls"]["days_to_expiry"] <= 30
    assert 0 < ok["rtt_ms"] < 1000
    seen = list(fronts.fronts["127.0.150.1"].handshakes(ok=True))
    # SNI is the regional hostname (not the SRV target ok1.r1...), and the SBC's cert was presented.
    assert seen and all(c.sni == HOST1 for c in seen)
    assert seen[0].client_san_dns == ("sbc-ams.operator.test",)


def test_silent_peer_is_no_reply_and_bounded(mixed_report: t.Any) -> None:
    report = mixed_report[0]
    for name in ("silent.r1", "silent.r2"):
        silent = peer(report, t_(name))
        assert silent["failure"] == probe.NO_REPLY and not silent["healthy"]
        assert silent["tls"]["version"]  # the handshake itself worked
        assert TIMEOUT_S * 1000 * 0.9 <= silent["elapsed_ms"] <= TIMEOUT_S * 1000 + 500
    # Two silent peers, one refused and 7 more: all at once, so about one timeout, never the sum.
    assert report["timings_ms"]["probe"] < TIMEOUT_S * 1000 + 1000


def test_503_to_options(mixed_report: t.Any) -> None:
    report = mixed_report[0]
    busy = peer(report, t_("busy.r1"))
    assert busy["failure"] == probe.NON_2XX and busy["code"] == 503 and busy["reason"] == "Service Unavailable"
    assert busy["verdict"] == "fail" and not busy["healthy"]


@pytest.mark.parametrize("name, failure", [("rogue.r1", probe.TLS_UNKNOWN_CA),
                                           ("wronghost.r1", probe.TLS_HOSTNAME_MISMATCH),
                                           ("expired.r1", probe.TLS_EXPIRED),
                                           ("refused.r1", probe.CONNECT_REFUSED)])
def test_tls_and_connect_failures(mixed_report: t.Any, name: str, failure: str) -> None:
    report = mixed_report[0]
    result = peer(report, t_(name))
    assert result["failure"] == failure, result
    assert not result["healthy"] and result["verdict"] == "fail"
    if failure == probe.TLS_HOSTNAME_MISMATCH:
        assert result["tls"]["san"] == ["wrong.example"]  # the refused certificate is described
    if failure == probe.TLS_EXPIRED:
        assert result["tls"]["days_to_expiry"] < 0


def test_mixed_verdicts(mixed_report: t.Any) -> None:
    report = mixed_report[0]
    r1, r2 = region(report, "region1"), region(report, "region2")
    assert r1["verdict"] == "fail" and r1["healthy"] == 1 and r1["total"] == 7
    assert any("TLS verification failed" in reason for reason in r1["reasons"])
    assert r2["verdict"] == "warn" and r2["healthy"] == 2  # degraded, not down
    assert report["verdict"] == "fail"
    assert report["provisioning_api"]["verdict"] == "pass"
    lines = summary_lines(report)
    assert lines[0].startswith("site p150/amsterdam on sbc-ams-1: FAIL")
    junit = to_junit([report])
    assert junit.count("<testcase") == 10 + 2 * 2 + 1 and junit.count("<failure") == 8


def test_all_healthy_passes_and_target_outside_the_28_fails(
        pki: StandardPKI, dns: DnsServer, fronts: Fronts) -> None:
    fronts.add("127.0.150.9", "200", "peer1")
    fronts.add("127.0.151.9", "200", "peer2")
    outsider = fronts.add("127.0.152.1", "200", "peer2")  # a perfectly healthy peer, in no range of the deployment
    a = {t_("a.r1"): ["127.0.150.9"], t_("a.r2"): ["127.0.151.9"], t_("x.r2"): ["127.0.152.1"],
         "provapi." + BASE: ["127.0.150.14"]}
    dns.set_records(srv={SRV1: [(10, 10, 5061, t_("a.r1"))], SRV2: [(10, 10, 5061, t_("a.r2"))]}, a=a)
    good = probe.run_probe(site_plan(production()), settings(dns, pki))
    assert good["verdict"] == "pass", good["reasons"]
    assert [g["region"] for g in good["regions"]] == ["region1", "region2"]  # local region first
    soon = probe.run_probe(site_plan(production()), settings(dns, pki, thresholds=probe.Thresholds(
        cert_expiry_warn_days=60)))
    assert soon["verdict"] == "warn" and "certificate expires in" in peer(soon, t_("a.r1"))["reasons"][0]

    dns.set_records(srv={SRV1: [(10, 10, 5061, t_("a.r1"))],
                         SRV2: [(10, 10, 5061, t_("a.r2")), (10, 10, 5061, t_("x.r2"))]}, a=a)
    bad = probe.run_probe(site_plan(production()), settings(dns, pki))
    outside = peer(bad, t_("x.r2"))
    # Never contacted (no TLS with the SBC's certificate, no OPTIONS), reported with the address and the ranges.
    assert not outside["healthy"] and not outside["in_range"] and outside["verdict"] == "fail"
    assert outside["failure"] == probe.OUT_OF_RANGE and "127.0.152.1" in outside["detail"]
    assert "127.0.151.0/28" in outside["detail"]
    assert outsider.connections == []
    r2 = region(bad, "region2")
    assert r2["verdict"] == "fail" and r2["dns"]["out_of_range"] == ["%s -> 127.0.152.1" % t_("x.r2")]
    assert bad["verdict"] == "fail"


def test_targets_per_record_are_capped(pki: StandardPKI, dns: DnsServer) -> None:
    # A record with 40 targets (hostile or broken DNS): only the first MAX_TARGETS_PER_RECORD are contacted.
    names = [t_("many%02d.r1" % i) for i in range(40)]
    a = {name: ["127.0.150.%d" % (1 + i % 14)] for i, name in enumerate(names)}
    a.update({t_("a.r2"): ["127.0.151.9"], "provapi." + BASE: ["127.0.150.14"]})
    dns.set_records(srv={SRV1: [(10, 10, 5061, name) for name in names], SRV2: [(10, 10, 5061, t_("a.r2"))]}, a=a)
    # srv_limits lets the record through the DNS step (16 targets at most by default), so that the probe's
    # own cap on contacted targets is what is tested here.
    report = probe.run_probe(site_plan(dict(production(), srv_limits={"max_targets": 64})), settings(dns, pki))
    r1 = region(report, "region1")
    assert len(r1["dns"]["targets"]) == 40  # the DNS answer is reported whole
    assert len(r1["peers"]) == probe_limits.MAX_TARGETS_PER_RECORD == r1["total"]
    assert any("40 targets, only the first %d probed" % probe_limits.MAX_TARGETS_PER_RECORD in reason
               for reason in r1["reasons"]), r1["reasons"]
    assert r1["verdict"] == "fail"  # nothing listens there: no healthy peer


def test_region_without_healthy_peer_and_dns_failure(pki: StandardPKI, dns: DnsServer, fronts: Fronts) -> None:
    fronts.add("127.0.150.9", "200", "peer1")
    fronts.add("127.0.151.10", "503", "peer2")
    dns.set_records(srv={SRV1: [(10, 10, 5061, t_("a.r1"))], SRV2: [(10, 10, 5061, t_("b.r2"))]},
                    a={t_("a.r1"): ["127.0.150.9"], t_("b.r2"): ["127.0.151.10"], "provapi." + BASE: ["127.0.150.14"]},
                    ttl_overrides={"provapi." + BASE: 300})
    report = probe.run_probe(site_plan(production()), settings(dns, pki))
    r2 = region(report, "region2")
    assert r2["verdict"] == "fail" and r2["healthy"] == 0
    assert report["provisioning_api"]["verdict"] == "fail"  # 300 s TTL
    # Region 2's record vanishes: a DNS failure, not drift or a peer problem.
    dns.set_records(srv={SRV1: [(10, 10, 5061, t_("a.r1"))]}, a={t_("a.r1"): ["127.0.150.9"]})
    report = probe.run_probe(site_plan(production()), settings(dns, pki, check_provisioning_ttl=False))
    r2 = region(report, "region2")
    assert r2["dns"]["kind"] == "nxdomain" and r2["verdict"] == "fail" and r2["peers"] == []
    assert region(report, "region1")["verdict"] == "pass"


def test_mcp_targets_get_no_options(pki: StandardPKI, dns: DnsServer, fronts: Fronts) -> None:
    raw = production()
    raw["service_regions"][0]["mcp_hostname"] = "mcp-region1." + BASE
    raw["service_regions"][1]["mcp_hostname"] = "mcp-region2." + BASE
    fronts.add("127.0.150.9", "200", "peer1")
    fronts.add("127.0.151.9", "200", "peer2")
    mcp1 = fronts.add("127.0.150.11", "200", "peer1")  # presents region1's hostname: wrong for MCP
    mcp_pki = pki.acg_ca.issue_server("mcp2", dns=["mcp-region2." + BASE])
    mcp2 = TlsFront(listen=("127.0.151.11", 5061), backend=None, cert=mcp_pki.chain, key=mcp_pki.key,
                    client_ca=pki.operator_ca.cert).start()
    try:
        dns.set_records(srv={SRV1: [(10, 10, 5061, t_("a.r1"))], SRV2: [(10, 10, 5061, t_("a.r2"))],
                             "_sip._tls.mcp-region1." + BASE: [(10, 10, 5061, t_("m.r1"))],
                             "_sip._tls.mcp-region2." + BASE: [(10, 10, 5061, t_("m.r2"))]},
                        a={t_("a.r1"): ["127.0.150.9"], t_("a.r2"): ["127.0.151.9"], t_("m.r1"): ["127.0.150.11"],
                           t_("m.r2"): ["127.0.151.11"], "provapi." + BASE: ["127.0.150.14"]})
        report = probe.run_probe(site_plan(raw), settings(dns, pki))
        assert [g["region"] for g in report["mcp"]] == ["region1", "region2"]
        m2 = peer(report, t_("m.r2"))
        assert m2["kind"] == "mcp" and m2["healthy"] and m2["code"] is None
        assert m2["tls"]["san"] == ["mcp-region2." + BASE]
        m1 = peer(report, t_("m.r1"))
        assert m1["failure"] == probe.TLS_HOSTNAME_MISMATCH  # verified against the MCP hostname
        time.sleep(0.2)
        assert mcp2.requests() == [] and mcp1.requests() == []  # never an OPTIONS to MCP
        assert mcp2.handshakes(ok=True)
    finally:
        mcp2.stop()
