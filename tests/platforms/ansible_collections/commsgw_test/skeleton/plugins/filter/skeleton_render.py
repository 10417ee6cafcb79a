# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: skeleton_render
short_description: Render the walking-skeleton SBC's configuration document from its routing plan
version_added: 0.1.0
description:
  - Returns C({config.json - text}), the skeleton platform's one artefact, for the site plan O(_input).
positional: settings, host
options:
  _input:
    description: The site's routing plan.
    type: dict
    required: true
  settings:
    description: The host's C(commsgw_sbc).
    type: dict
    required: true
  host:
    description: The inventory host.
    type: str
    required: true
"""

RETURN = r"""
_value:
  description: Artefact name to text.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.commsgw_test.skeleton.plugins.module_utils.skeleton.platform import PLATFORM


def skeleton_render(plan, settings, host):
    if not isinstance(plan, dict) or not isinstance(settings, dict):
        raise AnsibleFilterError("skeleton_render expects a plan mapping and a settings mapping")
    return PLATFORM.render(plan, settings, host=str(host))


class FilterModule:
    def filters(self):
        return {"skeleton_render": skeleton_render}
