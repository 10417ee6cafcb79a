#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: validate_inventory
short_description: Check ACG deployments in the inventory against the Azure Communications Gateway contract
version_added: 0.1.0
description:
  - Validates every ACG deployment found in O(hosts) offline and reports B(all) problems at once.
  - Each finding names the inventory field (for example V(service_regions[1].ip_ranges[0])), the bad value and what is
    expected, and cites the requirement id (R-xx) it enforces.
  - Errors fail the task; warnings (advice) are returned apart and only fail it with O(fail_on_warnings).
  - Runs on the controller; makes no change.
author: commsgw.routing contributors (@commsgw)
options:
  hosts:
    description:
      - Host name to that host's commsgw variables, as returned by the P(commsgw.routing.sbc_facts#filter) filter.
    type: dict
    required: true
  require_sbc_settings:
    description:
      - Also report SBC hosts without C(commsgw_sbc) (their sockets, next hop and certificates).
      - C(commsgw_sbc) is always checked when present; it is needed to render or push, not to validate or plan.
    type: bool
    default: false
  fail_on_warnings:
    description: Treat warnings as errors.
    type: bool
    default: false
attributes:
  check_mode:
    description: Only reads the inventory; the result is the same in check mode.
    support: full
  diff_mode:
    description: Makes no change, so there is nothing to diff.
    support: none
"""

EXAMPLES = r"""
- name: Validate every ACG deployment of the inventory
  commsgw.routing.validate_inventory:
    hosts: "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
deployments:
  description: One entry per deployment with its findings.
  returned: always
  type: list
  elements: dict
  sample:
    - name: contoso-emea
      errors:
        - path: service_regions[1].ip_ranges[0]
          message: is a /27
          expected: an IPv4 /28 on its network boundary, e.g. 203.0.113.16/28
          value: 20.82.160.32/27
          rule: R-07
          severity: error
      warnings: []
errors:
  description: Every error as one readable line, prefixed with its deployment.
  returned: always
  type: list
  elements: str
warnings_found:
  description: Every warning (advice) as one readable line.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.inventory import render_findings, validate_inventory


ARGUMENT_SPEC = {
    "hosts": {"type": "dict", "required": True},
    "require_sbc_settings": {"type": "bool", "default": False},
    "fail_on_warnings": {"type": "bool", "default": False},
}


def outcome(params):
    """(failed, result) for the validated inventory; shared with the controller-side action plugin."""
    reports = validate_inventory(params["hosts"], params["require_sbc_settings"])
    errors = render_findings(reports, "errors")
    warnings = render_findings(reports, "warnings")
    result = {
        "changed": False,
        "deployments": [{"name": r["name"], "errors": [f.as_dict() for f in r["errors"]],
                         "warnings": [f.as_dict() for f in r["warnings"]]} for r in reports],
        "errors": errors,
        "warnings_found": warnings,
    }
    if not reports:
        result["msg"] = "no host of this inventory carries commsgw_deployment: nothing to validate"
        return True, result
    failing = errors + (warnings if params["fail_on_warnings"] else [])
    if failing:
        result["msg"] = "%d problem(s) in the inventory:\n%s" % (len(failing), "\n".join(failing))
        return True, result
    result["msg"] = "%d deployment(s) valid, %d warning(s)" % (len(reports), len(warnings))
    return False, result


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    failed, result = outcome(module.params)
    if failed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
