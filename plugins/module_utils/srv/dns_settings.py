# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which nameservers answer a deployment's SRV records: ``commsgw_dns_nameservers``, ``commsgw_dns_port``
and ``commsgw_dns_timeout``.

The README lets an operator set them in any group_vars, including the deployment's own group, which
only the SBC hosts see (not the controller's ``localhost``, where the SRV audit runs). So the
settings of a deployment are read from its SBC hosts; the controller's own values only fill in
when none of its hosts has one. Hosts of one deployment that disagree, or a nameserver that is not
an IP address, are refused: the audit never silently asks another resolver than the one configured.

``check_deployment_dns`` is the one check: the validation (``inventory.validate_inventory``) reports its
findings with the field path (``hosts[sbc-1].commsgw_dns_nameservers[0]``) before anything is resolved;
``deployment_dns_settings`` (the ``srv.dns_settings`` filter) runs it again and refuses what it finds.
"""

from __future__ import annotations

import ipaddress
import math
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings, show_value

NAMESERVERS_VAR = "commsgw_dns_nameservers"
PORT_VAR = "commsgw_dns_port"
TIMEOUT_VAR = "commsgw_dns_timeout"
DNS_VARS = (NAMESERVERS_VAR, PORT_VAR, TIMEOUT_VAR)
NAMESERVER_EXPECTED = "an IPv4 or IPv6 address, e.g. 192.0.2.53 (a name cannot be resolved before a resolver is chosen)"
# Where the controller's own values are reported: the playbooks read them on localhost.
CONTROLLER = "localhost"


class DnsSettingsError(ValueError):
    """The DNS settings of a deployment are unusable; the message names the variable and the host."""


def _is_ip(value: t.Any) -> bool:
    try:
        ipaddress.ip_address(value if isinstance(value, str) else "")
    except ValueError:
        return False
    return True


def nameserver_problems(value: t.Any, where: str) -> list[str]:
    """One message per problem of a module's ``nameservers`` option; ``where`` names the option."""
    if not isinstance(value, (list, tuple)):
        return ["%s: is not a list (got %r; expected a list of IP addresses, e.g. ['192.0.2.53'])" % (where, value)]
    if not value:
        return ["%s: is empty (expected at least one IP address; leave it out to use /etc/resolv.conf)" % where]
    return ["%s[%d]: is not an IP address (got %r; expected %s)" % (where, index, server, NAMESERVER_EXPECTED)
            for index, server in enumerate(value) if not _is_ip(server)]


def _nameservers(value: t.Any, path: str, findings: Findings) -> t.Optional[list[str]]:
    if isinstance(value, str):
        # -e commsgw_dns_nameservers=192.0.2.53 gives a string: one nameserver, said so.
        findings.warn(path, "is a string, read as a list of one nameserver", "a list of IP addresses, e.g. "
                      "['192.0.2.53']", value)
        value = [value]
    if not isinstance(value, (list, tuple)):
        findings.error(path, "is not a list", "a list of IP addresses, e.g. ['192.0.2.53']", value)
        return None
    if not value:
        findings.error(path, "is empty", "at least one IP address; leave it unset to use the controller's "
                       "/etc/resolv.conf", [])
        return None
    bad = [index for index, server in enumerate(value) if not _is_ip(server)]
    for index in bad:
        findings.error("%s[%d]" % (path, index), "is not an IP address", NAMESERVER_EXPECTED, value[index])
    return None if bad else [str(server) for server in value]


def _number(value: t.Any, kind: type) -> t.Optional[float]:
    """An int or float (or its digits, as ``-e var=53`` gives them), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and not (kind is int and isinstance(value, float)):
        return value
    try:
        return kind(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _port(value: t.Any, path: str, findings: Findings) -> t.Optional[int]:
    port = _number(value, int)
    if port is None or not 1 <= port <= 65535:
        findings.error(path, "is not a port number", "an integer 1..65535 (53 unless the nameservers listen "
                       "elsewhere)", value)
        return None
    return int(port)


def _timeout(value: t.Any, path: str, findings: Findings) -> t.Optional[float]:
    timeout = _number(value, float)
    if timeout is None or not 0 < timeout < math.inf:
        findings.error(path, "is not a timeout", "seconds to wait for each answer, more than 0", value)
        return None
    return float(timeout)


_CHECKS: dict[str, t.Callable[[t.Any, str, Findings], t.Any]] = {
    NAMESERVERS_VAR: _nameservers, PORT_VAR: _port, TIMEOUT_VAR: _timeout}


def check_deployment_dns(hosts: t.Sequence[tuple[str, t.Mapping[str, t.Any]]], defaults: t.Mapping[str, t.Any],
                         findings: Findings) -> dict[str, t.Any]:
    """The DNS settings the SBC hosts of one deployment agree on, else the controller's (``defaults``);
    every problem is added to ``findings`` with its field path, each once (a value set in a group_vars is
    checked under the first host that sees it). Returns variable -> usable value or None."""
    values: dict[str, t.Any] = {}
    for var in DNS_VARS:
        setters = [(host, variables[var]) for host, variables in hosts if variables.get(var) is not None]
        if setters:
            first_host, value = setters[0]
            _agreement(hosts, var, setters, findings)
        else:
            first_host, value = CONTROLLER, defaults.get(var)
        values[var] = None if value is None else _CHECKS[var](value, "hosts[%s].%s" % (first_host, var), findings)
    return values


def _agreement(hosts: t.Sequence[tuple[str, t.Mapping[str, t.Any]]], var: str,
               setters: t.Sequence[tuple[str, t.Any]], findings: Findings) -> None:
    """Every host of one deployment must give ``var`` the same value: its SRV records are asked of one resolver."""
    first_host, first = setters[0]
    for host, value in setters[1:]:
        if value != first:
            findings.error("hosts[%s].%s" % (host, var), "differs from what host %s of the same deployment has (%s)"
                           % (first_host, show_value(first)), "one value for every host of the deployment (its SRV "
                           "records are asked of one set of nameservers), e.g. in the deployment's group_vars", value)
    for host, variables in hosts:
        if variables.get(var) is None:
            findings.error("hosts[%s].%s" % (host, var), "is not set while host %s of the same deployment sets it"
                           % first_host, "the same value for every host of the deployment (e.g. in the deployment's "
                           "group_vars), or none", None)


def deployment_dns_settings(sbc_hosts: t.Mapping[str, t.Mapping[str, t.Any]],
                            defaults: t.Optional[t.Mapping[str, t.Any]] = None) -> list[dict[str, t.Any]]:
    """One entry per distinct ``commsgw_deployment``: ``{"deployment", "nameservers", "port", "timeout"}``
    (None where neither the hosts nor ``defaults``, the controller's own variables, set one).
    Raises DnsSettingsError with every error of ``check_deployment_dns`` (validation reported them first)."""
    groups: list[tuple[t.Any, list[tuple[str, t.Mapping[str, t.Any]]]]] = []
    for host in sorted(sbc_hosts):
        raw = sbc_hosts[host].get("commsgw_deployment")
        group = next((members for deployment, members in groups if deployment == raw), None)
        if group is None:
            groups.append((raw, [(host, sbc_hosts[host])]))
        else:
            group.append((host, sbc_hosts[host]))
    entries: list[dict[str, t.Any]] = []
    findings = Findings()
    for raw, hosts in groups:
        values = check_deployment_dns(hosts, defaults or {}, findings)
        entries.append({"deployment": raw, "nameservers": values[NAMESERVERS_VAR], "port": values[PORT_VAR],
                        "timeout": values[TIMEOUT_VAR]})
    if findings.errors:
        raise DnsSettingsError("; ".join(finding.render() for finding in findings.errors))
    return entries
