# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory's bounds on ACG's SRV records (``commsgw_deployment.srv_limits``).

An SRV answer comes from DNS, not from the operator: it may list a flood of targets or ports no
ACG deployment uses. ``srv_lookup.SrvLimits`` refuses such a record as a whole; this module reads
and checks the deployment's optional overrides (``max_targets``, ``ports``) of the defaults
(16 targets; port 5061 for TLS, 5060 for TCP/UDP labs).
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import (
    DnsLookupError, SrvLimits, check_answer, limits_for, normalise_fqdn)

MAX_TARGETS_CEILING = 256


def check_srv_limits(deployment: Deployment, findings: Findings) -> None:
    """Errors for ``srv_limits.max_targets`` outside 1-256 and ``srv_limits.ports`` that are not 1-65535."""
    raw = deployment.srv_limits
    value = raw.get("max_targets")
    if value is not None and not 1 <= value <= MAX_TARGETS_CEILING:
        findings.error("srv_limits.max_targets", "is out of range",
                       "an integer from 1 to %d (default 16)" % MAX_TARGETS_CEILING, value)
    ports = raw.get("ports")
    if ports is None:
        return
    if not ports:
        findings.error("srv_limits.ports", "is empty", "a list of ports 1-65535 (default [5061] for TLS)", ports)
    for index, port in enumerate(ports):
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            findings.error("srv_limits.ports[%d]" % index, "is not a port", "an integer from 1 to 65535", port)


def deployment_limits(deployment: Deployment) -> SrvLimits:
    """The SrvLimits of a (valid) deployment's records."""
    return limits_for(deployment.acg_transport, t.cast(t.Mapping[str, t.Any], deployment.srv_limits))


def resolved_problems(deployment: Deployment, resolved: t.Mapping[str, t.Any]) -> list[str]:
    """Why answers passed in as ``resolved`` (routing_plan) cannot be a plan's peers: the same RFC 2782
    and ``srv_limits`` checks as a live lookup (``srv_lookup.check_record``), per record the deployment uses."""
    limits = deployment_limits(deployment)
    names = set()
    for region in deployment.service_regions:
        for hostname in (region.hostname, region.mcp_hostname):
            if isinstance(hostname, str):
                names.add("_sip._tls." + normalise_fqdn(hostname))
    problems = []
    for name in sorted(names):
        answer = resolved.get(name)
        if answer is None:
            continue
        try:
            check_answer(answer if isinstance(answer, dict) else {}, limits)
        except DnsLookupError as exc:
            problems.append("resolved[%s]: %s [%s]" % (name, exc, exc.kind))
    return problems
