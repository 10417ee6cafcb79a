# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ``commsgw_deployment`` skeleton for a new onboarding, drafted from the ACG resource.

ARM gives the deployment type (SKU, number of regions), the management region, the Azure region of
each service location and the emergency dial strings. It does not give the base domain, the
regional hostnames, the per-region /28s, MCP hostnames or the operator sites: those are written as
strings starting with ``TODO`` (``todo_paths`` lists them) and the onboarding team fills them in.
"""

from __future__ import annotations

import typing as t

from ansible.module_utils.common.yaml import yaml_dump

from ansible_collections.commsgw.routing.plugins.module_utils.azure.crosscheck import SKU_TYPES
from ansible_collections.commsgw.routing.plugins.module_utils.azure.resource import AcgResource
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.region_catalog import load_catalog

TODO = "TODO"


def draft_deployment(resource: AcgResource) -> dict[str, t.Any]:
    catalog = load_catalog()
    count = len(resource.service_locations)
    kind = SKU_TYPES.get((resource.sku or "").lower()) or ("lab" if count == 1 else "production")
    management = catalog.management_region(resource.location)
    mcp = bool(resource.integrated_mcp_enabled or resource.on_prem_mcp_enabled)
    regions = []
    sites = []
    for number, loc in enumerate(resource.service_locations, start=1):
        azure = catalog.region(loc.name)
        region: dict[str, t.Any] = {
            "name": "region%d" % number,
            "azure_region": azure.programmatic if azure else loc.name,
            "hostname": "%s: the regional hostname of %s (ACG portal, Overview)" % (TODO, loc.name),
            "ip_ranges": ["%s: the /28 ACG uses in %s (ACG portal or onboarding team)" % (TODO, loc.name)],
        }
        if mcp:
            region["mcp_hostname"] = "%s: the MCP hostname of %s (ACG portal)" % (TODO, loc.name)
        regions.append(region)
        sites.append({"name": "%s: name of the operator site served by region%d" % (TODO, number),
                      "service_region": "region%d" % number})
    deployment: dict[str, t.Any] = {
        "name": resource.name,
        "type": kind,
        "base_domain": "%s: the deployment's base domain (ACG portal; ARM label %s)"
                       % (TODO, resource.domain_name_label or "not reported"),
        "management_region": management.acg_name if management else resource.location,
        "service_regions": regions,
        "sites": sites,
    }
    if resource.emergency_dial_strings:
        deployment["emergency_dial_strings"] = list(resource.emergency_dial_strings)
    return deployment


def todo_paths(value: t.Any, path: str = "") -> list[str]:
    """The field paths whose value still starts with TODO."""
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in todo_paths(item, "%s.%s" % (path, key) if path else key)]
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in todo_paths(item, "%s[%d]" % (path, index))]
    return [path] if isinstance(value, str) and value.startswith(TODO) else []


def comment_text(value: str) -> str:
    """``value`` made safe inside one YAML comment line: a newline (or any control or non-ASCII character)
    would end the comment and start YAML of ARM's choosing, so each is written as a backslash escape."""
    return "".join(ch if " " <= ch <= "~" else ch.encode("unicode_escape").decode("ascii") for ch in value)


def draft_yaml(resource: AcgResource) -> str:
    deployment = draft_deployment(resource)
    todos = todo_paths(deployment)
    header = ("---\n# Drafted from the ACG resource %s by commsgw.routing (playbooks/azure_check.yml).\n"
              "# ARM cannot give %d field(s), marked TODO: fill them in, then run playbooks/validate.yml.\n"
              % (comment_text(resource.id or resource.name), len(todos)))
    header += "".join("#   %s\n" % path for path in todos)
    return header + yaml_dump({"commsgw_deployment": deployment}, default_flow_style=False, sort_keys=False)
