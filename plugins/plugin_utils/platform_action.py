# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of a generic module that touches an SBC (module_utils/sbc/generic_module.py).

It asks the platform registry how the task's ``platform`` is reached:

* ``host``: the module runs on the SBC host as any module does (``_execute_module``);
* ``api``: the module's ``outcome`` runs here, in the controller's process - nothing is copied to or run on
  the device, and a platform of another collection (importable only on the controller) works.

The playbooks call the modules the same way for every platform and never branch on a platform name.
"""

from __future__ import annotations

import os
import typing as t

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import write_text_atomic
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import API
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import (
    PlatformProblem, Run, platform_of)


class PlatformModuleAction(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    MODULE = ""
    ARGUMENT_SPEC: t.Dict[str, t.Any] = {}
    HINT = ""  # what else the module's platform option takes (probe: none)

    @staticmethod
    def outcome(params: t.Dict[str, t.Any], run: Run) -> t.Tuple[bool, t.Dict[str, t.Any]]:
        raise NotImplementedError

    def platform_name(self, args: t.Mapping[str, t.Any]) -> t.Any:
        return args.get("platform")

    def on_controller(self, args: t.Mapping[str, t.Any]) -> bool:
        """True when the task's platform is reached through an API (an unknown name: the module says so)."""
        name = self.platform_name(args)
        if name == "none" and self.HINT:
            return False
        try:
            return platform_of(name).connection == API
        except PlatformProblem:
            return False

    def run_outcome(self, task_vars: t.Dict[str, t.Any], args: t.Optional[t.Dict[str, t.Any]] = None
                    ) -> t.Dict[str, t.Any]:
        """The module's result: its outcome in this process (API platform) or the module on the host."""
        args = dict(self._task.args if args is None else args)
        if not self.on_controller(args):
            return t.cast(t.Dict[str, t.Any], self._execute_module(module_name=self.MODULE, module_args=args,
                                                                   task_vars=task_vars))
        validation = ArgumentSpecValidator(self.ARGUMENT_SPEC).validate(args)
        if validation.error_messages:
            raise AnsibleActionFail("%s: %s" % (self.MODULE, "; ".join(validation.error_messages)))
        params = validation.validated_parameters
        run = Run(check_mode=bool(self._task.check_mode), diff=bool(self._task.diff),
                  write_text=lambda path, text: write_text_atomic(os.path.abspath(path), text, 0o644, 0o755))
        failed, values = self.outcome(params, run)
        values = dict(values)
        values["warnings"] = list(values.get("warnings") or [])
        values["failed"] = failed
        values.setdefault("changed", False)
        return values

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result.update(self.run_outcome(task_vars or {}))
        return result
