# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: sbc_platform_options
short_description: The platform options a host's inventory sets for its SBC platform
version_added: 0.2.0
description:
  - Returns the platform options (how the SBC is reached and read) that the inventory sets for one host, for the
    O(commsgw.routing.sbc_state_info#module:platform_options) of the generic modules (C(sbc_state_info),
    C(migration_diff), C(migration_wait), C(probe)). Every playbook computes them this way.
  - Each platform declares where each of its options comes from (C(option_sources) of its registration,
    C(docs/platforms.md)) - a key of the host's C(commsgw_sbc), or a host variable (a credential, kept in a vault).
    Options the inventory does not set are left out; the modules fill in the platform's defaults.
  - An unregistered platform is an error naming C(commsgw_sbc_platform) and listing the registered ones.
positional: settings, host_vars
options:
  _input:
    description: The host's C(commsgw_sbc_platform); empty or null means the default platform.
    type: str
    required: true
  settings:
    description: The host's C(commsgw_sbc).
    type: dict
    required: true
  host_vars:
    description: The host's variables (C(hostvars[inventory_hostname])).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Read back this SBC
  commsgw.routing.sbc_state_info:
    platform: "{{ commsgw_sbc_platform | default(omit) }}"
    platform_options: "{{ commsgw_sbc_platform | default('')
                          | commsgw.routing.sbc_platform_options(commsgw_sbc | default({}), hostvars[inventory_hostname]) }}"
"""

RETURN = r"""
_value:
  description: Option name to value, for the options the inventory sets.
  type: dict
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def sbc_platform_options(name, settings, host_vars):
    from ansible_collections.commsgw.routing.plugins.module_utils.sbc.options import inventory_options
    from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_filter import filter_platform

    platform = filter_platform(name)
    if settings is not None and not isinstance(settings, dict):
        raise AnsibleFilterError("sbc_platform_options: settings (commsgw_sbc) is not a mapping")
    return inventory_options(platform, settings, host_vars)


class FilterModule:
    def filters(self):
        return {"sbc_platform_options": sbc_platform_options}
