# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The routing plan: deterministic, JSON-only, and faithful to R-03..R-27 for the shipped inventories."""

from __future__ import annotations

import copy
import ipaddress
import json
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import site_plans, validate_inventory
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan, record_ranges, srv_name
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars


def hostvars(name: str) -> dict[str, dict[str, t.Any]]:
    return load_hostvars(INVENTORIES / name)


def model_of(variables: dict[str, dict[str, t.Any]]) -> Deployment:
    reports = validate_inventory(variables)
    assert len(reports) == 1 and not reports[0]["errors"], reports
    return t.cast(Deployment, reports[0]["model"])


def with_mcp(variables: dict[str, dict[str, t.Any]], **mcp: t.Any) -> dict[str, dict[str, t.Any]]:
    variables = copy.deepcopy(variables)
    for host in variables.values():
        raw = host["commsgw_deployment"]
        for region in raw["service_regions"]:
            region["mcp_hostname"] = region["hostname"].replace("pstn-", "mcp-")
        if mcp:
            raw["mcp"] = mcp
    return variables


def raw_of(name: str) -> dict[str, t.Any]:
    return next(iter(hostvars(name).values()))["commsgw_deployment"]


def canonical(value: t.Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def answer(name: str, ttl: int, *targets: tuple[int, int, int, str, list[str]]) -> dict[str, t.Any]:
    """An SRV answer in ``SrvAnswer.as_dict`` shape: (priority, weight, port, target, addresses)."""
    return {"name": name, "ttl": ttl, "targets": [
        {"priority": p, "weight": w, "port": port, "target": target, "addresses": addresses}
        for p, w, port, target, addresses in targets]}


# -- determinism and shape ---------------------------------------------------------------------------
@pytest.mark.parametrize("inventory", ["production", "lab"])
def test_plan_is_deterministic_and_json_serialisable(inventory: str) -> None:
    first = [canonical(p) for p in site_plans(model_of(hostvars(inventory)))]
    # Same facts, hosts listed in the opposite order, parsed afresh.
    reversed_hosts = dict(reversed(list(hostvars(inventory).items())))
    second = [canonical(p) for p in site_plans(model_of(reversed_hosts))]
    assert first == second
    for plan in site_plans(model_of(hostvars(inventory))):
        # Plain JSON data only: a round trip gives back an equal structure (no tuples, sets or objects).
        assert json.loads(json.dumps(plan)) == plan


def test_plan_does_not_depend_on_list_order_in_the_inventory() -> None:
    variables = hostvars("production")
    shuffled = copy.deepcopy(variables)
    for host in shuffled.values():
        raw = host["commsgw_deployment"]
        raw["service_regions"][0]["ip_ranges"] = ["20.61.48.32/28", "20.61.48.16/28"]
        raw["emergency_dial_strings"] = ["999", "112", "999"]
    for host in variables.values():
        raw = host["commsgw_deployment"]
        raw["service_regions"][0]["ip_ranges"] = ["20.61.48.16/28", "20.61.48.32/28"]
        raw["emergency_dial_strings"] = ["112", "999"]
    assert [canonical(p) for p in site_plans(model_of(variables))] == [
        canonical(p) for p in site_plans(model_of(shuffled))]


def test_plan_top_level_fields() -> None:
    for plan in site_plans(model_of(hostvars("production"))):
        assert set(plan) == {"schema_version", "deployment", "site", "sbcs", "trunk_groups", "selection", "health",
                             "retry", "acl", "mcp", "emergency", "limits", "srv_limits", "provisioning_api"}
        assert plan["schema_version"] == 1
        assert plan["deployment"] == {"name": "contoso-emea", "type": "production",
                                      "base_domain": "a1b2c3d4e5f6g7h8.commsgw.azure.com",
                                      "management_region": "West Europe"}


# -- trunk groups -----------------------------------------------------------------
def test_production_site_has_local_region_first_then_remote() -> None:
    deployment = model_of(hostvars("production"))
    raw = raw_of("production")
    pairs = {s["name"]: s["service_region"] for s in raw["sites"]}
    regions = {r["name"]: r for r in raw["service_regions"]}
    for plan in site_plans(deployment):
        site = plan["site"]["name"]
        local = pairs[site]
        groups = plan["trunk_groups"]
        assert plan["site"] == {"name": site, "local_region": local}
        assert [(g["order"], g["role"]) for g in groups] == [(1, "local"), (2, "remote")]
        assert groups[0]["region"] == local
        assert groups[1]["region"] == next(name for name in regions if name != local)
        for group in groups:
            region = regions[group["region"]]
            assert group["hostname"] == region["hostname"]
            assert group["azure_region"] == region["azure_region"]
            assert group["srv_name"] == "_sip._tls." + region["hostname"]
            assert group["ip_ranges"] == region["ip_ranges"]
            assert group["transport"] == "tls"
            # SNI and verification use the regional hostname, not an SRV target.
            assert group["tls"] == {"sni": region["hostname"], "verify_hostname": region["hostname"],
                                    "min_version": "TLSv1.2"}
            assert group["peers"] is None and group["srv_ttl"] is None  # nothing resolved yet


def test_the_two_sites_prefer_different_regions() -> None:
    plans = site_plans(model_of(hostvars("production")))
    assert sorted(p["trunk_groups"][0]["region"] for p in plans) == ["region1", "region2"]


def test_lab_has_one_trunk_group() -> None:
    plans = site_plans(model_of(hostvars("lab")))
    assert len(plans) == 1
    assert [(g["order"], g["role"], g["region"]) for g in plans[0]["trunk_groups"]] == [(1, "local", "region1")]


def test_plain_transport_has_no_tls_section() -> None:
    variables = hostvars("lab")
    for host in variables.values():
        host["commsgw_deployment"]["acg_transport"] = "udp"
        host["commsgw_deployment"]["allow_plain_transport"] = True
    plan = site_plans(model_of(variables))[0]
    assert plan["trunk_groups"][0]["transport"] == "udp" and plan["trunk_groups"][0]["tls"] is None


def test_sbcs_of_the_site_only_sorted() -> None:
    plans = {p["site"]["name"]: p for p in site_plans(model_of(hostvars("production")))}
    assert plans["amsterdam"]["sbcs"] == [{"host": "sbc-ams-1", "platform": "kamailio"},
                                          {"host": "sbc-ams-2", "platform": "kamailio"}]
    assert [s["host"] for s in plans["dublin"]["sbcs"]] == ["sbc-dub-1", "sbc-dub-2"]


def test_hostnames_are_normalised() -> None:
    variables = hostvars("production")
    for host in variables.values():
        region = host["commsgw_deployment"]["service_regions"][0]
        region["hostname"] = region["hostname"].upper() + "."
    plan = site_plans(model_of(variables))[0]
    assert plan["trunk_groups"][0]["hostname"] == "pstn-region1.a1b2c3d4e5f6g7h8.commsgw.azure.com"
    assert plan["trunk_groups"][0]["srv_name"] == "_sip._tls.pstn-region1.a1b2c3d4e5f6g7h8.commsgw.azure.com"


# -- R-08 ACL ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("inventory", ["production", "lab"])
def test_acl_holds_every_range_of_the_deployment(inventory: str) -> None:
    raw = raw_of(inventory)
    expected = sorted((rng, region["name"]) for region in raw["service_regions"] for rng in region["ip_ranges"])
    for plan in site_plans(model_of(hostvars(inventory))):
        acl = [(entry["network"], entry["region"]) for entry in plan["acl"]["ranges"]]
        assert sorted(acl) == expected
        for network, _region in acl:
            assert ipaddress.ip_network(network).prefixlen == 28


def test_acl_with_several_ranges_per_region() -> None:
    variables = hostvars("production")
    extra = ["20.61.48.48/28", "4.208.0.0/28"]
    for host in variables.values():
        host["commsgw_deployment"]["service_regions"][0]["ip_ranges"] += extra
    for plan in site_plans(model_of(variables)):
        networks = [entry["network"] for entry in plan["acl"]["ranges"]]
        assert set(networks) == {"20.61.48.16/28", "20.82.160.32/28", *extra} and len(networks) == 4


# -- health and retry -------------------------------------------------------------
def test_retry_policy() -> None:
    for plan in site_plans(model_of(hostvars("production"))):
        retry = plan["retry"]
        assert retry["retry_codes"] == [408, 503, 504]
        assert retry["retry_on_no_response"] is True
        assert retry["retry_after_provisional_timeout"] is False
        assert retry["other_errors"] == "relay_unchanged"
        assert retry["scope"] == "local_trunk_group_first"
        assert retry["hunt_next_group"] == "only_when_every_peer_of_the_group_failed"
        assert retry["invite_timer_ms"] == 2000
        assert plan["selection"] == "rfc2782"


def test_health_follows_routing_settings() -> None:
    lab = site_plans(model_of(hostvars("lab")))[0]
    raw = raw_of("lab")["routing"]
    assert lab["health"] == {"method": "OPTIONS", "interval_s": raw["options_interval_s"],
                             "failure_threshold": raw["failure_threshold"],
                             "recovery_threshold": raw["recovery_threshold"],
                             "window_s": raw["options_interval_s"] * raw["failure_threshold"]}
    assert lab["retry"]["invite_timer_ms"] == raw["invite_timer_ms"]


# -- R-18..R-20 MCP ------------------------------------------------------------------------------------
def test_mcp_is_null_without_mcp_hostnames() -> None:
    for inventory in ("production", "lab"):
        for plan in site_plans(model_of(hostvars(inventory))):
            assert plan["mcp"] is None


def test_mcp_section_with_mcp() -> None:
    variables = with_mcp(hostvars("production"), policy="continue", hold_down_s=45,
                         continue_next_hop="core.operator.example:5060")
    for plan in site_plans(model_of(variables)):
        mcp = plan["mcp"]
        local = plan["site"]["local_region"]
        assert [(r["order"], r["role"]) for r in mcp["records"]] == [(1, "local"), (2, "remote")]
        assert mcp["records"][0]["region"] == local
        for record, group in zip(mcp["records"], plan["trunk_groups"]):
            assert record["region"] == group["region"]
            assert record["hostname"] == group["hostname"].replace("pstn-", "mcp-")
            assert record["srv_name"] == srv_name(record["hostname"])
            assert record["peers"] is None and record["srv_ttl"] is None
        assert mcp["options_probing"] is False
        assert (mcp["hold_down_s"], mcp["policy_on_5xx"], mcp["continue_next_hop"]) == (
            45, "continue", "core.operator.example:5060")


def test_mcp_defaults() -> None:
    plan = site_plans(model_of(with_mcp(hostvars("production"))))[0]
    assert (plan["mcp"]["policy_on_5xx"], plan["mcp"]["hold_down_s"], plan["mcp"]["continue_next_hop"]) == (
        "retry", 30, None)


def test_resolved_peers_are_ordered_and_normalised() -> None:
    deployment = model_of(with_mcp(hostvars("production")))
    sip1, sip2 = (srv_name(r.hostname) for r in deployment.service_regions)
    mcp1 = srv_name(deployment.service_regions[0].mcp_hostname)
    resolved = {
        sip1: answer(sip1, 300,
                     (20, 10, 5061, "b.sbc.Example.", ["20.61.48.20"]),
                     (10, 10, 5061, "z.sbc.example", ["20.61.48.19", "20.61.48.17"]),
                     (10, 60, 5062, "y.sbc.example", []),
                     (10, 10, 5061, "a.sbc.example", ["20.61.48.18"])),
        sip2: answer(sip2, 60, (0, 0, 5061, "c.sbc.example", ["20.82.160.33"])),
        mcp1: answer(mcp1, 30, (1, 0, 5061, "mcp.example", ["20.61.48.21"])),
    }
    plans = {p["site"]["name"]: p for p in site_plans(deployment, resolved)}
    group = plans["amsterdam"]["trunk_groups"][0]
    assert group["srv_ttl"] == 300
    # RFC 2782: priority ascending; within a priority heavier weight first, then name and port as tie-breaks.
    assert [(p["priority"], p["weight"], p["target"], p["port"]) for p in group["peers"]] == [
        (10, 60, "y.sbc.example", 5062), (10, 10, "a.sbc.example", 5061), (10, 10, "z.sbc.example", 5061),
        (20, 10, "b.sbc.example", 5061)]
    assert group["peers"][2]["addresses"] == ["20.61.48.17", "20.61.48.19"]
    assert plans["amsterdam"]["trunk_groups"][1]["peers"][0]["target"] == "c.sbc.example"
    assert plans["dublin"]["trunk_groups"][0]["srv_ttl"] == 60
    records = {r["region"]: r for r in plans["amsterdam"]["mcp"]["records"]}
    assert records["region1"]["srv_ttl"] == 30 and records["region1"]["peers"][0]["target"] == "mcp.example"
    assert records["region2"]["peers"] is None  # not resolved: stays None, never an empty guess
    # TLS still names the regional hostname, whatever the SRV targets are.
    assert group["tls"]["sni"] == "pstn-region1.a1b2c3d4e5f6g7h8.commsgw.azure.com"


def test_resolved_answer_order_does_not_change_the_plan() -> None:
    deployment = model_of(hostvars("lab"))
    name = srv_name(deployment.service_regions[0].hostname)
    targets = [(10, 50, 5061, "a.lab", ["127.0.10.1"]), (10, 50, 5061, "b.lab", ["127.0.10.2"]),
               (20, 0, 5061, "c.lab", ["127.0.10.3"])]
    one = build_site_plan(deployment, deployment.sites[0], {name: answer(name, 5, *targets)})
    two = build_site_plan(deployment, deployment.sites[0], {name: answer(name, 5, *reversed(targets))})
    assert canonical(one) == canonical(two)
    assert [p["target"] for p in one["trunk_groups"][0]["peers"]] == ["a.lab", "b.lab", "c.lab"]


# -- R-21 / R-25 / R-27 ----------------------------------------------------------------------------------
def test_emergency_limits_and_provisioning_api() -> None:
    plan = site_plans(model_of(hostvars("production")))[0]
    assert plan["emergency"] == {"dial_strings": ["112", "999"], "route_to_acg": False}
    assert plan["limits"] == {"max_message_bytes": 10240, "max_request_uri_bytes": 256,
                              "max_contact_uri_bytes": 256}
    assert plan["provisioning_api"] == {"hostname": "provapi.a1b2c3d4e5f6g7h8.commsgw.azure.com",
                                        "max_ttl_s": 60, "retry_after_s": 60}


def test_plans_do_not_share_mutable_state() -> None:
    deployment = model_of(hostvars("production"))
    first = site_plans(deployment)
    first[0]["limits"]["max_message_bytes"] = 1
    first[0]["retry"]["retry_codes"].append(500)
    again = site_plans(deployment)
    assert again[0]["limits"]["max_message_bytes"] == 10240
    assert again[0]["retry"]["retry_codes"] == [408, 503, 504]


# -- documentation -------------------------------------------------------------------------------------
def test_documented_example_is_what_the_code_builds() -> None:
    doc = (INVENTORIES.parent / "docs" / "routing-plan.md").read_text(encoding="utf-8")
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    plan = site_plans(model_of(hostvars("production")))[0]
    assert json.loads(example) == plan


def test_every_plan_field_is_documented() -> None:
    doc = (INVENTORIES.parent / "docs" / "routing-plan.md").read_text(encoding="utf-8")
    variables = with_mcp(hostvars("production"))
    deployment = model_of(variables)
    name = srv_name(deployment.service_regions[0].hostname)
    plan = site_plans(deployment, {name: answer(name, 5, (1, 1, 5061, "a.example", ["20.61.48.17"]))})[0]

    def keys(value: t.Any) -> t.Iterator[str]:
        if isinstance(value, dict):
            for key, item in value.items():
                yield key
                yield from keys(item)
        elif isinstance(value, list):
            for item in value:
                yield from keys(item)

    for key in set(keys(plan)):
        assert "`%s`" % key in doc or ".%s`" % key in doc, key


def test_plan_refuses_a_site_without_its_region() -> None:
    deployment = model_of(hostvars("production"))
    deployment.sites[0].service_region = "region9"  # only reachable by skipping validation
    with pytest.raises(ValueError, match="names no service region"):
        build_site_plan(deployment, deployment.sites[0])


def test_one_range_rule_per_purpose() -> None:
    """Issue 10: the /28s an SRV record's targets may use are decided once (plan.record_ranges): a
    region's own for its SIP peers, every /28 of the deployment for its MCP record (R-18); the plan,
    and so the renderer, the refresher and the probe, carry that set."""
    deployment = model_of(with_mcp(hostvars("production")))
    region1, region2 = deployment.service_regions
    assert record_ranges(deployment, region1, "sip") == sorted(region1.ip_ranges)
    assert record_ranges(deployment, region2, "mcp") == record_ranges(deployment, region1, "mcp") == \
        sorted(region1.ip_ranges + region2.ip_ranges, key=ipaddress.ip_network)
    with pytest.raises(ValueError, match="purpose 'acl'"):
        record_ranges(deployment, region1, "acl")
    plan = site_plans(deployment, {})[0]
    assert [g["ip_ranges"] for g in plan["trunk_groups"]] == [record_ranges(deployment, region1, "sip"),
                                                              record_ranges(deployment, region2, "sip")]
    assert [r["ip_ranges"] for r in plan["mcp"]["records"]] == [record_ranges(deployment, region1, "mcp")] * 2
