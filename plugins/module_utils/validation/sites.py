# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shape and pairing rules: how many service regions and operator sites a deployment type has (R-01,
R-02), each site paired with a distinct service region, and every site served by SBC hosts of a
registered platform (R-03)."""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    UnknownPlatform, get_platform, is_qualified, platform_names)
from ansible_collections.commsgw.routing.plugins.module_utils.validation.context import RuleContext
from ansible_collections.commsgw.routing.plugins.module_utils.validation.names import HOST_RE, deployment_label

# Per deployment type: (count, expected, rule) for the service regions, then for the operator sites.
SHAPES: dict[str, tuple[tuple[int, str, str], tuple[int, str, str]]] = {
    "production": ((2, "exactly 2 service regions", "R-01"), (2, "exactly 2 geographically redundant sites", "R-03")),
    "lab": ((1, "exactly 1 service region", "R-02"), (1, "exactly 1 operator site", "R-02")),
}


class SiteRules(RuleContext):
    """Rules on region and site counts, site/region pairing and site/SBC pairing."""

    def shape(self) -> None:
        regions, sites = len(self.d.service_regions), len(self.d.sites)
        if "service_regions" in self.bad:
            regions = None
        if "sites" in self.bad:
            sites = None
        shape = SHAPES.get(self.d.type) if isinstance(self.d.type, str) else None
        if shape is not None:
            (want_regions, regions_expected, regions_rule), (want_sites, sites_expected, sites_rule) = shape
            if regions not in (None, want_regions):
                self.f.error("service_regions", "a %s deployment has %d service region(s)" % (self.d.type, regions),
                             regions_expected, regions, regions_rule)
            if sites not in (None, want_sites):
                self.f.error("sites", "a %s deployment has %d operator site(s)" % (self.d.type, sites),
                             sites_expected, sites, sites_rule)
        for region in self.d.service_regions:
            self._name(region.path + ".name", region.name)
        for site in self.d.sites:
            self._name(site.path + ".name", site.name)
        self._unique(((r.path + ".name", r.name) for r in self.d.service_regions), "name", fold=True)
        self._unique(((s.path + ".name", s.name) for s in self.d.sites), "name", fold=True)

    def pairing(self) -> None:
        region_names = [r.name for r in self.d.service_regions if r.name is not None]
        # A site can only be said to name an unknown region when every region's name is known.
        regions_known = "service_regions" not in self.bad and len(region_names) == len(self.d.service_regions)
        for site in self.d.sites:
            if regions_known and site.service_region is not None and site.service_region not in region_names:
                self.f.error(site.path + ".service_region", "names no service region of this deployment",
                             "one of: " + ", ".join(map(str, region_names)), site.service_region, "R-03")
        if self.d.type != "production":
            return
        self._unique(((s.path + ".service_region", s.service_region) for s in self.d.sites
                      if s.service_region in region_names), "service region", "R-03")
        paired = {s.service_region for s in self.d.sites}
        # "Region unpaired" is only news when both sites name real regions (i.e. the same one twice);
        # a site naming an unknown region was reported above and is the fault to fix.
        sites_ok = "sites" not in self.bad and len(self.d.sites) == 2 and paired <= set(region_names)
        for region in self.d.service_regions:
            if region.name is not None and region.name not in paired and sites_ok:
                self.f.error(region.path, "is paired with no site", "each service region paired with one site",
                             region.name, "R-03")

    def sbcs(self) -> None:
        site_names = [s.name for s in self.d.sites if s.name is not None]
        # Whether a host names an unknown site can only be told when every site's name parsed.
        sites_known = "sites" not in self.bad and len(site_names) == len(self.d.sites)
        served: set[t.Any] = set()
        for sbc in self.d.sbcs:
            if not HOST_RE.match(sbc.host):
                self.f.error(sbc.path, "is not a safe host name", "letters, digits, '.', '-' or '_'", sbc.host)
            if sbc.site is None:
                self.f.error(sbc.path + ".commsgw_site", "is missing", "one of: " + ", ".join(map(str, site_names)),
                             None, "R-03")
            elif sites_known and sbc.site not in site_names:
                self.f.error(sbc.path + ".commsgw_site", "names no site of deployment %s" % deployment_label(self.d.name),
                             "one of: " + ", ".join(map(str, site_names)), sbc.site, "R-03")
            served.add(sbc.site)
            try:
                get_platform(sbc.platform)
            except UnknownPlatform as exc:  # another collection's platform: why it did not load
                why = " (%s)" % exc if is_qualified(sbc.platform) else ""
                self.f.error(sbc.path + ".commsgw_sbc_platform", "is not a supported SBC platform%s" % why,
                             "one of the registered platforms: %s, or another collection's API platform as "
                             "namespace.collection.name" % ", ".join(platform_names()), sbc.platform)
        for site in self.d.sites:
            if site.name is not None and site.name not in served:
                self.f.error(site.path, "has no SBC host in the inventory",
                             "at least one host with commsgw_site: %s" % site.name, site.name, "R-03")
