#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: change_record
short_description: Write the change record of an onboard or migrate run (one JSON file per run)
version_added: 0.1.0
description:
  - Keeps C(<dir>/<run_id>.json) up to date while a run goes (docs/change-records.md has the schema) -
    O(state=opened) creates it with the run id, start, ansible-core and collection versions, playbook and
    check mode; O(state=sbc_started) marks an SBC in progress; O(state=sbc_finished) condenses the change
    steps the platform's role noted for it (O(steps)) into the artefacts changed with their sha256 before and
    after, the service action (start, restart, reload, apply) and the SBC's main PID before and after (host
    platforms);
    O(state=sbc_probed) adds an SBC's live probe verdict (O(verdict)); O(state=closed) adds the end and the
    run's result (and the verdicts in O(verdicts)).
  - A run that stops half-way leaves C(result=incomplete) and its current SBC C(in progress).
  - Runs on the controller (action plugin) and writes there, in check mode too (the record then says
    C(check_mode=true) and lists what would have changed).
author: commsgw.routing contributors (@commsgw)
options:
  dir:
    description: Directory of the records (created when missing). playbooks/onboard.yml and migrate.yml take it from C(commsgw_change_record_dir).
    type: path
    required: true
  state:
    description: Which step of the run to record.
    type: str
    choices: [opened, sbc_started, sbc_finished, sbc_probed, closed]
    required: true
  run_id:
    description: The run, as returned by O(state=opened) (a new one is made there when omitted). Required otherwise.
    type: str
  playbook:
    description: Name of the playbook (O(state=opened)).
    type: str
    default: ""
  host:
    description: Inventory name of the SBC (O(state=sbc_started), O(state=sbc_finished), O(state=sbc_probed)).
    type: str
  steps:
    description:
      - The pushes and rollbacks of the SBC, in order, each a neutral change step C({kind, changed, artefacts, service,
        backup}) - C(kind) V(push) or V(rollback), C(artefacts) each C({name, before_sha256, after_sha256}), C(service)
        C({action, detail, pid_before, pid_after}) with C(action) one of V(none), V(reloaded), V(applied), V(started),
        V(restarted), and C(backup) what a rollback restores. The platform's role collects them in
        C(commsgw_sbc_change_steps) (C(docs/platforms.md)).
    type: list
    elements: dict
    default: []
  failed:
    description: The SBC's change failed (O(state=sbc_finished)).
    type: bool
    default: false
  error:
    description: Why it failed (O(state=sbc_finished) with O(failed)).
    type: str
    default: ""
  gates:
    description: Probe gates of a migration, each C({step, verdict}) (C(playbooks/tasks/migrate_gate.yml) collects them in C(commsgw_sbc_gates)).
    type: list
    elements: dict
    default: []
  verdict:
    description: The SBC's probe verdict (O(state=sbc_probed)), V(pass), V(warn) or V(fail).
    type: str
  verdicts:
    description: Inventory name to the probe verdict of that SBC (O(state=closed)).
    type: dict
    default: {}
attributes:
  check_mode:
    description: Writes the record in check mode too, marked C(check_mode=true).
    support: full
  diff_mode:
    description: Not supported.
    support: none
"""

EXAMPLES = r"""
- name: Open the change record of this run
  commsgw.routing.change_record:
    dir: /var/log/commsgw/changes
    state: opened
    playbook: onboard.yml
  register: commsgw_change_run
  run_once: true
"""

RETURN = r"""
run_id:
  description: The run's id (the record's file name without .json).
  returned: always
  type: str
path:
  description: The record file.
  returned: always
  type: str
result:
  description: The run's result so far - V(incomplete), V(ok) or V(failed).
  returned: always
  type: str
"""


import os

from ansible.module_utils.ansible_release import __version__ as ANSIBLE_VERSION
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.change_record import (
    ChangeRecordError, apply, new_run_id, now_iso, record_path, update_file)
from ansible_collections.commsgw.routing.plugins.module_utils.core.module_files import install_text

ARGUMENT_SPEC = {
    "dir": {"type": "path", "required": True},
    "state": {"type": "str", "choices": ["opened", "sbc_started", "sbc_finished", "sbc_probed", "closed"], "required": True},
    "run_id": {"type": "str"},
    "playbook": {"type": "str", "default": ""},
    "host": {"type": "str"},
    "steps": {"type": "list", "elements": "dict", "default": []},
    "failed": {"type": "bool", "default": False},
    "error": {"type": "str", "default": ""},
    "gates": {"type": "list", "elements": "dict", "default": []},
    "verdict": {"type": "str"},
    "verdicts": {"type": "dict", "default": {}},
}


def record(params, context, write, makedirs):
    """(failed, result); shared with the action plugin, which passes the controller's context and writer."""
    params = dict(params)
    if not params.get("run_id"):
        if params["state"] != "opened":
            return True, {"msg": "run_id is required with state=%s: the run_id state=opened returned" % params["state"]}
        params["run_id"] = new_run_id(context["now"])
    try:
        path = record_path(params["dir"], params["run_id"])
        makedirs(params["dir"])
        saved = update_file(path, lambda current: apply(current, params, context), write)
    except (ChangeRecordError, OSError) as exc:
        return True, {"msg": "change record: %s" % exc}
    return False, {"changed": True, "run_id": params["run_id"], "path": path, "result": saved["result"]}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    context = {"now": now_iso(), "ansible_version": ANSIBLE_VERSION, "collection_version": "",
               "check_mode": module.check_mode}
    failed, result = record(module.params, context, lambda path, text: install_text(module, path, text),
                            lambda path: os.makedirs(path, exist_ok=True))
    if failed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
