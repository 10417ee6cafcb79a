# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SRV resolution of a whole deployment, the /28 audit (R-07) and the provisioning TTL check (R-21).

The lookup itself (``resolve_srv``, ``DnsLookupError`` and its kinds, RFC 2782 ordering) lives in
``srv.lookup``, which also runs on SBC hosts; it is re-exported here. ``resolve_deployment``
resolves every record a deployment depends on and turns failures into findings tied to the
inventory field they come from.
"""

from __future__ import annotations

import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import ERROR, WARNING, Finding
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import (  # noqa: F401 (re-exported)  # pylint: disable=unused-import
    BAD_NAME, BAD_TARGET_NAME, DNSPYTHON_IMPORT_ERROR, ERROR_KINDS, HAS_DNSPYTHON, NO_ANSWER, NO_NAMESERVERS,
    NO_SERVICE, NXDOMAIN, PORT_ZERO, RECORD_KINDS, REFUSED, SERVFAIL, TARGET_ALIAS, TARGET_UNRESOLVED, TIMEOUT,
    TOO_MANY_TARGETS, UNEXPECTED_PORT, DnsLookupError, ResolverSettings, SrvAnswer, SrvLimits, SrvTarget,
    addresses_outside, lookup, normalise_fqdn, resolve_srv, rfc2782_order, target_from_dict)

if t.TYPE_CHECKING:
    from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment

# The whole-deployment functions below import the inventory model's and the plan's modules when they run: the probe,
# which runs on SBC hosts inside the read of every re-run, needs only the lookup, the audit and the TTL check, and
# every module an Ansible module imports is compiled again on each call (AnsiballZ ships sources, docs/rerun.md).


def audit_srv(answer: t.Union[SrvAnswer, t.Mapping[str, t.Any]], ranges: t.Sequence[str],
              path_prefix: str) -> list[Finding]:
    """R-07: every address an SRV target resolves to lies in the given /28 range(s)."""
    if not isinstance(answer, SrvAnswer):
        answer = SrvAnswer(answer["name"], int(answer["ttl"]), tuple(target_from_dict(x) for x in answer["targets"]))
    good = [str(target) for target in _parsable(ranges)]
    expected = "an address in %s" % (", ".join(good) or "the region's /28 range(s)")
    findings = []
    for target in answer.targets:
        where = "SRV %s target %s:%s" % (answer.name, target.target, target.port)
        if not target.addresses:
            findings.append(Finding(ERROR, path_prefix, "%s has no IPv4 address" % where, expected,
                                    target.target, "R-07"))
        for _target, address in addresses_outside([target], ranges):
            findings.append(Finding(ERROR, path_prefix, "%s resolves to %s, outside the range(s)"
                                    % (where, address), expected, address, "R-07"))
    return findings


def _parsable(ranges: t.Iterable[str]) -> list[ipaddress.IPv4Network]:
    found = []
    for value in ranges:
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            continue  # validation reports bad ranges; the audit checks against the good ones
        if network.version == 4:
            found.append(t.cast(ipaddress.IPv4Network, network))
    return found


def check_ttl(name: str, max_ttl: int,
              settings: t.Optional[ResolverSettings] = None, path: str = "base_domain") -> t.Optional[Finding]:
    """R-21: the provisioning API record must not be cached longer than ``max_ttl`` seconds.

    A TTL above the limit (for example a resolver that raises minimum TTLs) is an error: clients
    would keep using a failed region. A name that cannot be resolved is only a warning, since the
    check cannot be made (labs often have no provisioning API).
    """
    return observe_ttl(name, max_ttl, settings, path)[1]


def observe_ttl(name: str, max_ttl: int,
                settings: t.Optional[ResolverSettings] = None, path: str = "base_domain"
                ) -> tuple[t.Optional[int], t.Optional[Finding]]:
    """``check_ttl`` plus the TTL served (None when the record could not be read): the probe exporter's metric."""
    settings = settings or ResolverSettings()
    name = normalise_fqdn(name)
    try:
        answer = lookup(settings.resolver(), name, "A", settings.describe())
    except DnsLookupError as exc:
        return None, Finding(WARNING, path, "cannot check the provisioning API TTL: %s [%s]" % (exc, exc.kind),
                             "an A record for %s with a TTL of at most %d s" % (name, max_ttl), name, "R-21")
    if answer.rrset is None:  # resolve() raises NoAnswer first
        return None, Finding(WARNING, path, "cannot check the provisioning API TTL: empty answer for %s" % name,
                             "an A record for %s" % name, name, "R-21")
    ttl = int(answer.rrset.ttl)
    if ttl > max_ttl:
        return ttl, Finding(ERROR, path, "the provisioning API record %s is served with a %d s TTL via %s"
                            % (name, ttl, settings.describe()),
                            "a TTL of at most %d s, so clients follow a regional failover" % max_ttl, ttl, "R-21")
    return ttl, None


def deployment_records(deployment: Deployment) -> list[tuple[str, str, list[str]]]:
    """(SRV name, inventory path, ranges its targets may use) for every record the deployment uses."""
    from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import record_ranges, srv_name

    records = []
    for region in deployment.service_regions:
        records.append((srv_name(region.hostname), region.path + ".hostname", record_ranges(deployment, region, "sip")))
        if region.mcp_hostname:
            records.append((srv_name(region.mcp_hostname), region.path + ".mcp_hostname",
                            record_ranges(deployment, region, "mcp")))
    return records


def resolve_deployment(deployment: Deployment, settings: ResolverSettings,
                       check_provisioning_ttl: bool = False) -> tuple[dict[str, dict[str, t.Any]], list[Finding]]:
    """Resolve and audit every SRV record of a (valid) deployment.

    Returns the answers (``{srv_name: SrvAnswer.as_dict()}``, only the ones that resolved) and the
    findings: DNS failures as errors naming the inventory field, the record, the kind and the
    nameserver; audit findings from ``audit_srv``; optionally the provisioning API TTL check.
    """
    from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import PROVISIONING_API_MAX_TTL_S
    from ansible_collections.commsgw.routing.plugins.module_utils.srv.bounds import deployment_limits

    answers: dict[str, dict[str, t.Any]] = {}
    findings: list[Finding] = []
    limits = deployment_limits(deployment)
    for name, path, ranges in deployment_records(deployment):
        try:
            answer = resolve_srv(name, settings, limits)
        except DnsLookupError as exc:
            findings.append(Finding(ERROR, path, "%s [%s]" % (exc, exc.kind), _expected(exc.kind, limits),
                                    exc.kind, "R-10"))
            continue
        answers[name] = answer.as_dict()
        findings.extend(audit_srv(answer, ranges, path))
    if check_provisioning_ttl and isinstance(deployment.base_domain, str):
        finding = check_ttl("provapi." + normalise_fqdn(deployment.base_domain), PROVISIONING_API_MAX_TTL_S,
                            settings)
        if finding is not None:
            findings.append(finding)
    return answers, findings


def _expected(kind: str, limits: SrvLimits) -> str:
    """What a record failing with ``kind`` should have been."""
    if kind in RECORD_KINDS:
        return ("an RFC 2782 SRV record: at most %d targets, each an RFC 1123 host name with its own A record "
                "(no CNAME, not '.'), on port %s (commsgw_deployment.srv_limits)"
                % (limits.max_targets, " or ".join(str(p) for p in limits.ports or ()) or "1-65535"))
    return "an SRV record with reachable targets (R-10)"


def dnspython_missing() -> str:
    """Ansible's usual words for a missing dnspython where the code runs, naming the import error; '' when
    it is installed."""
    if HAS_DNSPYTHON:
        return ""
    from ansible.module_utils.basic import missing_required_lib
    return "%s (%s)" % (missing_required_lib("dnspython"), DNSPYTHON_IMPORT_ERROR)
