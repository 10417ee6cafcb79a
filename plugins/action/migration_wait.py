# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.migration_wait in slices, printing progress while it waits.

A module cannot print while it runs; this action plugin runs the wait in slices of SLICE_S seconds (its
``slice_s`` option) - the module on the SBC host, or for an API platform the same outcome in the controller's
process (plugin_utils/platform_action.py) - and prints each slice's progress line on the controller (what it
waits for, elapsed, limit, what is still missing) until the peers are proven or the wait fails at its own
``timeout_s``. Check mode and ``slice_s: 0`` run it once.
"""

from ansible.utils.display import Display

from ansible_collections.commsgw.routing.plugins.modules.migration_wait import ARGUMENT_SPEC, outcome
from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_action import PlatformModuleAction

display = Display()

SLICE_S = 5.0


class ActionModule(PlatformModuleAction):
    MODULE = "commsgw.routing.migration_wait"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    outcome = staticmethod(outcome)

    def run(self, tmp=None, task_vars=None):
        result = super(PlatformModuleAction, self).run(tmp, task_vars)  # pylint: disable=bad-super-call
        args = dict(self._task.args)
        slice_s = args.get("slice_s")
        slice_s = SLICE_S if slice_s in (None, "") else float(slice_s)
        sliced = not self._task.check_mode and slice_s > 0
        args["slice_s"] = slice_s if sliced else 0
        progress = []
        while True:
            step = self.run_outcome(task_vars or {}, args)
            progress += step.get("progress") or []
            if not sliced or step.get("failed") or step.get("done", True):
                break
            args["started_at"] = step["started_at"]
            display.display("%s: %s" % ((task_vars or {}).get("inventory_hostname", ""), progress[-1]))
        step["progress"] = progress
        result.update(step)
        return result
