# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC's own view of its ACG peers, platform-neutral: what it lists and in which state, compared with
the SRV answers (drift) and with what the probe saw (states), read again while it settles.

A platform provides a reader ``options -> SbcView`` (its ``probe_view`` hook, ``sbc.contract``); the probe asks
the platform registry for it by ``commsgw_sbc_platform``. Destinations are neutral: ``group`` is the SBC's own
grouping of them (a set, a group of the device), ``state`` one of active / inactive / probing / disabled (None:
the SBC gave none), ``detail`` the platform's own words for humans.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import (
    PeerResult, ProbeSettings, probe_state)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import parse_sip_uri

__all__ = ["SbcDestination", "SbcView", "compare_view", "default_settle_s", "empty_section", "parse_sip_uri",
           "read_settled"]

SBC_ACTIVE = "active"  # the only runtime state in which the SBC counts a peer as in service
SETTLE_INTERVAL_S = 0.5  # re-read period while the SBC's view settles
SETTLE_CAP_S = 15.0      # upper bound of the default settle limit (default_settle_s)


@dataclasses.dataclass
class SbcDestination:
    group: str
    uri: str
    host: str
    port: int
    transport: str
    address: t.Optional[str] = None      # host resolved to IPv4 (== host when host is an address)
    state: t.Optional[str] = None        # active | inactive | probing | disabled | None (no state: deployed only)
    detail: str = ""                     # the platform's own words for humans ("set 201, flags AP")

    def as_dict(self) -> dict[str, t.Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class SbcView:
    platform: str
    source: str                               # what was read ("jsonrpc socket ...", "file ...")
    runtime: t.Optional[list[SbcDestination]] = None  # what the running SBC uses
    configured: t.Optional[list[SbcDestination]] = None  # what its deployed file says
    errors: list[str] = dataclasses.field(default_factory=list)
    # The platform's peer-list refresher, when it has one: its run history and ``stale`` (why, or None).
    refresher: t.Optional[dict[str, t.Any]] = None
    # Why the platform never reports peer states (its management API exposes none), or '': then the probe judges
    # reachability from its own OPTIONS only, and a view without states is no warning.
    no_states: str = ""


# ----------------------------------------------------------------------------------------------------------
# Drift and states


def _resolve_hosts(destinations: t.Iterable[SbcDestination], settings: ProbeSettings) -> None:
    for dest in destinations:
        try:
            dest.address = str(ipaddress.IPv4Address(dest.host))
            continue
        except ValueError:
            pass
        try:
            answer = settings.resolver.resolver().resolve(dest.host, "A", search=False)
            dest.address = sorted(r.address for r in answer)[0]
        except Exception:  # noqa: BLE001 - an unresolvable destination stays None and shows as extra
            dest.address = None


def empty_section(platform: str, source: str, errors: t.Sequence[str]) -> dict[str, t.Any]:
    return {"platform": platform, "source": source, "errors": list(errors), "destinations": [], "missing": [],
            "extra": [], "stale": [], "state_mismatch": [], "not_active": [], "active_peers": {}, "settle": None}


def _expected(peers: t.Sequence[PeerResult], dns_ok_records: t.Collection[str], sip_only: bool = False
              ) -> dict[tuple[t.Optional[str], int, str], PeerResult]:
    """The peers the SBC should list, by (address, port, transport): those of records whose DNS answered."""
    return {(p.address, p.port, p.transport): p for p in peers
            if p.address is not None and p.srv_name in dns_ok_records and (p.kind == "sip" or not sip_only)}


def _peer_drift(out: dict[str, t.Any], current: t.Sequence[SbcDestination],
                expected: t.Mapping[tuple[t.Optional[str], int, str], PeerResult],
                have: t.Mapping[tuple[t.Optional[str], int, str], SbcDestination]) -> None:
    """missing, stale (same address, other port or transport) and extra destinations."""
    by_address: dict[t.Optional[str], list[SbcDestination]] = {}
    for dest in current:
        by_address.setdefault(dest.address, []).append(dest)
    for key, peer in sorted(expected.items(), key=lambda kv: kv[0][:2]):
        if key in have:
            continue
        olds = by_address.get(key[0], [])
        if olds:
            out["stale"].append({"peer": peer.label, "srv_name": peer.srv_name, "sbc": [d.uri for d in olds],
                                 "why": "the SBC uses this address with another port or transport"})
        else:
            out["missing"].append({"peer": peer.label, "srv_name": peer.srv_name})
    expected_addresses = {key[0] for key in expected}
    for key, dest in sorted(have.items(), key=lambda kv: (kv[1].group, kv[1].uri)):
        if key not in expected and dest.address not in expected_addresses:
            out["extra"].append({"uri": dest.uri, "group": dest.group, "address": dest.address})


def _file_drift(out: dict[str, t.Any], runtime: t.Sequence[SbcDestination],
                configured: t.Sequence[SbcDestination]) -> None:
    """The running list differs from the deployed file: written but not reloaded."""
    runtime_keys = {(d.group, d.address, d.port, d.transport) for d in runtime}
    file_keys = {(d.group, d.address, d.port, d.transport) for d in configured}
    if runtime_keys != file_keys:
        out["stale"].append({"why": "the running peer list differs from the deployed file (not reloaded?)",
                             "only_running": sorted("%s %s:%s" % (k[0], k[1], k[2]) for k in runtime_keys - file_keys),
                             "only_file": sorted("%s %s:%s" % (k[0], k[1], k[2]) for k in file_keys - runtime_keys)})


def _active_counts(out: dict[str, t.Any], sip_expected: t.Mapping[tuple[t.Optional[str], int, str], PeerResult],
                   have: t.Mapping[tuple[t.Optional[str], int, str], SbcDestination]) -> None:
    """active_peers per SRV record and not_active: every ACG peer the SBC does not see active."""
    for key, peer in sorted(sip_expected.items(), key=lambda kv: (kv[1].srv_name, kv[0][:2])):
        counts = out["active_peers"].setdefault(peer.srv_name, {"region": peer.region, "active": 0, "total": 0})
        counts["total"] += 1
        dest = have.get(key)
        if dest is None:
            continue  # not in the SBC's list: drift (missing/stale), and not active either
        if dest.state == SBC_ACTIVE:
            counts["active"] += 1
            continue
        out["not_active"].append({"peer": peer.label, "srv_name": peer.srv_name, "region": peer.region,
                                  "sbc_state": dest.state or "unknown", "probe": probe_state(peer)})


def _state_mismatches(out: dict[str, t.Any], sip_expected: t.Mapping[tuple[t.Optional[str], int, str], PeerResult],
                      have: t.Mapping[tuple[t.Optional[str], int, str], SbcDestination]) -> None:
    """Peers whose SBC state (active or not) disagrees with what the probe saw."""
    for key, dest in sorted(have.items(), key=lambda kv: (kv[1].group, kv[1].uri)):
        peer = sip_expected.get(key)
        # disabled: taken out by an operator, not by health; MCP: never pinged, its state means nothing.
        if peer is None or dest.state is None or dest.state == "disabled":
            continue
        # Only "active" is in service: a destination stays "probing" while the SBC's own OPTIONS to it
        # fail (production: every peer probing and the SBC answering 503).
        sbc_up = dest.state == SBC_ACTIVE
        if sbc_up != peer.healthy:
            out["state_mismatch"].append({
                "peer": peer.label, "sbc_state": dest.state, "probe": probe_state(peer),
                "why": "the SBC sends calls to a peer the probe found unhealthy" if sbc_up
                else "the SBC does not see a peer active that the probe found healthy"})


def compare_view(view: SbcView, peers: t.Sequence[PeerResult], dns_ok_records: t.Collection[str],
                 settings: ProbeSettings) -> dict[str, t.Any]:
    """Drift (missing/extra/stale) between the SBC's peer list and the SRV answers, plus peer states.

    missing: an SRV target the SBC does not use. extra: an SBC destination no SRV record lists.
    stale: the SBC has the peer's address with another port or transport, or the running list
    differs from the deployed file (written but not reloaded). Records whose DNS lookup failed are
    left out, so a DNS outage shows as a DNS failure rather than as drift.

    With runtime states (never from the file alone), for the ACG peers only (MCP targets are never
    pinged, R-19, so their state says nothing): not_active lists every peer the SBC lists in a state
    other than active (probing, inactive, disabled, or none/unknown), active_peers counts per SRV
    record the peers the SBC sees active (a peer it does not list at all counts as not active), and
    state_mismatch lists peers whose SBC state (active or not) disagrees with what the probe saw.
    """
    current = view.runtime if view.runtime is not None else view.configured
    out = empty_section(view.platform, view.source, view.errors)
    if current is None:
        return out
    _resolve_hosts(current, settings)
    if view.runtime is not None and view.configured is not None:
        _resolve_hosts(view.configured, settings)
    out["destinations"] = [d.as_dict() for d in current]
    have = {(d.address, d.port, d.transport): d for d in current}
    _peer_drift(out, current, _expected(peers, dns_ok_records), have)
    if view.runtime is not None and view.configured is not None:
        _file_drift(out, view.runtime, view.configured)
    if view.runtime is None:
        return out  # the deployed file has no states: nothing to judge them by
    sip_expected = _expected(peers, dns_ok_records, sip_only=True)
    _active_counts(out, sip_expected, have)
    _state_mismatches(out, sip_expected, have)
    return out


# ----------------------------------------------------------------------------------------------------------
# Settling


def default_settle_s(plan: t.Mapping[str, t.Any]) -> float:
    """The default settle limit: the plan's health window plus one OPTIONS interval plus 1 s, at most 15 s.

    That is how long a peer the SBC has just (re)loaded needs to be pinged into "active"
    (``window_s`` = interval x failure threshold, plan R-13).
    """
    health = plan.get("health") or {}
    try:
        window = float(health.get("window_s") or 0)
        interval = float(health.get("interval_s") or 0)
    except (TypeError, ValueError):
        return SETTLE_CAP_S
    return min(SETTLE_CAP_S, max(0.0, window + interval + 1.0))


def _unsettled(view: SbcView, section: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    """Peers the probe reached that the SBC does not see active (yet); disabled is an operator's choice."""
    if view.runtime is None:
        return []
    return [e for e in section["not_active"] if e["probe"] == "healthy" and e["sbc_state"] != "disabled"]


def read_settled(hook: t.Callable[[t.Mapping[str, t.Any]], SbcView], options: t.Mapping[str, t.Any],
                 peers: list[PeerResult], dns_ok: t.Collection[str], settings: ProbeSettings, settle_s: float,
                 clock: t.Callable[[], float], sleep: t.Callable[[float], None]
                 ) -> tuple[SbcView, dict[str, t.Any]]:
    """Read the SBC's view; while peers the probe reached are not active there, read it again.

    Right after a push or restart the SBC has not pinged its peers yet and shows them probing or
    inactive. Re-reads every SETTLE_INTERVAL_S until they are active, a re-read yields no runtime
    states (the last reading that had them is kept), or ``settle_s`` has passed; at most
    1 + ceil(settle_s / SETTLE_INTERVAL_S) readings.
    """
    view = hook(options)
    section = compare_view(view, peers, dns_ok, settings)
    pending = _unsettled(view, section)
    readings = 1
    waited = 0.0
    lost = ""
    if pending and settle_s > 0:
        start = clock()
        max_readings = 1 + int(math.ceil(settle_s / SETTLE_INTERVAL_S))
        while pending and readings < max_readings:
            left = settle_s - (clock() - start)
            if left <= 0:
                break
            sleep(min(SETTLE_INTERVAL_S, left))
            again = hook(options)
            readings += 1
            if again.runtime is None:
                lost = "; ".join(again.errors) or "no runtime states"
                break
            view, section = again, compare_view(again, peers, dns_ok, settings)
            pending = _unsettled(view, section)
        waited = round(max(0.0, clock() - start), 2)
    settled = view.runtime is not None and not pending
    if view.runtime is None:
        text = "peer states not exposed by the platform" if view.no_states else "no runtime states read"
    elif readings == 1 and settled:
        text = "settled at the first reading"
    elif settled:
        text = "settled after %.1f s (%d readings)" % (waited, readings)
    elif lost:
        text = "not settled, stopped after %.1f s: reading %d had no runtime states (%s)" % (waited, readings, lost)
    elif waited > 0 or readings > 1:
        text = "not settled after %.1f s (%d readings, limit %.1f s)" % (waited, readings, settle_s)
    else:
        text = "not settled, no wait (limit %.1f s)" % settle_s
    section["settle"] = {"limit_s": settle_s, "waited_s": waited, "readings": readings, "settled": settled,
                         "unsettled": [e["peer"] for e in pending], "text": text}
    return view, section
