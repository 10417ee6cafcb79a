# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The commsgw variables of every SBC host, read from Ansible's HostVars: the filter
``commsgw.routing.sbc_facts`` and the controller-side actions that read the inventory themselves when their
``hosts`` option is omitted (plugin_utils/controller_action.py) share it."""

from ansible.errors import AnsibleFilterError

from ansible_collections.commsgw.routing.plugins.plugin_utils.site_groups import site_groups

SBC_VARS = ("commsgw_deployment", "commsgw_site", "commsgw_sbc_platform", "commsgw_sbc",
            # DNS settings may live in the deployment's group_vars, which only its hosts see.
            "commsgw_dns_nameservers", "commsgw_dns_port", "commsgw_dns_timeout")


# What could start a Jinja construct in a string: a value without any is its own rendering.
_TEMPLATE_MARKS = ("{{", "{%", "{#")


def _plain(value, seen):
    """True when ``value`` holds no string that could be a template, so rendering it would return it unchanged.
    ``seen`` caches containers by identity (and keeps them alive, so that an identity is never reused): a
    deployment set in group_vars is one object shared by every host of the group."""
    if isinstance(value, str):
        return not any(mark in value for mark in _TEMPLATE_MARKS)
    if value is None or isinstance(value, (bool, int, float)):
        return True
    cached = seen.get(id(value))
    if cached is not None:
        return cached[1]
    if isinstance(value, dict):
        result = all(_plain(key, seen) and _plain(item, seen) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        result = all(_plain(item, seen) for item in value)
    else:
        result = False
    seen[id(value)] = (value, result)
    return result


def _host_variables(hostvars, host, seen):
    """(raw variables, name -> value): a variable is rendered only when it may hold a template. Rendering every
    value through HostVars costs about as much as Ansible computing the host's variables (issue 25 item 4)."""
    raw_get = getattr(hostvars, "raw_get", None)
    if raw_get is None:  # a plain mapping (tests)
        variables = hostvars[host]
        return variables, lambda name: variables[name]
    raw = raw_get(host)
    rendered = []

    def value(name):
        if _plain(raw[name], seen):
            return raw[name]
        if not rendered:
            rendered.append(hostvars[host])
        return rendered[0][name]
    return raw, value


def sbc_facts(hostvars, hosts):
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("sbc_facts expects a list of host names, got %s" % type(hosts).__name__)
    facts = {}
    group_vars = {}
    seen = {}
    for host in hosts:
        variables, value = _host_variables(hostvars, host, seen)
        if "commsgw_deployment" not in variables:
            continue
        facts[host] = {name: value(name) for name in SBC_VARS if name in variables}
        # Several groups setting different sites: hostvars only show the one Ansible merged last.
        groups = site_groups(hostvars, host, group_vars)
        if len({repr(site) for site in groups.values()}) > 1:
            facts[host]["commsgw_site_groups"] = groups
    return facts
