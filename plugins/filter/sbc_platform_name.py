# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: sbc_platform_name
short_description: The SBC platform a host's commsgw_sbc_platform names, the default filled in
version_added: 0.2.0
description:
  - Returns the registered platform name for O(_input) (a host's C(commsgw_sbc_platform)); empty or null is the
    collection's default platform. An unregistered platform is an error naming C(commsgw_sbc_platform) and
    listing the registered ones (C(docs/platforms.md)).
options:
  _input:
    description: The platform name; empty or null means the default platform.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Name the platform in a report
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }} runs {{ commsgw_sbc_platform | default('') | commsgw.routing.sbc_platform_name }}"
"""

RETURN = r"""
_value:
  description: The platform's name.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    DEFAULT_PLATFORM, UnknownPlatform, get_platform)


def sbc_platform_name(name):
    try:
        return get_platform(name or DEFAULT_PLATFORM).name
    except UnknownPlatform as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"sbc_platform_name": sbc_platform_name}
