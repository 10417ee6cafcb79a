# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Routing plan + SBC settings -> the Kamailio "view": plain data the templates only spell out.

Nothing here decides routing: every choice comes from the plan (``plugins/module_utils/plan/site_plan.py``).
This module only translates it into Kamailio's vocabulary: the dispatcher sets and ACL rows
(``kamailio.rows``), MCP's sets and policy, timers, retry codes, emergency dial strings, size limits,
version-dependent TLS parameters, and the SRV refresher's input (``commsgw-srv.json``).
"""

from __future__ import annotations

import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.core_rows import core_acl_view, e164_view
from ansible_collections.commsgw.routing.plugins.module_utils.core.host_port import split_host_port
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import (
    ACL_GROUP, DS_ALG_RELATIVE_WEIGHT, DS_FLAG_PROBING, RETIRED_GROUP, KamailioViewError, acl_rows, dispatcher_sets,
    mcp_dispatcher_sets, ping_relay_uri, retired_acl_rows, sip_socket)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import DIALOG_IPAD, DIALOG_OPAD, PING_TOKEN
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.sizing import kamailio_processes, memory_view

MCP_HOLD_TABLE = "commsgw_mcp_hold"
MCP_REJECT_REASON = "MCP Unavailable"
TLS_DIALOG_PARAM = "cgwtls"
# The MAC of a dialog's TLS name (HMAC-SHA256 over name and Call-ID with the SBC's secret key, hex): its
# first 33 hex digits (132 bits) are plenty against forgery and keep the Record-Route short.
TLS_DIALOG_MAC_PARAM = "cgwmac"
TLS_DIALOG_MAC_CHARS = 33
# The From user of the dispatcher's pings: this prefix and the SBC's secret ping token.
TLS_PING_USER_PREFIX = "cgwping-"
TLS_VERDICT_TTL_S = 3700  # > tcp_connection_lifetime (3605 s) in kamailio.cfg.j2
# tls_threads_mode (the cure for 5.6's OpenSSL 3 memory corruption) exists from 5.7.5 on.
TLS_FIXED_VERSION = (5, 7, 5)
# ACG's TLS 1.2 cipher suites (acg-facts 1.4) in OpenSSL names; ECDSA first: the notes record intermittent
# invalid RSA signatures from Kamailio as a TLS client with several TCP workers. TLS 1.3 suites are
# OpenSSL's defaults, which include both of ACG's.
ACG_TLS12_CIPHERS = ("ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:"
                     "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-SHA384:ECDHE-ECDSA-AES128-SHA256:"
                     "ECDHE-RSA-AES256-SHA384:ECDHE-RSA-AES128-SHA256")
# Ring time once a peer answered provisionally: long, since ring-no-answer is the callee's business.
# tm's own final reply for a branch it could not send (e.g. TCP/TLS connection refused).
LOCAL_SEND_FAILURE_CODE = 477
DEFAULT_FR_INV_TIMER_MS = 120000

# The version the files are rendered for: exactly N.N.N (\Z, not $: no trailing newline), since it is
# written into a comment of kamailio.cfg, where a newline would start a live line.
_EXACT_VERSION_RE = re.compile(r"^[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}\Z")


def check_version(version: t.Any) -> str:
    """``version`` when it is exactly N.N.N, else a KamailioViewError naming ``kamailio_version``."""
    if not isinstance(version, str) or not _EXACT_VERSION_RE.match(version):
        raise KamailioViewError(
            "kamailio_version: %r is not a Kamailio version; expected N.N.N, e.g. 6.0.1 (from -e kamailio_version, "
            "else the 'version: kamailio X.Y.Z' line of `kamailio -v` on the target)" % (version,))
    return version


def version_tuple(version: str) -> tuple[int, int, int]:
    parts = re.findall(r"\d+", version or "")
    if len(parts) < 2:
        raise ValueError("not a Kamailio version: %r" % version)
    numbers = [int(p) for p in parts[:3]] + [0] * (3 - len(parts[:3]))
    return numbers[0], numbers[1], numbers[2]


def has_tls_threads_mode(version: str) -> bool:
    return version_tuple(version) >= TLS_FIXED_VERSION


def _emergency_regex(dial_strings: t.Sequence[str], country_code: t.Optional[str] = None) -> t.Optional[str]:
    """R-URI user patterns of the plan's emergency dial strings (an optional leading + as well), checked
    after number normalisation: with it, also "+<country code><dial string>", the national form of a
    dial string once normalised (0112 -> +49112); the international one (00112) becomes +112."""
    cleaned = [s for s in dial_strings if s]
    if not cleaned:
        return None
    own_country = "(%s)?" % re.escape(country_code) if country_code else ""
    return "^\\+?%s(%s)$" % (own_country, "|".join(re.escape(s) for s in cleaned))


def _mcp_records(plan: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    """The plan's MCP records as dispatcher_sets reads them (every record must be resolved)."""
    mcp = plan.get("mcp") or {}
    records = []
    for record in sorted(mcp.get("records") or [], key=lambda r: r["order"]):
        if record.get("peers") is None:
            raise KamailioViewError("MCP record %s (%s): SRV record %s was not resolved; render needs resolved "
                                    "peers" % (record["order"], record["region"], record["srv_name"]))
        # The record's /28s are the plan's (plan.record_ranges): every /28 of the deployment.
        records.append(dict(record, ip_ranges=list(record["ip_ranges"])))
    return records


def _next_hop_uri(value: str, transport: str) -> str:
    host, port = split_host_port(value, default_port=5060)
    return "sip:%s:%d;transport=%s" % (host.lower(), port, transport)


def mcp_view(plan: t.Mapping[str, t.Any], acg_socket: str, transport: str, core: t.Mapping[str, t.Any],
             core_socket: str) -> t.Optional[dict[str, t.Any]]:
    """What the MCP templates spell out (templates/kamailio/mcp_*.cfg.j2); None without MCP.

    Every decision is the plan's: which record a request uses (``record_selection``), the 5xx policy,
    what happens when no target is left, the hold-down. This only maps them to set ids and URIs.
    """
    mcp = plan.get("mcp")
    if not mcp:
        return None
    if mcp.get("record_selection") != "named_hostname_else_local":
        raise KamailioViewError("MCP record selection %r is not supported" % mcp.get("record_selection"))
    if mcp["transport"] != transport:
        raise KamailioViewError("MCP transport %r differs from the ACG trunks' %r: both use the ACG socket"
                                % (mcp["transport"], transport))
    records = _mcp_records(plan)
    sets = mcp_dispatcher_sets(records, acg_socket, transport)
    if mcp.get("fallback_record") is None or not any(s["destinations"] for s in sets):
        raise KamailioViewError("no MCP record has any target: nothing to send MCP requests to")
    by_order: dict[int, list[dict[str, t.Any]]] = {}
    for ds_set in sets:
        by_order.setdefault(int(ds_set["group_order"]), []).append(ds_set)
    view_records = []
    for record in records:
        own = [s for s in by_order.get(int(record["order"]), []) if s["destinations"]]
        view_records.append({
            "order": int(record["order"]), "role": record["role"], "region": record["region"],
            "hostname": record["hostname"],
            # Serial order inside the record: its SRV priority tiers (own MCP first, other region lower).
            "rules": ";".join("%d=%d" % (s["id"], DS_ALG_RELATIVE_WEIGHT) for s in own),
            "set_ids": [s["id"] for s in own],
        })
    # "else local": the plan's fallback record (the local one unless it resolved to no target); a record
    # without targets uses it too.
    default = next(r for r in view_records if r["order"] == int(mcp["fallback_record"]))
    for record in view_records:
        if not record["rules"]:
            record.update(rules=default["rules"], set_ids=list(default["set_ids"]))
    on_all_failed = mcp["on_all_failed"]
    needs_hop = mcp["policy_on_5xx"] == "continue" or on_all_failed == "continue"
    if needs_hop and not mcp.get("continue_next_hop"):
        raise KamailioViewError("MCP policy 'continue' needs mcp.continue_next_hop")
    retry = plan["retry"]
    return {
        "table": MCP_HOLD_TABLE,
        "hold_down_s": int(mcp["hold_down_s"]),
        "sets": sets,
        "records": view_records,
        "default_record": default["order"],
        "match": {name: name in mcp["match"] for name in ("route_host", "route_service", "request_uri_host")},
        "policy": mcp["policy_on_5xx"],
        "on_all_failed": on_all_failed,
        "reject_code": int(mcp["reject_code"]),
        "reject_reason": MCP_REJECT_REASON,
        "continue": ({"uri": _next_hop_uri(mcp["continue_next_hop"], core["transport"]), "socket": core_socket}
                     if mcp.get("continue_next_hop") else None),
        # Same INVITE timer as the ACG trunks: MCP is a proxy and answers 100 Trying at once.
        "invite_fr_ms": int(retry["invite_timer_ms"]),
        "fr_inv_ms": DEFAULT_FR_INV_TIMER_MS,
        # Loop bound when skipping held-down targets: every destination of the largest record.
        "max_targets": max(sum(len(s["destinations"]) for s in by_order.get(r["order"], [])) for r in view_records)
        or 1,
    }


def build_view(plan: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], version: str) -> dict[str, t.Any]:
    """Translate ``plan`` + normalised ``settings`` (``sbc.settings``) for Kamailio ``version``."""
    version = check_version(version)
    groups = plan["trunk_groups"]
    transports = {g["transport"] for g in groups}
    if len(transports) != 1:
        raise KamailioViewError("trunk groups use different transports: %s" % sorted(transports))
    transport = transports.pop()
    acg = settings["acg_listen"]
    core = settings["core_listen"]
    acg_socket = sip_socket(transport, acg["address"], acg["port"])
    core_socket = sip_socket(core["transport"], core["address"], core["port"])
    sets = dispatcher_sets(groups, acg_socket, transport)
    if not any(s["destinations"] for s in sets):
        raise KamailioViewError("no trunk group has any peer: nothing to send calls to")
    health = plan["health"]
    retry = plan["retry"]
    options_timeout_ms = settings.get("options_timeout_ms") or min(1000, int(health["interval_s"]) * 500)
    config_dir = settings["config_dir"]
    run_dir = settings["run_dir"]
    tls = None
    if transport == "tls":
        if not has_tls_threads_mode(version) and not settings.get("allow_tls_on_unfixed_kamailio"):
            raise KamailioViewError(
                "Kamailio %s corrupts memory under TLS with OpenSSL 3 (kamailio issue #3791); the fix "
                "(tls_threads_mode) needs Kamailio 5.7.5 or later. Upgrade (e.g. Debian 13, Kamailio 6.0) or set "
                "commsgw_sbc.allow_tls_on_unfixed_kamailio: true to accept the risk." % version)
        tls = {
            "settings": dict(settings["tls"] or {}),
            "threads_mode": 2 if has_tls_threads_mode(version) else None,
            # the TLS names themselves (SNI, certificate host) are reloadable data, not config:
            # per ACL row (address.list tag) and per dispatcher row (attribute tls=), see acl_tag.
            "groups": [{"order": g["order"], "hostname": g["hostname"],
                        "min_version": (g.get("tls") or {}).get("min_version", "TLSv1.2")} for g in groups],
            "cipher_list": ACG_TLS12_CIPHERS,
            # The dispatcher's pings go to this socket of the SBC itself and are relayed with SNI.
            "ping_relay": {"socket": sip_socket("udp", acg["address"], acg["port"]),
                           "uri": ping_relay_uri(acg_socket)},
            # The Record-Route parameter carrying a dialog's TLS name, so that its in-dialog requests keep
            # it after a migration changed or removed the name of the peer's range, and its MAC: only
            # the SBC can mint it (kamailio/secret.py), so a forged name is never believed.
            "dialog_param": TLS_DIALOG_PARAM,
            "dialog_mac_param": TLS_DIALOG_MAC_PARAM,
            "dialog_mac_chars": TLS_DIALOG_MAC_CHARS,
            # The secret file (import_file: absent, no name is believed and no ping relayed) and the
            # names of its values in the preprocessor (the dialog key as HMAC's inner and outer keys).
            "secret": {"file": settings["secret_file"], "dialog_ipad": DIALOG_IPAD, "dialog_opad": DIALOG_OPAD,
                       "ping_token": PING_TOKEN},
            "ping_from": "sip:%s%s@%s" % (TLS_PING_USER_PREFIX, PING_TOKEN, acg["address"]),
            "ping_user": TLS_PING_USER_PREFIX + PING_TOKEN,
            # ranges the plan retired (acl.retired), admitted in-dialog until their time is up.
            "retired_group": RETIRED_GROUP,
            # Verdicts outlive no connection for long: tcp_connection_lifetime plus a margin.
            "verdict_ttl_s": TLS_VERDICT_TTL_S,
            "verify_hostname": bool((settings["tls"] or {}).get("verify_hostname", True)),
        }
    limits = plan["limits"]
    headroom = int(settings["size_headroom_bytes"])
    return {
        "version": version,
        "version_tuple": list(version_tuple(version)),
        "host": settings.get("host"),
        "site": plan["site"]["name"],
        "deployment": plan["deployment"]["name"],
        "transport": transport,
        "log_level": settings["log_level"],
        # Sized from the plan (kamailio.sizing). UDP sockets, udp_workers processes each: the core's and the ACG
        # side's when UDP, and with TLS the ping relay's.
        "memory": memory_view(transport == "tls", kamailio_processes(
            settings["udp_workers"], [core["transport"], transport, "udp" if tls else ""].count("udp"),
            settings["tcp_workers"]), settings),
        "workers": {"udp": settings["udp_workers"], "tcp": settings["tcp_workers"]},
        "listen": {
            "acg": {"proto": transport, "address": acg["address"], "port": acg["port"], "socket": acg_socket},
            "core": {"proto": core["transport"], "address": core["address"], "port": core["port"],
                     "socket": core_socket},
        },
        "core_next_hop": {
            "uri": "sip:%s:%d;transport=%s" % (
                settings["core_next_hop"]["host"], settings["core_next_hop"]["port"], core["transport"]),
            "socket": core_socket,
            # In-dialog requests from ACG may go here (or to a core source), nowhere else.
            "host": str(settings["core_next_hop"]["host"]).lower(),
            "host_is_name": not re.match(r"^[0-9.]+\Z", str(settings["core_next_hop"]["host"])),
        },
        "paths": {
            "config_dir": config_dir,
            "kamailio_cfg": config_dir + "/kamailio.cfg",
            # The refresher's own directory (kamailio.peers_dir): the one thing it may change.
            "dispatcher_list": config_dir + "/peers/dispatcher.list",
            "address_list": config_dir + "/address.list",
            "tls_cfg": config_dir + "/tls.cfg",
            "srv_json": config_dir + "/commsgw-srv.json",
            "run_dir": run_dir,
            "rpc_socket": run_dir + "/kamailio_rpc.sock",
            "rpc_fifo": run_dir + "/kamailio_rpc.fifo",
            "ctl_socket": run_dir + "/kamailio_ctl",
        },
        # Group of the jsonrpcs socket (None: Kamailio's own); members may send RPCs (the SRV refresher).
        "rpc_group": settings.get("rpc_group"),
        "dispatcher": {
            "sets": sets,
            "alg": DS_ALG_RELATIVE_WEIGHT,
            # Serial failover order: the plan's trunk-group order, then SRV priority within a group.
            "rules": ";".join("%d=%d" % (s["id"], DS_ALG_RELATIVE_WEIGHT) for s in sets if s["destinations"]),
            "probing_flag": DS_FLAG_PROBING,
        },
        "health": {
            "interval_s": int(health["interval_s"]),
            "failure_threshold": int(health["failure_threshold"]),
            "recovery_threshold": int(health["recovery_threshold"]),
            "window_s": int(health["window_s"]),
            "options_timeout_ms": int(options_timeout_ms),
            "ping_from": "sip:options@%s" % acg["address"],
        },
        "timers": {
            "invite_fr_ms": int(retry["invite_timer_ms"]),
            "fr_inv_ms": DEFAULT_FR_INV_TIMER_MS,
        },
        "retry": {
            "codes": [int(c) for c in retry["retry_codes"]],
            # "No response at all" also covers a peer Kamailio could not even send to (connection
            # refused or reset): tm answers such a branch itself with 477.
            "codes_regex": "|".join(str(int(c)) for c in list(retry["retry_codes"]) + (
                [LOCAL_SEND_FAILURE_CODE] if retry["retry_on_no_response"] else [])),
            "on_no_response": bool(retry["retry_on_no_response"]),
            "local_send_failure_code": LOCAL_SEND_FAILURE_CODE,
            "after_provisional_timeout": bool(retry["retry_after_provisional_timeout"]),
        },
        "acl": {"group": ACL_GROUP, "rows": acl_rows(plan), "action": settings["acl_action"],
                # Only TLS dialogs carry names a retired range's peer can be admitted for.
                "retired_rows": retired_acl_rows(plan) if tls else []},
        # Core-side source ACL (group 2 of address.list) and R-26 E.164 enforcement: core_rows.py over core_policy.py.
        "core_acl": core_acl_view(settings, (plan.get("mcp") or {}).get("continue_next_hop")),
        "e164": e164_view(settings),
        "emergency": {
            "dial_strings": list(plan["emergency"]["dial_strings"]),
            "regex": _emergency_regex(plan["emergency"]["dial_strings"],
                                      (settings.get("number_normalisation") or {}).get("country_code")),
            "route_to_acg": bool(plan["emergency"]["route_to_acg"]),
            "reply_code": settings["emergency_reply_code"],
        },
        "limits": {
            "max_message_bytes": int(limits["max_message_bytes"]),
            "max_received_bytes": max(0, int(limits["max_message_bytes"]) - headroom),
            "headroom_bytes": headroom,
            "max_request_uri_bytes": int(limits["max_request_uri_bytes"]),
            "max_contact_uri_bytes": int(limits["max_contact_uri_bytes"]),
        },
        # MCP (R-18..R-20): None when the plan has no MCP, and then nothing MCP is rendered at all.
        "mcp": mcp_view(plan, acg_socket, transport, core, core_socket),
        "tls": tls,
    }


def srv_refresh_input(plan: t.Mapping[str, t.Any], view: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """commsgw-srv.json: what the on-host SRV refresher needs to rebuild dispatcher.list by itself."""
    return {
        "schema_version": 1,
        "deployment": plan["deployment"]["name"],
        # The plan's deployment type, read back by migration (never re-derived from the region count).
        "deployment_type": plan["deployment"]["type"],
        "site": plan["site"]["name"],
        "transport": view["transport"],
        "acg_socket": view["listen"]["acg"]["socket"],
        "dispatcher_list": view["paths"]["dispatcher_list"],
        # The refresher reads a copy of this file elsewhere: it finds the SBC's push lease by this directory.
        "config_dir": view["paths"]["config_dir"],
        "rpc_socket": view["paths"]["rpc_socket"],
        "rpc_fifo": view["paths"]["rpc_fifo"],
        "set_id_rule": "group order * 100 + SRV priority tier index (1-based, ascending SRV priority)",
        "trunk_groups": [{"order": g["order"], "role": g["role"], "region": g["region"], "hostname": g["hostname"],
                          "srv_name": g["srv_name"], "ttl": g["srv_ttl"], "ip_ranges": list(g["ip_ranges"])}
                         for g in plan["trunk_groups"]],
        "sets": [{"id": s["id"], "group_order": s["group_order"], "srv_name": s["srv_name"],
                  "srv_priority": s["srv_priority"]} for s in view["dispatcher"]["sets"]],
        "acl_ranges": [e["network"] for e in plan["acl"]["ranges"]],
        # Bounds of every SRV record (srv_lookup.SrvLimits); absent in plans from before issue 13.
        "srv_limits": plan.get("srv_limits"),
        "min_ttl": min([g["srv_ttl"] for g in plan["trunk_groups"] if g["srv_ttl"] is not None] or [60]),
        **_mcp_refresh_input(plan, view),
    }


def _mcp_refresh_input(plan: t.Mapping[str, t.Any], view: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """MCP records for the refresher (absent without MCP): rebuilt with mcp_dispatcher_sets."""
    if not view.get("mcp"):
        return {}
    return {
        "mcp_records": [{"order": r["order"], "role": r["role"], "region": r["region"], "hostname": r["hostname"],
                         "srv_name": r["srv_name"], "ttl": r["srv_ttl"], "ip_ranges": list(r["ip_ranges"])}
                        for r in _mcp_records(plan)],
        "mcp_sets": [{"id": s["id"], "group_order": s["group_order"], "srv_name": s["srv_name"],
                      "srv_priority": s["srv_priority"]} for s in view["mcp"]["sets"]],
    }
