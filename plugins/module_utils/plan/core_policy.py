# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Core-side policy of one SBC: who may send through it (source ACL) and what numbers leave it (R-26).

Two ``commsgw_sbc`` fields, parsed here into neutral policy (``implicit_core_sources``,
``normalisation_rules``, ``E164_REGEX``) that each platform spells in its own configuration:

``core_allowed_sources``   list of IPv4 CIDRs (a bare address means /32): the operator core's
                           elements allowed to send requests to ``core_listen``. Every request
                           arriving on the core side, initial or in-dialog, CANCEL and OPTIONS included,
                           from any other source is refused with 403 (ACK: dropped). The core next hop
                           (``core_next_hop``) and the MCP ``continue_next_hop`` are allowed
                           implicitly when they are IPv4 addresses (they send the in-dialog requests
                           of calls the SBC routed to them); a host name cannot be, so it must be
                           listed (a warning says so). Absent: no core ACL at all, with a warning
                           (toll-fraud risk), and an error in a production-type deployment;
                           ``[]``: only the implicit next hops. No network may be wider than a /8,
                           nor may the list together cover more addresses than one /8 (``WIDEST_PREFIX``).
``number_normalisation``   optional mapping ``country_code`` (1-3 digits), ``national_prefix``,
                           ``international_prefix`` (digit strings, quoted in YAML): how a non-E.164
                           Request-URI user part of an initial request towards ACG is rewritten
                           (international prefix -> "+", else national prefix -> "+<country code>").
                           Whatever is still not E.164 afterwards (or always, without this setting)
                           is refused with 484; it is never sent to ACG as is (R-26).
"""

from __future__ import annotations

import ipaddress
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.core.host_port import split_host_port

# "+" then up to 15 digits; E.164 country codes never start with 0.
E164_REGEX = "^\\+[1-9][0-9]{1,14}$"
E164_REPLY = (484, "Address Incomplete (E.164 Number Required)")
# \Z, not $: a trailing newline would reach a platform's configuration inside a string or a pattern.
_DIGITS = re.compile(r"^[0-9]+\Z")
NORMALISATION_FIELDS = ("country_code", "national_prefix", "international_prefix")
# The widest core ACL accepted: no network wider than a /8, and no more addresses in all than one /8 holds
# (16777216). A /8 is the largest block one organisation holds (10.0.0.0/8 is all of RFC 1918's largest
# range); anything wider spans other organisations' address space and is no longer "the operator core's
# elements": an ACL in name only (0.0.0.0/1 + 128.0.0.0/1 is 0.0.0.0/0 in two halves). The total counts
# the union, so overlapping entries are not counted twice.
WIDEST_PREFIX = 8
MAX_CORE_ADDRESSES = 2 ** (32 - WIDEST_PREFIX)
CORE_SOURCES_EXPECTED = "the operator core's source networks as IPv4 CIDRs, e.g. [192.0.2.0/28]"


def parse_core_allowed_sources(raw: t.Any, path: str, next_hop: t.Optional[t.Mapping[str, t.Any]],
                               findings: Findings, required: bool = False) -> t.Optional[list[str]]:
    """``commsgw_sbc.core_allowed_sources`` -> normalised CIDR strings, or None when absent.

    Absent is a warning, or an error when ``required`` (a production-type deployment)."""
    if raw is None:
        if required:
            findings.error(path, "is missing in a production deployment: without it any source that reaches "
                           "core_listen can send calls through ACG (toll fraud)", CORE_SOURCES_EXPECTED)
        else:
            findings.warn(path, "is not set: any source that reaches core_listen can send calls through ACG "
                          "(toll fraud)", CORE_SOURCES_EXPECTED)
        return None
    if not isinstance(raw, list):
        findings.error(path, "is not a list", "a list of IPv4 CIDRs such as 192.0.2.0/28", raw)
        return None
    networks: list[ipaddress.IPv4Network] = []
    for index, item in enumerate(raw):
        network = _core_network(item, "%s[%d]" % (path, index), findings)
        if network is not None and network not in networks:
            networks.append(network)
    total = sum(n.num_addresses for n in ipaddress.collapse_addresses(networks))
    if total > MAX_CORE_ADDRESSES:
        findings.error(path, "allows %d source addresses in all, more than one /%d holds (%d)"
                       % (total, WIDEST_PREFIX, MAX_CORE_ADDRESSES),
                       "the operator core's own networks, %d addresses at most in all" % MAX_CORE_ADDRESSES,
                       raw)
    if next_hop is not None and _ipv4(next_hop.get("host")) is None:
        findings.warn(path, "does not cover core_next_hop implicitly: %s is a host name" % next_hop["host"],
                      "the addresses of core_next_hop listed here (it sends the in-dialog requests of calls "
                      "from ACG)", raw)
    return [str(network) for network in networks]


def _core_network(item: t.Any, path: str, findings: Findings) -> t.Optional[ipaddress.IPv4Network]:
    """One entry of core_allowed_sources, or None (reported) when it is no network or too wide."""
    if not isinstance(item, str):
        findings.error(path, "is not a string", "an IPv4 CIDR such as 192.0.2.0/28", item)
        return None
    try:
        network = ipaddress.IPv4Network(item.strip(), strict=True)
    except ValueError as exc:
        hint = " (host bits set)" if "host bits" in str(exc) else ""
        findings.error(path, "is not an IPv4 network%s" % hint,
                       "an IPv4 CIDR with its network address, e.g. 192.0.2.0/28 or 192.0.2.7/32", item)
        return None
    if network.prefixlen == 0:
        findings.error(path, "allows every source", "the operator core's own networks (outside production, leave "
                       "the field out to run without a core ACL, with a warning)", item)
        return None
    if network.prefixlen < WIDEST_PREFIX:
        findings.error(path, "is wider than a /%d (%d addresses): that is not the operator core's own network"
                       % (WIDEST_PREFIX, network.num_addresses),
                       "networks of /%d or narrower (more specific), e.g. 10.20.0.0/16" % WIDEST_PREFIX, item)
        return None
    return network


def parse_number_normalisation(raw: t.Any, path: str, findings: Findings) -> t.Optional[dict[str, str]]:
    """``commsgw_sbc.number_normalisation`` -> {country_code, national_prefix, international_prefix}."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        findings.error(path, "is not a mapping", "a mapping with: " + ", ".join(NORMALISATION_FIELDS), raw)
        return None
    result: dict[str, str] = {}
    ok = True
    for key in raw:
        if key not in NORMALISATION_FIELDS:
            findings.error("%s.%s" % (path, key), "is not a known field", "one of: " + ", ".join(NORMALISATION_FIELDS),
                           raw[key])
            ok = False
    country = raw.get("country_code")
    if _is_int(country):
        country = str(country)
    if not isinstance(country, str) or not _DIGITS.match(country) or len(country) > 3 or country.startswith("0"):
        findings.error(path + ".country_code", "is not an E.164 country code", "1 to 3 digits, not starting "
                       "with 0, e.g. '49'", raw.get("country_code"))
        ok = False
    else:
        result["country_code"] = country
    for key in ("national_prefix", "international_prefix"):
        value = raw.get(key)
        if value is None:
            if key == "national_prefix":
                findings.error("%s.%s" % (path, key), "is missing", "the national trunk prefix as a quoted string, "
                               "e.g. '0'")
                ok = False
            continue
        if not isinstance(value, str) or not _DIGITS.match(value) or len(value) > 4:
            findings.error("%s.%s" % (path, key), "is not a dialling prefix",
                           "1 to 4 digits as a quoted string (YAML reads 00 as the number 0), e.g. '00'", value)
            ok = False
            continue
        result[key] = value
    if ok and result.get("international_prefix") == result.get("national_prefix"):
        findings.error(path + ".international_prefix", "is the same as national_prefix",
                       "different prefixes (e.g. national '0', international '00')", result["international_prefix"])
        ok = False
    return result if ok else None


def implicit_core_sources(settings: t.Mapping[str, t.Any], mcp_hop: t.Optional[str]) -> list[tuple[str, str]]:
    """(name, IPv4 address) of each next hop the core ACL admits without being listed: the core next hop and the MCP
    ``continue_next_hop`` when they are IPv4 addresses outside every ``core_allowed_sources`` network (they send the
    in-dialog requests of calls the SBC routed to them). Empty without a core ACL."""
    sources = settings.get("core_allowed_sources")
    if sources is None:
        return []
    hops = [("core_next_hop", (settings.get("core_next_hop") or {}).get("host")),
            ("mcp_continue_next_hop", split_host_port(mcp_hop).host if mcp_hop else "")]
    found = []
    for name, host in hops:
        address = _ipv4(host)
        if address is not None and not any(ipaddress.IPv4Address(address) in ipaddress.IPv4Network(c)
                                           for c in sources):
            found.append((name, address))
    return found


def normalisation_rules(settings: t.Mapping[str, t.Any]) -> list[tuple[str, str]]:
    """R-26's rewrites of a non-E.164 number, in the order they apply: (dialled prefix, what replaces it). The
    international prefix first: it may start with the national one ('00' vs '0'). Empty without
    ``number_normalisation``."""
    norm = settings.get("number_normalisation")
    if not norm:
        return []
    prefixes = [(norm.get("international_prefix"), "+"), (norm["national_prefix"], "+" + norm["country_code"])]
    return sorted(((p, r) for p, r in prefixes if p), key=lambda pr: -len(pr[0]))


def _ipv4(host: t.Any) -> t.Optional[str]:
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        return None


def _is_int(value: t.Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
