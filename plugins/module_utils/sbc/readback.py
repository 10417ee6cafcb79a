# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-back (``gathered``), platform-neutral: what an SBC runs, in the routing plan's vocabulary.

A platform's reader (its ``read_state`` hook, ``sbc.contract``) turns what the SBC holds and runs into a
*state*; migration compares two states, the probe reads its peer view from the same parser, and
``compare`` names every difference between a routing plan and a state.

A state (every key present; ``None`` where a platform cannot say)::

    deployment, site, type, transport, acg_socket, local_region
    regions:  {region: {order, role, hostname, srv_name, ip_ranges: [cidr],
                        peers: [{target, address, port, priority, weight}]}}
    acl:      [{network, region, hostname}]      # the ACG /28s the SBC admits
    mcp:      {region: {hostname, srv_name, peers: [{target, address, port}]}}
    tls:      {certificate, private_key, ca_list, certificate_sha256} or None
    artefacts: {artefact name: sha256 hex or None}  # read-back only
    runtime:  {source, regions, acl, peers: [{group, uri, host, port, transport, state, detail}], errors}
              or None                            # read-back only: the live view of the running SBC
    pending:  {restart, reload: [commands], artefacts: [names], since: epoch seconds}, {error} or None
                                                 # read-back only: deployed artefacts the running SBC has not
                                                 # taken yet (a push cut off before its restart or reload)

Standard library only.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import time
import typing as t

WeightScale = t.Callable[[t.Sequence[int]], t.List[int]]


class ReadbackError(ValueError):
    """The SBC's configuration cannot be read back in the plan's vocabulary."""


# re.ASCII: a str pattern's \d would also take other scripts' digits, which int() then accepts.
_URI_RE = re.compile(r"^sips?:(?:[^@;>]*@)?(\[[^\]]+\]|[^:;>]+)(?::(\d+))?((?:[;>].*)?)$", re.IGNORECASE | re.ASCII)


def parse_sip_uri(uri: str) -> tuple[str, int, str]:
    """(host, port, transport) of a destination URI; port defaults by transport (5061 for TLS)."""
    match = _URI_RE.match(uri.strip())
    if not match:
        raise ValueError("not a SIP URI: %r" % uri)
    host, port, params = match.group(1).strip("[]"), match.group(2), match.group(3)
    transport_match = re.search(r";transport=([a-z]+)", params, re.IGNORECASE)
    transport = transport_match.group(1).lower() if transport_match else (
        "tls" if uri.lower().startswith("sips:") else "udp")
    default = 5061 if transport == "tls" else 5060
    return host.lower(), int(port) if port else default, transport


def net_key(value: str) -> t.Any:
    return ipaddress.ip_network(value, strict=False)


def peer_key(peer: t.Mapping[str, t.Any]) -> tuple[t.Any, int]:
    return ipaddress.ip_address(peer["address"]), int(peer["port"])


def sha256_text(text: t.Optional[str]) -> t.Optional[str]:
    """The hash of a file's text as the read-back and the change records name it (None: no such file)."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plan_peers(group: t.Mapping[str, t.Any], weight_scale: t.Optional[WeightScale]) -> list[dict[str, t.Any]]:
    """One entry per (peer, address); with ``weight_scale`` the weights of each priority tier as the
    platform keeps them (its ``weight_scale``, e.g. relative to the tier's largest)."""
    peers = list(group.get("peers") or [])
    weights = {id(p): int(p["weight"]) for p in peers}
    if weight_scale is not None:
        for priority in {int(p["priority"]) for p in peers}:
            tier = [p for p in peers if int(p["priority"]) == priority]
            weights.update(zip((id(p) for p in tier), weight_scale([int(p["weight"]) for p in tier])))
    return sorted(({"target": p["target"], "address": a, "port": int(p["port"]), "priority": int(p["priority"]),
                    "weight": weights[id(p)]} for p in peers for a in p.get("addresses") or []),
                  key=lambda p: (p["priority"], peer_key(p)))


def plan_state(plan: t.Mapping[str, t.Any], weight_scale: t.Optional[WeightScale] = None) -> dict[str, t.Any]:
    """The state an SBC running ``plan`` has (what a reader returns for it, artefacts and runtime aside)."""
    regions = {}
    for group in plan["trunk_groups"]:
        regions[group["region"]] = {"order": group["order"], "role": group["role"], "hostname": group["hostname"],
                                    "srv_name": group["srv_name"],
                                    "ip_ranges": sorted(group["ip_ranges"], key=net_key),
                                    "peers": _plan_peers(group, weight_scale)}
    local = [g["region"] for g in plan["trunk_groups"] if g["role"] == "local"]
    mcp = {}
    for record in (plan.get("mcp") or {}).get("records") or []:
        mcp[record["region"]] = {"hostname": record["hostname"], "srv_name": record["srv_name"],
                                 "peers": [{k: p[k] for k in ("target", "address", "port")}
                                           for p in _plan_peers(record, None)]}
    return {"deployment": plan["deployment"]["name"], "site": plan["site"]["name"],
            "type": plan["deployment"]["type"], "transport": plan["trunk_groups"][0]["transport"],
            "acg_socket": None, "local_region": local[0] if local else None, "regions": regions,
            "acl": [dict(e) for e in plan["acl"]["ranges"]], "tls": None, "mcp": mcp}


def delta(before: t.Iterable[t.Any], after: t.Iterable[t.Any], key: t.Callable[[t.Any], t.Any] = lambda v: v
          ) -> tuple[list[t.Any], list[t.Any]]:
    """(added, removed) between two collections, each sorted by ``key``."""
    old, new = set(before), set(after)
    return sorted(new - old, key=key), sorted(old - new, key=key)


def peer_label(peer: t.Mapping[str, t.Any]) -> str:
    return "%s (%s:%d)" % (peer["target"], peer["address"], int(peer["port"]))


# --------------------------------------------------------------------------------------------
# Drift: a plan against a state, in the plan's terms

SOURCES = {"deployed": "deployed configuration", "runtime": "running SBC"}


class _Drift:
    """Collects differences: ``field`` (path in the plan), ``sbc`` (path in the state), ``source`` (deployed or
    runtime), ``value`` (what the SBC has), ``expected`` (what the plan says) and ``text``."""

    def __init__(self) -> None:
        self.found: list[dict[str, t.Any]] = []

    def add(self, source: str, field: str, sbc: str, value: t.Any, expected: t.Any, what: str) -> None:
        text = "%s: %s: %s, plan: %s (%s <> %s)" % (SOURCES[source], what, _show(value), _show(expected), sbc, field)
        self.found.append({"source": source, "field": field, "sbc": sbc, "value": value, "expected": expected,
                           "text": text})


def _show(value: t.Any) -> str:
    if value is None:
        return "absent"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def _peers(drift: _Drift, source: str, field: str, sbc: str, what: str, want: t.Sequence[t.Mapping[str, t.Any]],
           have: t.Sequence[t.Mapping[str, t.Any]], keys: t.Sequence[str]) -> None:
    wanted = {peer_key(p): p for p in want}
    got = {peer_key(p): p for p in have}
    for key in sorted(set(wanted) | set(got)):
        name = "%s:%d" % (key[0], key[1])
        peer_field = "%s.peers[%s]" % (field, (wanted.get(key) or got[key])["target"])
        if key not in got:
            drift.add(source, peer_field + ".addresses", "%s.peers" % sbc, None, name, "%s peer %s" % (what, name))
        elif key not in wanted:
            drift.add(source, "%s.peers" % field, "%s.peers[%s]" % (sbc, name), name, None,
                      "%s peer %s (not in the plan)" % (what, name))
        else:
            for attr in keys:
                if got[key][attr] != wanted[key][attr]:
                    drift.add(source, "%s.%s" % (peer_field, attr), "%s.peers[%s].%s" % (sbc, name, attr),
                              got[key][attr], wanted[key][attr], "%s peer %s %s" % (what, name, attr))


def _regions(drift: _Drift, source: str, plan: t.Mapping[str, t.Any], want: t.Mapping[str, t.Any],
             have: t.Mapping[str, t.Any]) -> None:
    for index, group in enumerate(plan["trunk_groups"]):
        name, field, sbc = group["region"], "trunk_groups[%d]" % index, "regions.%s" % group["region"]
        got, wanted = have.get(name), want[name]
        if got is None:
            drift.add(source, field, sbc, None, name, "trunk group of region %s" % name)
            continue
        if source == "deployed":  # the running SBC's groups are the deployed configuration's
            for key in ("order", "role", "hostname", "srv_name"):
                if got[key] != wanted[key]:
                    drift.add(source, "%s.%s" % (field, key), "%s.%s" % (sbc, key), got[key], wanted[key],
                              "region %s %s" % (name, key))
            added, removed = delta(wanted["ip_ranges"], got["ip_ranges"], net_key)
            if added or removed:
                drift.add(source, field + ".ip_ranges", sbc + ".ip_ranges", got["ip_ranges"], wanted["ip_ranges"],
                          "region %s /28s" % name)
        _peers(drift, source, field, sbc, "region %s" % name, wanted["peers"], got["peers"],
               ("target", "priority", "weight"))
    for name in sorted(set(have) - set(want)):
        drift.add(source, "trunk_groups", "regions.%s" % name, name, None, "trunk group of region %s" % name)


def _acl(drift: _Drift, source: str, want: t.Sequence[t.Mapping[str, str]], have: t.Sequence[t.Mapping[str, str]]
         ) -> None:
    wanted = {e["network"]: (i, e) for i, e in enumerate(want)}
    got = {e["network"]: e for e in have}
    for network in sorted(set(wanted) | set(got), key=net_key):
        if network not in got:
            drift.add(source, "acl.ranges[%d]" % wanted[network][0], "acl", None, network,
                      "ACL does not admit %s" % network)
        elif network not in wanted:
            drift.add(source, "acl.ranges", "acl[%s]" % network, network, None,
                      "ACL admits %s (not in the plan)" % network)
        else:
            for key in ("region", "hostname"):
                if got[network][key] != wanted[network][1][key]:
                    drift.add(source, "acl.ranges[%d].%s" % (wanted[network][0], key), "acl[%s].%s" % (network, key),
                              got[network][key], wanted[network][1][key], "ACL range %s %s" % (network, key))


def _mcp(drift: _Drift, source: str, plan: t.Mapping[str, t.Any], want: t.Mapping[str, t.Any],
         have: t.Mapping[str, t.Any]) -> None:
    records = (plan.get("mcp") or {}).get("records") or []
    for index, record in enumerate(records):
        name, field, sbc = record["region"], "mcp.records[%d]" % index, "mcp.%s" % record["region"]
        got = have.get(name)
        if got is None:
            drift.add(source, field, sbc, None, record["hostname"], "MCP record of region %s" % name)
            continue
        if source == "deployed" and got["hostname"] != record["hostname"]:
            drift.add(source, field + ".hostname", sbc + ".hostname", got["hostname"], record["hostname"],
                      "MCP region %s hostname" % name)
        _peers(drift, source, field, sbc, "MCP region %s" % name, want[name]["peers"], got["peers"], ("target",))
    for name in sorted(set(have) - set(want)):
        drift.add(source, "mcp.records", "mcp.%s" % name, have[name]["hostname"], None, "MCP record of region %s" % name)


def compare(plan: t.Mapping[str, t.Any], state: t.Optional[t.Mapping[str, t.Any]],
            weight_scale: t.Optional[WeightScale] = None) -> list[dict[str, t.Any]]:
    """Every difference between ``plan`` and what the SBC runs (``state``: what it holds, then its runtime view),
    in the plan's terms; empty when the SBC is in sync. ``weight_scale``: how the platform keeps SRV
    weights (``WEIGHT_SCALE`` of its reader), so that equal ratios are no drift."""
    drift = _Drift()
    if state is None:
        drift.add("deployed", "site.name", "", None, plan["site"]["name"], "no commsgw.routing configuration deployed")
        return drift.found
    want = plan_state(plan, weight_scale)
    for key, field in (("deployment", "deployment.name"), ("site", "site.name"), ("type", "deployment.type"),
                       ("transport", "trunk_groups[0].transport"), ("local_region", "trunk_groups[0].region")):
        if state[key] != want[key]:
            drift.add("deployed", field, key, state[key], want[key], key.replace("_", " "))
    _regions(drift, "deployed", plan, want["regions"], state["regions"])
    _acl(drift, "deployed", want["acl"], state["acl"])
    _mcp(drift, "deployed", plan, want["mcp"], state.get("mcp") or {})
    pending = state.get("pending")
    if pending and pending.get("error"):
        drift.add("runtime", "", "pending", pending["error"], "readable", "push state")
    elif pending:
        what = "restart pending" if pending["restart"] else "reload pending (%s)" % ", ".join(pending["reload"])
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(pending["since"]))
        drift.add("runtime", "", "pending", "%s changed %s" % (", ".join(pending["artefacts"]) or "?", since),
                  "applied", what)
    runtime = state.get("runtime")
    if runtime is not None:
        for error in runtime.get("errors") or []:
            drift.add("runtime", "", "runtime", error, "readable", "live state")
        if runtime.get("regions") is not None:
            _regions(drift, "runtime", plan, want["regions"], runtime["regions"])
            _mcp(drift, "runtime", plan, want["mcp"], runtime.get("mcp") or {})
        if runtime.get("acl") is not None:
            _acl(drift, "runtime", want["acl"], runtime["acl"])
    return drift.found
