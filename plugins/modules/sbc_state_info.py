#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: sbc_state_info
short_description: Read back what an SBC runs (gathered state) in the routing plan's vocabulary, and its drift from a plan
version_added: 0.1.0
description:
  - Reads what the SBC holds and, unless O(runtime=false), what it runs, through its platform (O(platform)), and
    returns it in the routing plan's vocabulary (RV(gathered)) - trunk groups per region with their peers
    (address, port, SRV priority, weight), the ACG /28s the SBC admits, MCP records, TLS names, a hash of each
    artefact and the running SBC's peers with their neutral states (active, inactive, probing, disabled).
  - What is read depends on the platform (C(docs/platforms.md)) - files and a control socket on a Linux host, or a
    management API. Weights are compared on the platform's own scale.
  - With O(plan), compares the plan with what the SBC holds and runs, and names each difference
    (RV(differences)) - an edit that was not applied shows as a difference of what it holds only.
  - For a platform reached through an API (C(connection=api)) the action plugin runs this on the controller;
    otherwise the module runs on the SBC host.
  - Network collections call this the C(gathered) state. Only reads; the result is the same in check mode.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.sbc_platform
options:
  runtime:
    description: Also read the running SBC's state; V(false) reads what it holds only.
    type: bool
    default: true
  plan:
    description: The routing plan of this host's site (C(commsgw.routing.routing_plan)'s C(host_plans)); when
      given, the module compares it with what the SBC runs.
    type: dict
attributes:
  action:
    description: Runs on the controller for an API platform, on the SBC host otherwise.
    support: full
  check_mode:
    description: Only reads.
    support: full
  diff_mode:
    description: Makes no change.
    support: none
"""

EXAMPLES = r"""
- name: Read back what this SBC runs and compare it with its plan
  commsgw.routing.sbc_state_info:
    platform: "{{ commsgw_sbc_platform | default(omit) }}"
    platform_options: "{{ commsgw_sbc_platform | default('')
                          | commsgw.routing.sbc_platform_options(commsgw_sbc | default({}), hostvars[inventory_hostname]) }}"
    plan: "{{ hostvars['localhost'].commsgw_plans.host_plans[inventory_hostname] }}"
  register: sbc_state

- name: Show each difference
  ansible.builtin.debug:
    msg: "{{ sbc_state.drift }}"
"""

RETURN = r"""
onboarded:
  description: False when the SBC holds no commsgw.routing configuration.
  returned: always
  type: bool
gathered:
  description:
    - What the SBC runs (null when not onboarded) - C(deployment), C(site), C(type), C(transport), C(local_region),
      C(regions) (per region C(order), C(role), C(hostname), C(srv_name), C(ip_ranges), C(peers) with C(target),
      C(address), C(port), C(priority), C(weight)), C(acl) (C(network), C(region), C(hostname)), C(mcp), C(tls),
      C(artefacts) (sha256 per artefact), C(pending) and C(runtime) (C(regions), C(acl), C(mcp), C(peers) with
      C(group), C(uri), C(host), C(port), C(transport), neutral C(state) and the platform's C(detail), C(source),
      C(errors); null with O(runtime=false)); a platform may add keys of its own.
  returned: always
  type: dict
differences:
  description:
    - With O(plan), each difference - C(source) (C(files) or C(runtime)), C(field) (path in the plan),
      C(sbc) (path in RV(gathered)), C(value) (what the SBC has), C(expected) (what the plan says) and C(text).
  returned: always
  type: list
  elements: dict
in_sync:
  description: With O(plan), true when the SBC runs exactly the plan (files and running state); null without O(plan).
  returned: always
  type: bool
drift:
  description: With O(plan), C(in sync) or one line per difference.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.commsgw.routing.plugins.module_utils.sbc import readback as sbc_readback
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import (
    PLATFORM_SPEC, PlatformProblem, main as generic_main, platform_and_options)

ARGUMENT_SPEC = dict(PLATFORM_SPEC, runtime={"type": "bool", "default": True}, plan={"type": "dict"})


def outcome(params, run):
    """(failed, result): the read-back and, with a plan, its drift; shared with the action plugin."""
    result = {"changed": False, "onboarded": False, "gathered": None, "differences": [], "in_sync": None,
              "drift": []}
    try:
        platform, options = platform_and_options(params, run)
        state = platform.read_state(options, params["runtime"])
    except PlatformProblem as exc:
        return True, dict(result, msg=str(exc))
    except sbc_readback.ReadbackError as exc:
        return True, dict(result, msg="cannot read back the SBC (platform %s): %s" % (platform.name, exc))
    result.update(onboarded=state is not None, gathered=state)
    if params["plan"] is not None:
        try:
            differences = sbc_readback.compare(params["plan"], state, platform.weight_scale)
        except (KeyError, TypeError, ValueError) as exc:
            return True, dict(result, msg="plan: not a routing plan (%s: %s); pass commsgw.routing.routing_plan's "
                                          "host_plans[inventory_hostname]" % (type(exc).__name__, exc))
        result.update(differences=differences, in_sync=not differences,
                      drift=[d["text"] for d in differences] or ["in sync"])
    return False, result


def main():
    generic_main(ARGUMENT_SPEC, outcome)


if __name__ == "__main__":
    main()
