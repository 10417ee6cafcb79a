# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which nameservers answer each deployment's SRV records (module_utils/dns_settings.py, issue 13)."""

from __future__ import annotations

import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.dns_settings import (
    DnsSettingsError, deployment_dns_settings, nameserver_problems)

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
    with pytest.raises(DnsSettingsError, match=r"commsgw_dns_nameservers differs between hosts of deployment lab"):
        deployment_dns_settings(hosts)
    # Set for one site's hosts only (a site group_vars): refused, never the system resolver for the others.
    hosts["b"].pop("commsgw_dns_nameservers")
    with pytest.raises(DnsSettingsError, match=r"is set for host a of deployment lab .* but not for host b"):
        deployment_dns_settings(hosts, {"commsgw_dns_nameservers": ["127.0.53.10"]})


@pytest.mark.parametrize("value, problem", [
    (["localhost"], "commsgw_dns_nameservers of deployment lab (host a)[0]: is not an IP address (got 'localhost'"),
    (["127.0.53.9", "ns1.example.net"], "[1]: is not an IP address (got 'ns1.example.net'"),
    ("127.0.53.9", "is not a list"),
    ([], "is empty"),
])
def test_a_nameserver_that_is_not_an_ip_address_is_refused(value: t.Any, problem: str) -> None:
    with pytest.raises(DnsSettingsError) as raised:
        deployment_dns_settings(_hosts(a={"commsgw_deployment": LAB, "commsgw_dns_nameservers": value}))
    assert problem in str(raised.value)
    if isinstance(value, list) and value:
        assert "expected an IPv4 or IPv6 address" in str(raised.value)


def test_nameserver_problems_accepts_ipv4_and_ipv6() -> None:
    assert nameserver_problems(["192.0.2.53", "2001:db8::53"], "nameservers") == []
    assert nameserver_problems([53], "nameservers") == [
        "nameservers[0]: is not an IP address (got 53; expected an IPv4 or IPv6 address, e.g. 192.0.2.53 "
        "(a name cannot be resolved before a resolver is chosen))"]
