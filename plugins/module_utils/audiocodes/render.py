# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routing plan + the host's Mediant settings -> the rows, the incremental CLI script and the ini tables.

``render(plan, settings)`` decides nothing: every value comes from the plan or the settings, and
docs/platforms/audiocodes.md maps each plan field to the row it becomes. The result (``Artefacts``):

``rows``    the wanted configuration in CLI terms (``rows.Rows``), the push diffs against it
``cli``     the full incremental CLI script that creates those rows on an empty device
``ini``     the same rows as ini tables, for comparing with ``GET /api/v1/files/ini``
``gaps``    plan facts the Mediant cannot enforce as the plan says, each with its requirement
``identity``deployment, site, type (facts the device does not hold; the read-back takes them from here)

Settings (plain data; the platform registration validates them as ``commsgw_sbc`` keys):

``sip_interfaces``  ``{acg: {index, name}, core: {index, name}}``: the operator's SIP Interfaces (their
                    sockets, TLS listeners and media are provisioned with the device, not here)
``tls_context``     name of the operator's TLS Context holding the SBC certificate, key and chain and
                    ACG's roots as trusted roots (required with TLS; certificate files are loaded with
                    the device, see the docs)
``core_next_hop``   ``"host:port"`` or ``{host, port}``; ``core_transport`` udp|tcp (default udp)
``core_allowed_sources``, ``number_normalisation``, ``emergency_reply_code``, ``size_headroom_bytes``:
                    as for every platform (docs/core-side.md, sbc_settings.py)
``index_base``      first row index of every table that commsgw.routing owns (default 100)

Values are hostile input: each is checked against the documented grammar before it is placed in a
row; one that could break the CLI syntax or is out of range is a RenderError naming its field.
Standard library only.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import ini
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.render_policy import (
    classification_rows, manipulation_rows, routing_rows)
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import (
    RenderError, Rows, change_script, checked, empty_rows, target_of)
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.settings import (
    DEFAULT_INDEX_BASE, MAX_INDEX_BASE)

CORE_NAME = "CGW-CORE"
CONTINUE_NAME = "CGW-MCP-CONT"
ACG_RETRY_SET = "CGW-ACG-RETRY"
MCP_RETRY_SET = "CGW-MCP-RETRY"
LIMITS_POLICY = "CGW-LIMITS"
# Release causes the keyword set of rel-cause-code offers for the plan's retry codes.
REL_CAUSE = {408: "408-req-timeout", 503: "503-service-unavail", 504: "504-server-timeout"}


@dataclasses.dataclass(frozen=True)
class Artefacts:
    rows: Rows
    cli: str
    ini: str
    gaps: tuple[dict[str, str], ...]
    identity: dict[str, str]
    index_base: int


@dataclasses.dataclass
class Settings:
    base: str
    acg_interface: str
    core_interface: str
    core_interface_index: int
    tls_context: t.Optional[str]
    core_next_hop: str
    core_transport: str
    core_allowed_sources: t.Optional[list[str]]
    normalisation: t.Optional[dict[str, str]]
    emergency_reply_code: int
    headroom: int
    index_base: int


def _int(raw: t.Any, path: str, low: int, high: int, default: t.Optional[int] = None) -> int:
    if raw is None and default is not None:
        return default
    if not isinstance(raw, int) or isinstance(raw, bool) or not low <= raw <= high:
        raise RenderError(path, "is %r, expected an integer %d..%d" % (raw, low, high))
    return raw


def _hop(raw: t.Any, path: str) -> str:
    text = "%s:%s" % (raw.get("host"), raw.get("port")) if isinstance(raw, dict) else raw
    if not isinstance(text, str) or ":" not in text:
        raise RenderError(path, "is %r, expected host:port" % (raw,))
    host, _sep, port = text.rpartition(":")
    return "%s:%s" % (host.lower(), port)


def parse_settings(raw: t.Mapping[str, t.Any]) -> Settings:
    """The settings this renderer reads, with the documented defaults; a wrong one names its field."""
    base = str(raw.get("base") or "commsgw_sbc")
    interfaces = raw.get("sip_interfaces")
    if not isinstance(interfaces, dict) or not all(isinstance(interfaces.get(k), dict) for k in ("acg", "core")):
        raise RenderError(base + ".sip_interfaces", "is %r, expected {acg: {index, name}, core: {index, name}}"
                          % (interfaces,))
    sources = raw.get("core_allowed_sources")
    if sources is not None and not (isinstance(sources, list) and all(isinstance(s, str) for s in sources)):
        raise RenderError(base + ".core_allowed_sources", "is %r, expected a list of IPv4 CIDRs" % (sources,))
    return Settings(
        base=base, acg_interface=interfaces["acg"].get("name"), core_interface=interfaces["core"].get("name"),
        core_interface_index=_int(interfaces["core"].get("index"), base + ".sip_interfaces.core.index", 0, 4000),
        tls_context=raw.get("tls_context"), core_next_hop=_hop(raw.get("core_next_hop"), base + ".core_next_hop"),
        core_transport=str(raw.get("core_transport") or "udp"), core_allowed_sources=sources,
        normalisation=raw.get("number_normalisation"),
        emergency_reply_code=_int(raw.get("emergency_reply_code"), base + ".emergency_reply_code", 400, 699, 403),
        headroom=_int(raw.get("size_headroom_bytes"), base + ".size_headroom_bytes", 0, 4096, 256),
        index_base=_int(raw.get("index_base"), base + ".index_base", 1, MAX_INDEX_BASE, DEFAULT_INDEX_BASE))


def _peer_rows(rows: Rows, set_index: int, peers: t.Sequence[t.Mapping[str, t.Any]], transport: str,
               field: str) -> None:
    """Proxy Address rows of one Proxy Set: every address of every SRV target, with its SRV priority
    and weight (R-11), in the plan's canonical order."""
    position = 0
    for number, peer in enumerate(peers):
        for address in peer.get("addresses") or []:
            path = "%s.peers[%d]" % (field, number)
            rows["proxy_ip"][(set_index, position)] = checked("proxy_ip", {
                "proxy-address": "%s:%s" % (address, peer["port"]), "transport-type": transport,
                "priority": peer["priority"], "weight": peer["weight"]},
                {"proxy-address": path + ".addresses", "transport-type": field + ".transport",
                 "priority": path + ".priority", "weight": path + ".weight"})
            position += 1
    if position > 10:
        raise RenderError(field + ".peers", "has %d addresses; a Mediant VE Proxy Set takes at most 10" % position)


def _proxy_set(rows: Rows, index: int, name: str, interface: str, keep_alive: bool, plan: t.Mapping[str, t.Any],
               tls: t.Optional[str], base: str, field: str) -> None:
    health = plan["health"]
    values: dict[str, t.Any] = {"proxy-name": name, "sbcipv4-sip-int-name": interface,
                                "proxy-enable-keep-alive": "using-options" if keep_alive else "disable"}
    if keep_alive:  # OPTIONS every interval, back after recovery_threshold answers, retry codes = down
        values.update({"proxy-keep-alive-time": health["interval_s"],
                       "keepalive-fail-resp": ",".join(str(c) for c in plan["retry"]["retry_codes"]),
                       "success-detect-retries": health["recovery_threshold"],
                       "success-detect-int": health["interval_s"]})
    values.update({"is-proxy-hot-swap": "enable", "proxy-load-balancing-method": "random-weights"})
    if tls:
        values["tls-context-name"] = tls
    rows["proxy_set"][(index,)] = checked("proxy_set", values, {
        "proxy-keep-alive-time": "health.interval_s", "success-detect-int": "health.interval_s",
        "success-detect-retries": "health.recovery_threshold", "keepalive-fail-resp": "retry.retry_codes",
        "sbcipv4-sip-int-name": base + ".sip_interfaces", "tls-context-name": base + ".tls_context",
        "proxy-name": field + ".region"})


def _ip_group(rows: Rows, index: int, name: str, proxy_set: str, hostname: t.Optional[str], reasons: str,
              field: str) -> None:
    values: dict[str, t.Any] = {"name": name, "type": "server", "proxy-set-name": proxy_set,
                                "classify-by-proxy-set": "disable"}
    if hostname:
        values["sip-group-name"] = hostname
    if reasons:
        values["sbc-alt-route-reasons-set"] = reasons
    fields = {"name": field + ".region", "sip-group-name": field + ".hostname"}
    rows["ip_group"][(index,)] = checked("ip_group", values, fields)


def _alt_set(rows: Rows, index: int, name: str, causes: t.Sequence[str], field: str) -> None:
    rows["alt_set"][(index,)] = checked("alt_set", {"name": name}, {})
    for number, cause in enumerate(causes):
        rows["alt_rule"][(index, number)] = checked("alt_rule", {"rel-cause-code": cause}, {"rel-cause-code": field})


def _dns_rows(rows: Rows, plan: t.Mapping[str, t.Any], base: int) -> None:
    """The plan's A answers of every SRV target, pinned in the Internal DNS table: the device resolves
    nothing itself (the proxy addresses are the plan's addresses) and the read-back names each peer's
    SRV target from here."""
    targets: dict[str, tuple[str, list[str]]] = {}
    owners: dict[str, set[str]] = {}
    records = [("trunk_groups[%d]" % i, g) for i, g in enumerate(plan["trunk_groups"])]
    records += [("mcp.records[%d]" % i, r) for i, r in enumerate((plan.get("mcp") or {}).get("records") or [])]
    for field, record in records:
        for number, peer in enumerate(record.get("peers") or []):
            addresses = sorted(peer.get("addresses") or [], key=ipaddress.IPv4Address)
            if len(addresses) > 3:
                raise RenderError("%s.peers[%d].addresses" % (field, number),
                                  "has %d addresses; the Internal DNS table holds three per name" % len(addresses))
            if addresses:
                targets.setdefault(peer["target"], ("%s.peers[%d].target" % (field, number), addresses))
                for address in addresses:
                    owners.setdefault(address, set()).add(peer["target"])
    # The read-back names a peer's target by its address (readback.target_of): an address listed under two names
    # (an ACG node serving SIP and MCP) is told apart by the record's hostname, which its own target ends with.
    for field, record in records:
        for number, peer in enumerate(record.get("peers") or []):
            for address in peer.get("addresses") or []:
                if target_of(owners[address], record["hostname"]) != peer["target"]:
                    raise RenderError("%s.peers[%d].addresses" % (field, number),
                                      "%s is an address of %s; the Mediant keeps addresses, so its read-back could "
                                      "not tell which is %s" % (address, " and ".join(sorted(owners[address])),
                                                                peer["target"]))
    if len(targets) > 20:
        raise RenderError("trunk_groups", "names %d SRV targets; the Internal DNS table holds 20" % len(targets))
    for position, (target, (field, addresses)) in enumerate(sorted(targets.items())):
        names = ("first-ip-address", "second-ip-address", "third-ip-address")
        rows["dns"][(base + position,)] = checked("dns", dict([("domain-name", target)] + list(zip(names, addresses))),
                                                  {"domain-name": field})


def group_name(kind: str, record: t.Mapping[str, t.Any]) -> str:
    """IP Group and Proxy Set name of a trunk group or MCP record: order, role and region in the name,
    which is how the read-back tells them apart (names: 40 characters, docs/platforms/audiocodes.md)."""
    return "CGW-%s-%d-%s-%s" % (kind, int(record["order"]), record["role"], record["region"])


def render(plan: t.Mapping[str, t.Any], raw_settings: t.Mapping[str, t.Any]) -> Artefacts:
    if plan.get("schema_version") != 1:
        raise RenderError("schema_version", "is %r; this renderer reads plans of schema 1" % plan.get("schema_version"))
    settings = parse_settings(raw_settings)
    groups = plan["trunk_groups"]
    transport = groups[0]["transport"]
    if any(g["transport"] != transport for g in groups):
        raise RenderError("trunk_groups[].transport", "differs between trunk groups")
    tls = settings.tls_context if transport == "tls" else None
    if transport == "tls" and not tls:
        raise RenderError(settings.base + ".tls_context", "is missing: ACG is reached over TLS (R-09, R-24)")
    base = settings.index_base
    rows = empty_rows()
    gaps: list[dict[str, str]] = []
    retry_causes = [REL_CAUSE.get(int(c)) for c in plan["retry"]["retry_codes"]]
    if None in retry_causes:
        raise RenderError("retry.retry_codes", "holds a code without a release-cause keyword: %r"
                          % plan["retry"]["retry_codes"])
    _alt_set(rows, base, ACG_RETRY_SET, t.cast(list, retry_causes), "retry.retry_codes")
    for position, group in enumerate(groups):
        if group.get("peers") is None:
            raise RenderError("trunk_groups[%d].peers" % position, "SRV record %s is not resolved; the Mediant gets "
                              "explicit addresses (render with resolved peers)" % group["srv_name"])
        name = group_name("ACG", group)
        _proxy_set(rows, base + position, name, settings.acg_interface, True, plan, tls, settings.base,
                   "trunk_groups[%d]" % position)
        _peer_rows(rows, base + position, group["peers"], transport, "trunk_groups[%d]" % position)
        _ip_group(rows, base + position, name, name, group["hostname"], ACG_RETRY_SET, "trunk_groups[%d]" % position)
    core_slot = base + len(groups)
    _proxy_set(rows, core_slot, CORE_NAME, settings.core_interface, False, plan, None, settings.base, settings.base)
    rows["proxy_ip"][(core_slot, 0)] = checked("proxy_ip", {"proxy-address": settings.core_next_hop,
                                                            "transport-type": settings.core_transport},
                                               {"proxy-address": settings.base + ".core_next_hop",
                                                "transport-type": settings.base + ".core_transport"})
    _ip_group(rows, core_slot, CORE_NAME, CORE_NAME, None, "", settings.base)
    mcp_groups = _mcp_rows(rows, plan, settings, transport, tls, core_slot + 1, gaps)
    _dns_rows(rows, plan, base)
    limit = int(plan["limits"]["max_message_bytes"]) - settings.headroom
    rows["message_policy"][(base,)] = checked("message_policy", {
        "name": LIMITS_POLICY, "max-message-length": limit, "send-rejection": "policy-reject"},
        {"max-message-length": "limits.max_message_bytes"})
    rows["sip_interface"][(settings.core_interface_index,)] = checked(
        "sip_interface", {"message-policy-name": LIMITS_POLICY}, {})
    classification_rows(rows, plan, settings, base, gaps)
    manipulation_rows(rows, settings, base)
    routing_rows(rows, plan, settings, base, mcp_groups, gaps)
    gaps.extend(STATIC_GAPS)
    cli, _steps = change_script(empty_rows(), rows)
    identity = {"deployment": plan["deployment"]["name"], "site": plan["site"]["name"],
                "type": plan["deployment"]["type"], "transport": transport}
    return Artefacts(rows=rows, cli=cli, ini=ini.ini_from_rows(rows), gaps=tuple(gaps), identity=identity,
                     index_base=base)


def _mcp_rows(rows: Rows, plan: t.Mapping[str, t.Any], settings: Settings, transport: str, tls: t.Optional[str],
              slot: int, gaps: list[dict[str, str]]) -> list[dict[str, t.Any]]:
    """MCP: a Proxy Set per record without OPTIONS (R-19), hot swap over the record's targets in SRV
    priority order, 5xx per the plan's policy (R-20); the continue next hop as its own IP Group."""
    mcp = plan.get("mcp")
    if not mcp:
        return []
    if mcp["transport"] != transport:
        raise RenderError("mcp.transport", "differs from the trunk groups' transport %s" % transport)
    causes = ["408-req-timeout", "503-service-unavail", "504-server-timeout"]
    if mcp["policy_on_5xx"] in ("retry", "continue"):
        causes = ["408-req-timeout", "5xx"]
    _alt_set(rows, settings.index_base + 1, MCP_RETRY_SET, causes, "mcp.policy_on_5xx")
    result = []
    for position, record in enumerate(mcp["records"]):
        field = "mcp.records[%d]" % position
        if not record.get("peers"):
            continue  # unresolved or empty: the plan's fallback record serves its requests
        name = group_name("MCP", record)
        _proxy_set(rows, slot, name, settings.acg_interface, False, plan, tls, settings.base, field)
        _peer_rows(rows, slot, record["peers"], transport, field)
        _ip_group(rows, slot, name, name, record["hostname"], MCP_RETRY_SET, field)
        result.append({"name": name, "hostname": record["hostname"], "order": record["order"]})
        slot += 1
    if mcp.get("continue_next_hop"):
        _proxy_set(rows, slot, CONTINUE_NAME, settings.core_interface, False, plan, None, settings.base, "mcp")
        rows["proxy_ip"][(slot, 0)] = checked("proxy_ip", {"proxy-address": _hop(mcp["continue_next_hop"],
                                                                                 "mcp.continue_next_hop"),
                                                           "transport-type": settings.core_transport},
                                              {"proxy-address": "mcp.continue_next_hop"})
        _ip_group(rows, slot, CONTINUE_NAME, CONTINUE_NAME, None, "", "mcp")
    if mcp["policy_on_5xx"] == "continue":
        gaps.append({"requirement": "R-20", "field": "mcp.policy_on_5xx",
                     "gap": "a 5xx from MCP is hunted to the record's other MCP targets (hot swap) before the "
                            "call continues without ACG; the Mediant has one reasons list for both steps"})
    return result


STATIC_GAPS = (
    {"requirement": "R-24", "field": "trunk_groups[].tls.sni",
     "gap": "no SNI setting is shown in the 7.4 pages read; with explicit addresses the name a peer certificate "
            "is checked against is not documented per Proxy Set either (lab acceptance run)"},
    {"requirement": "R-14", "field": "retry.invite_timer_ms",
     "gap": "the no-response timer is a retransmission count (HotSwapRtx) on the Mediant, not milliseconds; "
            "not rendered"},
    {"requirement": "R-14", "field": "retry.retry_after_provisional_timeout",
     "gap": "what the device does when a peer rang and then timed out is not documented"},
    {"requirement": "R-13", "field": "health.failure_threshold",
     "gap": "the documented failure count (fail-detect-rtx) is for UDP retransmissions; over TLS one missed "
            "OPTIONS answer takes a peer out"},
    {"requirement": "R-27", "field": "limits.max_request_uri_bytes",
     "gap": "the Message Policy limits message and header length, not Request-URI or Contact URI length"},
    {"requirement": "R-25", "field": "emergency.dial_strings",
     "gap": "urn:service:sos Request-URIs are not matched (routing matches user-part prefixes)"},
    {"requirement": "R-08", "field": "acl.ranges",
     "gap": "classification admits new dialogs; in-dialog requests follow their dialog (not checked per source)"},
    {"requirement": "R-08", "field": "commsgw_sbc.acl_action",
     "gap": "the reply to a refused source (403 or silence) is not chosen per rule on the Mediant"},
)
