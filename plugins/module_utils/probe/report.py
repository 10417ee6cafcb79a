# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Renderings of a probe report (``probe.run_probe``): JUnit XML for CI systems and a short summary.

JUnit layout: one ``testsuite`` per SRV record (a region's SIP peers, a region's MCP record), one
``testcase`` per peer address plus one for the DNS lookup; the provisioning API TTL and the SBC's
own view are suites of their own. A failed verdict is a ``failure``, a warning is reported in
``system-out`` (JUnit has no warning state, and CI must not go red on advice).
"""

from __future__ import annotations

import json
import typing as t
import xml.etree.ElementTree as ET


def _case(suite: ET.Element, classname: str, name: str, verdict: str, message: str, seconds: float = 0.0,
          details: str = "") -> None:
    case = ET.SubElement(suite, "testcase", classname=classname, name=name, time="%.3f" % seconds)
    if verdict == "fail":
        failure = ET.SubElement(case, "failure", message=message[:500], type="probe")
        failure.text = details or message
    elif verdict == "warn":
        out = ET.SubElement(case, "system-out")
        out.text = "WARNING: " + (details or message)


def _finish(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", "0")
    suite.set("time", "%.3f" % sum(float(c.get("time", "0")) for c in cases))


def to_junit(reports: t.Sequence[t.Mapping[str, t.Any]]) -> str:
    """One JUnit XML document for one or more site reports."""
    root = ET.Element("testsuites", name="commsgw.routing probe")
    for report in reports:
        prefix = "%s.%s" % (report["deployment"], report["site"])
        if report.get("host"):
            prefix += "." + str(report["host"])
        for group in list(report["regions"]) + list(report["mcp"]):
            kind = "sip" if group["kind"] == "sip" else "mcp"
            suite = ET.SubElement(root, "testsuite", name="%s.%s.%s" % (prefix, kind, group["region"]))
            classname = "%s.%s" % (prefix, group["region"])
            dns = group["dns"]
            _case(suite, classname, "dns %s" % group["srv_name"], "pass" if dns["ok"] else "fail",
                  "" if dns["ok"] else "DNS %s: %s" % (dns["kind"], dns["detail"]), (dns.get("lookup_ms") or 0) / 1000)
            for peer in group["peers"]:
                _case(suite, classname, peer["label"], peer["verdict"], "; ".join(peer["reasons"]),
                      peer["elapsed_ms"] / 1000.0, json.dumps({k: peer[k] for k in (
                          "failure", "detail", "code", "rtt_ms", "tls")}, sort_keys=True, default=str))
            _case(suite, classname, "region verdict", group["verdict"], "; ".join(group["reasons"]))
            _finish(suite)
        api = report.get("provisioning_api")
        if api:
            suite = ET.SubElement(root, "testsuite", name="%s.provisioning_api" % prefix)
            _case(suite, prefix, "ttl %s" % api["hostname"], api["verdict"], api["detail"])
            _finish(suite)
        sbc = report.get("sbc_view")
        if sbc:
            suite = ET.SubElement(root, "testsuite", name="%s.sbc_view" % prefix)
            for name in ("missing", "extra", "stale", "state_mismatch"):
                entries = sbc.get(name) or []
                verdict = "pass"
                if entries:
                    drift = name != "state_mismatch"
                    failing = report["settings"]["thresholds"]["fail_on_drift" if drift else "fail_on_state_mismatch"]
                    verdict = "fail" if failing else "warn"
                _case(suite, prefix + ".sbc_view", name, verdict, "%d %s" % (len(entries), name),
                      details=json.dumps(entries, sort_keys=True))
            counts = sbc.get("active_peers") or {}
            if counts:  # runtime states were read: the ACG peers the SBC sees active
                _case(suite, prefix + ".sbc_view", "not_active", sbc.get("state_verdict") or "pass",
                      "%d of %d ACG peer(s) active in the SBC's view" % (
                          sum(c["active"] for c in counts.values()), sum(c["total"] for c in counts.values())),
                      details=json.dumps({"not_active": sbc.get("not_active") or [], "active_peers": counts},
                                         sort_keys=True))
            _finish(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _peer_line(peer: t.Mapping[str, t.Any]) -> str:
    mark = {"pass": "ok  ", "warn": "WARN", "fail": "FAIL"}[peer["verdict"]]
    what = []
    if peer["code"] is not None:
        what.append("%d %s" % (peer["code"], peer["reason"] or ""))
    if peer["rtt_ms"] is not None:
        what.append("%.1f ms" % peer["rtt_ms"])
    tls = peer.get("tls") or {}
    if tls.get("version"):
        what.append("%s %s" % (tls["version"], tls.get("cipher") or ""))
    if tls.get("days_to_expiry") is not None:
        what.append("cert %s expires in %dd" % (",".join(tls.get("san") or []) or "?", tls["days_to_expiry"]))
    if peer["failure"]:
        what.append("%s: %s" % (peer["failure"], peer["detail"]))
    elif peer["kind"] == "mcp" and peer["healthy"]:
        what.append("MCP reachable (no OPTIONS)")
    if not peer["in_range"] and peer["address"]:
        what.append("OUTSIDE /28")
    return "    %s %s  %s" % (mark, peer["label"], "; ".join(w.strip() for w in what))


def summary_lines(report: t.Mapping[str, t.Any]) -> list[str]:
    """A short human summary: one line per site, region and peer, then the reasons."""
    lines = ["site %s/%s%s: %s (%.0f ms)" % (report["deployment"], report["site"],
                                             " on %s" % report["host"] if report.get("host") else "",
                                             report["verdict"].upper(), report["timings_ms"]["total"])]
    for group in list(report["regions"]) + list(report["mcp"]):
        label = "region" if group["kind"] == "sip" else "MCP"
        dns = group["dns"]
        dns_text = "ttl %ss, %d target(s)" % (dns["ttl"], len(dns["targets"])) if dns["ok"] else \
            "DNS %s" % dns["kind"]
        lines.append("  %s %s (%s, %s %s): %s, %d/%d healthy, %s" % (
            label, group["region"], group.get("role") or "-", group["transport"], group["srv_name"],
            group["verdict"].upper(), group["healthy"], group["total"], dns_text))
        lines.extend(_peer_line(peer) for peer in group["peers"])
    api = report.get("provisioning_api")
    if api:
        lines.append("  provisioning API %s: %s, %s" % (api["hostname"], api["verdict"].upper(), api["detail"]))
    sbc = report.get("sbc_view")
    if sbc:
        lines.append("  SBC view (%s, %s): %s, %d destination(s), missing %d, extra %d, stale %d, not active %d, "
                     "state mismatch %d"
                     % (sbc["platform"], sbc.get("source") or "-", sbc["verdict"].upper(), len(sbc["destinations"]),
                        len(sbc["missing"]), len(sbc["extra"]), len(sbc["stale"]), len(sbc.get("not_active") or []),
                        len(sbc["state_mismatch"]))
                     + (", %s" % sbc["settle"]["text"] if sbc.get("settle") else ""))
    for reason in report["reasons"]:
        lines.append("  ! " + reason)
    return lines


def to_json(reports: t.Sequence[t.Mapping[str, t.Any]]) -> str:
    return json.dumps({"reports": list(reports)}, indent=2, sort_keys=True, default=str) + "\n"
