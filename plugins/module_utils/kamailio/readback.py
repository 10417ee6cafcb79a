# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's read-back of its files: rendered or deployed configuration files as a ``sbc.readback`` state.

The one parser of Kamailio's files: migration (``state_from_files`` on the deployed and the freshly
rendered files, like for like), the probe's SBC view (``destination_rows``) and the live read-back
(``kamailio.live``: the same rows from the RPC answers) all use it.

``commsgw-srv.json`` (trunk groups, set ids, MCP records), ``peers/dispatcher.list`` (peers),
``address.list`` (the ACG /28s, group ``ACL_GROUP``), ``tls.cfg`` (certificate paths).

Weights: ``weight`` is the rendered ``rweight`` Kamailio routes by (relative to the tier's largest, 1..100;
``WEIGHT_SCALE`` turns a plan's SRV weights into the same scale for ``sbc_readback.compare``), and
``plan_weight`` the plan's SRV weight the row was rendered from (what a migration's widen step keeps).
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.dispatcher import dispatcher_rows
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.platform import STATE_ARTEFACTS
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import (
    ACL_GROUP, MCP_SET_BASE, RETIRED_GROUP, parse_acl_tag, scale_rweights)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import (
    ReadbackError, net_key, parse_sip_uri, peer_key)

# Files of a rendered Kamailio configuration that carry routing facts (kamailio.cfg only adds the
# listen sockets and the set ids, which commsgw-srv.json repeats).
STATE_FILES = STATE_ARTEFACTS
READ_FILES = STATE_FILES + ("kamailio.cfg",)
DS_PRIORITY_BASE = 65535  # dispatcher priority = 65535 - SRV priority (module_utils.kamailio)
WEIGHT_SCALE = scale_rweights
_PEM_RE = re.compile(r"-----BEGIN CERTIFICATE-----\s*(.*?)\s*-----END CERTIFICATE-----", re.DOTALL)


# --------------------------------------------------------------------------------------------
# Rows


def _uri_address(uri: str) -> tuple[str, int]:
    try:
        host, port, dummy = parse_sip_uri(uri)
    except ValueError:
        raise ReadbackError("dispatcher destination %r is not a SIP URI" % uri) from None
    return host, port


def destination_row(set_id: int, uri: str, priority: t.Any, attrs: t.Mapping[str, str]) -> dict[str, t.Any]:
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
    return [destination_row(r["set_id"], r["uri"], r["priority"], r["attrs"]) for r in dispatcher_rows(text, ReadbackError)]


def destination_rows(text: str) -> list[dict[str, t.Any]]:
    """dispatcher.list as the probe's SBC view reads it, in the view's neutral terms: group (the set id), uri,
    host, port, transport per row; the file has no states."""
    found = []
    for entry in dispatcher_rows(text):
        host, port, transport = parse_sip_uri(entry["uri"])
        found.append({"group": str(entry["set_id"]), "uri": entry["uri"], "host": host, "port": port,
                      "transport": transport, "detail": "set %d" % entry["set_id"]})
    return found


def acl_row(line: str, fields: t.Sequence[str], group: int = ACL_GROUP) -> t.Optional[dict[str, t.Any]]:
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
        row = acl_row(line, fields, group)
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
