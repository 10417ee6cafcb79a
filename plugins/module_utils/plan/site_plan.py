# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The routing plan: the one platform-neutral description of how a site talks to ACG.

Every renderer and the probe consume this structure and nothing else; no routing decision is made
downstream. ``docs/routing-plan.md`` documents each field. The plan is plain JSON-serialisable data
and deterministic: the same inventory (and SRV answers) always give the same plan.
"""

from __future__ import annotations

import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment, ServiceRegion, Site
from ansible_collections.commsgw.routing.plugins.module_utils.srv.bounds import deployment_limits
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import (
    canonical_targets, normalise_fqdn, target_from_dict)

SCHEMA_VERSION = 1
# Response codes ACG asks us to retry on another local peer; every other final error is relayed
# to the caller unchanged.
RETRY_CODES = (408, 503, 504)
# ACG's published SIP size limits.
LIMITS = {"max_message_bytes": 10240, "max_request_uri_bytes": 256, "max_contact_uri_bytes": 256}
PROVISIONING_API_MAX_TTL_S = 60
PROVISIONING_API_RETRY_AFTER_S = 60
MCP_RECORD_SELECTION = "named_hostname_else_local"
# Reply when no MCP target is left and the call is not continued: a 5xx lets an IMS core apply the
# iFC's default handling (session continued) itself.
MCP_REJECT_CODE = 503


def srv_name(hostname: str) -> str:
    """The SRV record that lists a region's SIP peers (R-10)."""
    return "_sip._tls." + normalise_fqdn(hostname)


def record_ranges(deployment: Deployment, region: ServiceRegion, purpose: str) -> list[str]:
    """The one /28 rule: the ranges the targets of one of ``region``'s SRV records may lie in, sorted.

    ``sip``: the region's own /28s (R-07). ``mcp``: every /28 of the deployment, since a region's MCP
    record also lists the other region's MCP at a lower priority (R-18). Validation, the plan (and so
    the renderer, the SRV refresher and the probe) all take the set from here.
    """
    if purpose == "sip":
        ranges = list(region.ip_ranges)
    elif purpose == "mcp":
        ranges = [n for r in deployment.service_regions for n in r.ip_ranges]
    else:
        raise ValueError("record_ranges: purpose %r is not 'sip' or 'mcp'" % (purpose,))
    return sorted(dict.fromkeys(ranges), key=ipaddress.ip_network)


def _tls(hostname: str, transport: str) -> t.Optional[dict[str, str]]:
    """R-24: SNI and certificate check use the regional (or MCP) hostname, never the SRV target."""
    return {"sni": hostname, "verify_hostname": hostname, "min_version": "TLSv1.2"} if transport == "tls" else None


def _peers(name: str, resolved: t.Mapping[str, t.Any]) -> t.Optional[list[dict[str, t.Any]]]:
    """The resolved SRV targets of ``name`` in canonical order, or None when not resolved."""
    answer = resolved.get(name)
    if answer is None:
        return None
    return [target.as_dict() for target in canonical_targets(target_from_dict(raw) for raw in answer["targets"])]


def _trunk_group(deployment: Deployment, order: int, role: str, region: ServiceRegion, transport: str,
                 resolved: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    hostname = normalise_fqdn(region.hostname)
    name = srv_name(hostname)
    answer = resolved.get(name)
    return {
        "order": order,
        "role": role,
        "region": region.name,
        "azure_region": region.azure_region,
        "hostname": hostname,
        "srv_name": name,
        "transport": transport,
        "tls": _tls(hostname, transport),
        "ip_ranges": record_ranges(deployment, region, "sip"),
        "srv_ttl": None if answer is None else int(answer["ttl"]),
        "peers": _peers(name, resolved),
    }


def _ordered_regions(deployment: Deployment, site: Site) -> list[tuple[str, ServiceRegion]]:
    local = deployment.region_named(site.service_region)
    if local is None:  # validation guarantees a paired region; no silent fallback if it was skipped
        raise ValueError("site %s names no service region: plan built from an invalid deployment" % site.name)
    others = [r for r in deployment.service_regions if r is not local]
    return [("local", local)] + [("remote", r) for r in others]


def _mcp(deployment: Deployment, ordered: list[tuple[str, ServiceRegion]],
         resolved: t.Mapping[str, t.Any]) -> t.Optional[dict[str, t.Any]]:
    if not any(r.mcp_hostname for _role, r in ordered):
        return None
    records = []
    for order, (role, region) in enumerate(ordered, start=1):
        hostname = normalise_fqdn(region.mcp_hostname)
        name = srv_name(hostname)
        answer = resolved.get(name)
        records.append({"order": order, "role": role, "region": region.name, "hostname": hostname, "srv_name": name,
                        "tls": _tls(hostname, deployment.acg_transport),
                        "ip_ranges": record_ranges(deployment, region, "mcp"),
                        "srv_ttl": None if answer is None else int(answer["ttl"]), "peers": _peers(name, resolved)})
    return {
        # MCP is reached like the ACG trunks: same transport, TLS names per record.
        "transport": deployment.acg_transport,
        # each region's MCP record already lists the other region's MCP at a lower priority, so
        # the local record alone gives the cross-region fallback; the remote record is kept for the
        # probe and for when the local record cannot be resolved.
        "records": records,
        "options_probing": False,  # MCP does not answer OPTIONS
        "hold_down_s": deployment.mcp.hold_down_s,
        "policy_on_5xx": deployment.mcp.policy,
        "continue_next_hop": deployment.mcp.continue_next_hop,
        # How MCP-bound requests are recognised (docs/mcp.md): the iFC's ServerName
        # (sips:<mcp-hostname>;...;service=mcp) arrives as the top Route header.
        "match": list(dict.fromkeys(deployment.mcp.match)),
        # The record used for a request: the one whose MCP hostname the request names (the iFC names the
        # subscriber's preferred region), else the local one. Never both (R-18: no second cross-region hop).
        "record_selection": MCP_RECORD_SELECTION,
        "fallback_record": _mcp_fallback(records),
        # no MCP target left (all held down or all failed): continue without ACG, or refuse.
        "on_all_failed": _mcp_all_failed(deployment),
        "reject_code": MCP_REJECT_CODE,
    }


def _mcp_fallback(records: t.Sequence[t.Mapping[str, t.Any]]) -> t.Optional[int]:
    """``order`` of the record a request uses when it names no MCP hostname, or names one whose record
    resolved to no target: the local record, unless it resolved to nothing, then the next one that did
    not. An unresolved record (``peers: null``) counts as usable: nothing says it is empty. None when
    every record resolved to no target."""
    return next((int(r["order"]) for r in records if r["peers"] is None or r["peers"]), None)


def _mcp_all_failed(deployment: Deployment) -> str:
    if deployment.mcp.on_all_failed is not None:
        return str(deployment.mcp.on_all_failed)
    # Default: continue when there is somewhere to continue to, else a clear error.
    return "continue" if deployment.mcp.continue_next_hop else "reject"


def build_site_plan(deployment: Deployment, site: Site,
                    resolved: t.Optional[t.Mapping[str, t.Any]] = None) -> dict[str, t.Any]:
    """The routing plan of one site. ``resolved`` maps SRV names to SRV answers (``SrvAnswer.as_dict``)."""
    resolved = resolved or {}
    ordered = _ordered_regions(deployment, site)
    routing = deployment.routing
    return {
        "schema_version": SCHEMA_VERSION,
        "deployment": {"name": deployment.name, "type": deployment.type,
                       "base_domain": normalise_fqdn(deployment.base_domain),
                       "management_region": deployment.management_region},
        "site": {"name": site.name, "local_region": site.service_region},
        "sbcs": sorted(({"host": s.host, "platform": s.platform} for s in deployment.sbcs if s.site == site.name),
                       key=lambda s: s["host"]),
        # local region first, then the other region (production only).
        "trunk_groups": [_trunk_group(deployment, order, role, region, deployment.acg_transport, resolved)
                         for order, (role, region) in enumerate(ordered, start=1)],
        # RFC 2782 priority then weighted choice within a trunk group.
        "selection": "rfc2782",
        "health": {
            "method": "OPTIONS",
            "interval_s": routing["options_interval_s"],
            "failure_threshold": routing["failure_threshold"],
            "recovery_threshold": routing["recovery_threshold"],
            "window_s": routing["options_interval_s"] * routing["failure_threshold"],
        },
        "retry": {  # R-14..R-17
            "retry_codes": list(RETRY_CODES),
            "retry_on_no_response": True,
            # A branch that rang and then timed out is ring-no-answer, not a dead peer.
            "retry_after_provisional_timeout": False,
            "invite_timer_ms": routing["invite_timer_ms"],
            "scope": "local_trunk_group_first",
            "hunt_next_group": "only_when_every_peer_of_the_group_failed",
            "other_errors": "relay_unchanged",
        },
        "acl": {  # every /28 of the deployment, from every region.
            # the range's regional hostname is the TLS name (SNI, certificate host) of any ACG peer in it,
            # kept per range so that a region migration can give old and new ranges different names.
            "ranges": sorted(({"network": n, "region": r.name, "hostname": normalise_fqdn(r.hostname)}
                              for r in deployment.service_regions for n in r.ip_ranges),
                             key=lambda e: (ipaddress.ip_network(e["network"]), e["region"])),
        },
        "mcp": _mcp(deployment, ordered, resolved),
        "emergency": {"dial_strings": sorted(set(deployment.emergency_dial_strings)), "route_to_acg": False},
        "limits": dict(LIMITS),
        # Bounds of every SRV record (srv_lookup.SrvLimits): the refresher and the probe hold answers to them.
        "srv_limits": deployment_limits(deployment).as_dict(),
        "provisioning_api": {
            "hostname": "provapi." + normalise_fqdn(deployment.base_domain),
            "max_ttl_s": PROVISIONING_API_MAX_TTL_S,
            "retry_after_s": PROVISIONING_API_RETRY_AFTER_S,
        },
    }
