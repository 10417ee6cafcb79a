# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.change_record runs on the controller: the record is the controller's account of the run
(ansible-core and collection versions, check mode), written next to the operator, not on an SBC."""

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.release import __version__ as ANSIBLE_VERSION
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.change_record import now_iso
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import write_text_atomic
from ansible_collections.commsgw.routing.plugins.modules.change_record import ARGUMENT_SPEC, record

COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def collection_version(root=COLLECTION_ROOT):
    """From MANIFEST.json (an installed collection), else galaxy.yml (a checkout); "" when neither says."""
    try:
        with open(os.path.join(root, "MANIFEST.json"), encoding="utf-8") as handle:
            return str(json.load(handle)["collection_info"]["version"])
    except (OSError, ValueError, KeyError):
        pass
    try:
        with open(os.path.join(root, "galaxy.yml"), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("version:"):
                    return line.split(":", 1)[1].strip().strip("'\"")
    except OSError:
        pass
    return ""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        validation, params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if validation.error_messages:
            raise AnsibleActionFail("; ".join(validation.error_messages))
        context = {"now": now_iso(), "ansible_version": ANSIBLE_VERSION, "collection_version": collection_version(),
                   "check_mode": bool(self._task.check_mode or self._play_context.check_mode)}
        failed, values = record(params, context, lambda path, text: write_text_atomic(path, text, 0o644, None),
                                lambda path: os.makedirs(path, mode=0o755, exist_ok=True))
        result.update(values)
        result["failed"] = failed
        return result
