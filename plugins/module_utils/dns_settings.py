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
"""

from __future__ import annotations

import ipaddress
import typing as t

NAMESERVERS_VAR = "commsgw_dns_nameservers"
PORT_VAR = "commsgw_dns_port"
TIMEOUT_VAR = "commsgw_dns_timeout"
DNS_VARS = (NAMESERVERS_VAR, PORT_VAR, TIMEOUT_VAR)
NAMESERVER_EXPECTED = "an IPv4 or IPv6 address, e.g. 192.0.2.53 (a name cannot be resolved before a resolver is chosen)"


class DnsSettingsError(ValueError):
    """The DNS settings of a deployment are unusable; the message names the variable and the host."""


def nameserver_problems(value: t.Any, where: str) -> list[str]:
    """One message per problem of a nameserver list; ``where`` names the variable (and host)."""
    if not isinstance(value, (list, tuple)):
        return ["%s: is not a list (got %r; expected a list of IP addresses, e.g. ['192.0.2.53'])" % (where, value)]
    if not value:
        return ["%s: is empty (expected at least one IP address; leave it unset to use the controller's "
                "/etc/resolv.conf)" % where]
    problems = []
    for index, server in enumerate(value):
        try:
            ipaddress.ip_address(server if isinstance(server, str) else "")
        except ValueError:
            problems.append("%s[%d]: is not an IP address (got %r; expected %s)"
                            % (where, index, server, NAMESERVER_EXPECTED))
    return problems


def _agreed(hosts: t.Sequence[tuple[str, t.Mapping[str, t.Any]]], var: str, label: str) -> t.Any:
    """The value every host of the deployment gives ``var`` (None when none gives one)."""
    seen = [(host, variables[var]) for host, variables in hosts if variables.get(var) is not None]
    if not seen:
        return None
    first_host, first = seen[0]
    for host, value in seen[1:]:
        if value != first:
            raise DnsSettingsError(
                "%s differs between hosts of deployment %s: %s has %r, %s has %r; expected one value per deployment "
                "(the SRV records of a deployment are asked of one set of nameservers)"
                % (var, label, first_host, first, host, value))
    unset = [host for host, variables in hosts if variables.get(var) is None]
    if unset:
        raise DnsSettingsError(
            "%s is set for host %s of deployment %s but not for host %s; expected it for every host of the "
            "deployment (e.g. in the deployment's group_vars), or for none" % (var, first_host, label, unset[0]))
    return first


def deployment_dns_settings(sbc_hosts: t.Mapping[str, t.Mapping[str, t.Any]],
                            defaults: t.Optional[t.Mapping[str, t.Any]] = None) -> list[dict[str, t.Any]]:
    """One entry per distinct ``commsgw_deployment``: ``{"deployment", "nameservers", "port", "timeout"}``
    (None where neither the hosts nor ``defaults``, the controller's own variables, set one)."""
    defaults = defaults or {}
    entries: list[dict[str, t.Any]] = []
    groups: list[tuple[t.Any, list[tuple[str, t.Mapping[str, t.Any]]]]] = []
    for host in sorted(sbc_hosts):
        variables = sbc_hosts[host]
        raw = variables.get("commsgw_deployment")
        group = next((members for deployment, members in groups if deployment == raw), None)
        if group is None:
            groups.append((raw, [(host, variables)]))
        else:
            group.append((host, variables))
    for raw, hosts in groups:
        name = raw.get("name") if isinstance(raw, dict) else None
        label = "%s (host %s)" % (name, hosts[0][0])
        values = {}
        for var in DNS_VARS:
            value = _agreed(hosts, var, label)
            values[var] = value if value is not None else defaults.get(var)
        servers = values[NAMESERVERS_VAR]
        if servers is not None:
            problems = nameserver_problems(servers, "%s of deployment %s" % (NAMESERVERS_VAR, label))
            if problems:
                raise DnsSettingsError("; ".join(problems))
            servers = [str(server) for server in servers]
        entries.append({"deployment": raw, "nameservers": servers, "port": values[PORT_VAR],
                        "timeout": values[TIMEOUT_VAR]})
    return entries
