# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The live probe: checks one site against ACG for real, from the routing plan.

Input is the site's routing plan (``plan.build_site_plan``): SRV names, regional hostnames, TLS SNI
and verification names, /28 ranges, transport, MCP records and the provisioning API name all come
from there; nothing is recomputed from the inventory. The probe then

1. resolves every SRV record live (``srv.resolve_srv``) and audits the targets against the region's
   /28 ranges (R-07, ``srv.audit_srv``), and checks the provisioning API TTL (R-21);
2. sends one SIP OPTIONS to **every** SRV target address at once (threads, one per peer, every wait
   bounded by one per-peer deadline) over TLS 1.2+ with the SBC's client certificate, SNI = the
   regional hostname and the peer certificate verified against that hostname (R-09, R-24); MCP
   targets get DNS + TCP/TLS + certificate checks only, never OPTIONS (R-19);
3. asks the SBC for its own view through its platform's ``probe_view`` hook (``sbc_view_reader``) and
   compares it with the SRV answers (drift) and with what the probe saw (peer states); only an
   "active" peer is in service there, and while peers the probe reached are not active yet (a
   fresh restart) the view is read again, for a bounded time (``default_settle_s``);
4. turns all of it into verdicts per peer, region and site with configurable thresholds.

Runs on the SBC host with the standard library and dnspython only (no yaml/jinja2 here).

This module is the orchestrator; the parts live in focused modules: ``probe.settings`` (settings,
targets, results, failure classes), ``probe.tls`` (contexts, failure classes, certificates),
``probe.exchange`` (one peer), ``probe.dns`` (SRV records to targets), ``probe.view`` (the SBC's
view, drift and settling), the platform registry ``sbc.registry`` (each platform's reader) and
``probe.verdicts``.
Names the module and its callers use are re-exported here.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as _dt
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as lim
from ansible_collections.commsgw.routing.plugins.module_utils.probe.dns import provisioning_ttl, resolve_record
from ansible_collections.commsgw.routing.plugins.module_utils.probe.exchange import ms_since, probe_peer
from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import (
    CONNECT_ERROR, CONNECT_REFUSED, CONNECT_TIMEOUT, DNS, FAIL, FAILURE_CLASSES, MALFORMED_REPLY, MCP_UDP_UNCHECKED,
    NO_REPLY, NON_2XX, OUT_OF_RANGE, PASS, TLS_CLIENT_REJECTED, TLS_EXPIRED, TLS_HANDSHAKE, TLS_HOSTNAME_MISMATCH,
    TLS_PROTOCOL, TLS_SBC_HOST_CHECK, TLS_UNKNOWN_CA, TLS_VERIFY_FAILURES, TRANSPORT_NOT_ALLOWED, WARN,
    WRONG_TRANSACTION, PeerResult, PeerTarget, ProbeSettings, Thresholds, worse)
from ansible_collections.commsgw.routing.plugins.module_utils.probe.tls import (
    TlsContexts, cert_summary, classify_ssl_error, tls_context)
from ansible_collections.commsgw.routing.plugins.module_utils.probe.verdicts import (
    group_verdict, peer_verdict, sbc_verdict, site_verdict)
from ansible_collections.commsgw.routing.plugins.module_utils.probe.view import (
    SETTLE_CAP_S, SbcDestination, SbcView, compare_view, default_settle_s, empty_section, parse_sip_uri, read_settled)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import UnknownPlatform, get_platform

__all__ = [  # the probe's public names, wherever they live
    "CONNECT_ERROR", "CONNECT_REFUSED", "CONNECT_TIMEOUT", "DNS", "FAIL", "FAILURE_CLASSES", "MALFORMED_REPLY",
    "MCP_UDP_UNCHECKED", "NO_REPLY", "NON_2XX", "OUT_OF_RANGE", "PASS", "TLS_CLIENT_REJECTED", "TLS_EXPIRED",
    "TLS_HANDSHAKE", "TLS_HOSTNAME_MISMATCH", "TLS_PROTOCOL", "TLS_SBC_HOST_CHECK", "TLS_UNKNOWN_CA",
    "TLS_VERIFY_FAILURES", "TRANSPORT_NOT_ALLOWED", "WARN", "WRONG_TRANSACTION", "PeerResult", "PeerTarget",
    "ProbeSettings", "Thresholds", "TlsContexts", "cert_summary", "classify_ssl_error", "tls_context",
    "SETTLE_CAP_S", "SbcDestination", "SbcView", "compare_view", "default_settle_s", "parse_sip_uri",
    "probe_peer", "resolve_record",
    "REPORT_SCHEMA_VERSION", "run_probe", "sbc_view_reader"]

REPORT_SCHEMA_VERSION = 1


def sbc_view_reader(name: str) -> t.Optional[t.Callable[[t.Mapping[str, t.Any]], SbcView]]:
    """The SBC's own view of platform ``name`` (``commsgw_sbc_platform``): platform options -> SbcView, the
    options not given taking the platform's defaults; None for a platform the registry does not know."""
    try:
        platform = get_platform(name)
    except UnknownPlatform:
        return None
    return lambda options: t.cast(SbcView, platform.probe_view(platform.with_defaults(options)))


# One SRV record to check: (kind, record, /28 ranges, transport, plan path).
_Record = t.Tuple[str, t.Dict[str, t.Any], t.List[str], str, str]


def _records(plan: t.Mapping[str, t.Any]) -> list[_Record]:
    """The SRV records of the plan to check: every trunk group, then every MCP record."""
    records: list[_Record] = []
    for tg in plan["trunk_groups"]:
        records.append(("sip", dict(tg), list(tg["ip_ranges"]), tg["transport"],
                        "trunk_groups[%s]" % tg["region"]))
    mcp = plan.get("mcp") or None
    if mcp:
        # The plan gives each MCP record its TLS names and /28s (plan.record_ranges) and MCP its transport.
        for record in mcp["records"]:
            records.append(("mcp", dict(record), list(record["ip_ranges"]), mcp["transport"],
                            "mcp.records[%s]" % record["region"]))
    for _kind, rec, *_rest in records:
        rec.setdefault("srv_limits", plan.get("srv_limits"))
    return records


@dataclasses.dataclass
class _Network:
    """What the DNS and peer steps found."""

    resolved: list[tuple[dict[str, t.Any], list[PeerTarget]]]
    peers: list[PeerResult]
    provisioning: t.Optional[dict[str, t.Any]]
    dns_ms: float
    probe_ms: float


def _probe_network(plan: t.Mapping[str, t.Any], records: t.Sequence[_Record], settings: ProbeSettings,
                   pool_size: int, started: float) -> _Network:
    """DNS for every record at once (the provisioning API TTL check alongside), then every peer at once."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=pool_size) as pool:
        dns_futures = [pool.submit(resolve_record, rec, ranges, kind, transport, settings, path)
                       for kind, rec, ranges, transport, path in records]
        ttl_future = None
        if settings.check_provisioning_ttl and plan.get("provisioning_api"):
            api = plan["provisioning_api"]
            ttl_future = pool.submit(provisioning_ttl, api, settings)
        resolved = [f.result() for f in dns_futures]
        dns_ms = ms_since(started)
        targets = []
        for (_k, _rec, ranges, _tr, _p), (dns_report, tgts) in zip(records, resolved):
            kept, dns_report["capped"] = lim.cap_targets(tgts)
            targets.extend(dataclasses.replace(tgt, ranges=tuple(ranges)) for tgt in kept)
        probe_start = time.monotonic()
        contexts = TlsContexts(settings)
        peer_results = list(pool.map(lambda tgt: probe_peer(tgt, settings, contexts), targets))
        probe_ms = ms_since(probe_start)
        provisioning = ttl_future.result() if ttl_future is not None else None
    return _Network(resolved=resolved, peers=peer_results, provisioning=provisioning, dns_ms=dns_ms,
                    probe_ms=probe_ms)


def _groups(records: t.Sequence[_Record], network: _Network, th: Thresholds) -> list[dict[str, t.Any]]:
    """One report group per SRV record, its peers judged."""
    groups = []
    for (kind, rec, ranges, transport, _path), (dns_report, _tgts) in zip(records, network.resolved):
        peers = [p for p in network.peers if p.srv_name == rec["srv_name"] and p.kind == kind]
        for peer in peers:
            peer_verdict(peer, th)
        group = {"kind": kind, "region": rec["region"], "role": rec.get("role"), "hostname": rec["hostname"],
                 "srv_name": rec["srv_name"], "transport": transport, "ip_ranges": ranges, "dns": dns_report,
                 "peers": [p.as_dict() for p in peers]}
        group_verdict(group, peers, th, mcp=(kind == "mcp"))
        if dns_report.get("capped"):
            group["reasons"].append(dns_report["capped"])
            group["verdict"] = worse(group["verdict"], WARN)
        groups.append(group)
    return groups


def run_probe(plan: t.Mapping[str, t.Any], settings: ProbeSettings, host: t.Optional[str] = None,
              sbc_platform: t.Optional[str] = None, platform_options: t.Optional[t.Mapping[str, t.Any]] = None,
              sbc_settle_s: t.Optional[float] = None, clock: t.Callable[[], float] = time.monotonic,
              sleep: t.Callable[[float], None] = time.sleep) -> dict[str, t.Any]:
    """Probe one site as its routing plan describes it; returns the JSON-serialisable report.

    ``sbc_settle_s``: how long the SBC-view step may wait for the SBC's own states to settle (peers
    the probe reached but the SBC does not see active yet, e.g. right after a restart); None is
    ``default_settle_s(plan)``, 0 reads once. ``clock``/``sleep`` time that wait (tests pass fakes).
    """
    th = settings.thresholds
    settle_s = default_settle_s(plan) if sbc_settle_s is None else max(0.0, float(sbc_settle_s))
    started = time.monotonic()
    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    records = _records(plan)
    pool_size = max(1, min(settings.concurrency, 64))
    network = _probe_network(plan, records, settings, pool_size, started)
    groups = _groups(records, network, th)

    sbc: t.Optional[dict[str, t.Any]] = None
    sbc_start = time.monotonic()
    if sbc_platform:
        sbc = _sbc_section(sbc_platform, platform_options or {}, network.peers, groups, settings,
                           settle_s=settle_s, clock=clock, sleep=sleep)
    sbc_ms = ms_since(sbc_start)

    verdict, reasons = site_verdict(groups, network.provisioning, sbc)
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "deployment": plan["deployment"]["name"],
        "site": plan["site"]["name"],
        "host": host,
        "started_at": started_at,
        "timings_ms": {"dns": network.dns_ms, "probe": network.probe_ms, "sbc_view": sbc_ms,
                       "total": ms_since(started)},
        "settings": {"timeout_s": settings.timeout_s, "nameservers": settings.resolver.describe(),
                     "source_address": settings.source_address, "concurrency": pool_size, "sbc_settle_s": settle_s,
                     "thresholds": dataclasses.asdict(th)},
        "regions": [g for g in groups if g["kind"] == "sip"],
        "mcp": [g for g in groups if g["kind"] == "mcp"],
        "provisioning_api": network.provisioning,
        "sbc_view": sbc,
        "verdict": verdict,
        "reasons": reasons,
    }


def _sbc_section(platform: str, options: t.Mapping[str, t.Any], peers: list[PeerResult],
                 groups: list[dict[str, t.Any]], settings: ProbeSettings, settle_s: float = 0.0,
                 clock: t.Callable[[], float] = time.monotonic, sleep: t.Callable[[float], None] = time.sleep
                 ) -> dict[str, t.Any]:
    """The SBC's view through the platform's hook (read until settled) and its verdict."""
    hook = sbc_view_reader(platform)
    if hook is None:
        section = empty_section(platform, "", [])
        section.update(verdict=WARN, reasons=["no SBC view for platform %s yet" % platform])
        return section
    dns_ok = {g["srv_name"] for g in groups if g["dns"]["ok"]}
    view, section = read_settled(hook, options, peers, dns_ok, settings, settle_s, clock, sleep)
    sbc_verdict(view, section, groups, settings.thresholds)
    return section
