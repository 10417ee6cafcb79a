# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: sbc_artefact_files
short_description: Where each rendered artefact of an SBC goes when written into a directory
version_added: 0.2.0
description:
  - Returns one entry per rendered artefact (O(_input), the role's C(commsgw_sbc_artifacts)) with the path it has
    under O(directory) as the platform lays its artefacts out on the SBC (the platform's C(artefact_path) hook,
    C(docs/platforms.md)) - for C(playbooks/render.yml), which writes an offline render.
positional: platform, directory
options:
  _input:
    description: Artefact name to text.
    type: dict
    required: true
  platform:
    description: The host's C(commsgw_sbc_platform); empty means the default platform.
    type: str
    required: true
  directory:
    description: The directory standing for the SBC's configuration directory.
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Write the rendered artefacts
  ansible.builtin.copy:
    content: "{{ item.content }}"
    dest: "{{ item.path }}"
    mode: "0644"
  loop: "{{ commsgw_sbc_artifacts | commsgw.routing.sbc_artefact_files(commsgw_sbc_platform | default(''), '/tmp/r/sbc1') }}"
"""

RETURN = r"""
_value:
  description: C(name), C(path) and C(content) of each artefact, by name.
  type: list
  elements: dict
"""

import os

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def sbc_artefact_files(artefacts, platform, directory):
    from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_filter import filter_platform
    from ansible_collections.commsgw.routing.plugins.module_utils.sbc.options import artefact_file

    if not isinstance(artefacts, dict):
        raise AnsibleFilterError("sbc_artefact_files expects the rendered artefacts (name to text)")
    found = filter_platform(platform)
    root = os.path.realpath(str(directory))
    entries = []
    for name in sorted(artefacts):
        path = os.path.realpath(artefact_file(found, root, str(name)))
        if not path.startswith(root + os.sep):  # a name can never leave the render directory
            raise AnsibleFilterError("sbc_artefact_files: artefact %r would be written outside %s" % (name, root))
        entries.append({"name": str(name), "path": path, "content": artefacts[name]})
    return entries


class FilterModule:
    def filters(self):
        return {"sbc_artefact_files": sbc_artefact_files}
