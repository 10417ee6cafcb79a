#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: sbc_state_info
short_description: Read back what an SBC runs (gathered state) in the routing plan's vocabulary, and its drift from a plan
version_added: 0.1.0
description:
  - Runs on the SBC host. Reads the SBC's deployed configuration and, unless O(runtime=false), its live state,
    and returns them in the routing plan's vocabulary (RV(gathered)) - trunk groups per region with their
    peers (address, port, SRV priority, weight), the ACG /28s the SBC admits, MCP records, certificate paths,
    the sha256 of each file and the running SBC's peers with their states.
  - "Kamailio: C(commsgw-srv.json), C(peers/dispatcher.list), C(address.list), C(tls.cfg) and C(kamailio.cfg) under
    O(config_dir); live, the C(dispatcher.list) and C(permissions.subnetDump) RPCs over jsonrpcs. Weights are
    Kamailio's C(rweight) (relative to the priority tier's largest, 1..100); the plan's weights are compared
    on the same scale."
  - With O(plan), compares the plan with what the SBC runs, both its files and its running state, and names each
    difference (RV(differences)) - an edit of a deployed file that was not reloaded shows as a difference of the
    deployed files only.
  - Network collections call this the C(gathered) state. Only reads; the result is the same in check mode.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.sbc_reader
options:
  platform:
    description:
      - SBC platform of this host (C(commsgw_sbc_platform)).
      - A platform registered in the collection (C(docs/platforms.md)); V(kamailio) is the one today. Another name fails
        naming the registered ones.
    type: str
    default: kamailio
  config_dir:
    description:
      - The SBC's configuration directory (C(commsgw_sbc.config_dir)).
      - Default is the platform's own (Kamailio - C(/etc/kamailio)).
    type: path
  run_dir:
    description:
      - The SBC's run directory, which holds the jsonrpcs socket and FIFO (C(commsgw_sbc.run_dir)).
      - Default is the platform's own (Kamailio - C(/run/kamailio)).
    type: path
  rpc_socket:
    description: The jsonrpcs datagram socket, when not the one C(kamailio.cfg) declares.
    type: path
  rpc_fifo:
    description: The jsonrpcs FIFO, when not the one C(kamailio.cfg) declares.
    type: path
  rpc_timeout_s:
    description: Seconds to wait for each RPC answer.
    type: float
    default: 3
  runtime:
    description: Also read the running SBC's state; V(false) reads the files only.
    type: bool
    default: true
  plan:
    description: The routing plan of this host's site (C(commsgw.routing.routing_plan)'s C(host_plans)); when
      given, the module compares it with what the SBC runs.
    type: dict
attributes:
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
    config_dir: "{{ commsgw_sbc.config_dir | default('/etc/kamailio') }}"
    run_dir: "{{ commsgw_sbc.run_dir | default('/run/kamailio') }}"
    plan: "{{ hostvars['localhost'].commsgw_plans.host_plans[inventory_hostname] }}"
  register: sbc_state

- name: Show each difference
  ansible.builtin.debug:
    msg: "{{ sbc_state.drift }}"
"""

RETURN = r"""
onboarded:
  description: False when O(config_dir) holds no commsgw.routing configuration.
  returned: always
  type: bool
gathered:
  description:
    - What the SBC runs (null when not onboarded) - C(deployment), C(site), C(type), C(transport), C(local_region),
      C(regions) (per region C(order), C(role), C(hostname), C(srv_name), C(ip_ranges), C(peers) with C(target),
      C(address), C(port), C(priority), C(weight)), C(acl) (C(network), C(region), C(hostname)), C(mcp), C(tls),
      C(files) (sha256 per file), C(listen) and C(runtime) (C(regions), C(acl), C(mcp), C(peers) with their
      C(state), C(source), C(errors); null with O(runtime=false)).
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

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.sbc import readback as sbc_readback
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import DEFAULT_PLATFORM, module_platform


def main():
    module = AnsibleModule(
        argument_spec={
            "platform": {"type": "str", "default": DEFAULT_PLATFORM},
            "config_dir": {"type": "path"},
            "run_dir": {"type": "path"},
            "run_as_user": {"type": "str"},
            "rpc_socket": {"type": "path"},
            "rpc_fifo": {"type": "path"},
            "rpc_timeout_s": {"type": "float", "default": 3.0},
            "runtime": {"type": "bool", "default": True},
            "plan": {"type": "dict"},
        },
        supports_check_mode=True,
    )
    platform = module_platform(module, module.params["platform"])
    params = platform.options(module.params)
    try:
        state = platform.read_state(params)
    except sbc_readback.ReadbackError as exc:
        module.fail_json(msg="cannot read back %s: %s" % (params["config_dir"], exc))
    result = {"changed": False, "onboarded": state is not None, "gathered": state, "differences": [],
              "in_sync": None, "drift": []}
    if params["plan"] is not None:
        try:
            differences = sbc_readback.compare(params["plan"], state, platform.weight_scale)
        except (KeyError, TypeError, ValueError) as exc:
            module.fail_json(msg="plan: not a routing plan (%s: %s); pass commsgw.routing.routing_plan's "
                                 "host_plans[inventory_hostname]" % (type(exc).__name__, exc), **result)
        result.update(differences=differences, in_sync=not differences,
                      drift=[d["text"] for d in differences] or ["in sync"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
