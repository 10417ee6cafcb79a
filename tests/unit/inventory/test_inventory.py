# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From host variables to validated deployments, and the inventories the collection ships."""

from __future__ import annotations

import copy
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import (
    collect_deployments, render_findings, site_plans, validate_inventory)
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, inventory_names, load_hostvars


@pytest.mark.parametrize("name", ["lab", "production"])
def test_shipped_inventories_validate_cleanly(name: str) -> None:
    hostvars = load_hostvars(INVENTORIES / name)
    reports = validate_inventory(hostvars)
    assert len(reports) == 1
    report = reports[0]
    assert render_findings(reports) == []
    assert render_findings(reports, "warnings") == []
    assert report["model"] is not None
    # Every SBC host was picked up with its site.
    assert sorted((s.host, s.site) for s in report["model"].sbcs) == sorted(
        (host, variables["commsgw_site"]) for host, variables in hostvars.items())


def test_every_shipped_inventory_is_covered() -> None:
    assert set(inventory_names()) >= {"lab", "production"}
    for name in inventory_names():
        reports = validate_inventory(load_hostvars(INVENTORIES / name))
        assert reports and all(not r["errors"] for r in reports), name


def test_production_inventory_facts_as_loaded() -> None:
    hostvars = load_hostvars(INVENTORIES / "production")
    assert sorted(hostvars) == ["sbc-ams-1", "sbc-ams-2", "sbc-dub-1", "sbc-dub-2"]
    assert hostvars["sbc-dub-2"]["commsgw_site"] == "dublin"
    assert hostvars["sbc-ams-1"]["commsgw_deployment"]["type"] == "production"
    model = validate_inventory(hostvars)[0]["model"]
    assert [(s.name, s.service_region) for s in model.sites] == [("amsterdam", "region1"), ("dublin", "region2")]
    plans = site_plans(model)
    assert [p["site"]["name"] for p in plans] == ["amsterdam", "dublin"]


def _host(deployment: dict[str, t.Any], site: str, **extra: t.Any) -> dict[str, t.Any]:
    return {"commsgw_deployment": copy.deepcopy(deployment), "commsgw_site": site, **extra}


def test_collect_groups_hosts_by_deployment_and_ignores_other_hosts() -> None:
    production = load_hostvars(INVENTORIES / "production")
    lab = load_hostvars(INVENTORIES / "lab")
    hostvars = {**production, **lab, "bastion": {"ansible_host": "192.0.2.1"}}
    entries = collect_deployments(hostvars)
    assert [e["deployment"]["name"] for e in entries] == ["contoso-emea", "lab"]
    assert [s["host"] for s in entries[0]["sbcs"]] == ["sbc-ams-1", "sbc-ams-2", "sbc-dub-1", "sbc-dub-2"]
    assert entries[1]["sbcs"] == [{"host": "lab-sbc-1", "site": "lab", "platform": "kamailio"}]
    assert all(e["conflicts"] == [] for e in entries)
    reports = validate_inventory(hostvars)
    assert [(r["name"], len(r["errors"])) for r in reports] == [("contoso-emea", 0), ("lab", 0)]


def test_platform_defaults_to_kamailio() -> None:
    lab = load_hostvars(INVENTORIES / "lab")["lab-sbc-1"]["commsgw_deployment"]
    entries = collect_deployments({"h": {"commsgw_deployment": lab, "commsgw_site": "lab"}})
    assert entries[0]["sbcs"][0]["platform"] == "kamailio"


def test_hosts_seeing_different_facts_are_reported() -> None:
    lab = load_hostvars(INVENTORIES / "lab")["lab-sbc-1"]["commsgw_deployment"]
    changed = copy.deepcopy(lab)
    changed["service_regions"][0]["ip_ranges"] = ["127.0.10.16/28"]
    hostvars = {"a": _host(lab, "lab"), "b": _host(changed, "lab"), "c": _host(lab, "lab")}
    reports = validate_inventory(hostvars)
    assert [(f.path, f.value) for f in reports[0]["errors"]] == [("hosts[b].commsgw_deployment", "b")]
    assert reports[0]["model"] is None
    # The first host (in name order) is the reference the others are compared with.
    assert "host a" in reports[0]["errors"][0].message


def test_one_report_per_deployment_and_findings_stay_with_their_deployment() -> None:
    lab = load_hostvars(INVENTORIES / "lab")["lab-sbc-1"]["commsgw_deployment"]
    other = copy.deepcopy(lab)
    other["name"] = "lab2"
    other["emergency_dial_strings"] = ["11x"]
    hostvars = {"a": _host(lab, "lab"), "b": _host(other, "lab")}
    reports = validate_inventory(hostvars)
    assert [(r["name"], len(r["errors"])) for r in reports] == [("lab", 0), ("lab2", 1)]
    lines = render_findings(reports)
    assert lines == ["deployment lab2: emergency_dial_strings[0]: is not a dial string (got '11x'; expected digits "
                     "with an optional leading '+', quoted in YAML (e.g. '112')) [R-25]"]


def test_render_warnings_separately() -> None:
    lab = load_hostvars(INVENTORIES / "lab")["lab-sbc-1"]["commsgw_deployment"]
    lab = copy.deepcopy(lab)
    lab["emergency_dial_strings"] = []
    reports = validate_inventory({"a": _host(lab, "lab")})
    assert render_findings(reports) == []
    assert [line.split(":")[0:2] for line in render_findings(reports, "warnings")] == [
        ["deployment lab", " emergency_dial_strings"]]
    assert reports[0]["model"] is not None  # warnings alone do not block planning


def test_two_deployments_with_one_name_are_both_validated_and_named() -> None:
    """Two deployments given the same name: the second one's facts are validated too, and the error names
    the hosts that see each (issue 13)."""
    lab = load_hostvars(INVENTORIES / "lab")["lab-sbc-1"]["commsgw_deployment"]
    other = copy.deepcopy(lab)
    other["emergency_dial_strings"] = ["11x"]
    other["routing"] = {"invite_timer_ms": 10}
    hostvars = {"a": _host(lab, "lab"), "b": _host(other, "lab"), "c": _host(other, "lab")}
    reports = validate_inventory(hostvars)
    assert len(reports) == 1 and reports[0]["model"] is None
    errors = {f.path: f for f in reports[0]["errors"]}
    assert sorted(errors) == [
        "hosts[b].commsgw_deployment", "hosts[b].commsgw_deployment.emergency_dial_strings[0]",
        "hosts[b].commsgw_deployment.routing.invite_timer_ms", "hosts[c].commsgw_deployment"]
    message = errors["hosts[b].commsgw_deployment"].message
    assert "host a" in message and "two deployments share one name" in message and "lab" in message


def test_a_deployment_without_a_name_is_not_called_none() -> None:
    lab = copy.deepcopy(load_hostvars(INVENTORIES / "lab")["lab-sbc-1"]["commsgw_deployment"])
    del lab["name"]
    lines = render_findings(validate_inventory({"sbc-x": _host(lab, "lab")}))
    assert lines and not any(line.startswith("deployment None") for line in lines), lines
    assert lines[0].startswith("deployment (without a name, as host sbc-x sees it): name: is missing")
    lab["name"] = "bad name\nloadmodule"
    lines = render_findings(validate_inventory({"sbc-x": _host(lab, "lab")}))
    assert lines[0].startswith("deployment (with the invalid name 'bad name\\nloadmodule', as host sbc-x sees it):")
    assert all("\n" not in line for line in lines)


def test_host_in_two_site_groups_is_refused_naming_both() -> None:
    """sbc_facts adds commsgw_site_groups when a host's groups set different sites (see the playbook test)."""
    lab = load_hostvars(INVENTORIES / "lab")["lab-sbc-1"]["commsgw_deployment"]
    hostvars = {"a": _host(lab, "lab", commsgw_site_groups={"site_lab": "lab", "site_zz": "zz"})}
    errors = validate_inventory(hostvars)[0]["errors"]
    assert [(f.path, f.value) for f in errors] == [("hosts[a].commsgw_site", ["site_lab", "site_zz"])]
    assert "site_lab (commsgw_site: lab), site_zz (commsgw_site: zz)" in errors[0].message
