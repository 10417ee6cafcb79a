# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Azure region catalog (display and programmatic names, geographies, pairs, ACG management regions).

The YAML below is a verbatim copy of ``tests/data/azure-regions.yaml``, source note included. It lives
inside a Python module so that it travels with every module (AnsiballZ only ships Python files).
``tests/unit/inventory/test_region_catalog.py`` keeps it honest.
"""

from __future__ import annotations

# Not a raw string: a backslash at the end of a line joins it with the next (Python drops both), which
# keeps lines under the 160 columns ansible-test allows while the value stays byte-identical.
CATALOG_YAML = """
# Azure public-cloud regions with their region pairs.
# Primary source: MicrosoftDocs/reliability-docs, articles/reliability/regions-list.md
#   (ms.date 2025-09-23, "All" tab), cross-checked with regions-paired.md (ms.date 2025-03-19).
# Older source (sovereign clouds, history): MicrosoftDocs/azure-docs,
#   articles/reliability/cross-region-replication-azure.md (ms.date 2022-12-12).
# Field notes:
#   paired            display name of this region's pair (null = no pair / "N/A" in source)
#   paired_programmatic  derived by looking the pair up in this table
#   availability_zones  true where the source shows AZ support
#   access            open | restricted (needs an access request) | coming_soon
#   Pairs are directional: read "paired" as this region's secondary. Asymmetric ones are listed below.
#   "geography" is Azure's data-residency geography, not ACG's looser "geographic area" (e.g. "North America").
schema_version: 1
source_ms_date: 2025-09-23
source: https://learn.microsoft.com/azure/reliability/regions-list
regions:
  - name: "Australia Central"
    programmatic: australiacentral
    geography: "Australia"
    location: "Canberra"
    paired: "Australia Central 2"
    paired_programmatic: "australiacentral2"
    availability_zones: false
    access: open
  - name: "Australia Central 2"
    programmatic: australiacentral2
    geography: "Australia"
    location: "Canberra"
    paired: "Australia Central"
    paired_programmatic: "australiacentral"
    availability_zones: false
    access: restricted
  - name: "Australia East"
    programmatic: australiaeast
    geography: "Australia"
    location: "New South Wales"
    paired: "Australia Southeast"
    paired_programmatic: "australiasoutheast"
    availability_zones: true
    access: open
  - name: "Australia Southeast"
    programmatic: australiasoutheast
    geography: "Australia"
    location: "Victoria"
    paired: "Australia East"
    paired_programmatic: "australiaeast"
    availability_zones: false
    access: open
  - name: "Austria East"
    programmatic: austriaeast
    geography: "Austria"
    location: "Vienna"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Belgium Central"
    programmatic: belgiumcentral
    geography: "Belgium"
    location: "Brussels"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Brazil South"
    programmatic: brazilsouth
    geography: "Brazil"
    location: "Sao Paulo State"
    paired: "South Central US"
    paired_programmatic: "southcentralus"
    availability_zones: true
    access: open
  - name: "Brazil Southeast"
    programmatic: brazilsoutheast
    geography: "Brazil"
    location: "Rio"
    paired: "Brazil South"
    paired_programmatic: "brazilsouth"
    availability_zones: false
    access: restricted
  - name: "Canada Central"
    programmatic: canadacentral
    geography: "Canada"
    location: "Toronto"
    paired: "Canada East"
    paired_programmatic: "canadaeast"
    availability_zones: true
    access: open
  - name: "Canada East"
    programmatic: canadaeast
    geography: "Canada"
    location: "Quebec"
    paired: "Canada Central"
    paired_programmatic: "canadacentral"
    availability_zones: false
    access: open
  - name: "Central India"
    programmatic: centralindia
    geography: "India"
    location: "Pune"
    paired: "South India"
    paired_programmatic: "southindia"
    availability_zones: true
    access: open
  - name: "Central US"
    programmatic: centralus
    geography: "United States"
    location: "Iowa"
    paired: "East US 2"
    paired_programmatic: "eastus2"
    availability_zones: true
    access: open
  - name: "Chile Central"
    programmatic: chilecentral
    geography: "Chile"
    location: "Santiago"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Denmark East"
    programmatic: denmarkeast
    geography: "Denmark"
    location: "Copenhagen"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: coming_soon
  - name: "East Asia"
    programmatic: eastasia
    geography: "Asia Pacific"
    location: "Hong Kong SAR"
    paired: "Southeast Asia"
    paired_programmatic: "southeastasia"
    availability_zones: true
    access: open
  - name: "East US"
    programmatic: eastus
    geography: "United States"
    location: "Virginia"
    paired: "West US"
    paired_programmatic: "westus"
    availability_zones: true
    access: open
  - name: "East US 2"
    programmatic: eastus2
    geography: "United States"
    location: "Virginia"
    paired: "Central US"
    paired_programmatic: "centralus"
    availability_zones: true
    access: open
  - name: "France Central"
    programmatic: francecentral
    geography: "France"
    location: "Paris"
    paired: "France South"
    paired_programmatic: "francesouth"
    availability_zones: true
    access: open
  - name: "France South"
    programmatic: francesouth
    geography: "France"
    location: "Marseille"
    paired: "France Central"
    paired_programmatic: "francecentral"
    availability_zones: false
    access: restricted
  - name: "Germany North"
    programmatic: germanynorth
    geography: "Germany"
    location: "Berlin"
    paired: "Germany West Central"
    paired_programmatic: "germanywestcentral"
    availability_zones: false
    access: restricted
  - name: "Germany West Central"
    programmatic: germanywestcentral
    geography: "Germany"
    location: "Frankfurt"
    paired: "Germany North"
    paired_programmatic: "germanynorth"
    availability_zones: true
    access: open
  - name: "Indonesia Central"
    programmatic: indonesiacentral
    geography: "Indonesia"
    location: "Jakarta"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Israel Central"
    programmatic: israelcentral
    geography: "Israel"
    location: "Israel"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Italy North"
    programmatic: italynorth
    geography: "Italy"
    location: "Milan"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Japan East"
    programmatic: japaneast
    geography: "Japan"
    location: "Tokyo, Saitama"
    paired: "Japan West"
    paired_programmatic: "japanwest"
    availability_zones: true
    access: open
  - name: "Japan West"
    programmatic: japanwest
    geography: "Japan"
    location: "Osaka"
    paired: "Japan East"
    paired_programmatic: "japaneast"
    availability_zones: true
    access: open
  - name: "Korea Central"
    programmatic: koreacentral
    geography: "Korea"
    location: "Seoul"
    paired: "Korea South"
    paired_programmatic: "koreasouth"
    availability_zones: true
    access: open
  - name: "Korea South"
    programmatic: koreasouth
    geography: "Korea"
    location: "Busan"
    paired: "Korea Central"
    paired_programmatic: "koreacentral"
    availability_zones: false
    access: open
  - name: "Malaysia West"
    programmatic: malaysiawest
    geography: "Malaysia"
    location: "Kuala Lumpur"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Mexico Central"
    programmatic: mexicocentral
    geography: "Mexico"
    location: "Querétaro State"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "New Zealand North"
    programmatic: newzealandnorth
    geography: "New Zealand"
    location: "Auckland"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "North Central US"
    programmatic: northcentralus
    geography: "United States"
    location: "Illinois"
    paired: "South Central US"
    paired_programmatic: "southcentralus"
    availability_zones: false
    access: open
  - name: "North Europe"
    programmatic: northeurope
    geography: "Europe"
    location: "Ireland"
    paired: "West Europe"
    paired_programmatic: "westeurope"
    availability_zones: true
    access: open
  - name: "Norway East"
    programmatic: norwayeast
    geography: "Norway"
    location: "Norway"
    paired: "Norway West"
    paired_programmatic: "norwaywest"
    availability_zones: true
    access: open
  - name: "Norway West"
    programmatic: norwaywest
    geography: "Norway"
    location: "Norway"
    paired: "Norway East"
    paired_programmatic: "norwayeast"
    availability_zones: false
    access: restricted
  - name: "Poland Central"
    programmatic: polandcentral
    geography: "Poland"
    location: "Warsaw"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Qatar Central"
    programmatic: qatarcentral
    geography: "Qatar"
    location: "Doha"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "South Africa North"
    programmatic: southafricanorth
    geography: "South Africa"
    location: "Johannesburg"
    paired: "South Africa West"
    paired_programmatic: "southafricawest"
    availability_zones: true
    access: open
  - name: "South Africa West"
    programmatic: southafricawest
    geography: "South Africa"
    location: "Cape Town"
    paired: "South Africa North"
    paired_programmatic: "southafricanorth"
    availability_zones: false
    access: restricted
  - name: "South Central US"
    programmatic: southcentralus
    geography: "United States"
    location: "Texas"
    paired: "North Central US"
    paired_programmatic: "northcentralus"
    availability_zones: true
    access: open
  - name: "South India"
    programmatic: southindia
    geography: "India"
    location: "Chennai"
    paired: "Central India"
    paired_programmatic: "centralindia"
    availability_zones: false
    access: open
  - name: "Southeast Asia"
    programmatic: southeastasia
    geography: "Asia Pacific"
    location: "Singapore"
    paired: "East Asia"
    paired_programmatic: "eastasia"
    availability_zones: true
    access: open
  - name: "Spain Central"
    programmatic: spaincentral
    geography: "Spain"
    location: "Madrid"
    paired: null
    paired_programmatic: null
    availability_zones: true
    access: open
  - name: "Sweden Central"
    programmatic: swedencentral
    geography: "Sweden"
    location: "Gävle"
    paired: "Sweden South"
    paired_programmatic: "swedensouth"
    availability_zones: true
    access: open
  - name: "Switzerland North"
    programmatic: switzerlandnorth
    geography: "Switzerland"
    location: "Zurich"
    paired: "Switzerland West"
    paired_programmatic: "switzerlandwest"
    availability_zones: true
    access: open
  - name: "Switzerland West"
    programmatic: switzerlandwest
    geography: "Switzerland"
    location: "Geneva"
    paired: "Switzerland North"
    paired_programmatic: "switzerlandnorth"
    availability_zones: false
    access: restricted
  - name: "UAE Central"
    programmatic: uaecentral
    geography: "UAE"
    location: "Abu Dhabi"
    paired: "UAE North"
    paired_programmatic: "uaenorth"
    availability_zones: false
    access: restricted
  - name: "UAE North"
    programmatic: uaenorth
    geography: "UAE"
    location: "Dubai"
    paired: "UAE Central"
    paired_programmatic: "uaecentral"
    availability_zones: true
    access: open
  - name: "UK South"
    programmatic: uksouth
    geography: "United Kingdom"
    location: "London"
    paired: "UK West"
    paired_programmatic: "ukwest"
    availability_zones: true
    access: open
  - name: "UK West"
    programmatic: ukwest
    geography: "United Kingdom"
    location: "Cardiff"
    paired: "UK South"
    paired_programmatic: "uksouth"
    availability_zones: false
    access: open
  - name: "West Central US"
    programmatic: westcentralus
    geography: "United States"
    location: "Wyoming"
    paired: "West US 2"
    paired_programmatic: "westus2"
    availability_zones: false
    access: open
  - name: "West Europe"
    programmatic: westeurope
    geography: "Europe"
    location: "Netherlands"
    paired: "North Europe"
    paired_programmatic: "northeurope"
    availability_zones: true
    access: open
  - name: "West India"
    programmatic: westindia
    geography: "India"
    location: "Mumbai"
    paired: "South India"
    paired_programmatic: "southindia"
    availability_zones: false
    access: open
  - name: "West US"
    programmatic: westus
    geography: "United States"
    location: "California"
    paired: "East US"
    paired_programmatic: "eastus"
    availability_zones: false
    access: open
  - name: "West US 2"
    programmatic: westus2
    geography: "United States"
    location: "Washington"
    paired: "West Central US"
    paired_programmatic: "westcentralus"
    availability_zones: true
    access: open
  - name: "West US 3"
    programmatic: westus3
    geography: "United States"
    location: "Phoenix"
    paired: "East US"
    paired_programmatic: "eastus"
    availability_zones: true
    access: open
  # Sweden South has no row of its own in regions-list.md; it appears only as Sweden Central's
  # (restricted) pair. Programmatic name follows the lowercase-no-spaces convention (not in source).
  - name: "Sweden South"
    programmatic: swedensouth
    programmatic_by_convention: true
    geography: "Sweden"
    location: null
    paired: "Sweden Central"
    paired_programmatic: "swedencentral"
    availability_zones: null
    access: restricted

asymmetric_pairs:   # source: regions-paired.md
  - {region: brazilsouth, secondary: southcentralus, note: "South Central US's own pair is North Central US; pair crosses geography"}
  - {region: westindia, secondary: southindia, note: "South India's own pair is Central India"}
  - {region: westus3, secondary: eastus, note: "East US is paired bidirectionally with West US"}
  - {region: brazilsoutheast, secondary: brazilsouth, note: "implied by the table: Brazil South's own pair is South Central US (not called out in \
regions-paired.md)"}

# Regions whose pair is access-restricted: using the pair for an ACG second service region may need an
# Azure region-access request (and ACG must also be offered there - check Products by region).
regions_with_restricted_pair: [australiacentral, francecentral, germanywestcentral, norwayeast, southafricanorth, swedencentral, switzerlandnorth, \
uaenorth]

unpaired_regions: [austriaeast, belgiumcentral, chilecentral, denmarkeast, indonesiacentral, israelcentral, italynorth, malaysiawest, mexicocentral, \
newzealandnorth, polandcentral, qatarcentral, spaincentral]

# Sovereign clouds (not usable with a public-cloud ACG as far as docs show). Pairs from
# cross-region-replication-azure.md (2022-12-12); "*" regions there are access-restricted.
# Programmatic names are NOT in that source; they follow the lowercase-no-spaces convention.
sovereign_pairs:
  - {cloud: AzureChinaCloud, a: "China North", b: "China East", a_prog: chinanorth, b_prog: chinaeast}
  - {cloud: AzureChinaCloud, a: "China North 2", b: "China East 2", a_prog: chinanorth2, b_prog: chinaeast2}
  - {cloud: AzureChinaCloud, a: "China North 3", b: "China East 3", a_prog: chinanorth3, b_prog: chinaeast3, b_restricted: true}
  - {cloud: AzureUSGovernment, a: "US Gov Arizona", b: "US Gov Texas", a_prog: usgovarizona, b_prog: usgovtexas, restricted: true}
  - {cloud: AzureUSGovernment, a: "US Gov Virginia", b: "US Gov Texas", a_prog: usgovvirginia, b_prog: usgovtexas, restricted: true}
  - {cloud: AzureUSGovernment, a: "US DoD East", b: "US DoD Central", a_prog: usdodeast, b_prog: usdodcentral, restricted: true}

# History worth knowing when validating old inventories:
#   - azure-docs cross-region-replication-azure.md @9f04ff9 also listed "Central India | West India" as a pair;
#     the 2025 list pairs Central India <-> South India only.
#   - The 2022 versions listed only Qatar, Poland, Israel, Italy, Austria, Spain as unpaired (some "coming soon").

# ACG management regions (allowed "Instance details: Region"), from the current ACG reliability page.
# Display names are as ACG writes them; "India Central" is Azure's "Central India".
# Older ACG doc versions (2022-12 .. 2023-11) listed Southeast Asia instead of Canada Central.
acg_management_regions:
  - {acg_name: "East US", programmatic: eastus}
  - {acg_name: "West Central US", programmatic: westcentralus}
  - {acg_name: "West Europe", programmatic: westeurope}
  - {acg_name: "UK South", programmatic: uksouth}
  - {acg_name: "India Central", programmatic: centralindia}
  - {acg_name: "Canada Central", programmatic: canadacentral}
  - {acg_name: "Australia East", programmatic: australiaeast}
acg_management_regions_legacy_extra: [southeastasia]
"""
