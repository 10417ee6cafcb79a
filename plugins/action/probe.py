# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.probe: on the controller for an API platform, where the task runs otherwise
(plugin_utils/platform_action.py); the result of the platform's read instead, when it probed already (result_from_read)."""

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.commsgw.routing.plugins.module_utils.probe.module import (
    ARGUMENT_SPEC, NO_VIEW_HINT, outcome, reusable_read_result, view_platform)
from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_action import PlatformModuleAction


class ActionModule(PlatformModuleAction):
    MODULE = "commsgw.routing.probe"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    HINT = NO_VIEW_HINT
    outcome = staticmethod(outcome)

    def platform_name(self, args):
        return view_platform(args, args.get("plan") or {}) or "none"

    def run(self, tmp=None, task_vars=None):
        # The probe the platform's read ran in this run (docs/rerun.md): its result stands, no second round trip.
        validation = ArgumentSpecValidator(ARGUMENT_SPEC).validate(dict(self._task.args))
        reused = None if validation.error_messages else reusable_read_result(validation.validated_parameters)
        result = ActionBase.run(self, tmp, task_vars)  # not PlatformModuleAction.run, which would probe
        if reused is None:  # probe live, without shipping the earlier result to the SBC
            reused = self.run_outcome(task_vars or {}, {key: value for key, value in self._task.args.items()
                                                        if key != "result_from_read"})
        result.update(reused)
        return result
