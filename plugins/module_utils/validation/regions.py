# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-region rules: the management region (R-04), the service regions' Azure regions (R-05), the
regional FQDNs (R-06, R-28 advice) and the /28 ip_ranges (R-07)."""

from __future__ import annotations

import ipaddress
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import normalise_fqdn
from ansible_collections.commsgw.routing.plugins.module_utils.validation.context import RuleContext
from ansible_collections.commsgw.routing.plugins.module_utils.validation.names import fqdn_problem

# Azure region names as written by Azure or ACG: 'westeurope', 'West Europe', 'India Central'. The catalog
# look-up ignores case and separators, so the alphabet is checked here to keep other characters out.
AZURE_NAME_RE = re.compile(r"^[A-Za-z0-9]+([ -][A-Za-z0-9]+)*\Z")
AZURE_NAME_EXPECTED = "an Azure region name, e.g. 'westeurope' or 'West Europe'"
RANGE_PREFIX = 28


class RegionRules(RuleContext):
    """Rules on the management region and on each service region's Azure region, names and ranges."""

    def management_region(self) -> None:
        value = self.d.management_region
        if not isinstance(value, str):
            return
        found = self.catalog.management_region(value) if AZURE_NAME_RE.match(value) else None
        if found is None:
            self.f.error("management_region", "is not an ACG management region",
                         "one of: " + ", ".join(self.catalog.management_names()), value, "R-04")
            return
        if found.legacy:
            self.f.warn("management_region", "was listed only by older ACG documents",
                        "one of: " + ", ".join(self.catalog.management_names()), value, "R-04")
        areas = {reg.area for reg in self._azure_regions().values()}
        mgmt = self.catalog.region(found.programmatic)
        if mgmt is not None and areas and mgmt.area not in areas:
            self.f.warn("management_region", "lies outside the service regions' geographic area",
                        "the management region nearest the service regions", value, "R-04")

    def _azure_regions(self) -> dict[int, t.Any]:
        found = {}
        for region in self.d.service_regions:
            if isinstance(region.azure_region, str) and AZURE_NAME_RE.match(region.azure_region):
                azure = self.catalog.region(region.azure_region)
                if azure is not None:
                    found[region.index] = azure
        return found

    def azure_regions(self) -> None:
        for region in self.d.service_regions:
            if not isinstance(region.azure_region, str):
                continue
            if not AZURE_NAME_RE.match(region.azure_region) or self.catalog.region(region.azure_region) is None:
                self.f.error(region.path + ".azure_region", "is not an Azure region", AZURE_NAME_EXPECTED,
                             region.azure_region, "R-05")
        azure = self._azure_regions()
        for index, reg in azure.items():
            if reg.access == "restricted":
                self.f.warn("service_regions[%d].azure_region" % index, "is an access-restricted Azure region",
                            "an open region (or an approved access request)", reg.name, "R-05")
            elif reg.access != "open":
                self.f.warn("service_regions[%d].azure_region" % index,
                            "is not generally available yet (%s)" % reg.access, "an open region", reg.name, "R-05")
        if self.d.type != "production" or len(azure) != 2 or len(self.d.service_regions) != 2:
            return
        first, second = azure[0], azure[1]
        path = "service_regions[1].azure_region"
        if first.programmatic == second.programmatic:
            self.f.error(path, "is the same Azure region as service_regions[0]",
                         "a second, different Azure region", second.name, "R-01")
            return
        single = self.catalog.is_single_region_geography(first) or self.catalog.is_single_region_geography(second)
        if first.area != second.area and not single:
            self.f.error(path, "lies in %s, service_regions[0] in %s" % (second.area, first.area),
                         "both service regions in the same geographic area", second.name, "R-05")
        elif single and first.area != second.area:
            self.f.warn(path, "crosses geographic areas (allowed: one region is a single-region geography)",
                        "the nearest region in another geography", second.name, "R-05")
        # Pairing advice only matters once the area rule holds; a region alone in its geography has no pair.
        elif not single and not self.catalog.are_paired(first, second):
            self.f.warn(path, "is not the Azure regional pair of %s" % first.name,
                        "an Azure regional pair (preferred)", second.name, "R-05")

    def hostnames(self) -> None:
        names: list[tuple[str, t.Any]] = []
        base = self.d.base_domain
        # An invalid base domain was reported already; comparing hostnames with it would only add noise.
        base = normalise_fqdn(base) if isinstance(base, str) and fqdn_problem(base) is None else None
        for region in self.d.service_regions:
            for key in ("hostname", "mcp_hostname"):
                value, path = getattr(region, key), "%s.%s" % (region.path, key)
                if not self._fqdn(path, value, "R-06"):
                    continue
                names.append((path, normalise_fqdn(value)))
                if base and not normalise_fqdn(value).endswith("." + base):
                    self.f.warn(path, "is not under the deployment's base domain %s" % base,
                                "a name copied from the Azure portal (custom domains excepted)", value, "R-28")
        self._unique(names, "hostname", "R-06")

    def ip_ranges(self) -> None:
        networks: list[tuple[str, ipaddress.IPv4Network]] = []
        for region in self.d.service_regions:
            if not region.ip_ranges and region.path + ".ip_ranges" not in self.bad and region.path not in self.bad:
                self.f.error(region.path + ".ip_ranges", "is empty", "at least one /28 IPv4 range", [], "R-07")
            for index, value in enumerate(region.ip_ranges):
                path = "%s.ip_ranges[%d]" % (region.path, index)
                network = self._range(path, value)
                if network is not None:
                    networks.append((path, network))
        for position, (path, network) in enumerate(networks):
            for other_path, other in networks[:position]:
                if network == other:
                    self.f.error(path, "repeats %s" % other_path, "each /28 listed once", str(network), "R-07")
                elif network.overlaps(other):
                    self.f.error(path, "overlaps %s (%s)" % (other_path, other), "ranges that do not overlap",
                                 str(network), "R-07")

    def _range(self, path: str, value: t.Any) -> t.Optional[ipaddress.IPv4Network]:
        expected = "an IPv4 /28 on its network boundary, e.g. 203.0.113.16/28"
        if not isinstance(value, str):
            self.f.error(path, "has the wrong type", expected, value, "R-07")
            return None
        if "/" not in value:
            self.f.error(path, "has no prefix length", expected, value, "R-07")
            return None
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            self.f.error(path, "is not an IP network", expected, value, "R-07")
            return None
        if network.version != 4:
            self.f.error(path, "is IPv6 (ACG is IPv4 only)", expected, value, "R-07")
            return None
        if network.prefixlen != RANGE_PREFIX:
            self.f.error(path, "is a /%d" % network.prefixlen, expected, value, "R-07")
            return None
        # Exact canonical text only, so that the configs carry exactly what was validated.
        if str(network) != value:
            if ipaddress.ip_interface(value).ip != network.network_address:
                problem = "has host bits set: not on its /28 boundary (did you mean %s?)" % network
            else:
                problem = "is not written canonically (did you mean %s?)" % network
            self.f.error(path, problem, expected, value, "R-07")
            return None
        # Multicast counts as global to ipaddress, but an ACG range is always unicast.
        if (not network.is_global or network.is_multicast) and not self.d.allow_non_public_ranges:
            self.f.error(path, "is not a public range", "a public range, or allow_non_public_ranges: true "
                         "for a lab or test deployment", value, "R-07")
        return t.cast(ipaddress.IPv4Network, network)
