# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Both halves of the ACG contract agree: a validated inventory deployment against the ACG resource.

Every finding names the inventory field (``path``) and the ARM field (``azure_path``) it compares.
Errors: an SBC's ACG-facing address outside a region's allowed signalling sources (every region:
failover sends it to the other one), service regions, management region, deployment type vs SKU or
region count, resource not provisioned. Warnings: operator addresses vs SBCs, /28s outside the
allocated prefixes, MCP on one side only, ESRP addresses without DirectToEsrp, emergency dial strings.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.azure.resource import AcgResource
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import ERROR, WARNING, Finding, show_value
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.region_catalog import load_catalog

SKU_TYPES = {"standard": "production", "lab": "lab"}
REGIONS_FOR_TYPE = {"production": 2, "lab": 1}


@dataclasses.dataclass(frozen=True)
class CrossFinding(Finding):
    """A finding about two fields: ``path`` in the inventory and ``azure_path`` in the ACG resource."""

    azure_path: str = ""

    def render(self) -> str:
        rule = " [%s]" % self.rule if self.rule else ""
        return "%s <-> azure %s: %s (got %s; expected %s)%s" % (
            self.path, self.azure_path, self.message, show_value(self.value), self.expected, rule)


class _Check:
    def __init__(self, deployment: Deployment, acg_addresses: t.Mapping[str, t.Optional[str]],
                 resource: AcgResource) -> None:
        self.d = deployment
        self.sbcs = dict(acg_addresses)
        self.r = resource
        self.items: list[CrossFinding] = []
        self.catalog = load_catalog()

    def add(self, severity: str, path: str, azure_path: str, message: str, expected: str, value: t.Any) -> None:
        self.items.append(CrossFinding(severity, path, message, expected, value, "azure", azure_path))

    def region_key(self, name: t.Any) -> str:
        region = self.catalog.region(str(name))
        return region.programmatic if region else str(name).lower()

    def run(self) -> list[CrossFinding]:
        self.provisioning()
        self.management_region()
        self.regions()
        self.deployment_type()
        self.signalling_sources()
        self.operator_addresses()
        self.allocated_prefixes()
        self.mcp()
        self.emergency()
        return self.items

    def provisioning(self) -> None:
        state = self.r.provisioning_state
        if state is None:
            self.add(WARNING, "name", "properties.provisioningState", "is not reported by ARM: cannot tell "
                     "whether the resource is provisioned", "Succeeded", state)
        elif state != "Succeeded":
            self.add(ERROR, "name", "properties.provisioningState", "the ACG resource is not provisioned",
                     "Succeeded", state)
        if self.r.status not in (None, "Complete"):
            self.add(WARNING, "name", "properties.status", "the ACG resource has changes pending on Microsoft's "
                     "side", "Complete", self.r.status)

    def management_region(self) -> None:
        mine = self.catalog.management_region(str(self.d.management_region))
        mine_key = mine.programmatic if mine else self.region_key(self.d.management_region)
        if mine_key != self.region_key(self.r.location):
            self.add(ERROR, "management_region", "location", "differs from the ACG resource's location",
                     self.r.location, self.d.management_region)

    def regions(self) -> None:
        azure = {self.region_key(loc.name): loc for loc in self.r.service_locations}
        mine = {self.region_key(reg.azure_region): reg for reg in self.d.service_regions}
        for key, reg in mine.items():
            if key not in azure:
                self.add(ERROR, reg.path + ".azure_region", "properties.serviceLocations[*].name",
                         "is not a service location of the ACG resource",
                         "one of: " + ", ".join(loc.name for loc in self.r.service_locations), reg.azure_region)
        for key, loc in azure.items():
            if key not in mine:
                self.add(ERROR, "service_regions[*].azure_region", loc.path + ".name",
                         "the ACG resource serves this region but the inventory has no service region for it",
                         "a service region with azure_region: %s" % loc.name, loc.name)

    def deployment_type(self) -> None:
        count = len(self.r.service_locations)
        if self.r.sku is not None:
            want = SKU_TYPES.get(self.r.sku.lower())
            if want is not None and want != self.d.type:
                self.add(ERROR, "type", "sku.name", "differs from the ACG resource's SKU",
                         "%s (SKU %s)" % (want, self.r.sku), self.d.type)
        if REGIONS_FOR_TYPE.get(str(self.d.type)) not in (None, count):
            self.add(ERROR, "type", "properties.serviceLocations", "does not match the number of service "
                     "locations of the ACG resource (%d)" % count,
                     "%d region(s) for type %s" % (REGIONS_FOR_TYPE[str(self.d.type)], self.d.type), self.d.type)

    def signalling_sources(self) -> None:
        for host, address in sorted(self.sbcs.items()):
            path = "hosts[%s].commsgw_sbc.acg_listen.address" % host
            if address is None:
                self.add(WARNING, path, "properties.serviceLocations[*].primaryRegionProperties."
                         "allowedSignalingSourceAddressPrefixes", "is not set: cannot check that ACG accepts "
                         "this SBC's signalling", "the SBC's ACG-facing address in commsgw_sbc", None)
                continue
            for loc in self.r.service_locations:
                if not _inside(address, loc.allowed_signaling_prefixes):
                    self.add(ERROR, path, loc.path + ".primaryRegionProperties.allowedSignalingSourceAddressPrefixes",
                             "is not an allowed signalling source of region %s: ACG drops this SBC's traffic "
                             "there (every region must allow every SBC, for failover)" % loc.name,
                             "inside one of %s" % (loc.allowed_signaling_prefixes or "[] (none configured)"),
                             address)

    def operator_addresses(self) -> None:
        mine = {address for address in self.sbcs.values() if address}
        used: set[str] = set()
        for loc in self.r.service_locations:
            for index, entry in enumerate(loc.operator_addresses):
                host = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
                if host in mine:
                    used.add(host)
                elif mine:
                    self.add(WARNING, "hosts[*].commsgw_sbc.acg_listen.address",
                             "%s.primaryRegionProperties.operatorAddresses[%d]" % (loc.path, index),
                             "ACG sends calls to this address but no SBC of the inventory listens on it",
                             "the ACG-facing address of an SBC", entry)
        for host, address in sorted(self.sbcs.items()):
            if address and address not in used:
                self.add(WARNING, "hosts[%s].commsgw_sbc.acg_listen.address" % host,
                         "properties.serviceLocations[*].primaryRegionProperties.operatorAddresses",
                         "is in no region's operatorAddresses: ACG never sends calls to this SBC",
                         "the address in the operatorAddresses of at least one region", address)

    def allocated_prefixes(self) -> None:
        allocated = self.r.allocated_signaling_prefixes
        if allocated is None:
            return
        for reg in self.d.service_regions:
            for index, prefix in enumerate(reg.ip_ranges):
                if not _inside(str(prefix), allocated):
                    self.add(WARNING, "%s.ip_ranges[%d]" % (reg.path, index),
                             "properties.allocatedSignalingAddressPrefixes",
                             "is not inside the signalling prefixes Azure allocated to this ACG",
                             "inside one of %s" % allocated, prefix)

    def mcp(self) -> None:
        flags = (self.r.integrated_mcp_enabled, self.r.on_prem_mcp_enabled)
        if flags == (None, None):
            return
        enabled = any(flags)
        for reg in self.d.service_regions:
            if reg.mcp_hostname and not enabled:
                self.add(WARNING, reg.path + ".mcp_hostname", "properties.integratedMcpEnabled",
                         "is set but MCP is not enabled on the ACG resource", "no mcp_hostname, or MCP enabled "
                         "on the resource", reg.mcp_hostname)
        if enabled and not any(reg.mcp_hostname for reg in self.d.service_regions):
            self.add(WARNING, "service_regions[*].mcp_hostname", "properties.integratedMcpEnabled",
                     "MCP is enabled on the ACG resource but no service region has an mcp_hostname",
                     "each region's mcp_hostname (docs/mcp.md)", None)

    def emergency(self) -> None:
        for loc in self.r.service_locations:
            if loc.esrp_addresses and self.r.e911_type != "DirectToEsrp":
                self.add(WARNING, "emergency_dial_strings", loc.path + ".primaryRegionProperties.esrpAddresses",
                         "ESRP addresses are set but properties.e911Type is %r, so ACG does not use them"
                         % self.r.e911_type, "e911Type DirectToEsrp, or no esrpAddresses", loc.esrp_addresses)
        azure = self.r.emergency_dial_strings
        if azure is not None and sorted(map(str, self.d.emergency_dial_strings)) != sorted(azure):
            self.add(WARNING, "emergency_dial_strings", "properties.emergencyDialStrings",
                     "differs from the ACG resource: the SBC and ACG disagree on what an emergency call is",
                     "the same dial strings as Azure: %s" % azure, self.d.emergency_dial_strings)


def _inside(value: str, prefixes: t.Iterable[str]) -> bool:
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    for prefix in prefixes:
        try:
            outer = ipaddress.ip_network(prefix, strict=False)
        except ValueError:
            continue
        if network.version == outer.version and network.subnet_of(outer):  # type: ignore[arg-type]
            return True
    return False


def crosscheck(deployment: Deployment, acg_addresses: t.Mapping[str, t.Optional[str]],
               resource: AcgResource) -> list[CrossFinding]:
    """Every disagreement between the inventory deployment and the ACG resource."""
    return _Check(deployment, acg_addresses, resource).run()


def acg_addresses(hosts: t.Mapping[str, t.Mapping[str, t.Any]], deployment_name: t.Any) -> dict[str, t.Optional[str]]:
    """Host -> its ``commsgw_sbc.acg_listen.address`` (None when not given) for one deployment's SBCs."""
    found: dict[str, t.Optional[str]] = {}
    for host, variables in hosts.items():
        raw = variables.get("commsgw_deployment")
        if not isinstance(raw, dict) or raw.get("name") != deployment_name:
            continue
        sbc = variables.get("commsgw_sbc")
        listen = sbc.get("acg_listen") if isinstance(sbc, dict) else None
        address = listen.get("address") if isinstance(listen, dict) else None
        found[host] = address if isinstance(address, str) else None
    return found


def check_inventory(hosts: t.Mapping[str, t.Mapping[str, t.Any]], body: t.Any,
                    deployment: t.Optional[str] = None) -> dict[str, t.Any]:
    """Validate the inventory, pick the deployment (``deployment``, else the one named like the ACG
    resource, else the only one) and cross-check it with the resource body.

    ``{"deployment", "problems"}`` when it cannot run (lines), else ``{"deployment", "findings"}``.
    Raises ArmError(kind="shape") for a body of unknown shape.
    """
    from ansible_collections.commsgw.routing.plugins.module_utils.azure.resource import normalise
    from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import validate_inventory

    resource = normalise(body)
    reports = validate_inventory(hosts)
    names = [str(r["name"]) for r in reports]
    wanted = deployment or (resource.name if resource.name in names else None)
    if wanted is None and len(reports) == 1:
        wanted = names[0]
    report = next((r for r in reports if str(r["name"]) == wanted), None)
    if report is None:
        return {"deployment": wanted, "problems": [
            "deployment: %s is not a deployment of this inventory; expected one of: %s (set commsgw_azure_deployment)"
            % (wanted or "(not given, and the ACG resource name %s matches none)" % resource.name,
               ", ".join(names) or "none")]}
    if report["errors"]:
        return {"deployment": wanted, "problems": [
            "deployment %s: %s" % (wanted, f.render()) for f in report["errors"]] + [
            "deployment %s: fix the inventory first (playbooks/validate.yml); the cross-check needs a valid one" % wanted]}
    model = report["model"]
    return {"deployment": wanted, "findings": crosscheck(model, acg_addresses(hosts, model.name), resource)}
