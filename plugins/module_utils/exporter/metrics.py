# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe reports as Prometheus metrics (text exposition format 0.0.4), every family documented once here.

Naming follows Prometheus: base units (``_seconds``), ``_timestamp_seconds`` for points in time,
states as label values with a bounded set (verdicts, failure classes, the SBC's neutral peer states),
and bounded label sets: regions and MCP records come from the plan, peers are capped by the probe
(16 targets per SRV record, ``probe.limits``). Everything a peer or DNS sent is escaped and clipped.
docs/monitoring.md describes each family (tests/unit/exporter/test_exporter_metrics.py keeps the two in step).
"""

from __future__ import annotations

import math
import ssl
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import FAILURE_CLASSES

GAUGE, COUNTER = "gauge", "counter"
VERDICTS = ("pass", "warn", "fail")
# The SBC's own view of a peer, platform-neutral: "absent" = not in its list, "unknown" = listed, no state.
SBC_STATES = ("active", "inactive", "probing", "disabled", "unknown", "absent")
FAILURE_LABELS = ("none",) + tuple(FAILURE_CLASSES) + ("other",)
MAX_LABEL_CHARS = 256
MANAGEMENT_NOTE = (" With vantage=\"management\" (an SBC reached through a management API) the exporter sends no "
                   "OPTIONS and this is the device's own view, read through the platform contract.")

FAMILIES: dict[str, tuple[str, str]] = {
    # The multi-target exporter pattern's own two.
    "probe_success": (GAUGE, "1 when the probe finished within the scrape timeout and the site verdict is not fail."),
    "probe_duration_seconds": (GAUGE, "Wall time of the probe run that answered this scrape."),
    "commsgw_probe_cached": (GAUGE, "1 when the answer is a run that started before this scrape (coalesced with a "
                                    "concurrent scrape, or within min_interval_s of the last run): no OPTIONS were "
                                    "sent for this scrape."),
    "commsgw_probe_timed_out": (GAUGE, "1 when the run did not finish within the scrape timeout (the run goes on; "
                                       "later scrapes get its result)."),
    "commsgw_probe_timestamp_seconds": (GAUGE, "When the run that answered this scrape started (Unix time)."),
    "commsgw_probe_info": (GAUGE, "The probed site: deployment, SBC host, platform and vantage (sbc_host: OPTIONS "
                                  "sent from the SBC's address; management: the device's own view only)."),
    "commsgw_site_verdict": (GAUGE, "The site verdict (pass, warn, fail): 1 for the current one, 0 for the others."),
    "commsgw_region_verdict": (GAUGE, "The verdict per service region (trunk group), one-hot over pass/warn/fail."),
    "commsgw_region_healthy_peers": (GAUGE, "Peers of the region that answered OPTIONS with 2xx from inside the "
                                            "region's /28s." + MANAGEMENT_NOTE),
    "commsgw_region_peers": (GAUGE, "Peers (SRV target addresses, at most 16 per record) of the region."),
    "commsgw_srv_targets": (GAUGE, "Targets in the region's SRV answer (kind sip or mcp)."),
    "commsgw_srv_lookup_success": (GAUGE, "1 when the region's SRV record resolved to usable targets."),
    "commsgw_srv_ttl_seconds": (GAUGE, "TTL of the region's SRV answer."),
    "commsgw_dns_lookup_seconds": (GAUGE, "Time the SRV lookup and its targets' A lookups took."),
    "commsgw_peer_options_up": (GAUGE, "1 when the peer answered OPTIONS with 2xx over the allowed transport "
                                       "(mutual TLS, SNI = regional hostname)."),
    "commsgw_peer_rtt_seconds": (GAUGE, "OPTIONS round trip to the peer (absent when there was no reply)."),
    "commsgw_peer_status_code": (GAUGE, "SIP status code of the peer's last OPTIONS reply (0: no reply)."),
    "commsgw_peer_failure": (GAUGE, "The peer's failure class (class=\"none\" when healthy): exactly one series "
                                    "per peer, value 1."),
    "commsgw_peer_in_range": (GAUGE, "1 when the peer's address lies in the region's /28 range(s) (R-07); a peer "
                                     "outside is never contacted."),
    "commsgw_peer_cert_expiry_timestamp_seconds": (GAUGE, "When the peer's TLS certificate expires (Unix time)."),
    "commsgw_mcp_up": (GAUGE, "1 when the MCP target is reachable (TCP/TLS, certificate verified); MCP never gets "
                              "OPTIONS (R-19)."),
    "commsgw_mcp_reachable_targets": (GAUGE, "Reachable targets of the MCP record."),
    "commsgw_provisioning_api_ttl_seconds": (GAUGE, "TTL the provisioning API record is served with (R-21)."),
    "commsgw_provisioning_api_max_ttl_seconds": (GAUGE, "The highest TTL R-21 allows the provisioning API record."),
    "commsgw_sbc_view_up": (GAUGE, "1 when the SBC's own runtime peer states were read." + MANAGEMENT_NOTE),
    "commsgw_sbc_view_verdict": (GAUGE, "Verdict on the SBC's own view (drift, states), one-hot over "
                                        "pass/warn/fail."),
    "commsgw_sbc_peer_state": (GAUGE, "The SBC's own state of each ACG peer, platform-neutral (active, inactive, "
                                      "probing, disabled, unknown, absent = not in its list): one series per peer, "
                                      "value 1." + MANAGEMENT_NOTE),
    "commsgw_sbc_peer_state_mismatch": (GAUGE, "1 when the SBC's state of the peer (active or not) disagrees with "
                                               "what the probe saw."),
    "commsgw_sbc_active_peers": (GAUGE, "ACG peers of the region the SBC sees active." + MANAGEMENT_NOTE),
    "commsgw_sbc_drift_peers": (GAUGE, "Drift between the SBC's peer list and the SRV answers: missing (an SRV "
                                       "target the SBC does not use), extra (an SBC peer no SRV record lists), "
                                       "stale (another port/transport, or the running list differs from the file)."),
}


def escape(value: t.Any) -> str:
    """A label value as the text format wants it: backslash, double quote and newline escaped, clipped."""
    text = str(value)
    if len(text) > MAX_LABEL_CHARS:
        text = text[:MAX_LABEL_CHARS] + "..."
    return text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def number(value: float) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


class Exposition:
    """Samples grouped by family; ``render`` writes each family's HELP and TYPE once."""

    def __init__(self, families: t.Optional[t.Mapping[str, tuple[str, str]]] = None) -> None:
        self.families = FAMILIES if families is None else families
        self.samples: dict[str, list[tuple[tuple[tuple[str, t.Any], ...], float]]] = {}

    def add(self, name: str, value: float, **labels: t.Any) -> None:
        if name not in self.families:
            raise KeyError("undocumented metric family %s" % name)
        self.samples.setdefault(name, []).append((tuple(labels.items()), value))

    def one_hot(self, name: str, current: t.Optional[str], states: t.Sequence[str], label: str = "verdict",
                **labels: t.Any) -> None:
        for state in states:
            self.add(name, 1 if state == current else 0, **dict(labels, **{label: state}))

    def render(self) -> str:
        lines = []
        for name, samples in self.samples.items():
            kind, text = self.families[name]
            lines.append("# HELP %s %s" % (name, text.replace("\\", "\\\\").replace("\n", " ")))
            lines.append("# TYPE %s %s" % (name, kind))
            for labels, value in samples:
                rendered = ",".join('%s="%s"' % (key, escape(val)) for key, val in labels)
                lines.append("%s%s %s" % (name, "{%s}" % rendered if rendered else "", number(value)))
        return "\n".join(lines) + "\n" if lines else ""


# ----------------------------------------------------------------------------------------------------------
# One report


def peer_name(peer: t.Mapping[str, t.Any]) -> str:
    return "%s:%d" % (peer["address"], peer["port"]) if peer.get("address") else "unresolved"


def _failure_label(failure: t.Optional[str]) -> str:
    if failure is None:
        return "none"
    return failure if failure in FAILURE_CLASSES else "other"


def _sbc_state(state: t.Optional[str]) -> str:
    return state if state in SBC_STATES else "unknown"


def _group_labels(group: t.Mapping[str, t.Any]) -> dict[str, str]:
    return {"region": group["region"], "role": group.get("role") or "none"}


def _sip_group(out: Exposition, group: t.Mapping[str, t.Any], site: dict[str, str], probing: bool) -> None:
    where = dict(site, **_group_labels(group))
    out.one_hot("commsgw_region_verdict", group["verdict"], VERDICTS, **where)
    if probing:
        out.add("commsgw_region_healthy_peers", group["healthy"], **where)
    out.add("commsgw_region_peers", group["total"], **where)
    for peer in group["peers"] if probing else ():
        labels = dict(where, peer=peer_name(peer), target=peer["target"])
        out.add("commsgw_peer_options_up", bool(peer["healthy"]), **labels)
        if peer.get("rtt_ms") is not None:
            out.add("commsgw_peer_rtt_seconds", peer["rtt_ms"] / 1000.0, **labels)
        out.add("commsgw_peer_status_code", peer.get("code") or 0, **labels)
        out.add("commsgw_peer_failure", 1, **dict(labels, **{"class": _failure_label(peer.get("failure"))}))
        out.add("commsgw_peer_in_range", bool(peer["in_range"]), **labels)
        _cert_expiry(out, peer, labels)


def _cert_expiry(out: Exposition, peer: t.Mapping[str, t.Any], labels: t.Mapping[str, str]) -> None:
    not_after = (peer.get("tls") or {}).get("not_after")
    if not not_after:
        return
    try:
        out.add("commsgw_peer_cert_expiry_timestamp_seconds", ssl.cert_time_to_seconds(not_after), **labels)
    except ValueError:
        pass  # a date OpenSSL cannot parse: no metric rather than a wrong one


def _dns(out: Exposition, group: t.Mapping[str, t.Any], site: dict[str, str], kind: str) -> None:
    labels = dict(site, kind=kind, **_group_labels(group))
    dns = group["dns"]
    out.add("commsgw_srv_lookup_success", bool(dns["ok"]), **labels)
    out.add("commsgw_srv_targets", len(dns.get("targets") or []), **labels)
    if dns.get("ttl") is not None:
        out.add("commsgw_srv_ttl_seconds", dns["ttl"], **labels)
    if dns.get("lookup_ms") is not None:
        out.add("commsgw_dns_lookup_seconds", dns["lookup_ms"] / 1000.0, **labels)


def _mcp_group(out: Exposition, group: t.Mapping[str, t.Any], site: dict[str, str]) -> None:
    where = dict(site, **_group_labels(group))
    out.add("commsgw_mcp_reachable_targets", group["healthy"], **where)
    for peer in group["peers"]:
        labels = dict(where, peer=peer_name(peer), target=peer["target"])
        out.add("commsgw_mcp_up", bool(peer["healthy"]), **labels)
        _cert_expiry(out, peer, labels)


def _sbc(out: Exposition, report: t.Mapping[str, t.Any], site: dict[str, str]) -> None:
    sbc = report.get("sbc_view")
    if not sbc:
        return
    # Runtime rows carry a state; rows read from the deployed file alone never do.
    runtime = any(d.get("state") is not None for d in sbc.get("destinations") or [])
    out.add("commsgw_sbc_view_up", runtime, **site)
    out.one_hot("commsgw_sbc_view_verdict", sbc.get("verdict"), VERDICTS, **site)
    for kind in ("missing", "extra", "stale"):
        out.add("commsgw_sbc_drift_peers", len(sbc.get(kind) or []), **dict(site, kind=kind))
    states = sbc_peer_states(sbc)
    mismatched = {entry.get("peer") for entry in sbc.get("state_mismatch") or []}
    for group in report["regions"]:
        where = dict(site, **_group_labels(group))
        counts = (sbc.get("active_peers") or {}).get(group["srv_name"])
        if counts is not None:
            out.add("commsgw_sbc_active_peers", counts["active"], **where)
        for peer in group["peers"]:
            if not peer.get("address"):
                continue
            labels = dict(where, peer=peer_name(peer), target=peer["target"])
            out.add("commsgw_sbc_peer_state", 1, **dict(labels, state=sbc_peer_state(states, peer)))
            out.add("commsgw_sbc_peer_state_mismatch", peer.get("label") in mismatched, **labels)


def sbc_peer_states(sbc: t.Optional[t.Mapping[str, t.Any]]) -> t.Optional[dict[tuple[t.Any, ...], str]]:
    """The SBC's neutral state per (address, port, transport) it lists; None when nothing was read."""
    if not sbc or not sbc.get("destinations"):
        return None
    # Runtime rows carry a state; rows read from the deployed file alone never do: "unknown".
    return {(d.get("address"), d.get("port"), d.get("transport")): _sbc_state(d.get("state"))
            for d in sbc["destinations"]}


def sbc_peer_state(states: t.Optional[t.Mapping[tuple[t.Any, ...], str]], peer: t.Mapping[str, t.Any]) -> str:
    """The SBC's state of one probed peer: one of SBC_STATES ("absent" = not in its list)."""
    if states is None:
        return "unknown"
    return states.get((peer.get("address"), peer.get("port"), peer.get("transport")), "absent")


def site_verdict(report: t.Mapping[str, t.Any], vantage: str) -> str:
    """The site verdict the metrics carry: the probe's, or with the management vantage the SBC view's."""
    if vantage == "management":
        return str((report.get("sbc_view") or {}).get("verdict") or "warn")
    return str(report["verdict"])


def report_metrics(out: Exposition, report: t.Mapping[str, t.Any], vantage: str = "sbc_host") -> None:
    """Every commsgw_* family of one probe report (probe_success and the run's own figures are the runner's)."""
    site = {"deployment": report["deployment"], "site": report["site"]}
    probing = vantage != "management"
    platform = (report.get("sbc_view") or {}).get("platform") or "none"
    out.add("commsgw_probe_info", 1, **dict(site, host=report.get("host") or "", platform=platform, vantage=vantage))
    out.one_hot("commsgw_site_verdict", site_verdict(report, vantage), VERDICTS, **site)
    for group in report["regions"]:
        _dns(out, group, site, "sip")
        _sip_group(out, group, site, probing)
    for group in report["mcp"] if probing else ():
        _dns(out, group, site, "mcp")
        _mcp_group(out, group, site)
    api = report.get("provisioning_api")
    if api and api.get("ttl_s") is not None:
        out.add("commsgw_provisioning_api_ttl_seconds", api["ttl_s"], **dict(site, hostname=api["hostname"]))
    if api and api.get("max_ttl_s") is not None:
        out.add("commsgw_provisioning_api_max_ttl_seconds", api["max_ttl_s"], **dict(site, hostname=api["hostname"]))
    _sbc(out, report, site)
