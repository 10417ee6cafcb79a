# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: acg_draft
short_description: A commsgw_deployment skeleton (YAML text) drafted from an ACG resource
version_added: 0.1.0
description:
  - Turns the ACG resource read by M(commsgw.routing.acg_resource_info) into group_vars YAML for a new onboarding.
  - Every fact ARM cannot give (base domain, regional hostnames, /28s, MCP hostnames, site names) is a string
    starting with C(TODO), listed in the header comment.
options:
  _input:
    description: The ACG resource body, RV(commsgw.routing.acg_resource_info#module:raw).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Draft group_vars from the ACG resource
  ansible.builtin.copy:
    content: "{{ acg.raw | commsgw.routing.acg_draft }}"
    dest: group_vars/acg_new.yml
    mode: "0644"
"""

RETURN = r"""
_value:
  description: YAML text with one C(commsgw_deployment) mapping.
  type: str
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def acg_draft(resource):
    from ansible_collections.commsgw.routing.plugins.module_utils.azure.arm import ArmError
    from ansible_collections.commsgw.routing.plugins.module_utils.azure.draft import draft_yaml
    from ansible_collections.commsgw.routing.plugins.module_utils.azure.resource import normalise

    try:
        return draft_yaml(normalise(resource))
    except ArmError as exc:
        raise AnsibleFilterError(exc.message)


class FilterModule:
    def filters(self):
        return {"acg_draft": acg_draft}
