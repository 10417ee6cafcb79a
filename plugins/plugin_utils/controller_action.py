# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a read-only commsgw module in the controller process instead of through AnsiballZ.

Validation and planning only read the inventory, and their input (every SBC host's variables) and
output (a plan per host) are large: shipping them through a new Python process costs more than the
work itself (about 1.5 s for 320 hosts). The module file keeps the documentation, the argument spec
and the logic (``outcome``), so the module also works when called directly.
"""

import gc
import typing as t

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.commsgw.routing.plugins.plugin_utils.sbc_facts import sbc_facts


class ControllerModuleAction(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    ARGUMENT_SPEC: t.Dict[str, t.Any] = {}

    @staticmethod
    def outcome(params: t.Dict[str, t.Any]) -> t.Tuple[bool, t.Dict[str, t.Any]]:
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        # Ansible forked this worker for this one task and host, and it exits after it: nothing it inherited (the
        # inventory, the variables, the loaded plugins) becomes garbage here. Frozen, those objects stay out of the
        # collector's full passes, which reading 1,000 hosts' variables otherwise triggers over the whole heap
        # (about 40 ms of validate.yml on a 1,000-SBC inventory, issue 25 item 4).
        gc.freeze()
        result = super().run(tmp, task_vars)
        validation, params = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        if validation.error_messages:
            raise AnsibleActionFail("; ".join(validation.error_messages))
        # ``hosts`` omitted: every inventory host's commsgw variables, read here rather than templated into the
        # task's arguments (on 1,000 SBCs that templating cost more than the validation, issue 25 item 4).
        if "hosts" in self.ARGUMENT_SPEC and params.get("hosts") is None:
            task_vars = task_vars or {}
            params["hosts"] = sbc_facts(task_vars["hostvars"], list(task_vars["groups"]["all"]))
        failed, values = self.outcome(params)
        result.update(values)
        # A deprecated alias warns as it does for a module (Ansible shows the result's deprecations).
        deprecations = list(getattr(validation, "_deprecations", None) or [])
        if deprecations:
            result["deprecations"] = result.get("deprecations", []) + deprecations
        result["failed"] = failed
        return result
