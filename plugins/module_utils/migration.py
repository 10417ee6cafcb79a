# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Region migration (R-23): what an SBC runs now, what it would run, and the safe way between them.

When Microsoft migrates a service region, its hostname, /28 ranges and so its SRV targets and the
ACL all change. This module is pure and typed; ``plugins/modules/migration_diff.py`` and
``migration_wait.py`` wrap it and ``playbooks/migrate.yml`` drives it.

* ``state_from_files``: the routing facts of a Kamailio SBC read back from its deployed files
  (``commsgw-srv.json``, ``dispatcher.list``, ``address.list``, ``tls.cfg``). The new side is read
  from the freshly rendered files with the same function, so both sides are compared like for like
  and nothing here re-derives a routing decision the plan did not make.
* ``semantic_diff`` + ``summary_lines``: deployment type (lab -> production), pairing (the site's
  local region), regions added/removed, hostname and SRV name per region, /28 ranges added and
  removed, SRV targets gained and lost, ACL ranges added and removed, certificate changes.
* ``transition_plan``: the plan of the in-flight step. Make-before-break: every trunk group keeps
  its old peers next to the new ones and the ACL admits old and new ranges, so a site never stops
  accepting traffic from ranges still in use and never has an empty peer list; once the new peers
  are proven the final plan narrows both.
* ``preflight``: refuses a migration that would leave a trunk group without peers.
* ``peer_health``: the gate's reading of ``dispatcher.list`` over jsonrpc.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import ipaddress
import json
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import ACL_GROUP, parse_acl_tag
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio_dispatcher import dispatcher_rows

# Files of a rendered Kamailio configuration that carry routing facts (kamailio.cfg only adds the
# listen sockets and the set ids, which commsgw-srv.json repeats).
STATE_FILES = ("commsgw-srv.json", "dispatcher.list", "address.list", "tls.cfg")
DS_PRIORITY_BASE = 65535  # dispatcher priority = 65535 - SRV priority (module_utils.kamailio)
MCP_SET_BASE = 1000  # MCP dispatcher set ids start here (module_utils.kamailio)
_PEM_RE = re.compile(r"-----BEGIN CERTIFICATE-----\s*(.*?)\s*-----END CERTIFICATE-----", re.DOTALL)


class MigrationError(ValueError):
    """The deployed files cannot be read back, or the migration would be unsafe."""


# --------------------------------------------------------------------------------------------
# Reading a configuration back


def _uri_address(uri: str) -> tuple[str, int]:
    match = re.match(r"^sips?:(?:[^@]*@)?\[?([^\]:;>]+)\]?(?::(\d+))?", uri.strip(), re.IGNORECASE)
    if not match:
        raise MigrationError("dispatcher destination %r is not a SIP URI" % uri)
    return match.group(1).lower(), int(match.group(2) or 5060)


def parse_dispatcher_rows(text: str) -> list[dict[str, t.Any]]:
    """``setid uri flags priority attrs`` rows of a dispatcher.list (comments dropped), in migration's terms.

    The rows come from the one dispatcher.list parser (``kamailio_dispatcher.dispatcher_rows``).
    """
    rows = []
    for row in dispatcher_rows(text, MigrationError):
        address, port = _uri_address(row["uri"])
        attrs, field = row["attrs"], row["priority"]
        priority = int(field) if field is not None and field.lstrip("-").isdigit() else 0
        rows.append({"set": row["set_id"], "uri": row["uri"], "address": address, "port": port,
                     "ds_priority": priority, "rweight": int(attrs.get("rweight", "1") or 1),
                     # The plan's weight (kamailio.dispatcher_sets); rows written before it carried none: rweight.
                     "weight": int(attrs.get("srvweight") or attrs.get("rweight", "1") or 1),
                     "target": attrs.get("target", address).rstrip(".").lower()})
    return rows


def parse_address_rows(text: str) -> list[dict[str, str]]:
    """``group address mask port tag`` rows of a permissions address.list -> network, region and the
    range's TLS name (empty when the file predates names in tags). Only the ACG group's rows."""
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) < 3:
            raise MigrationError("address.list line %r is not 'group address mask ...'" % line[:80])
        if fields[0] != str(ACL_GROUP):
            continue  # another group (the core side's allowed sources): not an ACG range
        try:
            network = ipaddress.IPv4Network("%s/%s" % (fields[1], fields[2]), strict=False)
        except ValueError as exc:
            raise MigrationError("address.list line %r: %s" % (line[:80], exc)) from exc
        tag = parse_acl_tag(fields[4] if len(fields) > 4 else "")
        rows.append({"network": str(network), "region": tag["region"], "hostname": tag["tls"]})
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


def _net_key(value: str) -> t.Any:
    return ipaddress.ip_network(value, strict=False)


def _peer_key(peer: t.Mapping[str, t.Any]) -> tuple[t.Any, int]:
    return ipaddress.ip_address(peer["address"]), int(peer["port"])


def state_from_files(files: t.Mapping[str, t.Optional[str]],
                     certificates: t.Optional[t.Mapping[str, t.Optional[str]]] = None) -> t.Optional[dict[str, t.Any]]:
    """The routing facts of one SBC's configuration, or None when it has none (never onboarded).

    ``certificates`` maps a certificate path named in tls.cfg to that file's PEM text (when readable),
    so that a certificate replaced under the same path is seen too.
    """
    spec_text = files.get("commsgw-srv.json")
    if not spec_text:
        return None
    try:
        spec = json.loads(spec_text)
    except ValueError as exc:
        raise MigrationError("commsgw-srv.json is not JSON: %s" % exc) from exc
    if not isinstance(spec, dict) or not isinstance(spec.get("trunk_groups"), list):
        raise MigrationError("commsgw-srv.json has no trunk_groups: not a commsgw.routing configuration")
    set_region: dict[int, str] = {}
    groups = sorted(spec["trunk_groups"], key=lambda g: int(g["order"]))
    by_order = {int(g["order"]): g["region"] for g in groups}
    for entry in spec.get("sets") or []:
        set_region[int(entry["id"])] = by_order.get(int(entry.get("group_order", int(entry["id"]) // 100)), "")
    regions: dict[str, dict[str, t.Any]] = {}
    for group in groups:
        regions[group["region"]] = {
            "order": int(group["order"]), "role": group.get("role"), "hostname": group.get("hostname"),
            "srv_name": group.get("srv_name"),
            "ip_ranges": sorted({str(r) for r in group.get("ip_ranges") or []}, key=_net_key),
            "peers": [],
        }
    # MCP records (R-18..R-20) have dispatcher sets of their own, from MCP_SET_BASE up.
    mcp_by_srv = {r["srv_name"]: r for r in spec.get("mcp_records") or []}
    mcp_set_srv = {int(e["id"]): e["srv_name"] for e in spec.get("mcp_sets") or []}
    mcp: dict[str, dict[str, t.Any]] = {}
    for record in mcp_by_srv.values():
        mcp[record["region"]] = {"hostname": record.get("hostname"), "srv_name": record["srv_name"], "peers": []}
    for row in parse_dispatcher_rows(files.get("dispatcher.list") or ""):
        if row["set"] >= MCP_SET_BASE:
            record = mcp_by_srv.get(mcp_set_srv.get(row["set"], ""))
            if record is None:
                raise MigrationError("dispatcher.list set %d belongs to no MCP record of commsgw-srv.json" % row["set"])
            mcp[record["region"]]["peers"].append({"target": row["target"], "address": row["address"],
                                                   "port": row["port"]})
            continue
        region = set_region.get(row["set"]) or by_order.get(row["set"] // 100)
        if region not in regions:
            raise MigrationError("dispatcher.list set %d belongs to no trunk group of commsgw-srv.json" % row["set"])
        regions[region]["peers"].append({
            "target": row["target"], "address": row["address"], "port": row["port"],
            "priority": DS_PRIORITY_BASE - row["ds_priority"], "weight": row["weight"]})
    for region in regions.values():
        region["peers"].sort(key=lambda p: (p["priority"], _peer_key(p)))
    acl = parse_address_rows(files.get("address.list") or "")
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
        # A range's TLS name; files written before tags carried it: its region's hostname then.
        "acl": sorted(({"network": e["network"], "region": e["region"],
                        "hostname": e["hostname"] or (regions.get(e["region"]) or {}).get("hostname") or ""}
                       for e in acl), key=lambda e: (_net_key(e["network"]), e["region"])),
        "tls": tls,
        "mcp": mcp,
    }


def plan_state(plan: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The facts ``state_from_files`` reads, taken from a routing plan instead (unit tests, reports)."""
    regions = {}
    for group in plan["trunk_groups"]:
        peers = []
        for peer in group.get("peers") or []:
            for address in peer.get("addresses") or []:
                peers.append({"target": peer["target"], "address": address, "port": int(peer["port"]),
                              "priority": int(peer["priority"]), "weight": int(peer["weight"])})
        regions[group["region"]] = {"order": group["order"], "role": group["role"], "hostname": group["hostname"],
                                    "srv_name": group["srv_name"],
                                    "ip_ranges": sorted(group["ip_ranges"], key=_net_key),
                                    "peers": sorted(peers, key=lambda p: (p["priority"], _peer_key(p)))}
    local = [g["region"] for g in plan["trunk_groups"] if g["role"] == "local"]
    return {"deployment": plan["deployment"]["name"], "site": plan["site"]["name"],
            "type": plan["deployment"]["type"], "transport": plan["trunk_groups"][0]["transport"],
            "acg_socket": None, "local_region": local[0] if local else None, "regions": regions,
            "acl": [dict(e) for e in plan["acl"]["ranges"]], "tls": None, "mcp": {}}


# --------------------------------------------------------------------------------------------
# Semantic difference


def _change(before: t.Any, after: t.Any) -> t.Optional[dict[str, t.Any]]:
    return None if before == after else {"before": before, "after": after}


def _peer_label(peer: t.Mapping[str, t.Any]) -> str:
    return "%s (%s:%d)" % (peer["target"], peer["address"], int(peer["port"]))


def semantic_diff(old: t.Optional[t.Mapping[str, t.Any]], new: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """What changes between the running configuration ``old`` and ``new`` (both ``state_from_files``)."""
    if old is None:
        return {"onboarded": False, "changes": True, "type": None, "mcp": [], "pairing": None, "deployment": None,
                "transport": None, "regions_added": sorted(new["regions"]), "regions_removed": [], "regions": [],
                "acl": {"added": [e["network"] for e in new["acl"]], "removed": []}, "tls": None}
    old_regions, new_regions = old["regions"], new["regions"]
    regions = []
    for name in sorted(set(old_regions) | set(new_regions), key=lambda n: (
            (new_regions.get(n) or old_regions.get(n) or {}).get("order", 99), n)):
        before, after = old_regions.get(name), new_regions.get(name)
        entry: dict[str, t.Any] = {"region": name, "status": "added" if before is None else
                                   "removed" if after is None else "kept"}
        before = before or {"hostname": None, "srv_name": None, "role": None, "order": None, "ip_ranges": [],
                            "peers": []}
        after = after or {"hostname": None, "srv_name": None, "role": None, "order": None, "ip_ranges": [],
                          "peers": []}
        for key in ("hostname", "srv_name", "role", "order"):
            entry[key] = _change(before[key], after[key])
        entry["ranges_added"] = sorted(set(after["ip_ranges"]) - set(before["ip_ranges"]), key=_net_key)
        entry["ranges_removed"] = sorted(set(before["ip_ranges"]) - set(after["ip_ranges"]), key=_net_key)
        old_peers = {_peer_key(p): p for p in before["peers"]}
        new_peers = {_peer_key(p): p for p in after["peers"]}
        entry["targets_gained"] = [_peer_label(new_peers[k]) for k in sorted(set(new_peers) - set(old_peers))]
        entry["targets_lost"] = [_peer_label(old_peers[k]) for k in sorted(set(old_peers) - set(new_peers))]
        entry["targets_reweighted"] = [
            "%s priority %d->%d weight %d->%d" % (_peer_label(new_peers[k]), old_peers[k]["priority"],
                                                  new_peers[k]["priority"], old_peers[k]["weight"],
                                                  new_peers[k]["weight"])
            for k in sorted(set(new_peers) & set(old_peers))
            if (old_peers[k]["priority"], old_peers[k]["weight"]) != (new_peers[k]["priority"], new_peers[k]["weight"])]
        entry["changed"] = entry["status"] != "kept" or any(
            entry[k] for k in ("hostname", "srv_name", "role", "order", "ranges_added", "ranges_removed",
                               "targets_gained", "targets_lost", "targets_reweighted"))
        regions.append(entry)
    old_acl = {e["network"] for e in old["acl"]}
    new_acl = {e["network"] for e in new["acl"]}
    tls = None
    if old.get("tls") or new.get("tls"):
        before_tls, after_tls = old.get("tls") or {}, new.get("tls") or {}
        tls = {key: _change(before_tls.get(key), after_tls.get(key))
               for key in ("certificate", "private_key", "ca_list", "certificate_sha256")}
        tls = {k: v for k, v in tls.items() if v is not None} or None
    mcp = []
    old_mcp, new_mcp = old.get("mcp") or {}, new.get("mcp") or {}
    for name in sorted(set(old_mcp) | set(new_mcp)):
        before = old_mcp.get(name) or {"hostname": None, "peers": []}
        after = new_mcp.get(name) or {"hostname": None, "peers": []}
        old_targets = {_peer_label(p) for p in before["peers"]}
        new_targets = {_peer_label(p) for p in after["peers"]}
        entry = {"region": name, "hostname": _change(before["hostname"], after["hostname"]),
                 "targets_gained": sorted(new_targets - old_targets), "targets_lost": sorted(old_targets - new_targets)}
        if entry["hostname"] or entry["targets_gained"] or entry["targets_lost"]:
            mcp.append(entry)
    diff = {
        "onboarded": True,
        "mcp": mcp,
        "deployment": _change(old["deployment"], new["deployment"]),
        "type": _change(old["type"], new["type"]),
        "pairing": _change(old["local_region"], new["local_region"]),
        "transport": _change(old["transport"], new["transport"]),
        "regions_added": [r["region"] for r in regions if r["status"] == "added"],
        "regions_removed": [r["region"] for r in regions if r["status"] == "removed"],
        "regions": [r for r in regions if r["changed"]],
        "acl": {"added": sorted(new_acl - old_acl, key=_net_key), "removed": sorted(old_acl - new_acl, key=_net_key)},
        "tls": tls,
    }
    diff["changes"] = bool(diff["deployment"] or diff["type"] or diff["pairing"] or diff["transport"]
                           or diff["regions"] or diff["acl"]["added"] or diff["acl"]["removed"] or diff["tls"]
                           or diff["mcp"])
    return diff


def summary_lines(diff: t.Mapping[str, t.Any], site: str = "") -> list[str]:
    """The semantic difference as short lines for humans (one fact per line)."""
    prefix = "%s: " % site if site else ""
    if not diff["onboarded"]:
        return [prefix + "no configuration deployed yet (first onboarding): regions %s, ACL %s"
                % (", ".join(diff["regions_added"]), ", ".join(diff["acl"]["added"]))]
    if not diff["changes"]:
        return [prefix + "no routing change"]
    lines = []
    for key, label in (("deployment", "deployment"), ("type", "deployment type"), ("transport", "transport")):
        if diff[key]:
            lines.append("%s%s %s -> %s" % (prefix, label, diff[key]["before"], diff[key]["after"]))
    if diff["pairing"]:
        lines.append("%ssite re-paired: local region %s -> %s" % (prefix, diff["pairing"]["before"],
                                                                  diff["pairing"]["after"]))
    for region in diff["regions"]:
        name = region["region"]
        if region["status"] != "kept":
            lines.append("%sregion %s %s" % (prefix, name, region["status"]))
        for key in ("hostname", "srv_name", "role"):
            if region[key] and region["status"] == "kept":
                change = region[key]
                lines.append("%sregion %s %s %s -> %s" % (prefix, name, key, change["before"], change["after"]))
        for key, label in (("ranges_added", "/28 added"), ("ranges_removed", "/28 removed"),
                           ("targets_gained", "SRV target gained"), ("targets_lost", "SRV target lost"),
                           ("targets_reweighted", "SRV target re-weighted")):
            for value in region[key]:
                lines.append("%sregion %s %s: %s" % (prefix, name, label, value))
    for entry in diff.get("mcp") or []:
        if entry["hostname"]:
            lines.append("%sMCP region %s hostname %s -> %s" % (prefix, entry["region"], entry["hostname"]["before"],
                                                                entry["hostname"]["after"]))
        for key, label in (("targets_gained", "target gained"), ("targets_lost", "target lost")):
            for value in entry[key]:
                lines.append("%sMCP region %s %s: %s" % (prefix, entry["region"], label, value))
    for value in diff["acl"]["added"]:
        lines.append("%sACL admits %s" % (prefix, value))
    for value in diff["acl"]["removed"]:
        lines.append("%sACL no longer admits %s" % (prefix, value))
    for key, change in sorted((diff["tls"] or {}).items()):
        lines.append("%scertificate %s %s -> %s" % (prefix, key, change["before"] or "-", change["after"] or "-"))
    return lines


def file_diffs(current: t.Mapping[str, t.Optional[str]], new: t.Mapping[str, str], config_dir: str
               ) -> dict[str, str]:
    """Unified diff of every rendered file that differs from the deployed one."""
    diffs = {}
    for name in sorted(new):
        before = current.get(name)
        if before == new[name]:
            continue
        path = "%s/%s" % (config_dir.rstrip("/"), name)
        lines = difflib.unified_diff((before or "").splitlines(True), new[name].splitlines(True),
                                     fromfile=path + (" (deployed)" if before is not None else " (absent)"),
                                     tofile=path + " (new)")
        diffs[name] = "".join(lines)
    return diffs


# --------------------------------------------------------------------------------------------
# The in-flight step


def preflight(new_plan: t.Mapping[str, t.Any]) -> list[str]:
    """Reasons the new plan must not be rolled out; empty when it may."""
    problems = []
    for group in new_plan["trunk_groups"]:
        peers = group.get("peers")
        if peers is None:
            problems.append("trunk group %s (%s): SRV record %s was not resolved" % (
                group["order"], group["region"], group["srv_name"]))
        elif not [a for p in peers for a in p.get("addresses") or []]:
            problems.append("trunk group %s (%s): SRV record %s gives no peer address; a migration never leaves "
                            "a site with an empty peer list" % (group["order"], group["region"], group["srv_name"]))
    return problems


def transition_plan(new_plan: t.Mapping[str, t.Any], old: t.Optional[t.Mapping[str, t.Any]]) -> dict[str, t.Any]:
    """The new plan widened by what the site runs now: old peers kept next to the new ones per region
    (matched by region name) and every old ACL range still admitted.

    Why: until the new peers and ranges are proven, calls must still find a working peer and ACG
    traffic from the old ranges must still be admitted. Trunk-group order, hostnames and every other
    setting are the new plan's; only peers, ranges and the ACL are widened, and the old peers and
    ranges keep their old TLS name (``peers[].hostname``, ``acl.ranges[].hostname``).
    """
    plan = json.loads(json.dumps(new_plan))  # deep copy of plain data
    if old is None:
        return plan
    for group in plan["trunk_groups"]:
        before = old["regions"].get(group["region"])
        if before is None:
            continue
        peers = list(group.get("peers") or [])
        have = {(a, int(p["port"])) for p in peers for a in p.get("addresses") or []}
        kept = [p for p in before["peers"] if (p["address"], int(p["port"])) not in have]
        for peer in kept:
            kept_peer = {"target": peer["target"], "port": int(peer["port"]), "priority": int(peer["priority"]),
                         "weight": int(peer["weight"]), "addresses": [peer["address"]]}
            if before.get("hostname") and before["hostname"] != group["hostname"]:
                # R-24 during the flight: an old peer is still addressed, and checked, by its old name.
                kept_peer["hostname"] = before["hostname"]
            peers.append(kept_peer)
        # plan.py's canonical peer order, so the rendered rows are stable.
        group["peers"] = sorted(peers, key=lambda p: (int(p["priority"]), -int(p["weight"]), p["target"],
                                                      int(p["port"])))
        if kept:
            group["ip_ranges"] = sorted(set(group["ip_ranges"]) | set(before["ip_ranges"]), key=_net_key)
    networks = {e["network"] for e in plan["acl"]["ranges"]}
    extra = [dict(e) for e in old["acl"] if e["network"] not in networks]
    plan["acl"]["ranges"] = sorted(plan["acl"]["ranges"] + extra,
                                   key=lambda e: (_net_key(e["network"]), e["region"]))
    for record in (plan.get("mcp") or {}).get("records") or []:  # MCP may use every /28 admitted
        record["ip_ranges"] = sorted(set(record["ip_ranges"]) | {e["network"] for e in extra}, key=_net_key)
    return plan


def needs_transition(new_plan: t.Mapping[str, t.Any], old: t.Optional[t.Mapping[str, t.Any]]) -> bool:
    """True when going straight to the new plan would drop a peer or an ACL range in use now."""
    if old is None:
        return False
    return plan_state(transition_plan(new_plan, old)) != plan_state(new_plan)


def new_peer_addresses(new_plan: t.Mapping[str, t.Any], old: t.Optional[t.Mapping[str, t.Any]]) -> list[str]:
    """``address:port`` of every peer of the new plan the SBC does not have now: the ones to prove."""
    have = set()
    if old is not None:
        have = {"%s:%d" % (p["address"], int(p["port"])) for r in old["regions"].values() for p in r["peers"]}
    wanted = []
    for group in new_plan["trunk_groups"]:
        for peer in group.get("peers") or []:
            for address in peer.get("addresses") or []:
                key = "%s:%d" % (address, int(peer["port"]))
                if key not in have and key not in wanted:
                    wanted.append(key)
    return wanted


def dropped_peer_addresses(new_plan: t.Mapping[str, t.Any], old: t.Optional[t.Mapping[str, t.Any]]) -> list[str]:
    """``address:port`` of every peer the SBC has now and the new plan drops."""
    if old is None:
        return []
    keep = {"%s:%d" % (a, int(p["port"])) for g in new_plan["trunk_groups"] for p in g.get("peers") or []
            for a in p.get("addresses") or []}
    return sorted({"%s:%d" % (p["address"], int(p["port"])) for r in old["regions"].values() for p in r["peers"]}
                  - keep)


# --------------------------------------------------------------------------------------------
# Peer health as the running Kamailio sees it


def dispatcher_states(result: t.Any) -> dict[str, str]:
    """``address:port`` -> dispatcher flags (``AP``, ``IP``, ``TP``...) from the dispatcher.list RPC result."""
    states: dict[str, str] = {}
    if not isinstance(result, dict):
        raise MigrationError("dispatcher.list returned %r" % type(result).__name__)
    for record in result.get("RECORDS") or []:
        targets = (record.get("SET") or {}).get("TARGETS") or []
        if isinstance(targets, dict):
            targets = [targets]
        for entry in targets:
            dest = entry.get("DEST") or entry
            address, port = _uri_address(str(dest.get("URI")))
            # A peer in several sets is as healthy as its worst entry.
            flags = str(dest.get("FLAGS", ""))
            key = "%s:%d" % (address, port)
            if key not in states or not flags.upper().startswith("A"):
                states[key] = flags
    return states


def peer_health(states: t.Mapping[str, str], required: t.Sequence[str], absent: t.Sequence[str] = ()
                ) -> dict[str, t.Any]:
    """Which required peers are active (``A``: answered its pings; ``T``rying or ``I``nactive are not),
    which are missing from the running list, and which peers that should be gone are still there."""
    active = [p for p in required if states.get(p, "").upper().startswith("A")]
    missing = [p for p in required if p not in states]
    unhealthy = ["%s %s" % (p, states[p]) for p in required if p in states and p not in active]
    lingering = [p for p in absent if p in states]
    return {"active": active, "missing": missing, "unhealthy": unhealthy, "lingering": lingering,
            "ok": not missing and not unhealthy and not lingering and len(active) == len(required),
            "peer_count": len(states)}
