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
extends_documentation_fragment:
  - commsgw.routing.inventory
  - commsgw.routing.inventory.sbc_settings
  - commsgw.routing.read_only
options:
  resolved:
    description: SRV name to SRV answer, as returned by M(commsgw.routing.srv_audit) in RV(commsgw.routing.srv_audit#module:answers).
    type: dict
    default: {}
  srv_answers:
    description:
      - Build the plans from SRV answers recorded earlier instead of O(resolved), touching no DNS (offline render for
        change reviews). An answers file (JSON or YAML, C(format) V(commsgw.routing.srv_answers), as C(plan.yml) writes
        to C(<commsgw_plan_dir>/answers.json)), a plan JSON written by C(plan.yml) with the peers resolved, or a
        directory of them; the format is documented in C(docs/routing-plan.md).
      - Every record the deployments use must be recorded; the answers get the same checks as a live lookup.
      - Mutually exclusive with a non-empty O(resolved).
    type: path
  srv_answers_max_age:
    description: Warn when a recorded answer used is older than this many seconds.
    type: int
    default: 86400
attributes:
  check_mode:
    description: Only computes the plans; the result is the same in check mode.
    support: full
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
advice:
  description:
    - Every validation warning, one line each, prefixed with its deployment (also shown as an Ansible warning), and
      each recorded answer older than O(srv_answers_max_age).
  returned: always
  type: list
  elements: str
recorded_answers:
  description: With O(srv_answers), each recorded answer the plans use, where it came from and how old it is.
  returned: success
  type: list
  elements: dict
  sample:
    - srv_name: _sip._tls.pstn-region1.contoso.commsgw.azure.com
      source: /srv/review/answers.json
      where: answers[_sip._tls.pstn-region1.contoso.commsgw.azure.com]
      recorded_at: "2026-11-30T22:10:00Z"
      recorded_at_from: recorded_at
      age_s: 3600
      age: 1 h 0 min
"""

from ansible_collections.commsgw.routing.plugins.module_utils.srv.answer_checks import (
    answer_problems, used_lines, used_recordings)
from ansible_collections.commsgw.routing.plugins.module_utils.core.controller_module import run_outcome_module
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import problems_result
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import (
    render_findings, site_plans, validate_inventory)
from ansible_collections.commsgw.routing.plugins.module_utils.srv.recorded import (
    DEFAULT_MAX_AGE_S, RecordedAnswersError, load_recorded, utc_now)


ARGUMENT_SPEC = {
    "hosts": {"type": "dict"},
    "require_sbc_settings": {"type": "bool", "default": False},
    "resolved": {"type": "dict", "default": {}},
    "srv_answers": {"type": "path"},
    "srv_answers_max_age": {"type": "int", "default": DEFAULT_MAX_AGE_S},
}


def _refused(lines, what):
    return problems_result("no plan: %d %s" % (len(lines), what), lines)


def outcome(params):
    """(failed, result); shared with the controller-side action plugin. Validation warnings are
    returned twice: ``warnings`` (Ansible shows them) and ``advice`` (kept in the result)."""
    reports = validate_inventory(params["hosts"], params["require_sbc_settings"])
    errors = render_findings(reports, "errors")
    advice = render_findings(reports, "warnings")
    if errors:
        return True, dict(_refused(errors, "inventory error(s)"), advice=advice, warnings=advice)
    resolved, recorded, now = params["resolved"], None, utc_now()
    source, max_age = params.get("srv_answers"), params.get("srv_answers_max_age", DEFAULT_MAX_AGE_S)
    if source is not None:
        if max_age < 0:
            return True, {"changed": False, "advice": advice, "warnings": advice,
                          "msg": "srv_answers_max_age (commsgw_srv_answers_max_age) is %d; expected a number of "
                                 "seconds, 0 or more" % max_age}
        if resolved:
            return True, {"changed": False, "advice": advice, "warnings": advice,
                          "msg": "srv_answers and resolved both given; expected one source of SRV answers: recorded "
                                 "(srv_answers) or live (resolved)"}
        try:
            recorded = load_recorded(source, now)
        except RecordedAnswersError as exc:
            return True, dict(_refused(exc.problems, "problem(s) with the recorded SRV answers"), advice=advice,
                              warnings=advice)
        resolved = {name: recording.answer for name, recording in recorded.items()}
    # Answers are DNS data, passed in or recorded: the same checks as the SRV audit's own lookup.
    problems = ["deployment %s: %s" % (report["name"], line) for report in reports
                for line in answer_problems(report["model"], resolved, recorded, source or "")]
    if problems:
        return True, dict(_refused(problems, "SRV answer(s) refused"), advice=advice, warnings=advice)
    plans = {}
    host_plans = {}
    for report in reports:
        deployment = report["model"]
        for plan in site_plans(deployment, resolved):
            key = "%s/%s" % (deployment.name, plan["site"]["name"])
            plans[key] = plan
            for sbc in plan["sbcs"]:
                host_plans[sbc["host"]] = plan
    result = {"changed": False, "plans": plans, "host_plans": host_plans,
              "msg": "%d site plan(s) built" % len(plans)}
    if recorded is not None:
        used, stale = used_recordings([report["model"] for report in reports], recorded, now, max_age)
        advice = advice + stale
        result["recorded_answers"] = used
        result["msg"] += " from recorded SRV answers, touching no DNS: " + "; ".join(used_lines(used))
    result.update(advice=advice, warnings=advice)
    return False, result


def main():
    run_outcome_module(ARGUMENT_SPEC, outcome)


if __name__ == "__main__":
    main()
