# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's read-back: its deployed files and its live state over jsonrpcs, as a ``sbc.readback`` state.

The one parser of what a Kamailio SBC runs: migration (``state_from_files`` on the deployed and the
freshly rendered files, like for like), the probe's SBC view (``destination_rows`` /
``runtime_rows``) and ``commsgw.routing.sbc_state_info`` (``read_state``) all use it.

* files: ``commsgw-srv.json`` (trunk groups, set ids, MCP records), ``peers/dispatcher.list`` (peers),
  ``address.list`` (the ACG /28s, group ``ACL_GROUP``), ``tls.cfg`` (certificate paths), ``kamailio.cfg``
  (listen addresses and the RPC endpoints);
* live: the ``dispatcher.list`` RPC (peers and their states) and ``permissions.subnetDump`` (the /28s
  the running SBC admits).

Weights: ``weight`` is the rendered ``rweight`` Kamailio routes by (relative to the tier's largest, 1..100;
``WEIGHT_SCALE`` turns a plan's SRV weights into the same scale for ``sbc_readback.compare``), and
``plan_weight`` the plan's SRV weight the row was rendered from (what a migration's widen step keeps).
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import os
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.host.push import pending
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import runtime as kr
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import (
    ACL_GROUP, MCP_SET_BASE, RETIRED_GROUP, parse_acl_tag, scale_rweights)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.dispatcher import dispatcher_rows, parse_attrs
from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import state_dir_for
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import (
    IN_PEERS_DIR, file_path, read_nofollow)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import (
    ReadbackError, net_key, parse_sip_uri, peer_key, sha256_text)

# Files of a rendered Kamailio configuration that carry routing facts (kamailio.cfg only adds the
# listen sockets and the set ids, which commsgw-srv.json repeats).
STATE_FILES = ("commsgw-srv.json", "dispatcher.list", "address.list", "tls.cfg")
READ_FILES = STATE_FILES + ("kamailio.cfg",)
DS_PRIORITY_BASE = 65535  # dispatcher priority = 65535 - SRV priority (module_utils.kamailio)
WEIGHT_SCALE = scale_rweights
_PEM_RE = re.compile(r"-----BEGIN CERTIFICATE-----\s*(.*?)\s*-----END CERTIFICATE-----", re.DOTALL)
_STATES = {"A": "active", "I": "inactive", "D": "disabled", "T": "trying"}


# --------------------------------------------------------------------------------------------
# Rows


def _uri_address(uri: str) -> tuple[str, int]:
    try:
        host, port, dummy = parse_sip_uri(uri)
    except ValueError:
        raise ReadbackError("dispatcher destination %r is not a SIP URI" % uri) from None
    return host, port


def _row(set_id: int, uri: str, priority: t.Any, attrs: t.Mapping[str, str]) -> dict[str, t.Any]:
    """One destination in read-back terms (from the file or from the RPC)."""
    address, port = _uri_address(uri)
    priority = str(priority) if priority is not None else ""
    return {"set": set_id, "uri": uri, "address": address, "port": port,
            "ds_priority": int(priority) if priority.isascii() and priority.lstrip("-").isdigit() else 0,
            "rweight": int(attrs.get("rweight", "1") or 1),
            # The plan's SRV weight (kamailio.dispatcher_sets writes srvweight); older rows carried only rweight.
            "plan_weight": int(attrs.get("srvweight") or attrs.get("rweight", "1") or 1),
            "target": attrs.get("target", address).rstrip(".").lower()}


def parse_dispatcher_rows(text: str) -> list[dict[str, t.Any]]:
    """``setid uri flags priority attrs`` rows of a dispatcher.list (comments dropped), in read-back terms."""
    return [_row(r["set_id"], r["uri"], r["priority"], r["attrs"]) for r in dispatcher_rows(text, ReadbackError)]


def destination_rows(text: str) -> list[dict[str, t.Any]]:
    """dispatcher.list as the probe's SBC view reads it: set_id, uri, host, port, transport per row."""
    found = []
    for row in dispatcher_rows(text):
        host, port, transport = parse_sip_uri(row["uri"])
        found.append({"set_id": row["set_id"], "uri": row["uri"], "host": host, "port": port,
                      "transport": transport})
    return found


def runtime_rows(result: t.Any) -> list[dict[str, t.Any]]:
    """The ``dispatcher.list`` RPC result (Kamailio 5.6 and 6.0 share its shape): one row per destination
    with set_id, uri, host, port, transport, flags, state (active/inactive/disabled/trying/unknown),
    probing, priority and attrs (the row's attribute string, parsed)."""
    if not isinstance(result, dict):
        raise ReadbackError("dispatcher.list returned %r" % type(result).__name__)
    found = []
    for record in result.get("RECORDS") or []:
        group = record.get("SET") or {}
        targets = group.get("TARGETS") or []
        if isinstance(targets, dict):  # a single target is sometimes not wrapped in a list
            targets = [targets]
        for entry in targets:
            dest = entry.get("DEST") or entry
            uri = str(dest.get("URI"))
            try:
                host, port, transport = parse_sip_uri(uri)
            except ValueError:
                raise ReadbackError("dispatcher destination %r is not a SIP URI" % uri) from None
            flags = str(dest.get("FLAGS", ""))
            attrs = dest.get("ATTRS") or {}
            body = attrs.get("BODY", "") if isinstance(attrs, dict) else str(attrs)
            found.append({"set_id": int(group.get("ID")), "uri": uri, "host": host, "port": port,
                          "transport": transport, "flags": flags,
                          "state": _STATES.get(flags[:1].upper(), "unknown"), "probing": "P" in flags[1:].upper(),
                          "priority": dest.get("PRIORITY"), "attrs": parse_attrs(str(body or ""))})
    return found


def dispatcher_states(result: t.Any) -> dict[str, str]:
    """``address:port`` -> dispatcher flags (``AP``, ``IP``, ``TP``...) from the dispatcher.list RPC result."""
    states: dict[str, str] = {}
    for row in runtime_rows(result):
        key = "%s:%d" % (row["host"], row["port"])
        # A peer in several sets is as healthy as its worst entry.
        if key not in states or not row["flags"].upper().startswith("A"):
            states[key] = row["flags"]
    return states


def _acl_row(line: str, fields: t.Sequence[str], group: int = ACL_GROUP) -> t.Optional[dict[str, t.Any]]:
    if fields[0] != str(group):
        return None  # another group (the core side's allowed sources, the retired /28s): not an ACG range
    try:
        network = ipaddress.IPv4Network("%s/%s" % (fields[1], fields[2]), strict=False)
    except ValueError as exc:
        raise ReadbackError("address.list line %r: %s" % (line[:80], exc)) from exc
    tag = parse_acl_tag(fields[4] if len(fields) > 4 else "")
    row: dict[str, t.Any] = {"network": str(network), "region": tag["region"], "hostname": tag["tls"]}
    if group == RETIRED_GROUP:
        row["until"] = int(tag["until"]) if tag["until"].isdigit() else 0
    return row


def parse_retired_rows(text: str) -> list[dict[str, t.Any]]:
    """The /28s a deployed address.list keeps retired (group ``RETIRED_GROUP``: network, region, hostname
    and ``until``, the unix time their dialogs stop being admitted). Never part of the read-back state:
    the plan carries them forward (``migration.retire_narrowed_ranges``), drift does not compare them."""
    return parse_address_rows(text, RETIRED_GROUP)


def parse_address_rows(text: str, group: int = ACL_GROUP) -> list[dict[str, t.Any]]:
    """``group address mask port tag`` rows of a permissions address.list -> network, region and the
    range's TLS name (empty when the file predates names in tags). Only the rows of ``group`` (the ACG
    /28s unless told)."""
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) < 3:
            raise ReadbackError("address.list line %r is not 'group address mask ...'" % line[:80])
        row = _acl_row(line, fields, group)
        if row is not None:
            rows.append(row)
    return rows


def subnet_rows(result: t.Any) -> list[dict[str, str]]:
    """The ``permissions.subnetDump`` RPC result (``[{id, group, item: {ip, mask, port, tag}}]``) -> the ACG
    group's rows, as ``parse_address_rows``."""
    if not isinstance(result, list):
        raise ReadbackError("permissions.subnetDump returned %r" % type(result).__name__)
    rows = []
    for entry in result:
        if not isinstance(entry, dict) or not isinstance(entry.get("item"), dict):
            raise ReadbackError("permissions.subnetDump entry %r is not {group, item: {ip, mask, ...}}" % (entry,))
        item = dict(entry["item"], group=entry.get("group"))
        fields = [str(item.get(k, "")) for k in ("group", "ip", "mask", "port", "tag")]
        row = _acl_row(" ".join(fields), fields)
        if row is not None:
            rows.append(row)
    return rows


def parse_tls_cfg(text: str) -> dict[str, str]:
    """certificate / private_key / ca_list of the client profile (the one used towards ACG)."""
    found: dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line
            continue
        key, sep, value = line.partition("=")
        if sep and key.strip() in ("certificate", "private_key", "ca_list"):
            # The client profile wins: it is the certificate ACG sees on calls we open.
            if section.startswith("[client") or key.strip() not in found:
                found[key.strip()] = value.strip()
    return found


def certificate_fingerprint(pem: str) -> t.Optional[str]:
    """SHA-256 of the first certificate of a PEM file (the leaf), as hex; None when there is none."""
    match = _PEM_RE.search(pem or "")
    if not match:
        return None
    try:
        der = base64.b64decode("".join(match.group(1).split()), validate=True)
    except ValueError:
        return None
    return hashlib.sha256(der).hexdigest()


# --------------------------------------------------------------------------------------------
# State


def load_spec(text: t.Optional[str]) -> t.Optional[dict[str, t.Any]]:
    """commsgw-srv.json (trunk groups, set ids, MCP records); None when absent (never onboarded)."""
    if not text:
        return None
    try:
        spec = json.loads(text)
    except ValueError as exc:
        raise ReadbackError("commsgw-srv.json is not JSON: %s" % exc) from exc
    if not isinstance(spec, dict) or not isinstance(spec.get("trunk_groups"), list):
        raise ReadbackError("commsgw-srv.json has no trunk_groups: not a commsgw.routing configuration")
    return spec


def routing_state(spec: t.Mapping[str, t.Any], rows: t.Sequence[t.Mapping[str, t.Any]],
                  acl: t.Sequence[t.Mapping[str, str]]) -> dict[str, t.Any]:
    """regions, mcp and acl of a state: the trunk groups of ``spec`` with the peers of the dispatcher ``rows``."""
    groups = sorted(spec["trunk_groups"], key=lambda g: int(g["order"]))
    by_order = {int(g["order"]): g["region"] for g in groups}
    set_region = {int(e["id"]): by_order.get(int(e.get("group_order", int(e["id"]) // 100)), "")
                  for e in spec.get("sets") or []}
    regions: dict[str, dict[str, t.Any]] = {}
    for group in groups:
        regions[group["region"]] = {
            "order": int(group["order"]), "role": group.get("role"), "hostname": group.get("hostname"),
            "srv_name": group.get("srv_name"),
            "ip_ranges": sorted({str(r) for r in group.get("ip_ranges") or []}, key=net_key), "peers": []}
    # MCP records (R-18..R-20) have dispatcher sets of their own, from MCP_SET_BASE up.
    mcp_by_srv = {r["srv_name"]: r for r in spec.get("mcp_records") or []}
    mcp_set_srv = {int(e["id"]): e["srv_name"] for e in spec.get("mcp_sets") or []}
    mcp = {r["region"]: {"hostname": r.get("hostname"), "srv_name": r["srv_name"], "peers": []}
           for r in mcp_by_srv.values()}
    for row in rows:
        peer = {"target": row["target"], "address": row["address"], "port": row["port"]}
        if row["set"] >= MCP_SET_BASE:
            record = mcp_by_srv.get(mcp_set_srv.get(row["set"], ""))
            if record is None:
                raise ReadbackError("dispatcher.list set %d belongs to no MCP record of commsgw-srv.json" % row["set"])
            mcp[record["region"]]["peers"].append(peer)
            continue
        region = set_region.get(row["set"]) or by_order.get(row["set"] // 100)
        if region not in regions:
            raise ReadbackError("dispatcher.list set %d belongs to no trunk group of commsgw-srv.json" % row["set"])
        regions[region]["peers"].append(dict(peer, priority=DS_PRIORITY_BASE - row["ds_priority"],
                                             weight=row["rweight"], plan_weight=row["plan_weight"]))
    for region in regions.values():
        region["peers"].sort(key=lambda p: (p["priority"], peer_key(p)))
    return {"regions": regions, "mcp": mcp, "acl": sorted((
        # A range's TLS name; files written before tags carried it: its region's hostname then.
        {"network": e["network"], "region": e["region"],
         "hostname": e["hostname"] or (regions.get(e["region"]) or {}).get("hostname") or ""} for e in acl),
        key=lambda e: (net_key(e["network"]), e["region"]))}


def state_from_files(files: t.Mapping[str, t.Optional[str]],
                     certificates: t.Optional[t.Mapping[str, t.Optional[str]]] = None) -> t.Optional[dict[str, t.Any]]:
    """The routing facts of one SBC's configuration, or None when it has none (never onboarded).

    ``certificates`` maps a certificate path named in tls.cfg to that file's PEM text (when readable),
    so that a certificate replaced under the same path is seen too.
    """
    spec = load_spec(files.get("commsgw-srv.json"))
    if spec is None:
        return None
    routing = routing_state(spec, parse_dispatcher_rows(files.get("dispatcher.list") or ""),
                            parse_address_rows(files.get("address.list") or ""))
    regions = routing["regions"]
    tls = None
    if files.get("tls.cfg"):
        tls = parse_tls_cfg(files["tls.cfg"] or "")
        cert_path = tls.get("certificate")
        if certificates is not None and cert_path:
            tls["certificate_sha256"] = certificate_fingerprint(certificates.get(cert_path) or "") or ""
    local = [name for name, r in regions.items() if r["role"] == "local"]
    return {
        "deployment": spec.get("deployment"),
        "site": spec.get("site"),
        # The plan's type; files rendered before commsgw-srv.json carried it: one region is a lab.
        "type": spec.get("deployment_type") or ("lab" if len(regions) == 1 else "production"),
        "transport": spec.get("transport"),
        "acg_socket": spec.get("acg_socket"),
        "local_region": local[0] if local else None,
        "regions": regions,
        "acl": routing["acl"],
        "tls": tls,
        "mcp": routing["mcp"],
    }


def runtime_state(spec: t.Mapping[str, t.Any], dispatcher: t.Any, subnets: t.Any) -> dict[str, t.Any]:
    """The running SBC's routing facts from its RPC answers (``None`` answers: not readable)."""
    out: dict[str, t.Any] = {"regions": None, "mcp": None, "acl": None, "peers": None}
    if dispatcher is not None:
        live = runtime_rows(dispatcher)
        out["peers"] = [{k: r[k] for k in ("set_id", "uri", "host", "port", "transport", "state", "probing")}
                        for r in live]
        rows = [_row(r["set_id"], r["uri"], r["priority"], r["attrs"]) for r in live]
        out.update({k: v for k, v in routing_state(spec, rows, []).items() if k != "acl"})
    if subnets is not None:
        out["acl"] = routing_state(spec, [], subnet_rows(subnets))["acl"]
    return out


# --------------------------------------------------------------------------------------------
# Reading a live SBC


def _read(path: str, nofollow: bool = False) -> t.Optional[str]:
    """The file's text, None when unreadable; ``nofollow``: a symlink counts as unreadable (the peers dir)."""
    try:
        if nofollow:
            return read_nofollow(path)
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def read_files(config_dir: str, names: t.Iterable[str]) -> dict[str, t.Optional[str]]:
    """The deployed text of each rendered file of ``names`` at its place under ``config_dir`` (None: absent or
    unreadable); in the peers dir, which the refresher's user owns, a symlink is never followed."""
    return {name: _read(file_path(config_dir, name), name in IN_PEERS_DIR) for name in names}


def rpc_client(options: t.Mapping[str, t.Any], cfg_text: t.Optional[str]) -> kr.JsonRpc:
    """The jsonrpcs client of the SBC: the endpoints kamailio.cfg declares, unless ``rpc_socket`` /
    ``rpc_fifo`` override them; ``run_dir`` (default /run/kamailio), ``rpc_timeout_s`` (default 3); only answers
    from root or ``run_as_user`` (default kamailio, the configured account, never the live run dir's owner)."""
    run_dir = options.get("run_dir") or kr.DEFAULT_RUN_DIR
    endpoints = kr.RpcEndpoints(socket=os.path.join(run_dir, kr.DEFAULT_SOCKET_NAME),
                                fifo=os.path.join(run_dir, kr.DEFAULT_FIFO_NAME))
    if cfg_text is not None:
        endpoints = kr.rpc_endpoints(cfg_text, run_dir)
    if options.get("rpc_socket") or options.get("rpc_fifo"):
        endpoints = kr.RpcEndpoints(socket=options.get("rpc_socket"), fifo=options.get("rpc_fifo"),
                                    fifo_reply_dir=endpoints.fifo_reply_dir)
    return kr.JsonRpc(endpoints, timeout_s=float(options.get("rpc_timeout_s") or 3.0),
                      kamailio_user=options.get("run_as_user", kr.DEFAULT_KAMAILIO_USER))


def _call(rpc: kr.JsonRpc, method: str, errors: list[str]) -> t.Any:
    try:
        return rpc.call(method)
    except (kr.RpcError, OSError, ValueError, TypeError) as exc:
        errors.append("cannot ask Kamailio for %s: %s" % (method, exc))
        return None


def read_pending(config_dir: str, options: t.Mapping[str, t.Any]) -> t.Optional[dict[str, t.Any]]:
    """A restart or reloads a push noted and the running Kamailio has not done yet (unless it restarted since)."""
    run_dir = options.get("run_dir") or kr.DEFAULT_RUN_DIR
    try:
        return pending(options.get("state_dir") or state_dir_for(config_dir), os.path.join(run_dir, "kamailio.pid"))
    except OSError as exc:
        return {"error": "cannot read the push state: %s" % exc}


def read_state(options: t.Mapping[str, t.Any]) -> t.Optional[dict[str, t.Any]]:
    """What the Kamailio SBC runs: its files under ``config_dir`` (default /etc/kamailio) and, unless
    ``runtime`` is false, its live peers and ACL over jsonrpcs (see ``rpc_client``). None when
    ``config_dir`` holds no commsgw.routing configuration."""
    config_dir = options.get("config_dir") or kr.DEFAULT_CONFIG_DIR
    files = read_files(config_dir, READ_FILES)
    tls = parse_tls_cfg(files["tls.cfg"] or "")
    certificates = {tls["certificate"]: _read(tls["certificate"])} if tls.get("certificate") else {}
    state = state_from_files(files, certificates)
    if state is None:
        return None
    state["platform"] = "kamailio"
    state["files"] = {name: sha256_text(text) for name, text in files.items()}
    state["listen"] = kr.listen_addresses(files["kamailio.cfg"] or "")
    state["pending"] = read_pending(config_dir, options) if options.get("read_pending", True) else None
    state["runtime"] = None
    if options.get("runtime", True):
        errors: list[str] = []
        rpc = rpc_client(options, files["kamailio.cfg"])
        spec = load_spec(files["commsgw-srv.json"]) or {}
        dispatcher, subnets = _call(rpc, "dispatcher.list", errors), _call(rpc, "permissions.subnetDump", errors)
        try:
            runtime = runtime_state(spec, dispatcher, subnets)
        except ReadbackError as exc:
            errors.append("cannot read the running state back: %s" % exc)
            runtime = runtime_state(spec, None, None)
        state["runtime"] = dict(runtime, source="jsonrpc %s" % (rpc.endpoints.socket or rpc.endpoints.fifo),
                                errors=errors)
    return state
