# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From Ansible host variables to deployments: one entry per ACG deployment with its SBC hosts.

Deployment facts live in group_vars as ``commsgw_deployment``; every SBC host inherits them and
says which site it belongs to (``commsgw_site``) and which platform it runs
(``commsgw_sbc_platform``). Hosts without ``commsgw_deployment`` are not SBCs and are ignored.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.findings import Finding, Findings
from ansible_collections.commsgw.routing.plugins.module_utils.model import Deployment, Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.sbc_settings import SBC_VAR, parse_sbc_settings
from ansible_collections.commsgw.routing.plugins.module_utils.validation import validate_deployment

DEPLOYMENT_VAR = "commsgw_deployment"
SITE_VAR = "commsgw_site"
PLATFORM_VAR = "commsgw_sbc_platform"


def collect_deployments(hostvars: t.Mapping[str, t.Mapping[str, t.Any]]) -> list[dict[str, t.Any]]:
    """Group SBC hosts by deployment: ``[{"deployment": raw mapping, "sbcs": [...], "conflicts": [...]}]``.

    Hosts of one deployment must all see the same deployment facts; a host that sees different
    facts under the same name (a group_vars typo, a stale host_vars copy) is reported as a conflict.
    """
    by_name: dict[str, dict[str, t.Any]] = {}
    for host in sorted(hostvars):
        variables = hostvars[host]
        raw = variables.get(DEPLOYMENT_VAR)
        if raw is None:
            continue
        name = str(raw.get("name")) if isinstance(raw, dict) else "<invalid>"
        entry = by_name.setdefault(name, {"deployment": raw, "sbcs": [], "conflicts": [], "first_host": host})
        if raw != entry["deployment"]:
            entry["conflicts"].append(host)
        entry["sbcs"].append({"host": host, "site": variables.get(SITE_VAR),
                              "platform": variables.get(PLATFORM_VAR, "kamailio")})
        entry.setdefault("settings", {})[host] = variables.get(SBC_VAR)
    return [by_name[name] for name in sorted(by_name)]


def _conflict_findings(entry: dict[str, t.Any]) -> list[Finding]:
    findings = Findings()
    for host in entry["conflicts"]:
        findings.error("hosts[%s].%s" % (host, DEPLOYMENT_VAR),
                       "differs from what host %s sees for the same deployment" % entry["first_host"],
                       "one set of deployment facts per deployment name (check group_vars/host_vars)", host)
    return findings.items


def _sbc_settings_findings(entry: dict[str, t.Any], deployment: Deployment, required: bool) -> list[Finding]:
    """Check each host's ``commsgw_sbc`` (sockets, certificates...): always when present, and
    missing ones too when the caller is about to render or push."""
    findings = Findings()
    transport = deployment.acg_transport if isinstance(deployment.acg_transport, str) else "tls"
    for host, raw in sorted(entry.get("settings", {}).items()):
        if raw is not None or required:
            parse_sbc_settings(raw, host, transport, findings)
    return findings.items


def validate_inventory(hostvars: t.Mapping[str, t.Mapping[str, t.Any]],
                       require_sbc_settings: bool = False) -> list[dict[str, t.Any]]:
    """Validate every deployment of the inventory.

    Returns one report per deployment: its name, the parsed model (only when it has no error),
    and its errors and warnings as dictionaries. ``require_sbc_settings`` also reports hosts without
    ``commsgw_sbc`` (needed to render or push, not to validate or plan).
    """
    reports = []
    for entry in collect_deployments(hostvars):
        sbcs = [Sbc(**sbc) for sbc in entry["sbcs"]]
        deployment, findings = validate_deployment(entry["deployment"], sbcs)
        findings.extend(_conflict_findings(entry))
        findings.extend(_sbc_settings_findings(entry, deployment, require_sbc_settings))
        reports.append({"name": deployment.name, "model": deployment if not findings.errors else None,
                        "errors": findings.errors, "warnings": findings.warnings})
    return reports


def site_plans(deployment: Deployment, resolved: t.Optional[t.Mapping[str, t.Any]] = None) -> list[dict[str, t.Any]]:
    return [build_site_plan(deployment, site, resolved) for site in deployment.sites]


def render_findings(reports: t.Iterable[dict[str, t.Any]], severity: str = "errors") -> list[str]:
    """Human lines, each prefixed with its deployment so several deployments stay readable."""
    return ["deployment %s: %s" % (report["name"], finding.render())
            for report in reports for finding in report[severity]]
