# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Region migration (R-23): the safe way from what an SBC runs now to what it would run.

When Microsoft migrates a service region, its hostname, /28 ranges and so its SRV targets and the
ACL all change. Pure and typed; ``plugins/modules/migration_diff.py`` and ``migration_wait.py`` wrap
it and ``playbooks/migrate.yml`` drives it. The migration is split in rooms:

* reading what the SBC runs: the platform's read-back (``sbc.readback``; its ``state_from_artefacts``
  hook on the deployed and on the freshly rendered artefacts, so both sides are compared like for like
  and nothing here re-derives a routing decision);
* ``migration_semantic.semantic_diff``: what changes, in the plan's vocabulary;
* ``migration.summary``: the difference as lines for humans, and the textual diff of each artefact;
* here, the in-flight step. ``transition_plan``: make-before-break: every trunk group keeps its old
  peers next to the new ones and the ACL admits old and new ranges, so a site never stops
  accepting traffic from ranges still in use and never has an empty peer list; once the new peers
  are proven the final plan narrows both. ``preflight`` refuses a migration that would leave a
  trunk group without peers; ``peer_health`` is the gate's reading of the SBC's peer states;
  ``retire_narrowed_ranges``: the /28s a narrowing removes are retired (``acl.retired``), not forgotten.
"""

from __future__ import annotations

import json
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.migration.semantic import semantic_diff
from ansible_collections.commsgw.routing.plugins.module_utils.migration.summary import artefact_diffs, summary_lines
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import (
    ReadbackError, net_key, plan_state)

__all__ = ["MigrationError", "artefact_diffs", "dropped_peer_addresses", "needs_transition", "new_peer_addresses",
           "peer_health", "plan_state", "preflight", "retire_narrowed_ranges", "semantic_diff", "summary_lines",
           "transition_plan"]

# The deployed files cannot be read back (the read-back's error; migration has no other).
MigrationError = ReadbackError


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
                         "weight": int(peer.get("plan_weight", peer["weight"])),
                         "addresses": [peer["address"]]}
            if before.get("hostname") and before["hostname"] != group["hostname"]:
                # R-24 during the flight: an old peer is still addressed, and checked, by its old name.
                kept_peer["hostname"] = before["hostname"]
            peers.append(kept_peer)
        # plan.py's canonical peer order, so the rendered rows are stable.
        group["peers"] = sorted(peers, key=lambda p: (int(p["priority"]), -int(p["weight"]), p["target"],
                                                      int(p["port"])))
        if kept:
            group["ip_ranges"] = sorted(set(group["ip_ranges"]) | set(before["ip_ranges"]), key=net_key)
    networks = {e["network"] for e in plan["acl"]["ranges"]}
    extra = [dict(e) for e in old["acl"] if e["network"] not in networks]
    plan["acl"]["ranges"] = sorted(plan["acl"]["ranges"] + extra,
                                   key=lambda e: (net_key(e["network"]), e["region"]))
    for record in (plan.get("mcp") or {}).get("records") or []:  # MCP may use every /28 admitted
        record["ip_ranges"] = sorted(set(record["ip_ranges"]) | {e["network"] for e in extra}, key=net_key)
    return plan


def retire_narrowed_ranges(plan: t.Mapping[str, t.Any], deployed_acl: t.Sequence[t.Mapping[str, t.Any]],
                           deployed_retired: t.Sequence[t.Mapping[str, t.Any]], now: float, retention_s: int
                           ) -> dict[str, t.Any]:
    """``plan`` with ``acl.retired``: every /28 the SBC admits now (``deployed_acl``) that ``plan`` no longer
    admits, retired under its TLS name until ``now + retention_s``; and every /28 retired before
    (``deployed_retired``) whose time is not up and that ``plan`` does not admit again.

    Why: a region migration (R-23) narrows the ACL while calls set up on the old peers are still up.
    Their peers must still be able to end them, for a while (dialogs live hours, not forever) and only
    them: the SBC admits a peer of a retired /28 only for in-dialog requests carrying that very name,
    minted by the SBC (docs/migration.md). Ranges without a TLS name are never retired (nothing could
    be admitted for them). Same input, same output: a re-run within the retention changes nothing.
    """
    result = json.loads(json.dumps(plan))
    admitted = {e["network"] for e in result["acl"]["ranges"]}
    retired: dict[str, dict[str, t.Any]] = {}
    for entry in list(deployed_retired) + [dict(e, until=int(now) + int(retention_s)) for e in deployed_acl]:
        if entry["network"] in admitted or not entry.get("hostname") or int(entry["until"]) <= now:
            continue
        # A /28 retired again (named anew since) keeps the later retirement.
        retired[entry["network"]] = {"network": entry["network"], "region": entry["region"],
                                     "hostname": entry["hostname"], "until": int(entry["until"])}
    result["acl"]["retired"] = sorted(retired.values(), key=lambda e: net_key(e["network"]))
    return result


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
# Peer health as the running SBC sees it (neutral states, the platform's peer_states hook)


def peer_health(states: t.Mapping[str, str], required: t.Sequence[str], absent: t.Sequence[str] = ()
                ) -> dict[str, t.Any]:
    """Which required peers are active (the neutral state ``active``: answered its pings; probing, inactive or
    disabled are not), which are missing from the running list, and which peers that should be gone are still there."""
    active = [p for p in required if states.get(p) == "active"]
    missing = [p for p in required if p not in states]
    unhealthy = ["%s %s" % (p, states[p]) for p in required if p in states and p not in active]
    lingering = [p for p in absent if p in states]
    return {"active": active, "missing": missing, "unhealthy": unhealthy, "lingering": lingering,
            "ok": not missing and not unhealthy and not lingering and len(active) == len(required),
            "peer_count": len(states)}
