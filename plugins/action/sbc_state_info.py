# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.sbc_state_info: on the controller for an API platform, on the SBC host otherwise
(plugin_utils/platform_action.py)."""

from ansible_collections.commsgw.routing.plugins.modules.sbc_state_info import ARGUMENT_SPEC, outcome
from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_action import PlatformModuleAction


class ActionModule(PlatformModuleAction):
    MODULE = "commsgw.routing.sbc_state_info"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    outcome = staticmethod(outcome)
