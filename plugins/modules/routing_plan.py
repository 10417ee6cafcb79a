#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: routing_plan
short_description: Build the platform-neutral ACG routing plan of every operator site
version_added: 0.1.0
description:
  - Validates the ACG deployments found in O(hosts) and, when they are valid, builds one routing plan per site, made of
    ordered trunk groups (local region first), SRV names, TLS, OPTIONS monitoring, retry policy, ACL, MCP,
    emergency exclusions and SIP size limits. The plan is the single source of truth for every renderer and the probe;
    its schema is documented in C(docs/routing-plan.md).
  - With O(resolved) (the RV(commsgw.routing.srv_audit#module:answers) of the SRV audit) the trunk groups also list their peers.
  - Fails, building nothing, when any deployment has a validation error.
  - Runs on the controller; makes no change.
author: commsgw.routing contributors (@commsgw)
options:
  hosts:
    description: Host name to that host's commsgw variables, as returned by the P(commsgw.routing.sbc_facts#filter) filter.
    type: dict
    required: true
  require_sbc_settings:
    description:
      - Also report SBC hosts without C(commsgw_sbc) (their sockets, next hop and certificates).
      - C(commsgw_sbc) is always checked when present; it is needed to render or push, not to validate or plan.
    type: bool
    default: false
  resolved:
    description: SRV name to SRV answer, as returned by M(commsgw.routing.srv_audit) in RV(commsgw.routing.srv_audit#module:answers).
    type: dict
    default: {}
attributes:
  check_mode:
    description: Only computes the plans; the result is the same in check mode.
    support: full
  diff_mode:
    description: Makes no change, so there is nothing to diff.
    support: none
"""

EXAMPLES = r"""
- name: Build the routing plan of every site
  commsgw.routing.routing_plan:
    hosts: "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) }}"
  delegate_to: localhost
  run_once: true
  register: commsgw_plans

- name: Show the plan of this host's site
  ansible.builtin.debug:
    var: commsgw_plans.host_plans[inventory_hostname]
"""

RETURN = r"""
plans:
  description: Routing plan per site, keyed C(<deployment>/<site>).
  returned: success
  type: dict
host_plans:
  description: The routing plan of each SBC host's site, keyed by host name.
  returned: success
  type: dict
problems:
  description: Every inventory error, one per line (the task then fails and builds no plan).
  returned: failure
  type: str
"""

from ansible_collections.commsgw.routing.plugins.module_utils.controller_module import run_outcome_module
from ansible_collections.commsgw.routing.plugins.module_utils.inventory import (
    render_findings, site_plans, validate_inventory)
from ansible_collections.commsgw.routing.plugins.module_utils.srv_bounds import resolved_problems


ARGUMENT_SPEC = {
    "hosts": {"type": "dict", "required": True},
    "require_sbc_settings": {"type": "bool", "default": False},
    "resolved": {"type": "dict", "default": {}},
}


def outcome(params):
    """(failed, result); shared with the controller-side action plugin."""
    reports = validate_inventory(params["hosts"], params["require_sbc_settings"])
    errors = render_findings(reports, "errors")
    if errors:
        # Each problem once: Ansible prints msg twice (task error and result), problems once.
        return True, {"changed": False, "problems": "".join(line + "\n" for line in errors),
                      "msg": "no plan: the inventory has %d error(s), listed once below in problems" % len(errors)}
    # Answers passed in are DNS data: the same RFC 2782 / srv_limits checks as the SRV audit's own lookup.
    problems = ["deployment %s: %s" % (report["name"], line) for report in reports
                for line in resolved_problems(report["model"], params["resolved"])]
    if problems:
        return True, {"changed": False, "problems": "".join(line + "\n" for line in problems),
                      "msg": "no plan: %d SRV answer(s) refused, listed once below in problems" % len(problems)}
    plans = {}
    host_plans = {}
    for report in reports:
        deployment = report["model"]
        for plan in site_plans(deployment, params["resolved"]):
            key = "%s/%s" % (deployment.name, plan["site"]["name"])
            plans[key] = plan
            for sbc in plan["sbcs"]:
                host_plans[sbc["host"]] = plan
    return False, {"changed": False, "plans": plans, "host_plans": host_plans}


def main():
    run_outcome_module(ARGUMENT_SPEC, outcome)


if __name__ == "__main__":
    main()
