#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: audiocodes_config
short_description: Apply, restore, hold and settle an AudioCodes Mediant's routing rows through its REST API
version_added: 0.2.0
description:
  - The AudioCodes Mediant platform's push (the entry points of the C(commsgw.routing.audiocodes) role). It runs on
    the controller (its action plugin); nothing is copied to or run on the device, which is reached only through its
    REST API (C(docs/platforms/audiocodes.md)).
  - O(state=present) applies the rendered artefacts (C(commsgw.ini), from the role's render entry point) with an
    incremental CLI script, C(PUT /api/v1/files/cliScript/incremental); never the full ini upload, which resets the
    device. One C(GET /api/v1/files/ini) when nothing differs; otherwise the device's previous ini is kept as a
    backup under O(platform_options.state_dir), the script is sent and the result read back. A refused script (400,
    the device's error line is shown) or a read-back that differs is rolled back at once, and the task fails.
  - O(state=restored) brings the device's rows back to a backup (a migration's rollback).
  - O(state=held) and O(state=released) take and give back the device's migration hold on the controller (a run
    that does not hold it does not push meanwhile).
  - O(state=settled) waits until the device holds the O(required) peers and none of the O(absent) ones, then
    O(min_observe_s). The device's live peer states are not read (its REST API exposes none).
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.audiocodes_options
attributes:
  check_mode:
    description: Reads the device and reports what would change (in plan terms and as the script), sending nothing.
    support: full
  diff_mode:
    description: Shows the device's state before and after in plan terms.
    support: full
options:
  state:
    description: What to do (above).
    type: str
    choices: [present, restored, held, released, settled]
    default: present
  artefacts:
    description: The rendered artefacts (C(commsgw_sbc_artefacts)), for O(state=present).
    type: dict
  plan:
    description: The site's routing plan, for O(state=present) (the drift it reports is in plan terms).
    type: dict
  hold_token:
    description: The token O(state=held) returned; a push under a migration's hold and O(state=released) need it.
    type: str
  backup:
    description: The backup to restore (a path O(state=present) returned as RV(backup)), for O(state=restored).
    type: str
  required:
    description: For O(state=settled), peers (C(address:port)) the device must hold.
    type: list
    elements: str
    default: []
  absent:
    description: For O(state=settled), peers the device must no longer hold.
    type: list
    elements: str
    default: []
  min_observe_s:
    description: For O(state=settled), seconds to wait once the device holds the peers.
    type: float
    default: 1.0
  timeout_s:
    description: For O(state=settled), the bound of the whole wait.
    type: float
    default: 60.0
"""

EXAMPLES = r"""
- name: Apply the rendered configuration to the Mediant
  commsgw.routing.audiocodes_config:
    artefacts: "{{ commsgw_sbc_artefacts }}"
    plan: "{{ commsgw_sbc_plan }}"
    platform_options: "{{ commsgw_sbc_platform_options }}"
  register: pushed

- name: Put the previous rows back
  commsgw.routing.audiocodes_config:
    state: restored
    backup: "{{ pushed.backup }}"
    platform_options: "{{ commsgw_sbc_platform_options }}"
"""

RETURN = r"""
changed:
  description: Whether the device's rows changed (or, in check mode, would).
  type: bool
  returned: always
drift:
  description: Differences between the plan and the device before the change, in plan terms.
  type: list
  elements: str
  returned: state=present
steps:
  description: Row changes (action, table, index, the parameters set and their old values).
  type: list
  elements: dict
  returned: state=present or state=restored
script:
  description: The incremental CLI script sent (or that would be sent).
  type: str
  returned: state=present or state=restored
round_trips:
  description: HTTP requests made.
  type: int
  returned: state=present or state=restored
gaps:
  description: Plan facts the Mediant cannot enforce as the plan says, each with its requirement.
  type: list
  elements: dict
  returned: state=present
backup:
  description: Path of the backup kept before the change (empty when nothing changed).
  type: str
  returned: state=present and a change was made
rolled_back:
  description: Whether a refused or unverified change was rolled back.
  type: bool
  returned: state=present
step:
  description: The platform contract's neutral change step (C(docs/platforms.md)).
  type: dict
  returned: state=present or state=restored
hold_token:
  description: The hold's token.
  type: str
  returned: state=held
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.config_task import ARGUMENT_SPEC, run


def outcome(params, check_mode):
    """(failed, values) of one task: the action plugin calls this in the controller process."""
    return run(params, check_mode)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    failed, values = outcome(module.params, module.check_mode)
    if failed:
        module.fail_json(**values)
    module.exit_json(**values)


if __name__ == "__main__":
    main()
