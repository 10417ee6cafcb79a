# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_deployment: shape checks (types, required and unknown fields) and defaults."""

from __future__ import annotations

import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import (
    DEFAULT_EMERGENCY_DIAL_STRINGS, MCP_DEFAULTS, ROUTING_DEFAULTS, Deployment, Sbc, parse_deployment)


def raw_deployment() -> dict[str, t.Any]:
    return {
        "name": "d", "type": "production", "base_domain": "x.commsgw.azure.com", "management_region": "West Europe",
        "service_regions": [
            {"name": "r1", "azure_region": "westeurope", "hostname": "a.x.commsgw.azure.com",
             "ip_ranges": ["20.0.0.0/28"], "mcp_hostname": "m.x.commsgw.azure.com"},
            {"name": "r2", "azure_region": "northeurope", "hostname": "b.x.commsgw.azure.com",
             "ip_ranges": ["20.0.0.16/28"]},
        ],
        "sites": [{"name": "s1", "service_region": "r1"}, {"name": "s2", "service_region": "r2"}],
    }


def parse(raw: t.Any, sbcs: t.Sequence[Sbc] = ()) -> tuple[Deployment, Findings]:
    findings = Findings()
    return parse_deployment(raw, sbcs, findings), findings


def paths(findings: Findings) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in findings.items]


def test_good_mapping_parses_without_findings() -> None:
    sbcs = [Sbc("h1", "s1")]
    deployment, findings = parse(raw_deployment(), sbcs)
    assert findings.items == []
    assert (deployment.name, deployment.type, deployment.acg_transport) == ("d", "production", "tls")
    assert [(r.index, r.name, r.ip_ranges, r.mcp_hostname) for r in deployment.service_regions] == [
        (0, "r1", ["20.0.0.0/28"], "m.x.commsgw.azure.com"), (1, "r2", ["20.0.0.16/28"], None)]
    assert [(s.path, s.service_region) for s in deployment.sites] == [("sites[0]", "r1"), ("sites[1]", "r2")]
    assert deployment.service_regions[1].path == "service_regions[1]"
    assert deployment.sbcs == sbcs and deployment.sbcs is not sbcs
    assert deployment.region_named("r2") is deployment.service_regions[1]
    assert deployment.region_named("r3") is None


def test_defaults_fill_optional_fields() -> None:
    deployment = parse(raw_deployment())[0]
    assert deployment.routing == ROUTING_DEFAULTS
    assert deployment.emergency_dial_strings == list(DEFAULT_EMERGENCY_DIAL_STRINGS)
    assert (deployment.mcp.policy, deployment.mcp.hold_down_s, deployment.mcp.continue_next_hop) == (
        MCP_DEFAULTS["policy"], MCP_DEFAULTS["hold_down_s"], MCP_DEFAULTS["continue_next_hop"])
    assert deployment.allow_non_public_ranges is False


def test_defaults_are_not_shared_between_deployments() -> None:
    first = parse(raw_deployment())[0]
    first.routing["invite_timer_ms"] = 1
    first.emergency_dial_strings.append("000")
    second = parse(raw_deployment())[0]
    assert second.routing == ROUTING_DEFAULTS
    assert "000" not in second.emergency_dial_strings


def test_partial_routing_and_mcp_keep_the_other_defaults() -> None:
    raw = raw_deployment()
    raw["routing"] = {"failure_threshold": 4}
    raw["mcp"] = {"policy": "continue", "continue_next_hop": "core.example.net"}
    deployment, findings = parse(raw)
    assert findings.items == []
    assert deployment.routing == {**ROUTING_DEFAULTS, "failure_threshold": 4}
    assert (deployment.mcp.policy, deployment.mcp.hold_down_s) == ("continue", 30)


@pytest.mark.parametrize("field", ["name", "type", "base_domain", "management_region", "service_regions", "sites"])
def test_required_top_level_fields(field: str) -> None:
    raw = raw_deployment()
    del raw[field]
    findings = parse(raw)[1]
    assert paths(findings) == [(field, "is missing")]


def test_null_counts_as_missing() -> None:
    raw = raw_deployment()
    raw["base_domain"] = None
    findings = parse(raw)[1]
    assert paths(findings) == [("base_domain", "is missing")]


@pytest.mark.parametrize("field", ["name", "azure_region", "hostname", "ip_ranges"])
def test_required_region_fields(field: str) -> None:
    raw = raw_deployment()
    del raw["service_regions"][1][field]
    deployment, findings = parse(raw)
    assert paths(findings) == [("service_regions[1].%s" % field, "is missing")]
    assert len(deployment.service_regions) == 2  # the region is kept so later rules see the rest


@pytest.mark.parametrize("field", ["name", "service_region"])
def test_required_site_fields(field: str) -> None:
    raw = raw_deployment()
    del raw["sites"][0][field]
    findings = parse(raw)[1]
    assert paths(findings) == [("sites[0].%s" % field, "is missing")]


@pytest.mark.parametrize("where, key", [((), "service_region"), (("service_regions", 0), "hostnames"),
                                        (("sites", 1), "region"), (("routing",), "options_interval"),
                                        (("mcp",), "hold_down")])
def test_unknown_keys_are_reported_where_they_are(where: tuple[t.Any, ...], key: str) -> None:
    raw = raw_deployment()
    raw.setdefault("routing", {})
    raw.setdefault("mcp", {})
    target: t.Any = raw
    for step in where:
        target = target[step]
    target[key] = "x"
    findings = parse(raw)[1]
    prefix = ""
    if where:
        prefix = where[0] if len(where) == 1 else "%s[%d]" % where
        prefix += "."
    assert paths(findings) == [(prefix + key, "is not a known field")]


@pytest.mark.parametrize("field, value", [
    ("name", 5), ("name", True), ("type", ["production"]), ("allow_non_public_ranges", "yes"),
    ("allow_non_public_ranges", 1), ("service_regions", {"name": "r1"}), ("sites", "s1"),
    ("routing", [1]), ("emergency_dial_strings", "112"), ("mcp", "retry"), ("acg_transport", 1),
])
def test_wrong_top_level_types(field: str, value: t.Any) -> None:
    raw = raw_deployment()
    raw[field] = value
    deployment, findings = parse(raw)
    assert paths(findings) == [(field, "has the wrong type")]
    # The mistyped value never reaches the model.
    assert getattr(deployment, field) != value


@pytest.mark.parametrize("key, value", [("options_interval_s", True), ("options_interval_s", "5"),
                                        ("invite_timer_ms", 2.5), ("failure_threshold", None)])
def test_routing_values_must_be_integers(key: str, value: t.Any) -> None:
    raw = raw_deployment()
    raw["routing"] = {key: value}
    deployment, findings = parse(raw)
    if value is None:
        assert findings.items == [] and deployment.routing[key] == ROUTING_DEFAULTS[key]
    else:
        assert paths(findings) == [("routing." + key, "has the wrong type")]
        assert deployment.routing[key] == ROUTING_DEFAULTS[key]


def test_region_and_site_that_are_not_mappings() -> None:
    raw = raw_deployment()
    raw["service_regions"][0] = "r1"
    raw["sites"][1] = ["s2"]
    deployment, findings = parse(raw)
    assert paths(findings) == [("service_regions[0]", "is not a mapping"), ("sites[1]", "is not a mapping")]
    assert deployment.service_regions[0].name is None and deployment.sites[1].name is None


@pytest.mark.parametrize("raw", [None, [], "contoso", 3])
def test_deployment_that_is_not_a_mapping(raw: t.Any) -> None:
    deployment, findings = parse(raw)
    assert paths(findings) == [("commsgw_deployment", "is not a mapping")]
    assert deployment.service_regions == [] and deployment.name is None


def test_every_problem_of_a_region_is_reported_together() -> None:
    raw = raw_deployment()
    raw["service_regions"][0] = {"name": 1, "azure_region": "westeurope", "hostname": None, "ipranges": []}
    findings = parse(raw)[1]
    assert sorted(paths(findings)) == [
        ("service_regions[0].hostname", "is missing"), ("service_regions[0].ip_ranges", "is missing"),
        ("service_regions[0].ipranges", "is not a known field"), ("service_regions[0].name", "has the wrong type")]
    assert all(f.severity == "error" for f in findings.items)
