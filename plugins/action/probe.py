# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.probe: on the controller for an API platform, where the task runs otherwise
(plugin_utils/platform_action.py); the result of the platform's read instead, when it probed already (result_from_read)."""

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

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

    def run_outcome(self, task_vars, args=None):
        args = dict(self._task.args if args is None else args)
        if args.get("result_from_read"):
            # The probe the platform's read ran in this run (docs/rerun.md): its result stands, no second round trip.
            validation = ArgumentSpecValidator(ARGUMENT_SPEC).validate(args)
            reused = None if validation.error_messages else reusable_read_result(validation.validated_parameters)
            if reused is not None:
                return reused
        args.pop("result_from_read", None)  # probe live, without shipping the earlier result to the SBC
        return super().run_outcome(task_vars, args)
