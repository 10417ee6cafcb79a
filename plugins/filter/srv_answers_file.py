# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: srv_answers_file
short_description: The recorded SRV answers file of an SRV audit, for an offline render later
version_added: 0.1.0
description:
  - Returns the content of an SRV answers file (C(format) V(commsgw.routing.srv_answers), documented in
    C(docs/routing-plan.md)) holding every answer of O(_input), stamped with O(recorded_at).
  - C(plan.yml -e commsgw_resolve=true -e commsgw_plan_dir=DIR) writes it to C(DIR/answers.json);
    C(-e commsgw_srv_answers=DIR/answers.json) then plans and renders from it without DNS.
positional: recorded_at
options:
  _input:
    description: The registered result of M(commsgw.routing.srv_audit), run once or in a loop.
    type: dict
    required: true
  recorded_at:
    description: When the answers were resolved (ISO 8601 with a time zone). Default is now, in UTC.
    type: str
"""

EXAMPLES = r"""
- name: Record the SRV answers for a later offline render
  ansible.builtin.copy:
    content: "{{ commsgw_srv | commsgw.routing.srv_answers_file | to_nice_json(sort_keys=true) }}\n"
    dest: /srv/review/answers.json
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The answers file as a mapping (C(format), C(version), C(recorded_at), C(answers)).
  type: dict
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def srv_answers_file(registered, recorded_at=None):
    from ansible_collections.commsgw.routing.plugins.module_utils.srv.recorded import (
        answers_document, format_time, utc_now)

    results = registered.get("results", [registered]) if isinstance(registered, dict) else None
    if not isinstance(results, list):
        raise AnsibleFilterError("srv_answers_file expects the registered result of commsgw.routing.srv_audit")
    answers = {}
    for result in results:
        if isinstance(result, dict) and isinstance(result.get("answers"), dict):
            answers.update(result["answers"])
    return answers_document(answers, recorded_at or format_time(utc_now()))


class FilterModule:
    def filters(self):
        return {"srv_answers_file": srv_answers_file}
