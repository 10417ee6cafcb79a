# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: sbc_local_reader
short_description: What an unprivileged reader of an SBC's state on its host needs
version_added: 0.2.0
description:
  - Returns what a process that reads the SBC's own view on the SBC host without root (the probe exporter,
    C(commsgw.routing.probe_exporter)) needs, as the platform declares it (its C(local_reader) hook,
    C(docs/platforms.md)) - C(groups) to join, C(optional_groups) to join where the host has them, and
    C(writable_dirs) it must be able to write in. An API platform needs none of them.
positional: options
options:
  _input:
    description: The host's C(commsgw_sbc_platform); empty means the default platform.
    type: str
    required: true
  options:
    description: The host's platform options (C(commsgw.routing.sbc_platform_options)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Groups of the exporter's user
  ansible.builtin.set_fact:
    reader: "{{ commsgw_sbc_platform | default('') | commsgw.routing.sbc_local_reader(platform_options) }}"
"""

RETURN = r"""
_value:
  description: C(groups), C(optional_groups) and C(writable_dirs), lists of strings.
  type: dict
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def sbc_local_reader(name, options):
    from ansible_collections.commsgw.routing.plugins.module_utils.sbc.options import (
        PlatformOptionsError, validate_options)
    from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_filter import filter_platform

    platform = filter_platform(name, "sbc_local_reader: ")
    try:
        values = validate_options(platform, options)[0]
    except PlatformOptionsError as exc:
        raise AnsibleFilterError("sbc_local_reader: %s" % exc) from None
    reader = platform.local_reader(values)
    return {key: list(reader.get(key) or []) for key in ("groups", "optional_groups", "writable_dirs")}


class FilterModule:
    def filters(self):
        return {"sbc_local_reader": sbc_local_reader}
