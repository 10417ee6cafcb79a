# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline validation of a deployment against the ACG contract (R-01..R-28).

Every rule adds findings and carries on, so one run reports every problem. Errors break the
contract; warnings are advice. Rules read the typed model from ``model``; anything that failed to
parse is simply absent there and was already reported.
"""

from __future__ import annotations

import ipaddress
import re
import typing as t
import unicodedata

from ansible_collections.commsgw.routing.plugins.module_utils.findings import Findings, show_value
from ansible_collections.commsgw.routing.plugins.module_utils.host_port import HostPortError, split_host_port
from ansible_collections.commsgw.routing.plugins.module_utils.model import (
    ACG_TRANSPORTS, DEPLOYMENT_TYPES, MCP_ALL_FAILED, MCP_MATCHES, MCP_POLICIES, ROUTING_LIMITS,
    Deployment, Sbc, parse_deployment)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc_platforms import platform_names
from ansible_collections.commsgw.routing.plugins.module_utils.srv_lookup import normalise_fqdn  # noqa: F401
from ansible_collections.commsgw.routing.plugins.module_utils.srv_bounds import check_srv_limits
from ansible_collections.commsgw.routing.plugins.module_utils.region_catalog import RegionCatalog, load_catalog

# Names end up inside generated configs and file names: keep them to a safe alphabet.
# Every pattern ends in \Z, not $: '$' also matches before a trailing newline, which would let a value
# such as "112\n" through into a rendered config.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}\Z")
NAME_EXPECTED = "1-63 letters, digits, '-' or '_', starting with a letter or digit"
HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}\Z")
LABEL_RE = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
FQDN_EXPECTED = "a fully qualified domain name (RFC 1123: dot-separated labels of letters, digits and '-')"
DIAL_STRING_RE = re.compile(r"^\+?[0-9]{1,15}\Z")
# The host of a next hop (host_port.split_host_port splits off the port): IPv4 or a host name, no IPv6.
NEXT_HOP_HOST_RE = re.compile(r"^[A-Za-z0-9.-]+\Z")
# Azure region names as written by Azure or ACG: 'westeurope', 'West Europe', 'India Central'. The catalog
# look-up ignores case and separators, so the alphabet is checked here to keep other characters out.
AZURE_NAME_RE = re.compile(r"^[A-Za-z0-9]+([ -][A-Za-z0-9]+)*\Z")
AZURE_NAME_EXPECTED = "an Azure region name, e.g. 'westeurope' or 'West Europe'"
RANGE_PREFIX = 28


def fqdn_problem(value: str, min_labels: int = 2) -> t.Optional[str]:
    """Why ``value`` is not an RFC 1123 host name of at least ``min_labels`` labels (2: an FQDN),
    or None when it is one."""
    if not value or len(value) > 253:
        return "is empty or longer than 253 characters"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return "contains whitespace or control characters"
    foreign = next(((pos, ch) for pos, ch in enumerate(value) if ord(ch) > 127), None)
    if foreign is not None:
        # A look-alike letter (Cyrillic 'а' for 'a') prints like the real one: show code points, never the letter.
        pos, ch = foreign
        label = next(label for label in value.split(".") if ch in label)
        return ("has an invalid label %s: the non-ASCII character U+%04X (%s) at position %d (host names are ASCII "
                "letters, digits and '-'; a look-alike letter?)"
                % (show_value(label), ord(ch), unicodedata.name(ch, "unnamed"), pos))
    # One trailing dot (an absolute name) is fine; 'a.b..' is an empty label, not a root.
    labels = (value[:-1] if value.endswith(".") else value).split(".")
    if len(labels) < min_labels:
        return "is not fully qualified (needs at least two labels)"
    bad = [label for label in labels if not LABEL_RE.match(label)]
    if bad:
        return "has an invalid label %r" % bad[0]
    if labels[-1].isdigit():
        return "has an all-numeric top-level label"
    return None


def deployment_label(name: t.Any, host: t.Optional[str] = None) -> str:
    """How messages call a deployment: its name, or (missing or unsafe) what it is and who sees it."""
    if isinstance(name, str) and NAME_RE.match(name):
        return name
    what = "without a name" if name is None else "with the invalid name %s" % show_value(name)
    return "(%s%s)" % (what, ", as host %s sees it" % host if host else "")


class _Rules:
    """The rules for one deployment; each method covers one part of the contract."""

    def __init__(self, deployment: Deployment, catalog: RegionCatalog, findings: Findings) -> None:
        self.d = deployment
        self.catalog = catalog
        self.f = findings
        # Fields that failed to parse were already reported; rules skip checks that would only
        # repeat that fault in other words (e.g. "0 service regions" after "service_regions is missing").
        self.bad = {finding.path for finding in findings.errors}

    def run(self) -> None:
        if "commsgw_deployment" in self.bad:
            return  # not even a mapping: nothing parsed, every rule would only restate that
        self.identity()
        self.shape()
        self.pairing()
        self.management_region()
        self.azure_regions()
        self.hostnames()
        self.ip_ranges()
        self.transport_and_routing()
        self.emergency()
        self.mcp()
        self.sbcs()

    # -- small helpers -------------------------------------------------------------------------
    def _name(self, path: str, value: t.Any) -> bool:
        if isinstance(value, str) and not NAME_RE.match(value):
            self.f.error(path, "is not a safe name", NAME_EXPECTED, value)
            return False
        return True

    def _fqdn(self, path: str, value: t.Any, rule: str) -> bool:
        if not isinstance(value, str):
            return False
        problem = fqdn_problem(value)
        if problem:
            self.f.error(path, problem, FQDN_EXPECTED, value, rule)
            return False
        return True

    def _unique(self, items: t.Iterable[tuple[str, t.Any]], what: str, rule: str = "", fold: bool = False) -> None:
        """Report repeats; ``fold`` compares case-insensitively (names become file names and identifiers)."""
        seen: dict[t.Any, str] = {}
        for path, value in items:
            if value is None:
                continue
            key = value.lower() if fold and isinstance(value, str) else value
            if key in seen:
                self.f.error(path, "repeats the %s of %s" % (what, seen[key]), "a distinct %s" % what, value, rule)
            else:
                seen[key] = path

    # -- rules -------------------------------------------------------------------------------
    def identity(self) -> None:
        self._name("name", self.d.name)
        if self.d.type is not None and self.d.type not in DEPLOYMENT_TYPES:
            self.f.error("type", "is not a deployment type", " or ".join(DEPLOYMENT_TYPES), self.d.type)
        self._fqdn("base_domain", self.d.base_domain, "R-21")

    def shape(self) -> None:
        regions, sites = len(self.d.service_regions), len(self.d.sites)
        if "service_regions" in self.bad:
            regions = None
        if "sites" in self.bad:
            sites = None
        if self.d.type == "production":
            if regions not in (None, 2):
                self.f.error("service_regions", "a production deployment has %d service region(s)" % regions,
                             "exactly 2 service regions", regions, "R-01")
            if sites not in (None, 2):
                self.f.error("sites", "a production deployment has %d operator site(s)" % sites,
                             "exactly 2 geographically redundant sites", sites, "R-03")
        elif self.d.type == "lab":
            if regions not in (None, 1):
                self.f.error("service_regions", "a lab deployment has %d service region(s)" % regions,
                             "exactly 1 service region", regions, "R-02")
            if sites not in (None, 1):
                self.f.error("sites", "a lab deployment has %d operator site(s)" % sites,
                             "exactly 1 operator site", sites, "R-02")
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

    def transport_and_routing(self) -> None:
        transport = self.d.acg_transport
        if transport not in ACG_TRANSPORTS:
            self.f.error("acg_transport", "is not a transport", " or ".join(ACG_TRANSPORTS), transport, "R-09")
        elif transport != "tls" and not self.d.allow_plain_transport:
            self.f.error("acg_transport", "is plain %s without allow_plain_transport: true" % transport.upper(),
                         "tls (plain UDP/TCP only where a lab or test deployment explicitly allows it)", transport,
                         "R-09")
        elif transport != "tls" and self.d.type == "production":
            self.f.warn("acg_transport", "is plain %s in a production-type deployment" % transport.upper(),
                        "tls: plain transport is for test rigs only, real ACG accepts TLS only", transport, "R-09")
        elif transport != "tls":
            self.f.warn("acg_transport", "is plain %s: real ACG accepts TLS only" % transport.upper(),
                        "tls outside a closed lab", transport, "R-09")
        if self.d.allow_non_public_ranges and self.d.type == "production":
            self.f.warn("allow_non_public_ranges", "is set on a production deployment",
                        "public ACG ranges in production", True, "R-07")
        for key, (low, high) in ROUTING_LIMITS.items():
            value = self.d.routing.get(key)
            if isinstance(value, int) and not low <= value <= high:
                self.f.error("routing." + key, "is out of range", "an integer from %d to %d" % (low, high), value,
                             "R-13" if key != "invite_timer_ms" else "R-14")

    def emergency(self) -> None:
        if not self.d.emergency_dial_strings:
            self.f.warn("emergency_dial_strings", "is empty: nothing keeps emergency calls off the ACG trunks",
                        "your network's emergency numbers, e.g. ['112', '999']", [], "R-25")
        for index, value in enumerate(self.d.emergency_dial_strings):
            if not isinstance(value, str) or not DIAL_STRING_RE.match(value):
                self.f.error("emergency_dial_strings[%d]" % index, "is not a dial string",
                             "digits with an optional leading '+', quoted in YAML (e.g. '112')", value, "R-25")

    def mcp(self) -> None:
        with_mcp = [r for r in self.d.service_regions if r.mcp_hostname is not None]
        if self.d.mcp_given and not with_mcp and "service_regions" not in self.bad \
                and not any(r.path + ".mcp_hostname" in self.bad for r in self.d.service_regions):
            self.f.warn("mcp", "is set but no service region has an mcp_hostname: these settings do nothing",
                        "an mcp_hostname in every service region (from the Azure portal), or no mcp block", None,
                        "R-18")
        if with_mcp and len(with_mcp) != len(self.d.service_regions):
            for region in self.d.service_regions:
                # A present but mistyped mcp_hostname was reported as such, not as missing.
                if region.mcp_hostname is None and region.path + ".mcp_hostname" not in self.bad \
                        and region.path not in self.bad:
                    self.f.error(region.path + ".mcp_hostname", "is missing while another region has MCP",
                                 "an MCP hostname for every service region (from the Azure portal)", None, "R-18")
        if self.d.mcp.policy not in MCP_POLICIES:
            self.f.error("mcp.policy", "is not an MCP 5xx policy", " or ".join(MCP_POLICIES), self.d.mcp.policy,
                         "R-20")
        hold = self.d.mcp.hold_down_s
        if isinstance(hold, int) and not 1 <= hold <= 3600:
            self.f.error("mcp.hold_down_s", "is out of range", "an integer from 1 to 3600 seconds", hold, "R-19")
        hop = self.d.mcp.continue_next_hop
        if hop is not None and not self._next_hop_ok(hop):
            self.f.error("mcp.continue_next_hop", "is not a next hop", "host or IPv4 with an optional :port", hop,
                         "R-20")
        if with_mcp and self.d.mcp.policy == "continue" and hop is None:
            self.f.error("mcp.continue_next_hop", "is missing for the 'continue' policy",
                         "where calls go without ACG, e.g. core.example.net:5060", None, "R-20")
        self._mcp_match()
        all_failed = self.d.mcp.on_all_failed
        if all_failed is not None and all_failed not in MCP_ALL_FAILED:
            self.f.error("mcp.on_all_failed", "is not an MCP all-failed action", " or ".join(MCP_ALL_FAILED),
                         all_failed, "R-19")
        elif with_mcp and all_failed == "continue" and hop is None and self.d.mcp.policy != "continue":
            # (policy continue without a next hop was reported just above)
            self.f.error("mcp.continue_next_hop", "is missing for on_all_failed: continue",
                         "where calls go without ACG, e.g. core.example.net:5060", None, "R-19")

    def _mcp_match(self) -> None:
        """How MCP-bound requests are recognised (docs/mcp.md): a non-empty list of known criteria."""
        match = self.d.mcp.match
        if not isinstance(match, list):
            return  # a wrong type was reported by the parser
        if not match and "mcp.match" not in self.bad:
            self.f.error("mcp.match", "is empty: no request would ever reach MCP",
                         "one or more of: " + ", ".join(MCP_MATCHES), [], "R-18")
        for index, value in enumerate(match):
            if value not in MCP_MATCHES:
                self.f.error("mcp.match[%d]" % index, "is not an MCP match criterion",
                             "one of: " + ", ".join(MCP_MATCHES), value, "R-18")
        self._unique((("mcp.match[%d]" % i, v) for i, v in enumerate(match) if isinstance(v, str)), "criterion")

    @staticmethod
    def _next_hop_ok(value: str) -> bool:
        try:
            host = split_host_port(value).host
        except HostPortError:
            return False
        if not NEXT_HOP_HOST_RE.match(host):
            return False
        try:
            ipaddress.IPv4Address(host)
            return True
        except ValueError:
            return fqdn_problem(host) is None

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
            if sbc.platform not in platform_names():
                self.f.error(sbc.path + ".commsgw_sbc_platform", "is not a supported SBC platform",
                             "one of the registered platforms: " + ", ".join(platform_names()), sbc.platform)
        for site in self.d.sites:
            if site.name is not None and site.name not in served:
                self.f.error(site.path, "has no SBC host in the inventory",
                             "at least one host with commsgw_site: %s" % site.name, site.name, "R-03")


def validate_deployment(raw: t.Any, sbcs: t.Sequence[Sbc] = (),
                        catalog: t.Optional[RegionCatalog] = None) -> tuple[Deployment, Findings]:
    """Parse and check one deployment; return the model and every finding."""
    findings = Findings()
    deployment = parse_deployment(raw, sbcs, findings)
    _Rules(deployment, catalog or load_catalog(), findings).run()
    check_srv_limits(deployment, findings)  # issue 13: bounds on SRV records (srv_bounds)
    return deployment, findings
