# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: kamailio_retired
short_description: The routing plan with the ACG ranges a narrowing retires (acl.retired, R-23)
version_added: 0.1.0
description:
  - Returns the plan O(_input) with C(acl.retired) - every ACG /28 the SBC's deployed C(address.list) admits
    that the plan no longer admits, retired under its TLS name for O(retention_s) seconds, and every /28
    retired before whose time is not up and that the plan does not admit again.
  - The SBC admits a peer of a retired /28 only for in-dialog requests over TLS carrying that name with the
    SBC's own MAC, until the retirement's time is up - so calls set up before a region migration still end
    (C(docs/migration.md)). The kamailio role applies it before every render for an SBC host, so a later
    C(onboard.yml) keeps what a migration retired.
options:
  _input:
    description: The site's routing plan (from C(commsgw.routing.routing_plan)).
    type: dict
    required: true
  deployed_address_list:
    description: The content of the SBC's deployed C(address.list); empty when nothing is deployed yet.
    type: str
    required: true
  retention_s:
    description: How long a /28 retired now stays retired, in seconds.
    type: int
    required: true
  now:
    description: The time to count from (unix seconds); default this moment.
    type: float
    required: false
positional: deployed_address_list, retention_s, now
"""

EXAMPLES = r"""
- name: Render with the ranges a narrowing retires
  ansible.builtin.set_fact:
    kamailio_files: >-
      {{ plan | commsgw.routing.kamailio_retired(deployed.content | b64decode, 43200)
              | commsgw.routing.kamailio_files(commsgw_sbc, '6.0.1', inventory_hostname) }}
"""

RETURN = r"""
_value:
  description: The plan, with C(acl.retired) (network, region, hostname, until) set.
  type: dict
"""

import time

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def kamailio_retired(plan, deployed_address_list, retention_s, now=None):
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.readback import (
        ReadbackError, parse_address_rows, parse_retired_rows)
    from ansible_collections.commsgw.routing.plugins.module_utils.migration.transition import retire_narrowed_ranges

    if not isinstance(plan, dict):
        raise AnsibleFilterError("kamailio_retired expects a plan mapping")
    text = str(deployed_address_list or "")
    try:
        deployed, retired = parse_address_rows(text), parse_retired_rows(text)
    except ReadbackError as exc:
        raise AnsibleFilterError("kamailio_retired: the deployed address.list: %s" % exc) from None
    return retire_narrowed_ranges(plan, deployed, retired, time.time() if now is None else float(now),
                                  int(retention_s))


class FilterModule:
    def filters(self):
        return {"kamailio_retired": kamailio_retired}
