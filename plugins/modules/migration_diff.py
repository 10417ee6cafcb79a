#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: migration_diff
short_description: Compare what a Kamailio SBC runs now with a newly rendered configuration, semantically and textually
version_added: 0.1.0
description:
  - Reads the SBC's deployed configuration from O(config_dir) (C(commsgw-srv.json), C(peers/dispatcher.list),
    C(address.list), C(tls.cfg)) as O(run_as_user) and compares it with the newly rendered O(files) of the new
    routing O(plan). In the directory the SRV refresher's user owns (Kamailio - C(peers/)) no symlink is followed.
  - "The semantic difference names: deployment type changes (lab to production), pairing changes (the site's
    local region), regions added and removed, each region's hostname and SRV name, /28 ranges added and removed,
    SRV targets gained and lost, ACL ranges added and removed and certificate changes (path or content of the
    certificate named in C(tls.cfg))."
  - Also returns the unified diff of each rendered file against the deployed one, and the plan of the in-flight
    step of a migration (RV(transition_plan)) in which old and new peers and old and new ACL ranges are all in
    service, so that a rollout never cuts traffic (see docs/migration.md).
  - Only reads; the result is the same in check mode.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.sbc_reader
options:
  config_dir:
    description: The SBC's live configuration directory.
    type: path
    required: true
  files:
    description: The newly rendered files (name to content), from the commsgw.routing.kamailio_files filter.
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
  platform:
    description:
      - SBC platform of this host (C(commsgw_sbc_platform)); its read-back turns both sets of files into states.
      - A platform registered in the collection (C(docs/platforms.md)); V(kamailio) is the one today. Another name fails
        naming the registered ones.
    type: str
    default: kamailio
attributes:
  check_mode:
    description: Only reads; the result is the same in check mode.
    support: full
  diff_mode:
    description: Returns the textual diff of each changed file in Ansible's diff format.
    support: full
"""

EXAMPLES = r"""
- name: Show what a region migration changes on this SBC
  commsgw.routing.migration_diff:
    config_dir: /etc/kamailio
    files: "{{ kamailio_files }}"
    plan: "{{ commsgw_plans.host_plans[inventory_hostname] }}"
    site: "{{ inventory_hostname }}"
  register: migration

- name: Print it
  ansible.builtin.debug:
    msg: "{{ migration.summary }}"
"""

RETURN = r"""
onboarded:
  description: False when O(config_dir) holds no commsgw.routing configuration yet.
  returned: always
  type: bool
pending:
  description: True when any rendered file differs from the deployed one.
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
file_diffs:
  description: Unified diff per changed file name.
  returned: always
  type: dict
changed_files:
  description: Names of the rendered files that differ from the deployed ones.
  returned: always
  type: list
  elements: str
current:
  description: The routing facts read back from the deployed files (null when none).
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
    - The newest backup of the SBC's pushes, in its root-only push state directory
      (C(/var/lib/commsgw-routing/<config dir escaped>/backups), see C(commsgw.routing.kamailio_config)); empty when none.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.migration import transition as migration
from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import state_dir_for
from ansible_collections.commsgw.routing.plugins.module_utils.host.push_state import latest_backup
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import UnsafePathError
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import DEFAULT_PLATFORM, module_platform


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _certificates(platform, *file_sets):
    """PEM text of every certificate path the old and new files name (Kamailio: tls.cfg; unreadable: None)."""
    paths = set()
    for files in file_sets:
        paths.update(platform.certificate_paths(files))
    return {path: _read(path) for path in paths}


def main():
    module = AnsibleModule(
        argument_spec={
            "config_dir": {"type": "path", "required": True},
            "run_as_user": {"type": "str"},
            "files": {"type": "dict", "required": True},
            "plan": {"type": "dict", "required": True},
            "site": {"type": "str", "default": ""},
            "platform": {"type": "str", "default": DEFAULT_PLATFORM},
        },
        supports_check_mode=True,
    )
    params = module.params
    config_dir = params["config_dir"]
    new_files = {str(k): str(v) for k, v in params["files"].items()}
    platform = module_platform(module, params["platform"])
    names = sorted(set(new_files) | set(platform.state_files))
    try:
        current_files = platform.deployed_files(platform.options({"config_dir": config_dir,
                                                                  "run_as_user": params["run_as_user"]}), names)
        certificates = _certificates(platform, current_files, new_files)
        current = platform.state_from_files(current_files, certificates)
        new = platform.state_from_files(new_files, certificates)
    except migration.MigrationError as exc:  # the read-back's ReadbackError, also from the drop to run_as_user
        module.fail_json(msg="cannot read the configuration back: %s" % exc)
    if new is None:
        module.fail_json(msg="the rendered files hold no commsgw-srv.json: render them with "
                             "commsgw.routing.kamailio_files")
    plan = params["plan"]
    semantic = migration.semantic_diff(current, new)
    diffs = migration.file_diffs(current_files, new_files, config_dir, platform.file_path)
    try:
        latest = latest_backup(state_dir_for(config_dir))
    except (UnsafePathError, OSError) as exc:
        module.fail_json(msg="cannot look for the SBC's backups: %s" % exc)
    result = {
        "changed": False,
        "onboarded": current is not None,
        "pending": bool(diffs),
        "semantic": semantic,
        "summary": migration.summary_lines(semantic, params["site"]),
        "file_diffs": diffs,
        "changed_files": sorted(diffs),
        "current": current,
        "needs_transition": migration.needs_transition(plan, current),
        "transition_plan": migration.transition_plan(plan, current),
        "new_peers": migration.new_peer_addresses(plan, current),
        "dropped_peers": migration.dropped_peer_addresses(plan, current),
        "problems": migration.preflight(plan),
        "latest_backup": latest,
    }
    if module._diff:
        result["diff"] = [{"before_header": platform.file_path(config_dir, n),
                           "after_header": platform.file_path(config_dir, n),
                           "before": current_files.get(n) or "", "after": new_files[n]} for n in sorted(diffs)]
    module.exit_json(**result)


if __name__ == "__main__":
    main()
