# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.srv_audit runs in the controller process (see plugin_utils/controller_action.py)."""

from ansible_collections.commsgw.routing.plugins.modules.srv_audit import ARGUMENT_SPEC, outcome
from ansible_collections.commsgw.routing.plugins.plugin_utils.controller_action import ControllerModuleAction


class ActionModule(ControllerModuleAction):
    ARGUMENT_SPEC = ARGUMENT_SPEC
    outcome = staticmethod(outcome)
