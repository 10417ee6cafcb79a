# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.migration_wait in slices, printing progress while it waits.

A module cannot print while it runs; this action plugin runs the module on the SBC in slices of
SLICE_S seconds (its ``slice_s`` option) and prints each slice's progress line on the controller
(what it waits for, elapsed, limit, what is still missing) until the peers are proven or the module fails
at its own ``timeout_s``. Check mode and ``slice_s: 0`` run the module once, as before.
"""

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()

SLICE_S = 5.0
MODULE = "commsgw.routing.migration_wait"


class ActionModule(ActionBase):
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        slice_s = args.get("slice_s")
        slice_s = SLICE_S if slice_s in (None, "") else float(slice_s)
        sliced = not self._task.check_mode and slice_s > 0
        args["slice_s"] = slice_s if sliced else 0
        progress = []
        while True:
            outcome = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
            progress += outcome.get("progress") or []
            if not sliced or outcome.get("failed") or outcome.get("done", True):
                break
            args["started_at"] = outcome["started_at"]
            display.display("%s: %s" % (task_vars.get("inventory_hostname", ""), progress[-1]))
        outcome["progress"] = progress
        result.update(outcome)
        return result
