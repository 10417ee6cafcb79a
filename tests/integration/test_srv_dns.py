# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SRV resolution and audit against a real DNS server (Knot, tests/harness/dns.py) on loopback."""

from __future__ import annotations

import collections
import random
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.srv import deployment as srv
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import ERROR, WARNING
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from harness.dns import DnsServer, SilentNameserver
from harness.tools import run_module

pytestmark = pytest.mark.integration

BASE = "acg.commsgw.test"
HOST1, HOST2 = "pstn-region1." + BASE, "pstn-region2." + BASE
SRV1, SRV2 = "_sip._tls." + HOST1, "_sip._tls." + HOST2
RANGE1, RANGE2 = "20.61.48.16/28", "20.82.160.32/28"
PROD = {
    "name": "contoso", "type": "production", "base_domain": BASE, "management_region": "West Europe",
    "service_regions": [
        {"name": "region1", "azure_region": "westeurope", "hostname": HOST1, "ip_ranges": [RANGE1]},
        {"name": "region2", "azure_region": "northeurope", "hostname": HOST2, "ip_ranges": [RANGE2]},
    ],
    "sites": [{"name": "amsterdam", "service_region": "region1"}, {"name": "dublin", "service_region": "region2"}],
    # The backup target below listens on 5062: allowed explicitly (TLS alone would allow 5061 only, issue 13).
    "srv_limits": {"ports": [5061, 5062]},
}


def good_records(**overrides: t.Any) -> dict[str, t.Any]:
    """Both regions healthy: two peers at priority 10 (60:40) and a backup at 20 in region 1."""
    records: dict[str, t.Any] = {
        "srv": {SRV1: [(10, 60, 5061, "sbc1." + HOST1), (10, 40, 5061, "sbc2." + HOST1),
                       (20, 0, 5062, "sbc3." + HOST1)],
                SRV2: [(10, 50, 5061, "sbc1." + HOST2)]},
        "a": {"sbc1." + HOST1: ["20.61.48.17"], "sbc2." + HOST1: ["20.61.48.30", "20.61.48.18"],
              "sbc3." + HOST1: ["20.61.48.19"], "sbc1." + HOST2: ["20.82.160.33"],
              "provapi." + BASE: ["20.61.48.20"]},
        "ttl": 60,
    }
    records.update(overrides)
    return records


def settings(server: t.Any, timeout_s: float = 2.0) -> srv.ResolverSettings:
    return srv.ResolverSettings(nameservers=[server.address], port=server.port, timeout_s=timeout_s)


def lookup_error(name: str, server: t.Any, timeout_s: float = 2.0) -> srv.DnsLookupError:
    with pytest.raises(srv.DnsLookupError) as caught:
        srv.resolve_srv(name, settings(server, timeout_s))
    return caught.value


def test_good_answer_gives_targets_addresses_ttl_and_rfc2782_order(dns_server: DnsServer) -> None:
    dns_server.set_records(**good_records(ttl_overrides={SRV1: 45}))
    answer = srv.resolve_srv(SRV1 + ".", settings(dns_server))
    assert answer.name == SRV1
    assert answer.ttl == 45
    assert [(tgt.priority, tgt.weight, tgt.port, tgt.target, tgt.addresses) for tgt in answer.targets] == [
        (10, 40, 5061, "sbc2." + HOST1, ("20.61.48.18", "20.61.48.30")),
        (10, 60, 5061, "sbc1." + HOST1, ("20.61.48.17",)),
        (20, 0, 5062, "sbc3." + HOST1, ("20.61.48.19",)),
    ]
    rng = random.Random(5)
    firsts = collections.Counter()
    for _draw in range(2000):
        order = srv.rfc2782_order(answer.targets, rng)
        assert order[-1].target == "sbc3." + HOST1  # the priority-20 backup always last
        firsts[order[0].target] += 1
    assert firsts["sbc1." + HOST1] / 2000 == pytest.approx(0.6, abs=0.05)
    assert srv.audit_srv(answer, [RANGE1], "service_regions[0].hostname") == []


def test_resolved_deployment_feeds_the_plan(dns_server: DnsServer) -> None:
    dns_server.set_records(**good_records())
    deployment, invalid = validate_deployment(PROD, [])
    answers, findings = srv.resolve_deployment(deployment, settings(dns_server), check_provisioning_ttl=True)
    assert findings == []
    assert sorted(answers) == [SRV1, SRV2]
    plan = build_site_plan(deployment, deployment.sites[1], answers)
    local, remote = plan["trunk_groups"]
    assert (local["srv_name"], remote["srv_name"]) == (SRV2, SRV1)
    assert local["peers"] == [{"target": "sbc1." + HOST2, "port": 5061, "priority": 10, "weight": 50,
                               "addresses": ["20.82.160.33"]}]
    assert [p["target"] for p in remote["peers"]] == ["sbc1." + HOST1, "sbc2." + HOST1, "sbc3." + HOST1]
    assert remote["srv_ttl"] == 60


def test_nxdomain(dns_server: DnsServer) -> None:
    dns_server.set_records(**good_records())
    error = lookup_error("_sip._tls.pstn-region9." + BASE, dns_server)
    assert error.kind == srv.NXDOMAIN
    assert "_sip._tls.pstn-region9." + BASE in str(error) and dns_server.address in str(error)


def test_name_without_srv_record_is_no_answer(dns_server: DnsServer) -> None:
    records = good_records()
    records["a"][SRV1] = ["20.61.48.17"]  # the name exists, with an A record only
    del records["srv"][SRV1]
    dns_server.set_records(**records)
    assert lookup_error(SRV1, dns_server).kind == srv.NO_ANSWER


def test_servfail(dns_server: DnsServer) -> None:
    dns_server.set_records(**good_records(servfail=[HOST2]))
    assert lookup_error(SRV2, dns_server).kind == srv.SERVFAIL
    assert srv.resolve_srv(SRV1, settings(dns_server)).targets  # the rest of the zone still answers


def test_timeout(silent_nameserver: SilentNameserver) -> None:
    started = time.monotonic()
    error = lookup_error(SRV1, silent_nameserver, timeout_s=0.5)
    elapsed = time.monotonic() - started
    assert error.kind == srv.TIMEOUT
    assert silent_nameserver.address in str(error)
    assert 0.4 <= elapsed < 2.0  # bounded by the configured timeout, not by dnspython's defaults


def test_dot_target_means_no_service(dns_server: DnsServer) -> None:
    dns_server.set_records(**good_records(srv={SRV1: [(0, 0, 0, ".")]}))
    error = lookup_error(SRV1, dns_server)
    assert error.kind == srv.NO_SERVICE
    assert "RFC 2782" in str(error)


def test_targets_without_any_address(dns_server: DnsServer) -> None:
    records = good_records()
    records["srv"][SRV2] = [(10, 50, 5061, "ghost." + HOST2)]
    dns_server.set_records(**records)
    assert lookup_error(SRV2, dns_server).kind == srv.TARGET_UNRESOLVED


def test_audit_finds_target_outside_the_28_and_addressless_target(dns_server: DnsServer) -> None:
    records = good_records()
    records["a"]["sbc2." + HOST1] = ["20.61.48.18", "20.61.48.33"]  # .33 is past the /28's end (.31)
    records["srv"][SRV1].append((30, 10, 5061, "ghost." + HOST1))  # no A record at all
    dns_server.set_records(**records)
    deployment = validate_deployment(PROD, [])[0]
    answers, findings = srv.resolve_deployment(deployment, settings(dns_server))
    assert sorted(answers) == [SRV1, SRV2]  # partial problems keep the answer for the plan
    assert sorted((f.severity, f.path, f.rule, f.value) for f in findings) == [
        (ERROR, "service_regions[0].hostname", "R-07", "20.61.48.33"),
        (ERROR, "service_regions[0].hostname", "R-07", "ghost." + HOST1)]
    outside = next(f for f in findings if f.value == "20.61.48.33")
    assert SRV1 in outside.message and "sbc2." + HOST1 in outside.message


def test_region_target_in_the_other_regions_range_is_an_error(dns_server: DnsServer) -> None:
    records = good_records()
    records["a"]["sbc1." + HOST2] = ["20.61.48.17"]  # region 1's /28 under region 2's record
    dns_server.set_records(**records)
    deployment = validate_deployment(PROD, [])[0]
    findings = srv.resolve_deployment(deployment, settings(dns_server))[1]
    assert [(f.path, f.value) for f in findings] == [("service_regions[1].hostname", "20.61.48.17")]


def test_dns_failures_become_findings_with_field_path_and_kind(dns_server: DnsServer) -> None:
    records = good_records(servfail=[HOST2])
    del records["srv"][SRV1]
    dns_server.set_records(**records)
    deployment = validate_deployment(PROD, [])[0]
    answers, findings = srv.resolve_deployment(deployment, settings(dns_server))
    assert answers == {}
    assert [(f.severity, f.path, f.value) for f in findings] == [
        (ERROR, "service_regions[0].hostname", srv.NXDOMAIN),
        (ERROR, "service_regions[1].hostname", srv.SERVFAIL)]
    assert all(dns_server.address in f.message for f in findings)


@pytest.mark.parametrize("ttl, severity", [(60, None), (300, ERROR)])
def test_provisioning_api_ttl(dns_server: DnsServer, ttl: int, severity: t.Optional[str]) -> None:
    name = "provapi." + BASE
    dns_server.set_records(**good_records(ttl_overrides={name: ttl}))
    finding = srv.check_ttl(name, 60, settings(dns_server))
    assert (finding.severity if finding else None) == severity
    if finding:
        assert finding.value == 300 and "R-21" == finding.rule and name in finding.message


def test_provisioning_api_missing_is_a_warning(dns_server: DnsServer) -> None:
    records = good_records()
    del records["a"]["provapi." + BASE]
    dns_server.set_records(**records)
    finding = srv.check_ttl("provapi." + BASE, 60, settings(dns_server))
    assert finding is not None and finding.severity == WARNING and "nxdomain" in finding.message


def test_records_change_while_running(dns_server: DnsServer) -> None:
    dns_server.set_records(**good_records())
    assert srv.resolve_srv(SRV2, settings(dns_server)).targets[0].addresses == ("20.82.160.33",)
    records = good_records()
    records["a"]["sbc1." + HOST2] = ["20.82.160.44"]
    dns_server.set_records(**records)  # returns once the new zone is served
    assert srv.resolve_srv(SRV2, settings(dns_server)).targets[0].addresses == ("20.82.160.44",)


def test_resolv_conf_names_the_server(dns_server: DnsServer) -> None:
    assert dns_server.resolv_conf.read_text() == "nameserver %s\n" % dns_server.address


def test_two_servers_never_share_an_address(tmp_path: Path, dns_server: DnsServer) -> None:
    other = DnsServer(tmp_path / "other", address=dns_server.address)
    with pytest.raises(RuntimeError, match="leased|in use"):
        other.start()


# -- the module, run as Ansible runs it: a separate Python process reading its arguments -------------
def test_module_returns_answers_and_passes(dns_server: DnsServer, tmp_path: Path) -> None:
    dns_server.set_records(**good_records())
    code, result = run_module("srv_audit", {"deployment": PROD, "nameservers": [dns_server.address], "timeout": 1.0,
                                            "_ansible_check_mode": True}, tmp_path)
    assert code == 0, result
    assert result["changed"] is False and result["errors"] == [] and result["findings"] == []
    assert sorted(result["answers"]) == [SRV1, SRV2]
    assert result["answers"][SRV2]["targets"][0]["addresses"] == ["20.82.160.33"]


def test_module_fails_on_audit_errors_and_ttl(dns_server: DnsServer, tmp_path: Path) -> None:
    records = good_records(ttl_overrides={"provapi." + BASE: 300})
    records["a"]["sbc1." + HOST2] = ["198.51.100.7"]
    dns_server.set_records(**records)
    code, result = run_module("srv_audit", {"deployment": PROD, "nameservers": [dns_server.address], "timeout": 1.0},
                              tmp_path)
    assert code != 0 and result["failed"] is True
    # A failed audit lists each error once, as a line of problems (the play output shows it once).
    lines = result["problems"].splitlines()
    assert [(line.split(":")[0], line.rsplit(" ", 1)[-1]) for line in lines] == [
        ("service_regions[1].hostname", "[R-07]"), ("base_domain", "[R-21]")]
    assert "198.51.100.7" in lines[0] and "2 error(s)" in result["msg"]
    assert "findings" not in result and "errors" not in result
    assert SRV1 in result["answers"]


def test_module_refuses_an_invalid_deployment(tmp_path: Path) -> None:
    broken = dict(PROD, service_regions=[dict(PROD["service_regions"][0], ip_ranges=["20.61.48.16/27"])])
    code, result = run_module("srv_audit", {"deployment": broken, "nameservers": ["127.0.53.254"]}, tmp_path)
    assert code != 0
    assert "does not pass validation" in result["msg"]
    assert any(line.startswith("service_regions[0].ip_ranges[0]: is a /27")
               for line in result["problems"].splitlines())


def test_module_refuses_a_nameserver_given_as_a_name(tmp_path: Path) -> None:
    """commsgw_dns_nameservers: [localhost] once crashed the audit with dnspython's wording (issue 13)."""
    code, result = run_module("srv_audit", {"deployment": PROD, "nameservers": ["127.0.53.254", "localhost"]},
                              tmp_path)
    assert code != 0 and "Traceback" not in str(result)
    assert result["msg"] == ("nameservers (commsgw_dns_nameservers)[1]: is not an IP address (got 'localhost'; "
                             "expected an IPv4 or IPv6 address, e.g. 192.0.2.53 (a name cannot be resolved before a "
                             "resolver is chosen))")


def test_module_refuses_rfc2782_violations_and_unexpected_ports(dns_server: DnsServer, tmp_path: Path) -> None:
    """Issue 13: a CNAME target and, with the TLS default (5061 only), a target on 5062 each fail the audit
    with their own kind, naming the inventory field; neither record is among the answers."""
    records = good_records()
    del records["srv"][SRV2]
    dns_server.set_records(**records, extra=["%s. 60 IN SRV 10 50 5061 alias.%s." % (SRV2, HOST2),
                                             "alias.%s. 60 IN CNAME sbc1.%s." % (HOST2, HOST2)])
    deployment = {k: v for k, v in PROD.items() if k != "srv_limits"}
    code, result = run_module("srv_audit", {"deployment": deployment, "nameservers": [dns_server.address],
                                            "timeout": 1.0}, tmp_path)
    assert code != 0 and result["failed"] is True and result["answers"] == {}
    lines = result["problems"].splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("service_regions[0].hostname: ") and "[%s]" % srv.UNEXPECTED_PORT in lines[0]
    assert lines[1].startswith("service_regions[1].hostname: ") and "[%s]" % srv.TARGET_ALIAS in lines[1]
    text = result["problems"]
    assert "sbc3.%s is on port 5062; expected 5061 (srv_limits.ports)" % HOST1 in text
    assert "target alias.%s is an alias (CNAME to sbc1.%s)" % (HOST2, HOST2) in text
