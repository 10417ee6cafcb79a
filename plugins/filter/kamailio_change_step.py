# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: kamailio_change_step
short_description: One push or rollback of the kamailio role as a neutral change step
version_added: 0.2.0
description:
  - Condenses the C(commsgw.routing.kamailio_config) result of a push (or restore) and the
    C(commsgw.routing.kamailio_service) results that followed it into the neutral change step every platform's role
    appends to C(commsgw_sbc_change_steps) (C(docs/change-records.md)) - C(kind), C(changed), C(artefacts) (name,
    C(before_sha256), C(after_sha256)), C(service) (C(action) - none, reloaded, started or restarted - C(detail), the
    jsonrpc reloads, C(pid_before), C(pid_after)) and C(backup).
positional: kind, services
options:
  _input:
    description: The kamailio_config result.
    type: dict
    required: true
  kind:
    description: C(push) or C(rollback).
    type: str
    required: true
  services:
    description: The kamailio_service results after it (skipped ones are ignored).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Note this push for the change record
  ansible.builtin.set_fact:
    commsgw_sbc_change_steps: "{{ commsgw_sbc_change_steps | default([])
                                  + [kamailio_push | commsgw.routing.kamailio_change_step('push', [kamailio_reloaded])] }}"
"""

RETURN = r"""
_value:
  description: The neutral change step.
  type: dict
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def kamailio_change_step(push, kind, services):
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.change_step import change_step

    if kind not in ("push", "rollback") or not isinstance(services, (list, tuple)):
        raise AnsibleFilterError("kamailio_change_step expects kind push or rollback and a list of service results")
    return change_step(kind, push if isinstance(push, dict) else {}, list(services))


class FilterModule:
    def filters(self):
        return {"kamailio_change_step": kamailio_change_step}
