# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``main()`` of a read-only module whose logic is an ``outcome(params) -> (failed, result)`` function
shared with its controller-side action plugin (plugin_utils/controller_action.py)."""

from __future__ import annotations

import typing as t

from ansible.module_utils.basic import AnsibleModule


def run_outcome_module(argument_spec: dict[str, t.Any],
                       outcome: t.Callable[[dict[str, t.Any]], tuple[bool, dict[str, t.Any]]]) -> None:
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if "hosts" in argument_spec and module.params["hosts"] is None:  # the action plugin reads them otherwise
        module.fail_json(msg="hosts: required when the module runs outside the controller (without its action plugin)")
    failed, result = outcome(module.params)
    for line in result.pop("warnings", []):  # the action plugin returns them as result warnings instead
        module.warn(line)
    if failed:
        module.fail_json(**result)
    module.exit_json(**result)
