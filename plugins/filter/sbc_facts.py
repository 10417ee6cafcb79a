# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: sbc_facts
short_description: Extract the commsgw variables of every SBC host from hostvars
version_added: 0.1.0
description:
  - Returns a mapping of host name to the variables commsgw.routing reads about it
    (C(commsgw_deployment), C(commsgw_site), C(commsgw_sbc_platform), C(commsgw_sbc), and the DNS settings
    C(commsgw_dns_nameservers), C(commsgw_dns_port), C(commsgw_dns_timeout)).
  - C(commsgw_site_groups) (group name to its C(commsgw_site)) is added for a host whose groups set different
    sites, so that validation can refuse it instead of silently using the site Ansible merged last.
  - Hosts without C(commsgw_deployment) are left out. Pass the result as O(commsgw.routing.validate_inventory#module:hosts).
positional: hosts
options:
  _input:
    description: The C(hostvars) magic variable.
    type: dict
    required: true
  hosts:
    description: Names of the hosts to consider, usually C(groups['all']) or C(ansible_play_hosts_all).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Validate every ACG deployment of the inventory
  commsgw.routing.validate_inventory:
    hosts: "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) }}"
"""

RETURN = r"""
_value:
  description: Host name to its commsgw variables.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.commsgw.routing.plugins.plugin_utils.site_groups import site_groups

SBC_VARS = ("commsgw_deployment", "commsgw_site", "commsgw_sbc_platform", "commsgw_sbc",
            # DNS settings may live in the deployment's group_vars, which only its hosts see.
            "commsgw_dns_nameservers", "commsgw_dns_port", "commsgw_dns_timeout")


def sbc_facts(hostvars, hosts):
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("sbc_facts expects a list of host names, got %s" % type(hosts).__name__)
    facts = {}
    group_vars = {}
    for host in hosts:
        variables = hostvars[host]
        if "commsgw_deployment" not in variables:
            continue
        facts[host] = {name: variables[name] for name in SBC_VARS if name in variables}
        # Several groups setting different sites: hostvars only show the one Ansible merged last.
        groups = site_groups(hostvars, host, group_vars)
        if len({repr(site) for site in groups.values()}) > 1:
            facts[host]["commsgw_site_groups"] = groups
    return facts


class FilterModule:
    def filters(self):
        return {"sbc_facts": sbc_facts}
