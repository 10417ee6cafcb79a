# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test helper: site plans of the shipped inventories with SRV answers filled in, and Mediant settings."""

from __future__ import annotations

import copy
import ipaddress
import typing as t
from pathlib import Path

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import site_plans, validate_inventory
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, REPO, load_hostvars

FIXTURES = REPO / "tests" / "fixtures" / "inventories"


def inventory_dirs() -> list[Path]:
    return sorted(p for base in (INVENTORIES, FIXTURES) for p in base.iterdir() if (p / "hosts.yml").is_file())


def answers_for(plan: t.Mapping[str, t.Any], targets: int = 3) -> dict[str, t.Any]:
    """SRV answers for every record of ``plan``. A trunk group: ``targets`` targets in its region's
    first /28 (priority 10 weights 60/40, then priority 20). An MCP record (as ACG publishes it, R-18):
    the record's own region's MCP first (priority 10), the other region's MCP at priority 20, each an
    address of its region's /28 that no SIP peer uses."""
    answers: dict[str, t.Any] = {}
    port = plan["srv_limits"]["ports"][0]
    shapes = [(10, 60), (10, 40), (20, 0), (30, 5)]
    for group in plan["trunk_groups"]:
        network = ipaddress.ip_network(group["ip_ranges"][0])
        label = group["srv_name"].split(".")[2]
        answers[group["srv_name"]] = {"name": group["srv_name"], "ttl": 300, "targets": [
            {"priority": p, "weight": w, "port": port, "target": "t%d.%s.peers.example" % (n, label),
             "addresses": [str(network[n + 1])]} for n, (p, w) in enumerate(shapes[:targets])]}
    regions = {g["region"]: ipaddress.ip_network(g["ip_ranges"][0]) for g in plan["trunk_groups"]}
    for record in (plan.get("mcp") or {}).get("records") or []:
        ordered = [record["region"]] + sorted(r for r in regions if r != record["region"])
        answers[record["srv_name"]] = {"name": record["srv_name"], "ttl": 300, "targets": [
            {"priority": 10 * (n + 1), "weight": 50, "port": port, "target": "mcp.%s.peers.example" % region,
             "addresses": [str(regions[region][9])]} for n, region in enumerate(ordered)]}
    return answers


def resolved_plans(inventory: t.Union[str, Path], mcp: bool = False, **mcp_settings: t.Any) -> list[dict[str, t.Any]]:
    directory = inventory if isinstance(inventory, Path) else INVENTORIES / inventory
    hostvars = load_hostvars(directory)
    if mcp:
        hostvars = copy.deepcopy(hostvars)
        for host in hostvars.values():
            raw = host["commsgw_deployment"]
            for region in raw["service_regions"]:
                region["mcp_hostname"] = region["hostname"].replace("pstn-", "mcp-", 1)
            if mcp_settings:
                raw["mcp"] = dict(mcp_settings)
    reports = validate_inventory(hostvars)
    models = [r["model"] for r in reports if r["model"] is not None]
    plans = []
    for model in models:
        for plan in site_plans(model):
            plans.append(plan)
    resolved = {}
    for plan in plans:
        resolved.update(answers_for(plan))
    return [p for model in models for p in site_plans(model, resolved)]


def settings(**overrides: t.Any) -> dict[str, t.Any]:
    base: dict[str, t.Any] = {
        "sip_interfaces": {"acg": {"index": 1, "name": "SI-ACG"}, "core": {"index": 0, "name": "SI-CORE"}},
        "tls_context": "ACG-TLS", "core_next_hop": "10.1.0.20:5060", "core_transport": "udp",
        "core_allowed_sources": ["10.1.0.16/28", "10.1.2.7/32"],
        "number_normalisation": {"country_code": "49", "national_prefix": "0", "international_prefix": "00"},
    }
    base.update(overrides)
    return base
