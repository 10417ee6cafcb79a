# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: probe_report
short_description: A probe report as the probe module writes it, JSON or JUnit XML
version_added: 0.2.0
description:
  - Renders the RV(commsgw.routing.probe#module:report) of one C(commsgw.routing.probe) run exactly as the module's own
    O(commsgw.routing.probe#module:report_json) and O(commsgw.routing.probe#module:report_junit) files, a JSON document
    with the report in its C(reports) list or one JUnit XML document.
  - C(playbooks/probe.yml) writes an SBC's reports on the controller with it, so that the report directory holds the
    same files wherever the probe ran.
positional: format
options:
  _input:
    description: The probe module's C(report).
    type: dict
    required: true
  format:
    description: V(json) or V(junit).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Keep the probe's JUnit report on the controller
  ansible.builtin.copy:
    content: "{{ probe_result.report | commsgw.routing.probe_report('junit') }}"
    dest: /var/tmp/probe-reports/{{ inventory_hostname }}.xml
    mode: "0644"
  delegate_to: localhost
"""

RETURN = r"""
_value:
  description: The report's text.
  type: str
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def probe_report(report, format):  # pylint: disable=redefined-builtin
    from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import to_json, to_junit

    if not isinstance(report, dict):
        raise AnsibleFilterError("probe_report expects the probe module's report (a mapping)")
    if format == "json":
        return to_json([report])
    if format == "junit":
        return to_junit([report])
    raise AnsibleFilterError("probe_report: format must be json or junit, not %r" % (format,))


class FilterModule:
    def filters(self):
        return {"probe_report": probe_report}
