# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's verdicts: per peer, per SRV record (region or MCP), on the SBC's own view, and for the site.

Each turns findings into pass/warn/fail with the thresholds of ``probe_settings.Thresholds``.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import (
    FAIL, MCP_UDP_UNCHECKED, PASS, TLS_VERIFY_FAILURES, WARN, PeerResult, Thresholds, worse)
from ansible_collections.commsgw.routing.plugins.module_utils.probe.view import SbcView


def peer_verdict(peer: PeerResult, th: Thresholds) -> None:
    reasons = []
    verdict = PASS
    if not peer.in_range and peer.address is not None:
        reasons.append("address %s outside the region's /28 range(s) (R-07)" % peer.address)
        verdict = worse(verdict, FAIL if th.fail_on_out_of_range else WARN)
    if peer.failure is not None:
        text = peer.failure + (" %d" % peer.code if peer.code is not None else "")
        reasons.append("%s: %s" % (text, peer.detail))
        verdict = FAIL  # an unhealthy peer; whether the region fails is decided per region
    if peer.healthy and th.max_rtt_ms is not None and peer.rtt_ms is not None and peer.rtt_ms > th.max_rtt_ms:
        reasons.append("round trip %.1f ms above %.1f ms" % (peer.rtt_ms, th.max_rtt_ms))
        verdict = worse(verdict, WARN)
    days = (peer.tls or {}).get("days_to_expiry")
    if peer.healthy and days is not None and days < th.cert_expiry_warn_days:
        reasons.append("certificate expires in %d day(s)" % days)
        verdict = worse(verdict, WARN)
    if peer.duplicates:
        reasons.append("%d duplicate repl%s" % (peer.duplicates, "y" if peer.duplicates == 1 else "ies"))
        verdict = worse(verdict, WARN)
    if peer.detail == MCP_UDP_UNCHECKED:
        reasons.append(peer.detail)
        verdict = worse(verdict, WARN)
    peer.verdict, peer.reasons = verdict, reasons


def group_verdict(group: dict[str, t.Any], peers: list[PeerResult], th: Thresholds, mcp: bool) -> None:
    reasons = []
    verdict = PASS
    dns = group["dns"]
    if not dns["ok"]:
        reasons.append("DNS %s: %s" % (dns["kind"], dns["detail"]))
        verdict = FAIL
    healthy = [p for p in peers if p.healthy and p.in_range]
    group["healthy"] = len(healthy)
    group["total"] = len(peers)
    needed = 1 if mcp else th.min_healthy_peers
    if dns["ok"] and len(healthy) < needed:
        what = "reachable MCP target" if mcp else "healthy peer"
        reasons.append("%d %s(s) of %d, at least %d required" % (len(healthy), what, len(peers), needed))
        verdict = worse(verdict, FAIL if (not mcp or th.require_mcp_reachable) else WARN)
    out_of_range = [p for p in peers if not p.in_range and p.address is not None]
    if out_of_range:
        reasons.append("target(s) outside the /28 range(s): %s (R-07)" % ", ".join(
            sorted({"%s -> %s" % (p.target, p.address) for p in out_of_range})))
        verdict = worse(verdict, FAIL if th.fail_on_out_of_range else WARN)
    tls_bad = [p for p in peers if p.failure in TLS_VERIFY_FAILURES]
    if tls_bad:
        reasons.append("TLS verification failed: %s (R-24)" % ", ".join(
            "%s %s" % (p.label, p.failure) for p in tls_bad))
        verdict = worse(verdict, FAIL if th.fail_on_tls_verify else WARN)
    degraded = [p for p in peers if p.verdict != PASS and p not in tls_bad and p not in out_of_range]
    if degraded and verdict == PASS:
        reasons.append("degraded: %s" % ", ".join("%s %s" % (p.label, p.failure or p.verdict) for p in degraded))
        verdict = WARN
    group["verdict"], group["reasons"] = verdict, reasons


def state_verdict(section: t.Mapping[str, t.Any], groups: t.Sequence[t.Mapping[str, t.Any]], after: str = ""
                  ) -> tuple[str, list[str]]:
    """What the SBC's own runtime states of the ACG peers mean for the site (MCP is never judged by state).

    Any peer the SBC does not see active is a warning (it is not used, or only while its pings fail);
    no peer of the local trunk group active, or no ACG peer active at all, fails: the SBC cannot send
    calls to its local region, or to ACG at all.
    """
    counts = section["active_peers"]
    if not counts:
        return PASS, []
    reasons = []
    verdict = PASS

    def breakdown(srv_names: t.Collection[str]) -> str:
        states: dict[str, int] = {}
        for entry in section["not_active"]:
            if entry["srv_name"] in srv_names:
                states[entry["sbc_state"]] = states.get(entry["sbc_state"], 0) + 1
        listed = sum(states.values())
        unlisted = sum(counts[name]["total"] - counts[name]["active"] for name in srv_names) - listed
        if unlisted:
            states["not in its list"] = unlisted
        return ", ".join("%d %s" % (n, state) for state, n in sorted(states.items()))

    total = sum(c["total"] for c in counts.values())
    if not any(c["active"] for c in counts.values()):
        reasons.append("the SBC sees none of the %d ACG peer(s) active (%s): it cannot send calls to ACG"
                       % (total, breakdown(counts)))
        verdict = FAIL
    else:
        for group in groups:
            entry = counts.get(group["srv_name"])
            if group["kind"] == "sip" and group.get("role") == "local" and entry and not entry["active"]:
                what = (group["region"], entry["total"], breakdown([group["srv_name"]]))
                reasons.append("the SBC sees no peer of the local trunk group %s active (0 of %d: %s): it cannot "
                               "send calls to its local region" % what)
                verdict = FAIL
    if section["not_active"]:
        reasons.append("not active in the SBC's view%s: %s" % (after, ", ".join(
            "%s %s" % (e["peer"], e["sbc_state"]) for e in section["not_active"])))
        verdict = worse(verdict, WARN)
    return verdict, reasons


def sbc_verdict(view: SbcView, section: dict[str, t.Any], groups: t.Sequence[t.Mapping[str, t.Any]],
                th: Thresholds) -> None:
    """The verdict on the SBC's view: readable, drift, the SBC's own peer states, state mismatches."""
    reasons = []
    verdict = PASS
    if view.runtime is None and view.configured is None:
        reasons.append("could not read the SBC's peer list: %s" % "; ".join(view.errors))
        verdict = WARN
    elif view.runtime is None and not view.no_states:
        reasons.append("peer states unknown (only the deployed file was readable): %s" % "; ".join(view.errors))
        verdict = WARN
    section["refresher"] = view.refresher
    if view.refresher and view.refresher.get("stale"):
        # A refresher that keeps failing leaves the peer list as it was: fine for a while, not for days.
        reasons.append("the SBC's SRV refresher is stale: %s" % view.refresher["stale"])
        verdict = worse(verdict, WARN)
    drift = [(name, section[name]) for name in ("missing", "extra", "stale") if section[name]]
    for name, entries in drift:
        reasons.append("drift %s: %s" % (name, ", ".join(
            e.get("peer") or e.get("uri") or e.get("why", "") for e in entries)))
    if drift:
        verdict = worse(verdict, FAIL if th.fail_on_drift else WARN)
    settle = section["settle"]
    after = " after a %.1f s wait" % settle["waited_s"] if not settle["settled"] and settle["readings"] > 1 else ""
    section["state_verdict"], state_reasons = state_verdict(section, groups, after)
    reasons.extend(state_reasons)
    verdict = worse(verdict, section["state_verdict"])
    if section["state_mismatch"]:
        reasons.append("state mismatch: %s" % ", ".join(
            "%s SBC %s, probe %s" % (e["peer"], e["sbc_state"], e["probe"]) for e in section["state_mismatch"]))
        verdict = worse(verdict, FAIL if th.fail_on_state_mismatch else WARN)
    section["verdict"], section["reasons"] = verdict, reasons


def site_verdict(groups: t.Sequence[t.Mapping[str, t.Any]], provisioning: t.Optional[t.Mapping[str, t.Any]],
                 sbc: t.Optional[t.Mapping[str, t.Any]]) -> tuple[str, list[str]]:
    """The site's verdict and reasons from its regions, MCP records, provisioning API and SBC view."""
    reasons = []
    verdict = PASS
    for group in groups:
        if group["verdict"] != PASS:
            label = "%s %s" % ("region" if group["kind"] == "sip" else "MCP", group["region"])
            reasons.append("%s %s: %s" % (label, group["verdict"], "; ".join(group["reasons"])))
            verdict = worse(verdict, group["verdict"])
    if provisioning is not None and provisioning["verdict"] != PASS:
        reasons.append("provisioning API: %s" % provisioning["detail"])
        verdict = worse(verdict, provisioning["verdict"])
    if sbc is not None and sbc["verdict"] != PASS:
        reasons.append("SBC view %s: %s" % (sbc["verdict"], "; ".join(sbc["reasons"])))
        verdict = worse(verdict, sbc["verdict"])
    return verdict, reasons
