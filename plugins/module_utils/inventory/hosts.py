# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From Ansible host variables to deployments: one entry per ACG deployment with its SBC hosts.

Deployment facts live in group_vars as ``commsgw_deployment``; every SBC host inherits them and
says which site it belongs to (``commsgw_site``) and which platform it runs
(``commsgw_sbc_platform``). Hosts without ``commsgw_deployment`` are not SBCs and are ignored.
"""

from __future__ import annotations

import dataclasses
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.srv.dns_settings import DNS_VARS, check_deployment_dns
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Finding, Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment, Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    DEFAULT_PLATFORM, PLATFORM_VAR, UnknownPlatform, get_platform)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import SBC_VAR, parse_sbc_settings
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import deployment_label, validate_deployment

DEPLOYMENT_VAR = "commsgw_deployment"
SITE_VAR = "commsgw_site"
# Set by the sbc_facts filter for a host whose groups set different sites (group name -> its site).
SITE_GROUPS_VAR = "commsgw_site_groups"


def collect_deployments(hostvars: t.Mapping[str, t.Mapping[str, t.Any]]) -> list[dict[str, t.Any]]:
    """Group SBC hosts by deployment: ``[{"deployment": raw mapping, "sbcs": [...], "conflicts": [...]}]``.

    Hosts of one deployment must all see the same deployment facts; a host that sees different
    facts under the same name (two deployments given one name, a group_vars typo, a stale host_vars
    copy) is reported as a conflict, and each other set of facts (``variants``: raw mapping and the
    hosts that see it) is validated too.
    """
    by_name: dict[str, dict[str, t.Any]] = {}
    for host in sorted(hostvars):
        variables = hostvars[host]
        raw = variables.get(DEPLOYMENT_VAR)
        if raw is None:
            continue
        name = raw.get("name") if isinstance(raw, dict) else None
        key = name if isinstance(name, str) else "\0unnamed %r" % (name,)
        entry = by_name.setdefault(key, {"label": deployment_label(name, host), "deployment": raw, "sbcs": [],
                                         "conflicts": [], "variants": [], "first_host": host})
        if raw != entry["deployment"]:
            entry["conflicts"].append(host)
            variant = next((v for v in entry["variants"] if v["deployment"] == raw), None)
            if variant is None:
                entry["variants"].append({"deployment": raw, "hosts": [host]})
            else:
                variant["hosts"].append(host)
        entry["sbcs"].append({"host": host, "site": variables.get(SITE_VAR),
                              "platform": variables.get(PLATFORM_VAR, DEFAULT_PLATFORM)})
        entry.setdefault("settings", {})[host] = variables.get(SBC_VAR)
        entry.setdefault("platforms", {})[host] = variables.get(PLATFORM_VAR, DEFAULT_PLATFORM)
        entry.setdefault("dns", {})[host] = {var: variables[var] for var in DNS_VARS if var in variables}
        if variables.get(SITE_GROUPS_VAR):
            entry.setdefault("site_groups", {})[host] = variables[SITE_GROUPS_VAR]
    return [by_name[name] for name in sorted(by_name)]


def _conflict_findings(entry: dict[str, t.Any], sbcs: list[Sbc]) -> list[Finding]:
    findings = Findings()
    for variant in entry["variants"]:
        hosts = variant["hosts"]
        for host in hosts:
            findings.error("hosts[%s].%s" % (host, DEPLOYMENT_VAR),
                           "differs from what host %s sees under the same deployment name %s: two deployments "
                           "share one name, or one host's copy drifted" % (entry["first_host"], entry["label"]),
                           "one set of deployment facts per deployment name (check group_vars/host_vars)", host)
        # The other facts get the full check as well, so that fixing the name reveals nothing new.
        dummy, other = validate_deployment(variant["deployment"], sbcs)
        for finding in other.items:
            findings.extend([dataclasses.replace(finding, path="hosts[%s].%s.%s" % (
                hosts[0], DEPLOYMENT_VAR, finding.path))])
    return findings.items


def _site_group_findings(entry: dict[str, t.Any]) -> list[Finding]:
    findings = Findings()
    for host, groups in sorted(entry.get("site_groups", {}).items()):
        names = sorted(groups)
        findings.error("hosts[%s].%s" % (host, SITE_VAR),
                       "is set by more than one group the host is in: %s; Ansible silently keeps one of them"
                       % ", ".join("%s (%s: %s)" % (g, SITE_VAR, groups[g]) for g in names),
                       "the host in exactly one site group (one site per SBC host)", names)
    return findings.items


def _sbc_settings_findings(entry: dict[str, t.Any], deployment: Deployment, required: bool) -> list[Finding]:
    """Check each host's ``commsgw_sbc`` (sockets, certificates...): always when present, and
    missing ones too when the caller is about to render or push."""
    findings = Findings()
    transport = deployment.acg_transport if isinstance(deployment.acg_transport, str) else "tls"
    for host, raw in sorted(entry.get("settings", {}).items()):
        if raw is not None or required:
            parse_sbc_settings(raw, host, transport, findings, entry["platforms"][host], deployment.type)
        _routing_limit_findings(host, entry["platforms"][host], deployment, findings)
    return findings.items


def _routing_limit_findings(host: str, platform_name: t.Any, deployment: Deployment, findings: Findings) -> None:
    """The deployment's routing knobs against what the host's platform can take (``SbcPlatform.routing_limits``)."""
    try:
        platform = get_platform(platform_name)
    except UnknownPlatform:
        return  # named by the deployment validation
    for key, (low, high) in sorted(platform.routing_limits.items()):
        value = deployment.routing.get(key)
        if isinstance(value, int) and not low <= value <= high:
            findings.error("hosts[%s].%s.routing.%s" % (host, DEPLOYMENT_VAR, key),
                           "is %s, which this host's SBC platform (%s) cannot take" % (value, platform.name),
                           "%d..%d for a host of platform %s (its notes in docs/ say why)" % (low, high, platform.name),
                           value)


def validate_inventory(hostvars: t.Mapping[str, t.Mapping[str, t.Any]], require_sbc_settings: bool = False,
                       dns_defaults: t.Optional[t.Mapping[str, t.Any]] = None) -> list[dict[str, t.Any]]:
    """Validate every deployment of the inventory.

    Returns one report per deployment: its name, the parsed model (only when it has no error),
    and its errors and warnings as dictionaries. ``require_sbc_settings`` also reports hosts without
    ``commsgw_sbc`` (needed to render or push, not to validate or plan). The DNS settings the SRV
    records are resolved with (``commsgw_dns_*`` of the hosts, else ``dns_defaults``, the controller's)
    are checked too, before anything is resolved with them.
    """
    reports = []
    for entry in collect_deployments(hostvars):
        sbcs = [Sbc(**sbc) for sbc in entry["sbcs"]]
        deployment, findings = validate_deployment(entry["deployment"], sbcs)
        findings.extend(_conflict_findings(entry, sbcs))
        findings.extend(_site_group_findings(entry))
        findings.extend(_sbc_settings_findings(entry, deployment, require_sbc_settings))
        check_deployment_dns(sorted(entry["dns"].items()), dns_defaults or {}, findings)
        reports.append({"name": entry["label"], "model": deployment if not findings.errors else None,
                        "errors": findings.errors, "warnings": findings.warnings})
    return reports


def site_plans(deployment: Deployment, resolved: t.Optional[t.Mapping[str, t.Any]] = None) -> list[dict[str, t.Any]]:
    return [build_site_plan(deployment, site, resolved) for site in deployment.sites]


def render_findings(reports: t.Iterable[dict[str, t.Any]], severity: str = "errors") -> list[str]:
    """Human lines, each prefixed with its deployment so several deployments stay readable."""
    return ["deployment %s: %s" % (report["name"], finding.render())
            for report in reports for finding in report[severity]]
