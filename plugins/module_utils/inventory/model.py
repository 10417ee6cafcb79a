# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment model: what an operator writes in the inventory about one ACG deployment.

``parse_deployment`` turns the raw inventory mapping into typed objects and records every shape
problem (missing field, wrong type, unknown key) as a finding with its field path, so that the
semantic rules in ``validation`` can run on whatever did parse and report everything in one go.
"""

from __future__ import annotations

import dataclasses
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import DEFAULT_PLATFORM

DEPLOYMENT_TYPES = ("production", "lab")
ACG_TRANSPORTS = ("tls", "tcp", "udp")
MCP_POLICIES = ("retry", "continue")
# How the SBC recognises a request bound for MCP (docs/mcp.md). An S-CSCF invokes MCP as an AS through
# its iFC, whose ServerName is sips:<mcp-hostname>;transport=tcp;service=mcp: it becomes the top Route.
MCP_MATCHES = ("route_host", "route_service", "request_uri_host")
MCP_DEFAULT_MATCH = ("route_host", "route_service")
# What happens when no MCP target is left to try: send the call on without ACG, or refuse it.
MCP_ALL_FAILED = ("continue", "reject")

# Defaults an experienced operator would start from; every one is overridable in the inventory.
ROUTING_DEFAULTS: dict[str, int] = {
    "options_interval_s": 5,       # SIP OPTIONS ping period per ACG peer
    "failure_threshold": 2,        # unanswered pings before a peer is taken out
    "recovery_threshold": 1,       # answered pings before it is put back
    "invite_timer_ms": 2000,       # ACG-leg INVITE timer: no response by then -> next peer
}
ROUTING_LIMITS: dict[str, tuple[int, int]] = {
    "options_interval_s": (1, 300),
    "failure_threshold": (1, 10),
    "recovery_threshold": (1, 10),
    "invite_timer_ms": (500, 32000),
}
# on_all_failed None: "continue" when continue_next_hop is set, else "reject" (plan.py resolves it).
MCP_DEFAULTS: dict[str, t.Any] = {"policy": "retry", "hold_down_s": 30, "continue_next_hop": None,
                                  "match": list(MCP_DEFAULT_MATCH), "on_all_failed": None}
DEFAULT_EMERGENCY_DIAL_STRINGS = ("112", "911", "999")


@dataclasses.dataclass
class ServiceRegion:
    index: int
    name: t.Any = None
    azure_region: t.Any = None
    hostname: t.Any = None
    ip_ranges: list[t.Any] = dataclasses.field(default_factory=list)
    mcp_hostname: t.Any = None

    @property
    def path(self) -> str:
        return "service_regions[%d]" % self.index


@dataclasses.dataclass
class Site:
    index: int
    name: t.Any = None
    service_region: t.Any = None

    @property
    def path(self) -> str:
        return "sites[%d]" % self.index


@dataclasses.dataclass
class Sbc:
    """One SBC host of the inventory; ``path`` points at the host's variables."""

    host: str
    site: t.Any = None
    platform: t.Any = DEFAULT_PLATFORM

    @property
    def path(self) -> str:
        return "hosts[%s]" % self.host


@dataclasses.dataclass
class Mcp:
    policy: t.Any = MCP_DEFAULTS["policy"]
    hold_down_s: t.Any = MCP_DEFAULTS["hold_down_s"]
    continue_next_hop: t.Any = MCP_DEFAULTS["continue_next_hop"]
    match: t.Any = dataclasses.field(default_factory=lambda: list(MCP_DEFAULT_MATCH))
    on_all_failed: t.Any = MCP_DEFAULTS["on_all_failed"]


@dataclasses.dataclass
class Deployment:
    name: t.Any = None
    type: t.Any = None
    base_domain: t.Any = None
    management_region: t.Any = None
    allow_non_public_ranges: bool = False
    allow_plain_transport: bool = False
    acg_transport: t.Any = "tls"
    service_regions: list[ServiceRegion] = dataclasses.field(default_factory=list)
    sites: list[Site] = dataclasses.field(default_factory=list)
    routing: dict[str, t.Any] = dataclasses.field(default_factory=lambda: dict(ROUTING_DEFAULTS))
    emergency_dial_strings: list[t.Any] = dataclasses.field(
        default_factory=lambda: list(DEFAULT_EMERGENCY_DIAL_STRINGS))
    mcp: Mcp = dataclasses.field(default_factory=Mcp)
    # Whether the inventory wrote an ``mcp:`` block (its settings only act where regions have mcp_hostname).
    mcp_given: bool = False
    # Bounds of every SRV record (max_targets, ports); absent keys take srv_lookup.limits_for's defaults.
    srv_limits: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    sbcs: list[Sbc] = dataclasses.field(default_factory=list)

    def region_named(self, name: t.Any) -> t.Optional[ServiceRegion]:
        return next((r for r in self.service_regions if r.name == name), None)


_DEPLOYMENT_FIELDS = {
    "name": str, "type": str, "base_domain": str, "management_region": str,
    "allow_non_public_ranges": bool, "allow_plain_transport": bool, "acg_transport": str, "service_regions": list, "sites": list,
    "routing": dict, "emergency_dial_strings": list, "mcp": dict, "srv_limits": dict,
}
_REQUIRED_DEPLOYMENT = ("name", "type", "base_domain", "management_region", "service_regions", "sites")
_REGION_FIELDS = {"name": str, "azure_region": str, "hostname": str, "ip_ranges": list, "mcp_hostname": str}
_REQUIRED_REGION = ("name", "azure_region", "hostname", "ip_ranges")
_SITE_FIELDS = {"name": str, "service_region": str}
_TYPE_NAMES = {str: "a string", bool: "true or false", list: "a list", dict: "a mapping", int: "an integer"}
# Fields operators reach for that the contract fixes: refused with the reason, not as a mere typo.
_FIXED_FIELDS = {
    "routing.retry_codes": ("is not configurable: the retry set is fixed by ACG",
                            "no retry_codes; the SBC retries 408, 503, 504 and no answer on another local peer "
                            "(R-14) and never retries any other error (R-16)", "R-16"),
}


def _read_mapping(raw: t.Any, path: str, fields: dict[str, type], required: t.Iterable[str],
                  findings: Findings) -> dict[str, t.Any]:
    """Return the well-typed fields of ``raw``; report missing, unknown and mistyped ones."""
    if not isinstance(raw, dict):
        findings.error(path or "commsgw_deployment", "is not a mapping", "a mapping of fields", raw)
        return {}
    prefix = path + "." if path else ""
    for key in required:
        if raw.get(key) is None:
            findings.error(prefix + str(key), "is missing", "a value (%s)" % _TYPE_NAMES[fields[key]])
    good: dict[str, t.Any] = {}
    for key, value in raw.items():
        where = prefix + str(key)
        if where in _FIXED_FIELDS:
            message, expected, rule = _FIXED_FIELDS[where]
            findings.error(where, message, expected, value, rule)
            continue
        if key not in fields:
            findings.error(where, "is not a known field", "one of: " + ", ".join(sorted(fields)), value)
            continue
        if value is None:
            continue
        want = fields[key]
        # bool is an int in Python; a YAML 'yes' must not pass as a number or the reverse.
        if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
            findings.error(where, "has the wrong type", _TYPE_NAMES[want], value)
            continue
        good[key] = value
    return good


def parse_deployment(raw: t.Any, sbcs: t.Sequence[Sbc], findings: Findings) -> Deployment:
    fields = _read_mapping(raw, "", _DEPLOYMENT_FIELDS, _REQUIRED_DEPLOYMENT, findings)
    deployment = Deployment(sbcs=list(sbcs))
    for key in ("name", "type", "base_domain", "management_region", "acg_transport",
                "allow_non_public_ranges", "allow_plain_transport", "emergency_dial_strings"):
        if key in fields:
            setattr(deployment, key, fields[key])
    for index, raw_region in enumerate(fields.get("service_regions", [])):
        region_fields = _read_mapping(raw_region, "service_regions[%d]" % index, _REGION_FIELDS,
                                      _REQUIRED_REGION, findings)
        deployment.service_regions.append(ServiceRegion(index=index, **region_fields))
    for index, raw_site in enumerate(fields.get("sites", [])):
        site_fields = _read_mapping(raw_site, "sites[%d]" % index, _SITE_FIELDS, ("name", "service_region"),
                                    findings)
        deployment.sites.append(Site(index=index, **site_fields))
    routing = _read_mapping(fields.get("routing", {}), "routing", dict.fromkeys(ROUTING_DEFAULTS, int), (),
                            findings)
    deployment.routing.update(routing)
    mcp = _read_mapping(fields.get("mcp", {}), "mcp",
                        {"policy": str, "hold_down_s": int, "continue_next_hop": str, "match": list,
                         "on_all_failed": str}, (), findings)
    # A fresh default list per deployment: plans must never share mutable state.
    deployment.mcp = Mcp(**{**MCP_DEFAULTS, "match": list(MCP_DEFAULT_MATCH), **mcp})
    deployment.mcp_given = "mcp" in fields
    deployment.srv_limits = _read_mapping(fields.get("srv_limits", {}), "srv_limits",
                                          {"max_targets": int, "ports": list}, (), findings)
    return deployment
