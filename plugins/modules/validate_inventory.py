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
  - Errors fail the task; warnings (advice) are returned apart, shown as Ansible warnings, and only fail it with
    O(fail_on_warnings).
  - Runs on the controller; makes no change.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.inventory
  - commsgw.routing.inventory.sbc_settings
  - commsgw.routing.read_only
options:
  fail_on_warnings:
    description: Treat warnings as errors.
    type: bool
    default: false
  dns_defaults:
    description:
      - The controller's own C(commsgw_dns_nameservers), C(commsgw_dns_port) and C(commsgw_dns_timeout) (null when
        unset), used for a deployment none of whose SBC hosts sets them, and checked then, as C(hosts[localhost].<variable>).
      - The SBC hosts' own C(commsgw_dns_*) (from O(hosts)) are always checked - nameservers must be IP addresses
        (a plain string is read as a list of one, with a warning), the same on every host of a deployment.
    type: dict
    default: {}
attributes:
  check_mode:
    description: Only reads the inventory; the result is the same in check mode.
    support: full
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
  description: One entry per deployment with its findings as mappings.
  returned: success
  type: list
  elements: dict
  sample:
    - name: contoso-emea
      errors: []
      warnings:
        - path: service_regions[1].azure_region
          message: is not the Azure regional pair of West Europe
          expected: an Azure regional pair (preferred)
          value: Sweden Central
          rule: R-05
          severity: warning
errors:
  description: Every error as one readable line, prefixed with its deployment (none on success).
  returned: success
  type: list
  elements: str
warnings_found:
  description: Every warning (advice) as one readable line.
  returned: success
  type: list
  elements: str
problems:
  description:
    - When the task fails, every problem (errors, and warnings with O(fail_on_warnings)), one per line, each listed
      only here so that the play output shows it once.
  returned: failure
  type: str
advice:
  description: When the task fails on errors, the warnings (advice), one per line.
  returned: failure
  type: str
"""

from ansible_collections.commsgw.routing.plugins.module_utils.core.controller_module import run_outcome_module
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import failing_result
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import render_findings, validate_inventory


ARGUMENT_SPEC = {
    "hosts": {"type": "dict"},
    "require_sbc_settings": {"type": "bool", "default": False},
    "fail_on_warnings": {"type": "bool", "default": False},
    "dns_defaults": {"type": "dict", "default": {}},
}


def outcome(params):
    """(failed, result) for the validated inventory; shared with the controller-side action plugin.

    A failed result shows each problem once, as a line of ``problems`` (see ``findings.failing_result``).
    """
    reports = validate_inventory(params["hosts"], params["require_sbc_settings"], params.get("dns_defaults") or {})
    errors = render_findings(reports, "errors")
    warnings = render_findings(reports, "warnings")
    if not reports:
        return True, {"changed": False, "errors": [], "warnings_found": [],
                      "msg": "no host of this inventory carries commsgw_deployment: nothing to validate"}
    failed = failing_result("the inventory has", errors, warnings, params["fail_on_warnings"], warn=True)
    if failed:
        return True, failed
    result = {
        "changed": False,
        "deployments": [{"name": r["name"], "errors": [f.as_dict() for f in r["errors"]],
                         "warnings": [f.as_dict() for f in r["warnings"]]} for r in reports],
        "errors": errors,
        "warnings_found": warnings,
        "msg": "%d deployment(s) valid, %d warning(s)" % (len(reports), len(warnings)),
        # Shown as Ansible warnings (the module warns them; the action plugin returns them).
        "warnings": warnings,
    }
    return False, result


def main():
    run_outcome_module(ARGUMENT_SPEC, outcome)


if __name__ == "__main__":
    main()
