#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: migration_diff
short_description: Compare what an SBC runs now with a newly rendered configuration, semantically and textually
version_added: 0.1.0
description:
  - Reads the SBC's deployed artefacts through its platform (O(platform); a platform whose artefacts are files
    reads them as the SBC's own user, never through a link another user could plant) and compares them with the
    newly rendered O(artefacts) of the new routing O(plan), both read back into the plan's vocabulary by the
    platform.
  - "The semantic difference names: deployment type changes (lab to production), pairing changes (the site's
    local region), regions added and removed, each region's hostname and SRV name, /28 ranges added and removed,
    SRV targets gained and lost, ACL ranges added and removed and changes of the certificate the SBC presents
    (its reference or its content)."
  - Also returns the unified diff of each rendered artefact against the deployed one, and the plan of the in-flight
    step of a migration (RV(transition_plan)) in which old and new peers and old and new ACL ranges are all in
    service, so that a rollout never cuts traffic (see docs/migration.md).
  - For a platform reached through an API (C(connection=api)) the action plugin runs this on the controller;
    otherwise the module runs on the SBC host.
  - Only reads; the result is the same in check mode.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.sbc_platform
options:
  artefacts:
    description: The newly rendered artefacts (name to content), from the platform role's render entry point.
    type: dict
    required: true
  plan:
    description: The new routing plan of this host's site (RV(commsgw.routing.routing_plan#module:host_plans)).
    type: dict
    required: true
  site:
    description: Label for the summary lines (normally the inventory host name).
    type: str
    default: ""
attributes:
  action:
    description: Runs on the controller for an API platform, on the SBC host otherwise.
    support: full
  check_mode:
    description: Only reads; the result is the same in check mode.
    support: full
  diff_mode:
    description: Returns the textual diff of each changed artefact in Ansible's diff format.
    support: full
"""

EXAMPLES = r"""
- name: Show what a region migration changes on this SBC
  commsgw.routing.migration_diff:
    platform: "{{ commsgw_sbc_platform | default(omit) }}"
    platform_options: "{{ commsgw_sbc_platform_options }}"
    artefacts: "{{ commsgw_sbc_artifacts }}"
    plan: "{{ commsgw_plans.host_plans[inventory_hostname] }}"
    site: "{{ inventory_hostname }}"
  register: migration

- name: Print it
  ansible.builtin.debug:
    msg: "{{ migration.summary }}"
"""

RETURN = r"""
onboarded:
  description: False when the SBC holds no commsgw.routing configuration yet.
  returned: always
  type: bool
pending:
  description: True when any rendered artefact differs from the deployed one.
  returned: always
  type: bool
semantic:
  description:
    - The semantic difference. Keys C(type), C(pairing), C(deployment), C(transport) (each null or
      C(before)/C(after)), C(regions_added), C(regions_removed), C(regions) (per changed region C(hostname),
      C(srv_name), C(role), C(ranges_added), C(ranges_removed), C(targets_gained), C(targets_lost)),
      C(acl) (C(added), C(removed)), C(tls) and C(changes).
  returned: always
  type: dict
summary:
  description: The semantic difference as one line per fact.
  returned: always
  type: list
  elements: str
artefact_diffs:
  description: Unified diff per changed artefact name.
  returned: always
  type: dict
changed_artefacts:
  description: Names of the rendered artefacts that differ from the deployed ones.
  returned: always
  type: list
  elements: str
current:
  description: The routing facts read back from the deployed artefacts (null when none).
  returned: always
  type: dict
needs_transition:
  description: True when going straight to the new configuration would drop a peer or an ACL range in use now.
  returned: always
  type: bool
transition_plan:
  description: The new plan widened by the old peers and ACL ranges (the in-flight step).
  returned: always
  type: dict
new_peers:
  description: C(address:port) of the new plan's peers the SBC does not have yet (the ones the gate proves).
  returned: always
  type: list
  elements: str
dropped_peers:
  description: C(address:port) of the peers the SBC has now and the new plan drops.
  returned: always
  type: list
  elements: str
problems:
  description: Reasons the new plan must not be rolled out (e.g. a trunk group without peers).
  returned: always
  type: list
  elements: str
latest_backup:
  description:
    - The newest backup of the SBC's pushes a rollback can restore, as the platform names it (a directory of the
      host's root-only push state, a revision of the device...); empty when none.
  returned: always
  type: str
"""

from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import UnsafePathError
from ansible_collections.commsgw.routing.plugins.module_utils.migration import transition as migration
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import (
    PLATFORM_SPEC, PlatformProblem, main as generic_main, platform_and_options)

ARGUMENT_SPEC = dict(PLATFORM_SPEC, artefacts={"type": "dict", "required": True},
                     plan={"type": "dict", "required": True}, site={"type": "str", "default": ""})


def outcome(params, run):
    """(failed, result): the difference between the deployed and the new artefacts; shared with the action plugin."""
    new_artefacts = {str(k): str(v) for k, v in params["artefacts"].items()}
    try:
        platform, options = platform_and_options(params, run)
        names = sorted(set(new_artefacts) | set(platform.state_artefacts))
        current_artefacts = platform.deployed_artefacts(options, names)
        certificates = platform.presented_certificates(options, [current_artefacts, new_artefacts])
        current = platform.state_from_artefacts(current_artefacts, certificates)
        new = platform.state_from_artefacts(new_artefacts, certificates)
        latest = platform.latest_backup(options)
    except PlatformProblem as exc:
        return True, {"changed": False, "msg": str(exc)}
    except migration.MigrationError as exc:  # the read-back's ReadbackError, also from the drop to run_as_user
        return True, {"changed": False, "msg": "cannot read the configuration back: %s" % exc}
    except (UnsafePathError, OSError) as exc:
        return True, {"changed": False, "msg": "cannot look for the SBC's backups: %s" % exc}
    if new is None:
        return True, {"changed": False, "msg": "the rendered artefacts hold no routing state: render them with the "
                                               "render entry point of the platform's role (%s)" % platform.role}
    plan = params["plan"]
    semantic = migration.semantic_diff(current, new)
    diffs = migration.artefact_diffs(current_artefacts, new_artefacts, lambda name: platform.artefact_path(options, name))
    result = {
        "changed": False,
        "onboarded": current is not None,
        "pending": bool(diffs),
        "semantic": semantic,
        "summary": migration.summary_lines(semantic, params["site"]),
        "artefact_diffs": diffs,
        "changed_artefacts": sorted(diffs),
        "current": current,
        "needs_transition": migration.needs_transition(plan, current),
        "transition_plan": migration.transition_plan(plan, current),
        "new_peers": migration.new_peer_addresses(plan, current),
        "dropped_peers": migration.dropped_peer_addresses(plan, current),
        "problems": migration.preflight(plan),
        "latest_backup": latest,
    }
    if run.diff:
        result["diff"] = [{"before_header": platform.artefact_path(options, n), "after_header": platform.artefact_path(options, n),
                           "before": current_artefacts.get(n) or "", "after": new_artefacts[n]} for n in sorted(diffs)]
    return False, result


def main():
    generic_main(ARGUMENT_SPEC, outcome)


if __name__ == "__main__":
    main()
