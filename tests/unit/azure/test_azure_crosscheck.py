# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Azure cross-check (issue 12) on the recorded ARM responses of tests/data/azure: every seeded
mismatch is reported with both field paths, the consistent pair passes, the draft validates once its
TODOs are filled, and the normaliser reads every recorded shape or names the JSON path it cannot."""

from __future__ import annotations

import copy
import json
import pathlib
import typing as t

import pytest
import yaml

from ansible_collections.commsgw.routing.plugins.module_utils.azure.arm import (
    ArmError, advertised_versions, newest_stable, resource_id, retry_after, status_error)
from ansible_collections.commsgw.routing.plugins.module_utils.azure.crosscheck import check_inventory
from ansible_collections.commsgw.routing.plugins.module_utils.azure.draft import draft_deployment, draft_yaml, todo_paths
from ansible_collections.commsgw.routing.plugins.module_utils.azure.resource import normalise, used_fields
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment

from ansible_collections.commsgw.routing.tests.unit.inventory_files import load_hostvars

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "azure"
SIGNALLING = "primaryRegionProperties.allowedSignalingSourceAddressPrefixes"


def body(name: str) -> dict[str, t.Any]:
    return json.loads((DATA / ("%s.json" % name)).read_text())


def hosts() -> dict[str, dict[str, t.Any]]:
    return load_hostvars(DATA / "inventory")


def findings(name: str, inventory: t.Optional[dict[str, t.Any]] = None) -> list[tuple[str, str, str, t.Any]]:
    checked = check_inventory(inventory or hosts(), body(name), "contoso-emea")
    assert "problems" not in checked, checked
    return [(f.severity, f.path, f.azure_path, f.value) for f in checked["findings"]]


def test_consistent_pair_has_no_finding() -> None:
    assert findings("consistent") == []


def test_older_api_version_without_new_fields_has_no_finding() -> None:
    assert findings("api-2023-01-31") == []


def test_newer_api_version_extra_fields_are_ignored() -> None:
    assert findings("newer-api") == []


@pytest.mark.parametrize("name, expected", [
    ("sbc-not-allowed", [("error", "hosts[sbc-dub-1].commsgw_sbc.acg_listen.address",
                          "properties.serviceLocations[0]." + SIGNALLING, "198.51.100.12")]),
    ("regions-differ", [("error", "service_regions[1].azure_region", "properties.serviceLocations[*].name",
                         "northeurope"),
                        ("error", "service_regions[*].azure_region", "properties.serviceLocations[1].name",
                         "swedencentral")]),
    ("management-differs", [("error", "management_region", "location", "West Europe")]),
    ("sku-lab", [("error", "type", "sku.name", "production")]),
    ("not-provisioned", [("error", "name", "properties.provisioningState", "Failed"),
                         ("warning", "name", "properties.status", "ChangePending")]),
    ("operator-addresses", [
        ("warning", "hosts[*].commsgw_sbc.acg_listen.address",
         "properties.serviceLocations[0].primaryRegionProperties.operatorAddresses[1]", "203.0.113.9"),
        ("warning", "hosts[sbc-dub-1].commsgw_sbc.acg_listen.address",
         "properties.serviceLocations[*].primaryRegionProperties.operatorAddresses", "198.51.100.12")]),
    ("ranges-outside-allocation", [("warning", "service_regions[1].ip_ranges[0]",
                                    "properties.allocatedSignalingAddressPrefixes", "20.82.160.32/28")]),
    ("mcp-enabled", [("warning", "service_regions[*].mcp_hostname", "properties.integratedMcpEnabled", None)]),
    ("esrp-standard", [("warning", "emergency_dial_strings",
                        "properties.serviceLocations[0].primaryRegionProperties.esrpAddresses", ["198.51.100.200"])]),
    ("emergency-differs", [("warning", "emergency_dial_strings", "properties.emergencyDialStrings", ["112", "999"])]),
])
def test_each_seeded_mismatch_is_reported_with_both_paths(name: str, expected: list[t.Any]) -> None:
    assert findings(name) == expected


def test_sbc_missing_from_the_failover_region_only_is_an_error() -> None:
    # dublin's SBC is allowed in its own region (northeurope) but not in westeurope: failover breaks.
    inventory = hosts()
    resource = body("consistent")
    resource["properties"]["serviceLocations"][0]["primaryRegionProperties"][
        "allowedSignalingSourceAddressPrefixes"] = ["198.51.100.11/32"]
    checked = check_inventory(inventory, resource, "contoso-emea")
    line = checked["findings"][0].render()
    assert "hosts[sbc-dub-1].commsgw_sbc.acg_listen.address <-> azure properties.serviceLocations[0]." in line
    assert "region westeurope" in line and "failover" in line


def test_mcp_hostname_but_mcp_disabled_on_the_resource() -> None:
    inventory = hosts()
    for variables in inventory.values():
        variables["commsgw_deployment"]["service_regions"][0]["mcp_hostname"] = "mcp-region1.contoso.example"
        variables["commsgw_deployment"]["service_regions"][1]["mcp_hostname"] = "mcp-region2.contoso.example"
    assert findings("consistent", inventory) == [
        ("warning", "service_regions[0].mcp_hostname", "properties.integratedMcpEnabled", "mcp-region1.contoso.example"),
        ("warning", "service_regions[1].mcp_hostname", "properties.integratedMcpEnabled", "mcp-region2.contoso.example")]


def test_lab_sku_with_two_regions_reports_type_and_count() -> None:
    inventory = hosts()
    resource = body("consistent")
    resource["properties"]["serviceLocations"].pop()
    result = findings_for(inventory, resource)
    assert ("error", "type", "properties.serviceLocations", "production") in result
    assert ("error", "service_regions[1].azure_region", "properties.serviceLocations[*].name", "northeurope") in result


def findings_for(inventory: dict[str, t.Any], resource: dict[str, t.Any]) -> list[tuple[str, str, str, t.Any]]:
    return [(f.severity, f.path, f.azure_path, f.value)
            for f in check_inventory(inventory, resource, "contoso-emea")["findings"]]


def test_sbc_without_commsgw_sbc_cannot_be_checked_and_says_so() -> None:
    inventory = hosts()
    del inventory["sbc-dub-1"]["commsgw_sbc"]
    result = findings_for(inventory, body("consistent"))
    assert result[0][:2] == ("warning", "hosts[sbc-dub-1].commsgw_sbc.acg_listen.address")


def test_invalid_inventory_is_refused_before_the_cross_check() -> None:
    inventory = hosts()
    for variables in inventory.values():
        variables["commsgw_deployment"]["management_region"] = "Atlantis"
    checked = check_inventory(inventory, body("consistent"))
    assert "findings" not in checked
    assert any("management_region" in line for line in checked["problems"])


def test_unknown_deployment_name_lists_the_known_ones() -> None:
    checked = check_inventory(hosts(), body("consistent"), "nope")
    assert checked["problems"] == ["deployment: nope is not a deployment of this inventory; expected one of: "
                                   "contoso-emea (set commsgw_azure_deployment)"]


def test_deployment_defaults_to_the_resource_name() -> None:
    assert check_inventory(hosts(), body("consistent"))["deployment"] == "contoso-emea"


def test_spec_example_normalises() -> None:
    resource = normalise(body("spec-get-2023-09-01"))
    assert [loc.name for loc in resource.service_locations] == ["useast", "useast2"]
    assert resource.service_locations[1].operator_addresses == ["198.51.100.2"]
    assert resource.service_locations[0].allowed_signaling_prefixes == ["10.1.1.0/24"]
    assert (resource.sku, resource.status, resource.e911_type) == (None, "ChangePending", "Standard")
    assert resource.integrated_mcp_enabled is None and resource.allocated_signaling_prefixes is None


def test_consistent_normalises_every_field() -> None:
    resource = normalise(body("consistent"))
    assert resource.sku == "standard" and resource.dns_delegations == ["commsgw.contoso.com"]
    assert resource.allocated_signaling_prefixes == ["20.61.48.0/24", "20.82.160.0/24"]
    assert (resource.integrated_mcp_enabled, resource.on_prem_mcp_enabled) == (False, False)
    assert resource.emergency_dial_strings == ["112", "999"] and resource.provisioning_state == "Succeeded"


def test_raw_keeps_only_the_fields_used() -> None:
    raw = used_fields(body("newer-api"))
    assert "futureFeature" not in raw["properties"] and "systemData" not in raw
    assert normalise(raw) == normalise(body("newer-api"))


@pytest.mark.parametrize("change, path", [
    (lambda b: b["properties"].update(serviceLocations=[]), "properties.serviceLocations"),
    (lambda b: b["properties"]["serviceLocations"][1]["primaryRegionProperties"].update(operatorAddresses="x"),
     "properties.serviceLocations[1].primaryRegionProperties.operatorAddresses"),
    (lambda b: b["properties"]["serviceLocations"][0].pop("primaryRegionProperties"),
     "properties.serviceLocations[0].primaryRegionProperties"),
    (lambda b: b["properties"].update(integratedMcpEnabled="yes"), "properties.integratedMcpEnabled"),
    (lambda b: b.update(sku="standard"), "sku"),
    (lambda b: b["properties"].update(dnsDelegations={"delegations": [{"domain": 3}]}),
     "properties.dnsDelegations.delegations[0].domain"),
    (lambda b: b.pop("properties"), "properties"),
])
def test_unknown_shape_names_the_json_path(change: t.Callable[[dict[str, t.Any]], t.Any], path: str) -> None:
    resource = body("consistent")
    change(resource)
    with pytest.raises(ArmError) as caught:
        normalise(resource)
    assert caught.value.kind == "shape"
    assert caught.value.message.startswith("unknown shape at %s:" % path)


def _fill(value: t.Any, fills: dict[str, t.Any], path: str = "") -> t.Any:
    if isinstance(value, dict):
        return {k: _fill(v, fills, "%s.%s" % (path, k) if path else k) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, fills, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
    return fills[path] if isinstance(value, str) and value.startswith("TODO") else value


def test_draft_validates_once_its_todos_are_filled() -> None:
    text = draft_yaml(normalise(body("consistent")))
    deployment = yaml.safe_load(text)["commsgw_deployment"]
    todos = todo_paths(deployment)
    assert todos == ["base_domain", "service_regions[0].hostname", "service_regions[0].ip_ranges[0]",
                     "service_regions[1].hostname", "service_regions[1].ip_ranges[0]", "sites[0].name",
                     "sites[1].name"]
    assert all("#   %s\n" % path in text for path in todos)
    unfilled, problems = validate_deployment(copy.deepcopy(deployment), [])
    assert problems.errors  # the TODOs themselves do not validate
    filled = _fill(deployment, {
        "base_domain": "a1b2c3d4e5f6g7h8.commsgw.azure.com",
        "service_regions[0].hostname": "pstn-region1.a1b2c3d4e5f6g7h8.commsgw.azure.com",
        "service_regions[0].ip_ranges[0]": "20.61.48.16/28",
        "service_regions[1].hostname": "pstn-region2.a1b2c3d4e5f6g7h8.commsgw.azure.com",
        "service_regions[1].ip_ranges[0]": "20.82.160.32/28",
        "sites[0].name": "amsterdam", "sites[1].name": "dublin"})
    sbcs = [Sbc("sbc-ams-1", "amsterdam"), Sbc("sbc-dub-1", "dublin")]
    model, result = validate_deployment(filled, sbcs)
    assert result.errors == []
    assert (model.name, model.type, model.management_region) == ("contoso-emea", "production", "West Europe")
    assert [r.azure_region for r in model.service_regions] == ["westeurope", "northeurope"]
    assert model.emergency_dial_strings == ["112", "999"]


@pytest.mark.parametrize("evil", ["x\nfoo: bar", "x\r\nfoo: bar", "x\u2028foo: bar", "x\x85foo: bar"])
def test_the_drafts_header_comment_cannot_be_left_by_the_resource_id(evil: str) -> None:
    """The header names the resource's id: a line break in it must not end the comment (issue 21 item 13)."""
    text = draft_yaml(normalise(dict(body("consistent"), id="/subscriptions/s/" + evil)))
    assert list(yaml.safe_load(text)) == ["commsgw_deployment"]
    assert text.splitlines()[1].startswith("# Drafted from the ACG resource /subscriptions/s/x\\")
    assert "foo" not in yaml.safe_load(text)["commsgw_deployment"]


def test_draft_of_a_lab_resource_with_mcp_asks_for_mcp_hostnames() -> None:
    resource = body("mcp-enabled")
    resource["sku"] = {"name": "lab"}
    resource["properties"]["serviceLocations"].pop()
    deployment = draft_deployment(normalise(resource))
    assert deployment["type"] == "lab" and len(deployment["service_regions"]) == 1
    assert deployment["service_regions"][0]["mcp_hostname"].startswith("TODO")


def test_newest_stable_api_version_skips_previews() -> None:
    versions = advertised_versions(body("provider"))
    assert "2024-02-29-preview" in versions
    assert newest_stable(versions) == "2023-09-01"
    assert newest_stable(advertised_versions(body("provider-newer"))) == "2025-06-30"
    assert newest_stable(["2022-12-01-preview"]) is None


def test_resource_id_from_parts_and_refusals() -> None:
    assert resource_id("sub", "rg", "acg", None) == (
        "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.VoiceServices/communicationsGateways/acg")
    with pytest.raises(ArmError, match="resource_group, name missing"):
        resource_id("sub", None, None, None)
    with pytest.raises(ArmError, match="is not the id of an ACG resource"):
        resource_id(None, None, None, "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Web/sites/x")
    with pytest.raises(ArmError, match="name 'a/b' is not a valid Azure name"):
        resource_id("sub", "rg", "a/b", None)


def test_retry_after_reads_delta_seconds_only() -> None:
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after({}) is None


@pytest.mark.parametrize("status, kind, words", [
    (401, "auth", "authentication failed"), (403, "forbidden", "Reader role"),
    (404, "not_found", "does not exist"), (429, "throttled", "after 4 attempt(s)"),
    (500, "server", "failed with 500"), (503, "server", "failed with 503"), (418, "http", "unexpected HTTP 418")])
def test_status_messages(status: int, kind: str, words: str) -> None:
    error = status_error(status, {"error": {"code": "C", "message": "m"}}, "ACG resource /x", 4, 3.0)
    assert error.kind == kind and words in error.message and "ARM said C: m" in error.message
