# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Region migration (R-23): the semantic difference between what an SBC runs and what it would run.

Both sides are read-back states (``sbc.readback``: the platform's reader applied to the deployed and
to the freshly rendered files), so they are compared like for like in the plan's vocabulary:
deployment type (lab -> production), pairing (the site's local region), regions added/removed,
hostname and SRV name per region, /28 ranges added and removed, SRV targets gained and lost, ACL
ranges added and removed, certificate changes, MCP records.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import (
    delta, net_key, peer_key, peer_label)

_REGION_FIELDS = ("hostname", "srv_name", "role", "order")
_NO_REGION: dict[str, t.Any] = dict({k: None for k in _REGION_FIELDS}, ip_ranges=[], peers=[])
_TLS_FIELDS = ("certificate", "private_key", "ca_list", "certificate_sha256")


def _change(before: t.Any, after: t.Any) -> t.Optional[dict[str, t.Any]]:
    return None if before == after else {"before": before, "after": after}


def _reweighted(old_peers: t.Mapping[t.Any, t.Mapping[str, t.Any]], new_peers: t.Mapping[t.Any, t.Mapping[str, t.Any]]
                ) -> list[str]:
    lines = []
    for key in sorted(set(new_peers) & set(old_peers)):
        old, new = old_peers[key], new_peers[key]
        if (old["priority"], old["weight"]) != (new["priority"], new["weight"]):
            lines.append("%s priority %d->%d weight %d->%d" % (
                peer_label(new), old["priority"], new["priority"], old["weight"], new["weight"]))
    return lines


def _region(name: str, before: t.Optional[t.Mapping[str, t.Any]], after: t.Optional[t.Mapping[str, t.Any]]
            ) -> dict[str, t.Any]:
    """One region's changes: its fields, /28s, SRV targets (by address and port) and their weights."""
    entry: dict[str, t.Any] = {"region": name, "status": "added" if before is None else
                               "removed" if after is None else "kept"}
    before, after = before or _NO_REGION, after or _NO_REGION
    for key in _REGION_FIELDS:
        entry[key] = _change(before[key], after[key])
    entry["ranges_added"], entry["ranges_removed"] = delta(before["ip_ranges"], after["ip_ranges"], net_key)
    old_peers = {peer_key(p): p for p in before["peers"]}
    new_peers = {peer_key(p): p for p in after["peers"]}
    gained, lost = delta(old_peers, new_peers)
    entry["targets_gained"] = [peer_label(new_peers[k]) for k in gained]
    entry["targets_lost"] = [peer_label(old_peers[k]) for k in lost]
    entry["targets_reweighted"] = _reweighted(old_peers, new_peers)
    entry["changed"] = entry["status"] != "kept" or any(
        entry[k] for k in _REGION_FIELDS + ("ranges_added", "ranges_removed", "targets_gained", "targets_lost",
                                            "targets_reweighted"))
    return entry


def _tls(old: t.Mapping[str, t.Any], new: t.Mapping[str, t.Any]) -> t.Optional[dict[str, t.Any]]:
    if not (old.get("tls") or new.get("tls")):
        return None
    before, after = old.get("tls") or {}, new.get("tls") or {}
    changes = {key: _change(before.get(key), after.get(key)) for key in _TLS_FIELDS}
    return {k: v for k, v in changes.items() if v is not None} or None


def _mcp(old: t.Mapping[str, t.Any], new: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    found = []
    old_mcp, new_mcp = old.get("mcp") or {}, new.get("mcp") or {}
    for name in sorted(set(old_mcp) | set(new_mcp)):
        before = old_mcp.get(name) or {"hostname": None, "peers": []}
        after = new_mcp.get(name) or {"hostname": None, "peers": []}
        gained, lost = delta((peer_label(p) for p in before["peers"]), (peer_label(p) for p in after["peers"]))
        entry = {"region": name, "hostname": _change(before["hostname"], after["hostname"]),
                 "targets_gained": gained, "targets_lost": lost}
        if entry["hostname"] or gained or lost:
            found.append(entry)
    return found


def _first_onboarding(new: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    return {"onboarded": False, "changes": True, "type": None, "mcp": [], "pairing": None, "deployment": None,
            "transport": None, "regions_added": sorted(new["regions"]), "regions_removed": [], "regions": [],
            "acl": {"added": [e["network"] for e in new["acl"]], "removed": []}, "tls": None}


def semantic_diff(old: t.Optional[t.Mapping[str, t.Any]], new: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """What changes between the running configuration ``old`` and ``new`` (both read-back states)."""
    if old is None:
        return _first_onboarding(new)
    old_regions, new_regions = old["regions"], new["regions"]
    order = sorted(set(old_regions) | set(new_regions),
                   key=lambda n: ((new_regions.get(n) or old_regions.get(n) or {}).get("order", 99), n))
    regions = [_region(name, old_regions.get(name), new_regions.get(name)) for name in order]
    acl_added, acl_removed = delta((e["network"] for e in old["acl"]), (e["network"] for e in new["acl"]), net_key)
    diff = {
        "onboarded": True,
        "mcp": _mcp(old, new),
        "deployment": _change(old["deployment"], new["deployment"]),
        "type": _change(old["type"], new["type"]),
        "pairing": _change(old["local_region"], new["local_region"]),
        "transport": _change(old["transport"], new["transport"]),
        "regions_added": [r["region"] for r in regions if r["status"] == "added"],
        "regions_removed": [r["region"] for r in regions if r["status"] == "removed"],
        "regions": [r for r in regions if r["changed"]],
        "acl": {"added": acl_added, "removed": acl_removed},
        "tls": _tls(old, new),
    }
    diff["changes"] = bool(diff["regions"] or diff["acl"]["added"] or diff["acl"]["removed"] or diff["mcp"] or any(
        diff[k] for k in ("deployment", "type", "pairing", "transport", "tls")))
    return diff
