# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Look-ups over the Azure region catalog: names, geographies, pairs, ACG management regions."""

from __future__ import annotations

import dataclasses
import functools
import re
import typing as t

from ansible.module_utils.common.yaml import yaml_load

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.regions_data import CATALOG_YAML

# ACG asks for both service regions in the same "geographic area" (its example: North America),
# which is looser than Azure's data-residency geography. This grouping is our reading (INFERENCE),
# kept in one place so that an operator who disagrees can see and change it.
GEOGRAPHIC_AREAS: dict[str, str] = {
    "United States": "North America", "Canada": "North America", "Mexico": "North America",
    "Brazil": "South America", "Chile": "South America",
    "Europe": "Europe", "United Kingdom": "Europe", "France": "Europe", "Germany": "Europe",
    "Norway": "Europe", "Sweden": "Europe", "Switzerland": "Europe", "Austria": "Europe",
    "Belgium": "Europe", "Denmark": "Europe", "Italy": "Europe", "Poland": "Europe", "Spain": "Europe",
    "Asia Pacific": "Asia Pacific", "Japan": "Asia Pacific", "Korea": "Asia Pacific",
    "India": "Asia Pacific", "Indonesia": "Asia Pacific", "Malaysia": "Asia Pacific",
    "Australia": "Oceania", "New Zealand": "Oceania",
    "Israel": "Middle East", "Qatar": "Middle East", "UAE": "Middle East",
    "South Africa": "Africa",
}


@dataclasses.dataclass(frozen=True)
class AzureRegion:
    name: str
    programmatic: str
    geography: str
    paired: t.Optional[str]
    access: str

    @property
    def area(self) -> str:
        return GEOGRAPHIC_AREAS.get(self.geography, self.geography)


@dataclasses.dataclass(frozen=True)
class ManagementRegion:
    acg_name: str
    programmatic: str
    legacy: bool


def _key(name: str) -> str:
    """'Central India', 'centralindia' and 'central-india' all name the same region."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


class RegionCatalog:
    def __init__(self, data: dict[str, t.Any]) -> None:
        self.source = str(data.get("source", ""))
        self.regions: dict[str, AzureRegion] = {}
        for row in data["regions"]:
            region = AzureRegion(row["name"], row["programmatic"], row["geography"],
                                 row.get("paired_programmatic"), row.get("access", "open"))
            self.regions[region.programmatic] = region
        self._by_key = {}
        for region in self.regions.values():
            self._by_key[_key(region.name)] = region
            self._by_key[_key(region.programmatic)] = region
        self.management: dict[str, ManagementRegion] = {}
        for row in data["acg_management_regions"]:
            self._add_management(ManagementRegion(row["acg_name"], row["programmatic"], False))
        for programmatic in data.get("acg_management_regions_legacy_extra", []):
            self._add_management(ManagementRegion(self.regions[programmatic].name, programmatic, True))
        self._geography_sizes: dict[str, int] = {}
        for region in self.regions.values():
            self._geography_sizes[region.geography] = self._geography_sizes.get(region.geography, 0) + 1

    def _add_management(self, region: ManagementRegion) -> None:
        for alias in (region.acg_name, region.programmatic, self.regions[region.programmatic].name):
            self.management[_key(alias)] = region

    def region(self, name: str) -> t.Optional[AzureRegion]:
        return self._by_key.get(_key(name))

    def management_region(self, name: str) -> t.Optional[ManagementRegion]:
        return self.management.get(_key(name))

    def management_names(self, include_legacy: bool = False) -> list[str]:
        seen = {r.acg_name: r for r in self.management.values() if include_legacy or not r.legacy}
        return sorted(seen)

    def is_single_region_geography(self, region: AzureRegion) -> bool:
        return self._geography_sizes.get(region.geography, 0) == 1

    def are_paired(self, a: AzureRegion, b: AzureRegion) -> bool:
        return a.paired == b.programmatic or b.paired == a.programmatic


@functools.lru_cache(maxsize=1)
def load_catalog() -> RegionCatalog:
    return RegionCatalog(yaml_load(CATALOG_YAML))
