# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The policy rows of the Mediant rendering: who may send (Classification), which numbers leave
(Inbound Manipulation, IP-to-IP Routing) and where calls go (IP-to-IP Routing).

* R-08: one Classification rule per source pattern of every ACG /28 on the ACG-facing SIP Interface
  (the table has no CIDR: ``patterns.network_patterns``), classifying to that range's region; then a
  deny rule for every other source there. The core side likewise from ``core_allowed_sources`` (plus
  the IPv4 next hops, as Kamailio allows them implicitly), or one allow-all rule without it.
* R-26: the optional number normalisation as Inbound Manipulation rules of the core IP Group (the
  longer prefix first); then only E.164 user parts route to ACG: one rule per length (``+[10..-99..]#``).
* R-12/R-15: each E.164 rule routes to the local trunk group; the rule right below it is its
  alternative to the next group ("alternative route, consider inputs"): used only when the main
  route failed, i.e. hot swap went through every local peer (R-14) or none is online (R-13).
* R-25: emergency dial strings are answered by the device itself before any ACG rule.
* R-18..R-20: Request-URI-host matching of MCP records where the plan allows it; the rest is a gap.

Standard library only.
"""

from __future__ import annotations

import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.patterns import (
    e164_prefixes, network_patterns)
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import RenderError, Rows, checked

ANY_SOURCE = "*.*.*.*"
E164_REPLY = 484          # core_policy.E164_REPLY: not E.164 -> refused locally
MCP_REJECT_NAME = "CGW-MCP-REJECT"


def _group_of_region(plan: t.Mapping[str, t.Any], region: str, field: str) -> str:
    for group in plan["trunk_groups"]:
        if group["region"] == region:
            return "CGW-ACG-%d-%s-%s" % (int(group["order"]), group["role"], region)
    raise RenderError(field, "region %s has no trunk group in this site's plan" % region)


def classification_rows(rows: Rows, plan: t.Mapping[str, t.Any], settings: t.Any, base: int,
                        gaps: list[dict[str, str]]) -> None:
    index = base
    for number, entry in enumerate(plan["acl"]["ranges"]):
        field = "acl.ranges[%d]" % number
        group = _group_of_region(plan, entry["region"], field + ".region")
        try:
            found = network_patterns(entry["network"])
        except ValueError as exc:
            raise RenderError(field + ".network", str(exc)) from exc
        for pattern in found:
            rows["classification"][(index,)] = _rule(index, settings.acg_interface, pattern, group, "allow",
                                                     field, settings.base)
            index += 1
    rows["classification"][(index,)] = _rule(index, settings.acg_interface, ANY_SOURCE, None, "deny", "acl",
                                             settings.base)
    index += 1
    sources = settings.core_allowed_sources
    core_field = settings.base + ".core_allowed_sources"
    if sources is None:
        rows["classification"][(index,)] = _rule(index, settings.core_interface, ANY_SOURCE, "CGW-CORE", "allow",
                                                 core_field, settings.base)
        gaps.append({"requirement": "R-26", "field": core_field,
                     "gap": "not set: every source reaching the core SIP Interface may call through ACG"})
        return
    networks: list[tuple[str, str]] = []
    for number, cidr in enumerate(sources):
        networks.append(("%s[%d]" % (core_field, number), cidr))
    hops = [(settings.base + ".core_next_hop", settings.core_next_hop),
            ("mcp.continue_next_hop", (plan.get("mcp") or {}).get("continue_next_hop") or "")]
    for field, hop in hops:
        host = hop.rpartition(":")[0] if ":" in hop else hop
        try:
            address = ipaddress.IPv4Address(host)
        except ValueError:
            continue  # a host name cannot be classified by address; listed sources must cover it
        if not any(address in ipaddress.IPv4Network(c, strict=False) for _f, c in networks if _valid(c)):
            networks.append((field, "%s/32" % address))
    for field, cidr in networks:
        try:
            found = network_patterns(cidr)
        except ValueError as exc:
            raise RenderError(field, "is %r, not an IPv4 network (%s)" % (cidr, exc)) from exc
        for pattern in found:
            rows["classification"][(index,)] = _rule(index, settings.core_interface, pattern, "CGW-CORE", "allow",
                                                     field, settings.base)
            index += 1
    rows["classification"][(index,)] = _rule(index, settings.core_interface, ANY_SOURCE, None, "deny", core_field,
                                             settings.base)


def _valid(cidr: str) -> bool:
    try:
        ipaddress.IPv4Network(cidr, strict=True)
        return True
    except ValueError:
        return False


def _rule(index: int, interface: str, pattern: str, group: t.Optional[str], action: str, field: str,
          base: str) -> dict[str, t.Any]:
    values: dict[str, t.Any] = {"classification-name": "CGW-ACL-%d" % index, "src-sip-interface-name": interface,
                                "src-ip-address": pattern, "action-type": action}
    if group:
        values["src-ip-group-name"] = group
    return checked("classification", values, {"src-sip-interface-name": base + ".sip_interfaces",
                                              "src-ip-address": field, "src-ip-group-name": field + ".region"})


def manipulation_rows(rows: Rows, settings: t.Any, base: int) -> None:
    """R-26 normalisation: international prefix -> "+", national prefix -> "+<country code>"; the longer
    prefix first (it may start with the shorter one), each only before a first digit 1-9."""
    norm = settings.normalisation
    if not norm:
        return
    field = settings.base + ".number_normalisation"
    rules = [(norm.get("international_prefix"), "+", "international_prefix"),
             (norm.get("national_prefix"), "+%s" % norm.get("country_code"), "national_prefix")]
    rules = sorted((r for r in rules if r[0]), key=lambda r: -len(str(r[0])))
    for offset, (prefix, replacement, key) in enumerate(rules):
        if not isinstance(prefix, str) or not prefix.isdigit():
            raise RenderError("%s.%s" % (field, key), "is %r, expected digits" % (prefix,))
        rows["inbound_manipulation"][(base + offset,)] = checked("inbound_manipulation", {
            "manipulation-name": "CGW-E164-%s" % key.split("_")[0].upper(), "src-ip-group-name": "CGW-CORE",
            "dst-user-name-prefix": "%s[1-9]" % prefix, "manipulated-uri": "destination",
            "remove-from-left": len(prefix), "prefix-to-add": replacement},
            {"dst-user-name-prefix": "%s.%s" % (field, key), "prefix-to-add": field + ".country_code"})


def routing_rows(rows: Rows, plan: t.Mapping[str, t.Any], settings: t.Any, base: int,
                 mcp_groups: t.Sequence[t.Mapping[str, t.Any]], gaps: list[dict[str, str]]) -> None:
    index = base

    def add(values: dict[str, t.Any], fields: t.Optional[dict[str, str]] = None) -> None:
        nonlocal index
        rows["ip2ip"][(index,)] = checked("ip2ip", values, fields or {})
        index += 1

    groups = sorted(plan["trunk_groups"], key=lambda g: int(g["order"]))
    names = ["CGW-ACG-%d-%s-%s" % (int(g["order"]), g["role"], g["region"]) for g in groups]
    for name in names + [m["name"] for m in mcp_groups]:  # from ACG (and MCP) to the operator core
        add({"route-name": "CGW-R%d" % index, "src-ip-group-name": name, "dst-type": "ip-group",
             "dst-ip-group-name": "CGW-CORE", "alt-route-options": "route-row"})
    reply = "reply(response='%d')" % settings.emergency_reply_code
    for number, dial in enumerate(plan["emergency"]["dial_strings"]):  # never to ACG
        for pattern in (dial + "#", "+" + dial + "#"):
            add({"route-name": "CGW-R%d" % index, "src-ip-group-name": "CGW-CORE", "dst-user-name-prefix": pattern,
                 "dst-type": "internal", "internal-action": reply, "alt-route-options": "route-row"},
                {"dst-user-name-prefix": "emergency.dial_strings[%d]" % number,
                 "internal-action": settings.base + ".emergency_reply_code"})
    _mcp_routes(add, plan, mcp_groups, gaps)
    for pattern in e164_prefixes():  # R-26 exact E.164, R-12 local group, R-15 the next only after it
        for position, name in enumerate(names):
            add({"route-name": "CGW-R%d" % index, "src-ip-group-name": "CGW-CORE", "dst-user-name-prefix": pattern,
                 "dst-type": "ip-group", "dst-ip-group-name": name,
                 "alt-route-options": "route-row" if position == 0 else "alt-route-consider-inputs"})
    add({"route-name": "CGW-R%d" % index, "src-ip-group-name": "CGW-CORE", "dst-user-name-prefix": "*",
         "dst-type": "internal", "internal-action": "reply(response='%d')" % E164_REPLY,
         "alt-route-options": "route-row"})


def _mcp_routes(add: t.Callable[..., None], plan: t.Mapping[str, t.Any], mcp_groups: t.Sequence[t.Mapping[str, t.Any]],
                gaps: list[dict[str, str]]) -> None:
    mcp = plan.get("mcp")
    if not mcp:
        return
    unsupported = [m for m in mcp["match"] if m != "request_uri_host"]
    if unsupported:
        gaps.append({"requirement": "R-18", "field": "mcp.match",
                     "gap": "%s: the IP-to-IP Routing table matches the Request-URI, not the top Route header; "
                            "only request_uri_host is rendered" % ", ".join(unsupported)})
    if "request_uri_host" not in mcp["match"]:
        return
    fallback = next((m for m in mcp_groups if m["order"] == mcp.get("fallback_record")), None)
    for record in mcp["records"]:
        target = next((m for m in mcp_groups if m["order"] == record["order"]), fallback)
        if target is None:
            continue
        add({"route-name": "CGW-MCP-%d" % int(record["order"]), "src-ip-group-name": "CGW-CORE",
             "dst-host": record["hostname"], "dst-type": "ip-group", "dst-ip-group-name": target["name"],
             "alt-route-options": "route-row"}, {"dst-host": "mcp.records[].hostname"})
        if mcp["on_all_failed"] == "continue" and mcp.get("continue_next_hop"):
            add({"route-name": "CGW-MCP-%d-C" % int(record["order"]), "src-ip-group-name": "CGW-CORE",
                 "dst-host": record["hostname"], "dst-type": "ip-group", "dst-ip-group-name": "CGW-MCP-CONT",
                 "alt-route-options": "alt-route-consider-inputs"})
        else:
            add({"route-name": "CGW-MCP-%d-R" % int(record["order"]), "src-ip-group-name": "CGW-CORE",
                 "dst-host": record["hostname"], "dst-type": "internal",
                 "internal-action": "reply(response='%d')" % int(mcp["reject_code"]),
                 "alt-route-options": "alt-route-consider-inputs"})
