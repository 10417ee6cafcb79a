#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: sbc_push_lease
short_description: Take or give back an SBC's push lease, so that one push at a time changes it
version_added: 0.1.0
description:
  - A push is several tasks (install, restart or reload, rollback), each its own process on the SBC, so it holds
    the SBC for its whole length through a lease - the file C(<state_dir>.lease) with the run id, the controller,
    the host, the pid, and when it was taken and expires. The steps of the push (the modules of a platform whose SBC
    is a Linux host, C(docs/platforms.md)) refuse to run while another run holds it, and renew it for their own run.
  - The SRV refresher on the SBC skips its run while a lease is active, so it never rewrites the peer list from
    the specification a push is replacing.
  - O(state=acquired) takes the lease, or fails naming the run that holds it (after waiting up to O(wait_s));
    taking it again for the same O(run_id) renews it (RV(renewed)). O(state=released) gives it back if O(run_id)
    holds it. A lease nobody gives back (a run that died) is free once it expires, O(ttl_s) after its last renewal.
  - The lease and its directory are root's; the file is C(0640) with group O(group), which lets the refresher's
    user read and lock it but not change it.
  - The lease is the run's own bookkeeping, not a state of the SBC, so the module never reports a change (a second
    push that changes nothing reports nothing).
author: commsgw.routing contributors (@commsgw)
options:
  config_dir:
    description: The SBC's configuration directory; the default O(state_dir) derives from it.
    type: path
    required: true
  state:
    description: V(acquired) takes (or renews) the lease, V(released) gives it back.
    type: str
    choices: [acquired, released]
    default: acquired
  run_id:
    description:
      - The run the lease is for. Empty with O(state=acquired) - a new one is made and returned.
      - Required with O(state=released).
    type: str
    default: ""
  ttl_s:
    description: Seconds the lease stays valid after it is taken or renewed by a step of the run.
    type: float
    default: 600
  wait_s:
    description: Seconds to wait for another run's lease before failing; V(0) fails at once.
    type: float
    default: 0
  group:
    description: Group of the lease file (the SRV refresher's), so that the refresher can observe it.
    type: str
  controller:
    description: Who runs the push (for example C(user@controller)); shown to a run that finds the lease taken.
    type: str
    default: ""
extends_documentation_fragment:
  - commsgw.routing.push_state
attributes:
  check_mode:
    description: Returns a run id; nothing is written.
    support: full
  diff_mode:
    description: Not supported; the lease is no file the user edits.
    support: none
"""

EXAMPLES = r"""
- name: Take this SBC for the push
  commsgw.routing.sbc_push_lease:
    config_dir: /etc/sbc
    group: commsgw-srv
  register: push_lease

- name: Give it back
  commsgw.routing.sbc_push_lease:
    config_dir: /etc/sbc
    state: released
    run_id: "{{ push_lease.run_id }}"
"""

RETURN = r"""
run_id:
  description: The run that holds (or held) the lease.
  returned: always
  type: str
renewed:
  description: True when the run already held the lease (O(state=acquired)).
  returned: always
  type: bool
lease:
  description: The lease as written (run_id, controller, host, pid, taken, expires, ttl_s); null after a release.
  returned: always
  type: dict
path:
  description: The lease file.
  returned: always
  type: str
"""

import grp
import uuid

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import (
    LeaseBusy, acquire, lease_path, release, state_dir_for)
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import UnsafePathError


def main():
    module = AnsibleModule(
        argument_spec={
            "config_dir": {"type": "path", "required": True},
            "state": {"type": "str", "choices": ["acquired", "released"], "default": "acquired"},
            "run_id": {"type": "str", "default": ""},
            "ttl_s": {"type": "float", "default": 600.0},
            "wait_s": {"type": "float", "default": 0.0},
            "group": {"type": "str"},
            "controller": {"type": "str", "default": ""},
            "state_dir": {"type": "path"},
        },
        required_if=[("state", "released", ["run_id"])],
        supports_check_mode=True,
    )
    params = module.params
    if params["ttl_s"] <= 0 or params["wait_s"] < 0:
        module.fail_json(msg="ttl_s must be more than 0 and wait_s 0 or more, got %s and %s"
                             % (params["ttl_s"], params["wait_s"]))
    state_dir = params["state_dir"] or state_dir_for(params["config_dir"])
    run_id = params["run_id"] or uuid.uuid4().hex
    result = {"changed": False, "run_id": run_id, "renewed": False, "lease": None, "path": lease_path(state_dir)}
    if module.check_mode:  # (a check run on a new host has not created the refresher's group)
        module.exit_json(**result)
    try:
        gid = grp.getgrnam(params["group"]).gr_gid if params["group"] else None
    except KeyError:
        module.fail_json(msg="group: no group %r on this host" % params["group"], **result)
    try:
        if params["state"] == "acquired":
            result["lease"], result["renewed"] = acquire(state_dir, run_id, params["ttl_s"], params["wait_s"],
                                                         params["controller"], gid)
        elif not release(state_dir, run_id):
            module.warn("%s: run %s did not hold the lease (it expired and another run took it?)"
                        % (result["path"], run_id))
    except (LeaseBusy, UnsafePathError, OSError) as exc:
        module.fail_json(msg="%s: %s" % (result["path"], exc), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
