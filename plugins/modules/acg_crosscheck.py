#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: acg_crosscheck
short_description: Check that an inventory deployment and its ACG resource in Azure agree
version_added: 0.1.0
description:
  - Compares one ACG deployment of the inventory (validated first) with the ACG resource read by
    M(commsgw.routing.acg_resource_info), and reports every disagreement at once.
  - Each finding names the inventory field and the Azure field (for example
    V(hosts[sbc-dub-1].commsgw_sbc.acg_listen.address) and
    V(properties.serviceLocations[0].primaryRegionProperties.allowedSignalingSourceAddressPrefixes)), the value and
    what is expected.
  - Errors fail the task; warnings (advice) only fail it with O(fail_on_warnings).
  - Runs on the controller; makes no change.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.inventory
options:
  resource:
    description: The ACG resource body, RV(commsgw.routing.acg_resource_info#module:raw).
    type: dict
    required: true
  deployment:
    description: Name of the inventory deployment to compare; default the one named like the ACG resource, or the only one.
    type: str
  fail_on_warnings:
    description: Treat warnings as errors.
    type: bool
    default: false
attributes:
  check_mode:
    description: Compares data already read; the findings are the same in check mode.
    support: full
  diff_mode:
    description: Reports disagreements, changes nothing on either side.
    support: none
"""

EXAMPLES = r"""
- name: Cross-check the inventory with Azure
  commsgw.routing.acg_crosscheck:
    hosts: "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) }}"
    resource: "{{ acg.raw }}"
"""

RETURN = r"""
deployment:
  description: The inventory deployment compared.
  returned: always
  type: str
findings:
  description: Every finding as a mapping (severity, path, azure_path, message, value, expected).
  returned: success
  type: list
  elements: dict
errors:
  description: Every error as one readable line.
  returned: success
  type: list
  elements: str
warnings_found:
  description: Every warning (advice) as one readable line.
  returned: success
  type: list
  elements: str
problems:
  description: When the task fails, every problem, one per line.
  returned: failure
  type: str
advice:
  description: When the task fails on errors, the warnings, one per line.
  returned: failure
  type: str
"""

from ansible_collections.commsgw.routing.plugins.module_utils.azure.arm import ArmError
from ansible_collections.commsgw.routing.plugins.module_utils.azure.crosscheck import check_inventory
from ansible_collections.commsgw.routing.plugins.module_utils.core.controller_module import run_outcome_module
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import failing_result

ARGUMENT_SPEC = {
    "hosts": {"type": "dict"},
    "resource": {"type": "dict", "required": True},
    "deployment": {"type": "str"},
    "fail_on_warnings": {"type": "bool", "default": False},
}


def outcome(params):
    """(failed, result); shared with the controller-side action plugin."""
    try:
        checked = check_inventory(params["hosts"], params["resource"], params["deployment"])
    except ArmError as exc:
        return True, {"changed": False, "msg": exc.message, "deployment": params["deployment"]}
    name = checked["deployment"]
    if "problems" in checked:
        return True, {"changed": False, "deployment": name, "msg": "the cross-check cannot run, see problems",
                      "problems": "".join(line + "\n" for line in checked["problems"])}
    errors = ["deployment %s: %s" % (name, f.render()) for f in checked["findings"] if f.severity == "error"]
    warnings = ["deployment %s: %s" % (name, f.render()) for f in checked["findings"] if f.severity == "warning"]
    failed = failing_result("inventory and Azure disagree:", errors, warnings, params["fail_on_warnings"])
    if failed:
        return True, dict(failed, deployment=name)
    return False, {"changed": False, "deployment": name, "findings": [f.as_dict() for f in checked["findings"]],
                   "errors": errors, "warnings_found": warnings,
                   "msg": "deployment %s agrees with its ACG resource, %d warning(s)" % (name, len(warnings))}


def main():
    run_outcome_module(ARGUMENT_SPEC, outcome)


if __name__ == "__main__":
    main()
