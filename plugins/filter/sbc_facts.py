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

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def sbc_facts(hostvars, hosts):
    from ansible_collections.commsgw.routing.plugins.plugin_utils.sbc_facts import sbc_facts as facts

    return facts(hostvars, hosts)


class FilterModule:
    def filters(self):
        return {"sbc_facts": sbc_facts}
