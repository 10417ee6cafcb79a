# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.probe: on the controller for an API platform, where the task runs otherwise
(plugin_utils/platform_action.py)."""

from ansible_collections.commsgw.routing.plugins.modules.probe import ARGUMENT_SPEC, NO_VIEW_HINT, outcome, view_platform
from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_action import PlatformModuleAction


class ActionModule(PlatformModuleAction):
    MODULE = "commsgw.routing.probe"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    HINT = NO_VIEW_HINT
    outcome = staticmethod(outcome)

    def platform_name(self, args):
        return view_platform(args, args.get("plan") or {}) or "none"
