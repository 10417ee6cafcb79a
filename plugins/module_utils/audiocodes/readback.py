# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mediant rows (read from its ini file) -> the platform-neutral state of ``sbc.readback``.

What the device holds, read back in the plan's vocabulary:

* regions: each IP Group named ``CGW-ACG-<order>-<role>-<region>`` (render.group_name); its SIP
  Group Name is the regional hostname, its Proxy Set's addresses are the peers (address, port, SRV
  priority and weight as rendered: the Mediant keeps weights as given, so no weight scale), the SRV
  target of an address is the Internal DNS name that lists it, and the region's /28s are the networks
  its Classification rules admit.
* acl: every network the ACG-side allow rules admit, with the region and hostname of their IP Group.
* mcp: the ``CGW-MCP-...`` IP Groups likewise.
* tls: the TLS Context name the ACG Proxy Sets use (certificate files are not in the ini file).

What the device does not hold (deployment, site, type: the inventory's facts about this host) comes
from ``identity``; ``srv_name`` is the plan's rule ``_sip._tls.<hostname>``. Standard library only.
"""

from __future__ import annotations

import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.patterns import patterns_networks
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import Rows, target_of
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import net_key, peer_key

_GROUP = re.compile(r"^CGW-(ACG|MCP)-([0-9]+)-(local|remote)-([A-Za-z0-9_-]+)\Z")
# The Mediant keeps each SRV weight as given (Proxy Address 'weight'): compare() needs no scaling.
WEIGHT_SCALE = None


def _peers(rows: Rows, proxy_set: str, targets: t.Mapping[str, t.Collection[str]], hostname: t.Optional[str]
           ) -> list[dict[str, t.Any]]:
    set_index = next((i for i, r in rows["proxy_set"].items() if r.get("proxy-name") == proxy_set), None)
    if set_index is None:
        return []
    peers = []
    for index, row in sorted(rows["proxy_ip"].items()):
        if index[:1] != set_index:
            continue
        address, _sep, port = str(row.get("proxy-address", "")).rpartition(":")
        peers.append({"target": target_of(targets.get(address) or {address}, hostname) or address, "address": address, "port": int(port or 0),
                      "priority": int(row.get("priority", 0)), "weight": int(row.get("weight", 0))})
    return sorted(peers, key=lambda p: (p["priority"], peer_key(p)))


def _admitted(rows: Rows, group: str) -> list[str]:
    found = [r["src-ip-address"] for _i, r in sorted(rows["classification"].items())
             if r.get("src-ip-group-name") == group and r.get("action-type") == "allow"]
    return patterns_networks(found)


def state_from_rows(rows: Rows, identity: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The neutral state (``sbc.readback`` docstring) of our rows on a device."""
    targets: dict[str, set[str]] = {}
    for _index, row in sorted(rows["dns"].items()):
        for key in ("first-ip-address", "second-ip-address", "third-ip-address"):
            if row.get(key):
                targets.setdefault(row[key], set()).add(row["domain-name"])
    regions: dict[str, dict[str, t.Any]] = {}
    mcp: dict[str, dict[str, t.Any]] = {}
    acl: list[dict[str, str]] = []
    tls = None
    for _index, group in sorted(rows["ip_group"].items()):
        match = _GROUP.match(str(group.get("name", "")))
        if not match:
            continue
        kind, order, role, region = match.group(1), int(match.group(2)), match.group(3), match.group(4)
        hostname = group.get("sip-group-name")
        peers = _peers(rows, str(group.get("proxy-set-name")), targets, hostname)
        srv = "_sip._tls." + hostname if hostname else None
        if kind == "MCP":
            mcp[region] = {"hostname": hostname, "srv_name": srv,
                           "peers": [{k: p[k] for k in ("target", "address", "port")} for p in peers]}
            continue
        networks = _admitted(rows, group["name"])
        regions[region] = {"order": order, "role": role, "hostname": hostname, "srv_name": srv,
                           "ip_ranges": sorted(networks, key=net_key), "peers": peers}
        acl += [{"network": n, "region": region, "hostname": hostname} for n in networks]
        proxy = next((r for r in rows["proxy_set"].values() if r.get("proxy-name") == group.get("proxy-set-name")),
                     {})
        tls = tls or proxy.get("tls-context-name")
    local = [name for name, region in regions.items() if region["role"] == "local"]
    transport = next((r.get("transport-type") for i, r in sorted(rows["proxy_ip"].items())
                      if any(g.get("proxy-set-name") == _set_name(rows, i[0])
                             and _GROUP.match(str(g.get("name", ""))) for g in rows["ip_group"].values())),
                     identity.get("transport"))
    return {"deployment": identity.get("deployment"), "site": identity.get("site"), "type": identity.get("type"),
            "transport": transport, "acg_socket": None, "local_region": local[0] if local else None,
            "regions": regions, "acl": sorted(acl, key=lambda e: (net_key(e["network"]), e["region"])),
            "tls": None if tls is None else {"certificate": None, "private_key": None, "ca_list": None,
                                             "certificate_sha256": None, "context": tls},
            "mcp": mcp}


def _set_name(rows: Rows, index: int) -> t.Optional[str]:
    return (rows["proxy_set"].get((index,)) or {}).get("proxy-name")
