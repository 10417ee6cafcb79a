# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded Azure region catalog: a faithful copy of the shared data, and its look-ups."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.regions_data import CATALOG_YAML
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.region_catalog import (
    GEOGRAPHIC_AREAS, RegionCatalog, load_catalog)

# The catalog's source, kept in the repository: regions_data.py embeds it byte for byte (regenerate the
# module from it when Microsoft's region list changes).
SOURCE = pathlib.Path(__file__).resolve().parents[2] / "data" / "azure-regions.yaml"


def test_embedded_catalog_is_the_source_file_byte_for_byte() -> None:
    # The module's raw string starts right after the opening quotes with one newline for readability.
    assert CATALOG_YAML.startswith("\n")
    assert CATALOG_YAML[1:].encode("utf-8") == SOURCE.read_bytes()


def test_source_file_loads_to_the_same_catalog() -> None:
    source = RegionCatalog(yaml.safe_load(SOURCE.read_text(encoding="utf-8")))
    embedded = load_catalog()
    assert source.regions == embedded.regions
    assert source.management == embedded.management


def test_catalog_is_consistent() -> None:
    catalog = load_catalog()
    assert len(catalog.regions) > 50
    for region in catalog.regions.values():
        assert region.programmatic == region.programmatic.lower() and " " not in region.programmatic
        assert region.access in ("open", "restricted", "coming_soon"), region
        # Every pair points at a region the catalog knows.
        assert region.paired is None or region.paired in catalog.regions, region
        # Every geography is placed in an ACG geographic area.
        assert region.geography in GEOGRAPHIC_AREAS, region.geography


@pytest.mark.parametrize("spelling", ["westeurope", "West Europe", "WEST EUROPE", "west-europe", "West_Europe"])
def test_region_names_are_normalised(spelling: str) -> None:
    region = load_catalog().region(spelling)
    assert region is not None
    assert (region.name, region.programmatic, region.geography) == ("West Europe", "westeurope", "Europe")


@pytest.mark.parametrize("spelling", ["", "west", "westeurope2", "Europe West", "westus4"])
def test_unknown_region_names(spelling: str) -> None:
    assert load_catalog().region(spelling) is None


@pytest.mark.parametrize("spelling", ["India Central", "Central India", "centralindia", "india central"])
def test_management_region_spellings(spelling: str) -> None:
    found = load_catalog().management_region(spelling)
    assert found is not None
    assert (found.acg_name, found.programmatic, found.legacy) == ("India Central", "centralindia", False)


def test_management_list_matches_requirement_r04() -> None:
    catalog = load_catalog()
    # R-04, in ACG's own spelling.
    r04 = ["East US", "West Central US", "West Europe", "UK South", "India Central", "Canada Central", "Australia East"]
    assert catalog.management_names() == sorted(r04)
    assert catalog.management_names(include_legacy=True) == sorted(catalog.management_names() + ["Southeast Asia"])
    legacy = catalog.management_region("southeastasia")
    assert legacy is not None and legacy.legacy
    for name in ("North Europe", "westus", "South India"):
        assert catalog.management_region(name) is None


def test_every_management_region_is_an_azure_region() -> None:
    catalog = load_catalog()
    for region in catalog.management.values():
        assert catalog.region(region.programmatic) is not None


def test_pairs_and_asymmetric_pairs() -> None:
    catalog = load_catalog()

    def region(name: str):  # type: ignore[no-untyped-def]
        found = catalog.region(name)
        assert found is not None
        return found

    assert catalog.are_paired(region("westeurope"), region("northeurope"))
    assert catalog.are_paired(region("northeurope"), region("westeurope"))
    # Brazil South's secondary is South Central US, whose own pair is North Central US: still a pair.
    assert region("brazilsouth").paired == "southcentralus"
    assert region("southcentralus").paired != "brazilsouth"
    assert catalog.are_paired(region("southcentralus"), region("brazilsouth"))
    assert not catalog.are_paired(region("westeurope"), region("francecentral"))


def test_single_region_geographies_and_areas() -> None:
    catalog = load_catalog()
    qatar, west_europe = catalog.region("qatarcentral"), catalog.region("westeurope")
    assert qatar is not None and west_europe is not None
    assert catalog.is_single_region_geography(qatar) and qatar.paired is None
    assert not catalog.is_single_region_geography(west_europe)
    east_us, canada = catalog.region("eastus"), catalog.region("canadacentral")
    assert east_us is not None and canada is not None
    assert east_us.area == canada.area == "North America"
    uk, sweden = catalog.region("uksouth"), catalog.region("swedencentral")
    assert uk is not None and sweden is not None
    assert uk.area == sweden.area == west_europe.area == "Europe"


def test_load_catalog_is_cached() -> None:
    assert load_catalog() is load_catalog()
