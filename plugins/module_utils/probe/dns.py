# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's DNS: resolve one SRV record of the plan into peers to contact, and the provisioning API TTL.

SRV answers are audited against the record's /28 ranges (R-07, ``srv.audit_srv``); an address outside
every range is still listed, as a target that will never be contacted.
"""

from __future__ import annotations

import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as lim
from ansible_collections.commsgw.routing.plugins.module_utils.probe.exchange import ms_since
from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import (
    FAIL, PASS, WARN, PeerTarget, ProbeSettings)
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import (
    DnsLookupError, audit_srv, observe_ttl, resolve_srv)
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import limits_for


def resolve_record(record: t.Mapping[str, t.Any], ranges: t.Sequence[str], kind: str, transport: str,
                   settings: ProbeSettings, path: str) -> tuple[dict[str, t.Any], list[PeerTarget]]:
    """Resolve one SRV record of the plan; the DNS report and the targets to probe."""
    hostname = record["hostname"]
    verify = (record.get("tls") or {}).get("verify_hostname") or hostname
    sni = (record.get("tls") or {}).get("sni") or hostname
    dns_report: dict[str, t.Any] = {"srv_name": record["srv_name"], "ok": False, "kind": None, "detail": "",
                                    "ttl": None, "targets": [], "out_of_range": [], "findings": []}
    start = time.monotonic()
    try:
        # RFC 2782 and the plan's srv_limits (issue 13): a hostile record gives its kind and no target to contact.
        limits = limits_for(transport, record.get("srv_limits"))
    except ValueError as exc:
        dns_report.update(kind="bad_srv_limits", detail="the plan's %s" % exc)
        return dns_report, []
    try:
        answer = resolve_srv(record["srv_name"], settings.resolver, limits)
    except DnsLookupError as exc:
        dns_report.update(kind=exc.kind, detail=str(exc), lookup_ms=ms_since(start))
        return dns_report, []
    dns_report["lookup_ms"] = ms_since(start)
    data = answer.as_dict()
    findings = audit_srv(answer, ranges, path)
    dns_report.update(ok=True, ttl=data["ttl"], targets=data["targets"],
                      findings=[f.render() for f in findings])
    targets = []
    for tgt in data["targets"]:
        addresses = tgt["addresses"] or [None]
        for address in addresses:
            in_range = address is not None and lim.in_ranges(address, ranges)
            if address is not None and not in_range:
                dns_report["out_of_range"].append("%s -> %s" % (tgt["target"], address))
            targets.append(PeerTarget(kind=kind, region=record["region"], srv_name=record["srv_name"], hostname=sni,
                                      verify_hostname=verify, target=tgt["target"], address=address,
                                      port=int(tgt["port"]), priority=int(tgt["priority"]),
                                      weight=int(tgt["weight"]), transport=transport, in_range=in_range))
    return dns_report, targets


def provisioning_ttl(api: t.Mapping[str, t.Any], settings: ProbeSettings) -> dict[str, t.Any]:
    """R-21 for the provisioning API record: verdict, detail, the TTL served (``ttl_s``, None when unread)
    and the limit (``max_ttl_s``)."""
    max_ttl = int(api.get("max_ttl_s", 60))
    ttl, finding = observe_ttl(api["hostname"], max_ttl, settings.resolver, path="provisioning_api.hostname")
    found = {"hostname": api["hostname"], "ttl_s": ttl, "max_ttl_s": max_ttl}
    if finding is None:
        return dict(found, verdict=PASS, detail="TTL within %s s" % max_ttl)
    if finding.severity == "error":
        verdict = FAIL if settings.thresholds.fail_on_provisioning_ttl else WARN
    else:
        verdict = WARN
    return dict(found, verdict=verdict, detail=finding.message)
