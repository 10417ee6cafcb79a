# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which nameservers answer each deployment's SRV records (module_utils/dns_settings.py, issue 13)."""

from __future__ import annotations

import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.srv.dns_settings import (
    DnsSettingsError, check_deployment_dns, deployment_dns_settings, nameserver_problems)
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import render_findings, validate_inventory
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars

LAB = {"name": "lab"}
OTHER = {"name": "other"}


def _hosts(**hosts: dict[str, t.Any]) -> dict[str, dict[str, t.Any]]:
    return {host: dict(variables) for host, variables in hosts.items()}


def test_the_deployments_own_group_vars_win_over_the_controllers() -> None:
    hosts = _hosts(a={"commsgw_deployment": LAB, "commsgw_dns_nameservers": ["127.0.53.9"], "commsgw_dns_port": 5353},
                   b={"commsgw_deployment": LAB, "commsgw_dns_nameservers": ["127.0.53.9"], "commsgw_dns_port": 5353},
                   c={"commsgw_deployment": OTHER})
    entries = deployment_dns_settings(hosts, {"commsgw_dns_nameservers": ["192.0.2.53"], "commsgw_dns_timeout": 4})
    assert entries == [
        {"deployment": LAB, "nameservers": ["127.0.53.9"], "port": 5353, "timeout": 4},
        {"deployment": OTHER, "nameservers": ["192.0.2.53"], "port": None, "timeout": 4}]


def test_nothing_set_means_the_system_resolver() -> None:
    assert deployment_dns_settings(_hosts(a={"commsgw_deployment": LAB})) == [
        {"deployment": LAB, "nameservers": None, "port": None, "timeout": None}]


def test_hosts_of_one_deployment_that_disagree_are_refused() -> None:
    hosts = _hosts(a={"commsgw_deployment": LAB, "commsgw_dns_nameservers": ["127.0.53.9"]},
                   b={"commsgw_deployment": LAB, "commsgw_dns_nameservers": ["127.0.53.10"]})
    with pytest.raises(DnsSettingsError) as raised:
        deployment_dns_settings(hosts)
    assert str(raised.value) == (
        "hosts[b].commsgw_dns_nameservers: differs from what host a of the same deployment has (['127.0.53.9']) "
        "(got ['127.0.53.10']; expected one value for every host of the deployment (its SRV records are asked of "
        "one set of nameservers), e.g. in the deployment's group_vars)")
    # Set for one site's hosts only (a site group_vars): refused, never the system resolver for the others.
    hosts["b"].pop("commsgw_dns_nameservers")
    with pytest.raises(DnsSettingsError, match=r"^hosts\[b\]\.commsgw_dns_nameservers: is not set while host a of "
                                               r"the same deployment sets it"):
        deployment_dns_settings(hosts, {"commsgw_dns_nameservers": ["127.0.53.10"]})


# -- issue 25 item 7: bad input is a validation finding with its field path ----------------------------
def _findings(value: t.Any, **defaults: t.Any) -> tuple[dict[str, t.Any], Findings]:
    findings = Findings()
    hosts = [("sbc-a", {"commsgw_dns_nameservers": value}), ("sbc-b", {"commsgw_dns_nameservers": value})]
    if value is None:
        hosts = [("sbc-a", {}), ("sbc-b", {})]
    return check_deployment_dns(hosts, defaults, findings), findings


@pytest.mark.parametrize("value, line", [
    (["localhost"], "hosts[sbc-a].commsgw_dns_nameservers[0]: is not an IP address (got 'localhost'; expected an IPv4 "
                    "or IPv6 address, e.g. 192.0.2.53 (a name cannot be resolved before a resolver is chosen))"),
    (["127.0.53.9", "ns1.example.net"], "hosts[sbc-a].commsgw_dns_nameservers[1]: is not an IP address (got "
                                        "'ns1.example.net'"),
    ([], "hosts[sbc-a].commsgw_dns_nameservers: is empty (got []; expected at least one IP address"),
    ({"a": 1}, "hosts[sbc-a].commsgw_dns_nameservers: is not a list (got {'a': 1}"),
    ("localhost", "hosts[sbc-a].commsgw_dns_nameservers[0]: is not an IP address (got 'localhost'"),
])
def test_a_bad_nameserver_is_one_error_naming_the_field(value: t.Any, line: str) -> None:
    """Set in the deployment's group_vars, both hosts see it: reported once, under the first host."""
    dummy, findings = _findings(value)
    assert [f.render()[:len(line)] for f in findings.errors] == [line]


def test_a_nameserver_given_as_a_string_is_a_list_of_one_with_a_warning() -> None:
    values, findings = _findings("192.0.2.53")
    assert values["commsgw_dns_nameservers"] == ["192.0.2.53"]
    assert not findings.errors
    assert [f.render() for f in findings.warnings] == [
        "hosts[sbc-a].commsgw_dns_nameservers: is a string, read as a list of one nameserver (got '192.0.2.53'; "
        "expected a list of IP addresses, e.g. ['192.0.2.53'])"]
    assert deployment_dns_settings({"a": {"commsgw_deployment": LAB, "commsgw_dns_nameservers": "192.0.2.53"}})[0][
        "nameservers"] == ["192.0.2.53"]


def test_the_controllers_values_are_checked_when_they_are_the_ones_used() -> None:
    dummy, findings = _findings(None, commsgw_dns_nameservers=["dns.example.net"], commsgw_dns_port=0)
    assert [f.path for f in findings.errors] == ["hosts[localhost].commsgw_dns_nameservers[0]",
                                                 "hosts[localhost].commsgw_dns_port"]
    # A host's own value wins: the controller's is not used, so not judged.
    dummy, findings = _findings(["192.0.2.53"], commsgw_dns_nameservers=["dns.example.net"])
    assert not findings.items


@pytest.mark.parametrize("var, value, ok", [
    ("commsgw_dns_port", 5353, True), ("commsgw_dns_port", "5353", True), ("commsgw_dns_port", 0, False),
    ("commsgw_dns_port", 65536, False), ("commsgw_dns_port", True, False), ("commsgw_dns_port", "53x", False),
    ("commsgw_dns_timeout", 2, True), ("commsgw_dns_timeout", "1.5", True), ("commsgw_dns_timeout", 0, False),
    ("commsgw_dns_timeout", "inf", False), ("commsgw_dns_timeout", "nan", False), ("commsgw_dns_timeout", [], False),
])
def test_port_and_timeout(var: str, value: t.Any, ok: bool) -> None:
    findings = Findings()
    check_deployment_dns([("sbc-a", {var: value})], {}, findings)
    assert [f.path for f in findings.errors] == ([] if ok else ["hosts[sbc-a].%s" % var])


def test_validate_inventory_reports_dns_settings_with_the_deployment() -> None:
    hostvars = load_hostvars(INVENTORIES / "lab")
    for variables in hostvars.values():
        variables["commsgw_dns_nameservers"] = ["localhost"]
    reports = validate_inventory(hostvars)
    assert render_findings(reports) == [
        "deployment lab: hosts[lab-sbc-1].commsgw_dns_nameservers[0]: is not an IP address (got 'localhost'; expected "
        "an IPv4 or IPv6 address, e.g. 192.0.2.53 (a name cannot be resolved before a resolver is chosen))"]
    assert reports[0]["model"] is None
    # inventory/production sets no nameservers: the controller's are used, and checked.
    reports = validate_inventory(load_hostvars(INVENTORIES / "production"),
                                 dns_defaults={"commsgw_dns_nameservers": "x"})
    assert [f.path for f in reports[0]["errors"]] == ["hosts[localhost].commsgw_dns_nameservers[0]"]


def test_nameserver_problems_accepts_ipv4_and_ipv6() -> None:
    assert nameserver_problems(["192.0.2.53", "2001:db8::53"], "nameservers") == []
    assert nameserver_problems([53], "nameservers") == [
        "nameservers[0]: is not an IP address (got 53; expected an IPv4 or IPv6 address, e.g. 192.0.2.53 "
        "(a name cannot be resolved before a resolver is chosen))"]
