# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: dns_settings
short_description: The nameservers, port and timeout to audit each deployment's SRV records with
version_added: 0.1.0
description:
  - Returns one entry per distinct C(commsgw_deployment) of O(_input), with the C(commsgw_dns_nameservers),
    C(commsgw_dns_port) and C(commsgw_dns_timeout) its SBC hosts see (set in any group_vars, including the
    deployment's own group), else those of O(defaults) (the controller's own variables).
  - Fails when hosts of one deployment disagree, or when a nameserver is not an IP address, rather than asking
    another resolver than the one configured. A plain string is read as a list of one nameserver.
  - The playbooks validate these settings first (M(commsgw.routing.validate_inventory), with O(defaults) as its
    C(dns_defaults)), so that bad input is reported with its field path there; this filter only refuses what
    slipped past, in the same words.
positional: defaults
options:
  _input:
    description: Host name to that host's commsgw variables, as returned by P(commsgw.routing.sbc_facts#filter).
    type: dict
    required: true
  defaults:
    description: The controller's own C(commsgw_dns_nameservers), C(commsgw_dns_port) and C(commsgw_dns_timeout).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Audit each deployment with its own nameservers
  commsgw.routing.srv_audit:
    deployment: "{{ item.deployment }}"
    nameservers: "{{ item.nameservers | default(omit, true) }}"
  loop: "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) | commsgw.routing.dns_settings }}"
"""

RETURN = r"""
_value:
  description: Entries with C(deployment), C(nameservers), C(port) and C(timeout) (null where nothing sets them).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def dns_settings(sbc_hosts, defaults=None):
    from ansible_collections.commsgw.routing.plugins.module_utils.srv.dns_settings import (
        DnsSettingsError, deployment_dns_settings)

    if not isinstance(sbc_hosts, dict):
        raise AnsibleFilterError("dns_settings expects the mapping returned by commsgw.routing.sbc_facts")
    try:
        return deployment_dns_settings(sbc_hosts, defaults or {})
    except DnsSettingsError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule:
    def filters(self):
        return {"dns_settings": dns_settings}
