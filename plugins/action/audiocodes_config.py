# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.audiocodes_config runs in the controller process: the Mediant is reached through its REST API
from here, never through a connection to the device (docs/platforms.md, connection api)."""

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.parameters import remove_values
from ansible.plugins.action import ActionBase

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.platform import AUDIOCODES
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.options import PlatformOptionsError, validate_options
from ansible_collections.commsgw.routing.plugins.modules.audiocodes_config import ARGUMENT_SPEC, outcome


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_diff = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        validation, params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if validation.error_messages:
            raise AnsibleActionFail("; ".join(validation.error_messages))
        try:
            secret = validate_options(AUDIOCODES, params.get("platform_options") or {})[1]
        except PlatformOptionsError:
            secret = set()  # the outcome reports it
        failed, values = outcome(params, bool(self._task.check_mode))
        if not self._task.diff:
            values.pop("diff", None)
        result.update(remove_values(values, secret))
        result["failed"] = failed
        result.setdefault("changed", False)
        return result
