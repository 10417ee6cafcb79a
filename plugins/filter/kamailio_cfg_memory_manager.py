# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: kamailio_cfg_memory_manager
short_description: The memory manager a rendered kamailio.cfg names
version_added: 0.2.0
description:
  - Returns the Kamailio memory manager (V(tlsf), V(qm) or V(fm)) that a kamailio.cfg names on its one
    C(#memory_manager=) line, which the renderer writes from C(commsgw_sbc.memory_manager); an empty string when it
    names none (rendered by an earlier release) or not exactly one known manager.
  - The same reading as C(commsgw.routing.kamailio_service) and the candidate start-test of
    C(commsgw.routing.kamailio_config) make, so that the kamailio role's systemd drop-in starts Kamailio under the
    manager they would.
options:
  _input:
    description: The text of kamailio.cfg.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Name the memory manager of the configuration to push
  ansible.builtin.debug:
    msg: "{{ kamailio_files['kamailio.cfg'] | commsgw.routing.kamailio_cfg_memory_manager }}"
"""

RETURN = r"""
_value:
  description: The memory manager, or an empty string.
  type: str
"""

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def kamailio_cfg_memory_manager(cfg_text):
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import memory_manager_of

    return memory_manager_of(str(cfg_text or "")) or ""


class FilterModule:
    def filters(self):
        return {"kamailio_cfg_memory_manager": kamailio_cfg_memory_manager}
