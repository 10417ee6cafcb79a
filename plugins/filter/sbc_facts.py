# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: sbc_facts
short_description: Extract the commsgw variables of every SBC host from hostvars
version_added: 0.1.0
description:
  - Returns a mapping of host name to the variables commsgw.routing reads about it
    (C(commsgw_deployment), C(commsgw_site), C(commsgw_sbc_platform), C(commsgw_sbc)).
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

SBC_VARS = ("commsgw_deployment", "commsgw_site", "commsgw_sbc_platform", "commsgw_sbc")


def sbc_facts(hostvars, hosts):
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("sbc_facts expects a list of host names, got %s" % type(hosts).__name__)
    facts = {}
    for host in hosts:
        variables = hostvars[host]
        if "commsgw_deployment" not in variables:
            continue
        facts[host] = {name: variables[name] for name in SBC_VARS if name in variables}
    return facts


class FilterModule:
    def filters(self):
        return {"sbc_facts": sbc_facts}
