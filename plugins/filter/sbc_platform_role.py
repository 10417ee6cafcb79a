# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: sbc_platform_role
short_description: The role that renders, tests and applies the configuration of an SBC platform
version_added: 0.1.0
description:
  - Returns the FQCN of the role registered for the SBC platform O(_input) (a host's C(commsgw_sbc_platform))
    in the collection's platform registry (C(docs/platforms.md)); the playbooks include it instead of naming
    one platform's role.
  - An unregistered platform is an error naming C(commsgw_sbc_platform) and listing the registered ones.
options:
  _input:
    description: The platform name; empty or null means the collection's default platform.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Push the configuration with this host's platform role
  ansible.builtin.include_role:
    name: "{{ commsgw_sbc_platform | default('') | commsgw.routing.sbc_platform_role }}"
"""

RETURN = r"""
_value:
  description: The role's FQCN.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    DEFAULT_PLATFORM, UnknownPlatform, get_platform)


def sbc_platform_role(name):
    try:
        return get_platform(name or DEFAULT_PLATFORM).role
    except UnknownPlatform as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"sbc_platform_role": sbc_platform_role}
