#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: kamailio_config
short_description: Install a rendered Kamailio configuration only after it has really started
version_added: 0.1.0
description:
  - Compares the rendered files in O(files) with the ones in O(config_dir) and, when any differs,
    starts the candidate tree for real before it goes live. C(kamailio -c) does not catch fixup
    errors, so the candidate is started with C(-DD -E) in a private network and mount namespace
    (C(unshare --net --mount)) where the candidate tree is bind-mounted over O(config_dir), a scratch
    directory over O(run_dir) and the listen addresses are added to its own loopback. It must answer
    the jsonrpc C(core.version) within O(start_timeout) seconds; then it is stopped.
  - The candidate tree is the whole future O(config_dir) (subdirectories such as C(tls/), symlinks,
    owners and modes kept) with the changed files in place, and the candidate runs as O(run_as_user), the
    user the live Kamailio runs as, so a file that user cannot read fails here and not at the swap.
  - Only then, under the SBC's push lease (O(lease)), the current files are copied to a time-stamped backup in
    the SBC's root-only state directory (O(state_dir)) and every changed file is staged and fsynced next to
    its name before the first one is renamed into place; any error before the end puts the previous files
    back byte for byte, and a filesystem without room for the new files is refused before anything changes.
    The result says what the running Kamailio needs, either a restart (RV(restart_required), when anything but
    the peer list or the address list changed) or run-time reloads (RV(reload), C(dispatcher.reload) for
    C(dispatcher.list), C(permissions.addressReload) for C(address.list)). The module never restarts or
    reloads anything itself; it notes what is needed in the state directory before the first rename, and
    kamailio_service clears it once done, so a run cut off in between (RV(pending)) is completed by the next.
  - With O(state=restored) the files of O(backup) are put back the same way (files that did not exist before
    the push are removed), which is how a push that failed to come up is rolled back. A backup that names
    anything but a file this module manages, as a plain name, is refused before anything changes.
  - Check mode reports what would change without writing or starting anything; diff mode shows
    each changed file.
  - Staged files get O(mode), O(owner), O(group) and the other file arguments through Ansible's own file
    handling before they go live, and unchanged files are corrected in place.
author: commsgw.routing contributors (@commsgw)
requirements:
  - util-linux (unshare), iproute2 (ip), root privileges for the candidate start
options:
  files:
    description:
      - File name (relative to O(config_dir), no directories) to content. Only the files the collection renders -
        C(kamailio.cfg), C(tls.cfg), C(dispatcher.list), C(address.list), C(commsgw-srv.json).
    type: dict
    default: {}
  config_dir:
    description: The live configuration directory.
    type: path
    required: true
  state:
    description: C(present) installs O(files); C(restored) puts back O(backup).
    type: str
    choices: [present, restored]
    default: present
  backup:
    description: A backup directory returned earlier in RV(backup). Required with O(state=restored).
    type: path
  keep_backups:
    description:
      - How many backups to keep; older ones are removed. The backup this run made is always kept (a rollback
        needs it), so V(0) and V(1) both keep only that one.
    type: int
    default: 5
  test_start:
    description: Start the candidate before installing it. Turning this off is only for machines that cannot create namespaces.
    type: bool
    default: true
  run_dir:
    description:
      - The live run directory (jsonrpcs socket and FIFO); the candidate gets a scratch one mounted over it.
  start_timeout:
    description: Seconds the candidate has to answer C(core.version).
    type: float
    default: 15
  run_as_user:
    description:
      - The user the candidate runs as, from its first instruction. O(run_as) is the same option under its old name.
    default: ""
    aliases: [run_as]
  mode:
    description: Permissions of the written files (and of files whose content is unchanged but whose
      permissions, owner or group differ).
    type: str
    default: "0644"
  owner:
    description: Owner of the written files.
    type: str
  group:
    description: Group of the written files.
    type: str
extends_documentation_fragment:
  - ansible.builtin.files
  - commsgw.routing.kamailio
  - commsgw.routing.push_state
  - commsgw.routing.push_state.lease
  - commsgw.routing.kamailio.run_dir
attributes:
  check_mode:
    description: Reports which files would change without writing or starting anything.
    support: full
  diff_mode:
    description: Shows the differences of each changed file.
    support: full
"""

EXAMPLES = r"""
- name: Install the rendered configuration once it has really started
  commsgw.routing.kamailio_config:
    files: "{{ plan | commsgw.routing.kamailio_files(settings, '5.6.3') }}"
    config_dir: /etc/kamailio
    shared_memory_mb: 512
  register: kamailio_push

- name: Roll back
  commsgw.routing.kamailio_config:
    config_dir: /etc/kamailio
    state: restored
    backup: "{{ kamailio_push.backup }}"
    lease: "{{ push_lease.run_id }}"
"""

RETURN = r"""
changed_files:
  description: Files whose content differs (or would differ in check mode).
  returned: always
  type: list
  elements: str
sha256:
  description:
    - File name to the sha256 of its content before and after (would be after in check mode) for each changed
      file; V(null) for a file that did not exist before or is removed by a restore. Change records use it.
  returned: always
  type: dict
  sample: {"dispatcher.list": {"before": "9f86d0...", "after": "60303a..."}}
attributes_fixed:
  description: Files whose content is unchanged but whose mode, owner or group were (or would be) corrected.
  returned: always
  type: list
  elements: str
restart_required:
  description:
    - True when a file other than dispatcher.list, address.list or commsgw-srv.json changed, or an earlier run's
      restart is still pending (RV(pending)).
  returned: always
  type: bool
reload:
  description: jsonrpc methods that apply the changed (or still pending) files at run time when no restart is required.
  returned: always
  type: list
  elements: str
  sample: [dispatcher.reload]
pending:
  description:
    - What the running Kamailio still has to do to run the deployed files (C(restart), C(reload), C(files),
      C(since)) - left by an earlier run that was cut off between its file swap and its restart or reload, unless
      Kamailio has restarted since. Null when nothing is pending.
  returned: always
  type: dict
backup:
  description: Backup directory of the files replaced by this run (empty when nothing was written).
  returned: always
  type: str
  sample: /var/lib/commsgw-routing/etc-kamailio/backups/20261130T100012.401233Z
backups_removed:
  description: Older backups removed to keep O(keep_backups) (names in the backup directory).
  returned: when files were written
  type: list
  elements: str
backups_imported:
  description: Backups of an older release taken over from C(<config_dir>/.commsgw-backups), which is then removed.
  returned: when files were written
  type: list
  elements: str
candidate:
  description: Outcome of the candidate start (ok, seconds, detail, log tail).
  returned: when a candidate was started
  type: dict
"""


import hashlib
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.host.push import Target, install, pending, restore
from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import SwapError
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import peers_dir
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.candidate import try_candidate_tree
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.deployed import read_deployed
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (
    DEFAULT_PRIVATE_MEMORY_MB, DEFAULT_RUN_DIR, DEFAULT_SHARED_MEMORY_MB, MEMORY_MANAGERS)
from ansible_collections.commsgw.routing.plugins.module_utils.host import push_state
from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import LeaseBusy, push_step, state_dir_for
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import UnsafePathError

# Files whose change the running Kamailio can take without a restart, and how (address.list first: the
# ACL admits new peers before they are used).
RELOADS = {"address.list": "permissions.addressReload", "dispatcher.list": "dispatcher.reload"}
# Read by the SRV refresher on each run; Kamailio itself never reads it.
PASSIVE = ("commsgw-srv.json",)
# Every file the collection renders (commsgw.routing.kamailio_files); a push or a backup naming another is refused.
MANAGED_FILES = ("kamailio.cfg", "tls.cfg", "dispatcher.list", "address.list", "commsgw-srv.json")
# Errors that end a push or restore cleanly, with what happened to the files in the message.
PUSH_ERRORS = (LeaseBusy, UnsafePathError, push_state.BackupError, SwapError, OSError)


def _sha256(data):
    return None if data is None else hashlib.sha256(data).hexdigest()


def _text(data):
    return "" if data is None else data.decode("utf-8", "replace")


def _set_attributes(module, path):
    """Gives ``path`` the task's mode, owner, group (and SELinux/attributes) through Ansible's own file
    handling; True when any differed (in check mode: would differ, nothing changed)."""
    return module.set_fs_attributes_if_different(module.load_file_common_arguments(module.params, path=path), False)


def _needs(names):
    """(restart, reloads) the running Kamailio needs to take ``names``."""
    restart = any(name not in RELOADS and name not in PASSIVE for name in names)
    return restart, [] if restart else [RELOADS[n] for n in sorted(RELOADS) if n in names]


def _candidate(module, result):
    """Start the whole future tree for real (unchanged files too, since the cfg includes them); fail if it does not serve."""
    params = module.params
    try:
        outcome = try_candidate_tree(params["config_dir"], params["files"], lambda path: _set_attributes(module, path),
                                     binary=params["binary"], run_dir=params["run_dir"],
                                     timeout_s=params["start_timeout"], shm_mb=params["shared_memory_mb"],
                                     pkg_mb=params["private_memory_mb"], user=params["run_as_user"] or None,
                                     memory_manager=params["memory_manager"])
    except OSError as exc:
        result["changed"] = False
        module.fail_json(msg="the candidate configuration could not be prepared (%s); nothing was installed" % exc,
                         **result)
    result["candidate"] = {"ok": outcome.ok, "seconds": outcome.seconds, "detail": outcome.detail, "log": outcome.log}
    if not outcome.ok:
        result["changed"] = False
        module.fail_json(msg="the candidate configuration did not start (%s); nothing was installed. "
                             "Kamailio said:\n%s" % (outcome.detail, outcome.log[-2000:]), **result)


def _prepare(module):
    """Owner and mode of a staged file: the task's in the configuration directory (root's); in the refresher's
    peers/ directory the directory's owner and group, set through the file's fd (root never acts by path there)."""
    def prepare(dir_fd, temp, name):
        if name not in peers_dir.IN_PEERS_DIR:
            _set_attributes(module, os.path.join(module.params["config_dir"], temp))
            return
        owner = os.fstat(dir_fd)
        fd = os.open(temp, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fchown(fd, owner.st_uid, owner.st_gid)
            os.fchmod(fd, int(module.params["mode"], 8))
        finally:
            os.close(fd)
    return prepare


def _target(module, result, state_dir):
    return Target(module.params["config_dir"], state_dir, MANAGED_FILES, _prepare(module),
                  result["restart_required"], result["reload"],
                  {name: peers_dir.PEERS_SUBDIR for name in peers_dir.IN_PEERS_DIR})


def _add_pending(module, result, state_dir):
    """Adds what an earlier run left pending (unless Kamailio restarted since) to what this run needs."""
    result["pending"] = left = pending(state_dir, os.path.join(module.params["run_dir"], "kamailio.pid"), b"kamailio")
    if left:
        result["restart_required"] = result["restart_required"] or left["restart"]
        wanted = set(result["reload"]) | set(left["reload"])
        ordered = [RELOADS[name] for name in sorted(RELOADS) if RELOADS[name] in wanted]
        result["reload"] = [] if result["restart_required"] else ordered


def _present(module, result, state_dir):
    params = module.params
    config_dir = params["config_dir"]
    files = params["files"]
    if params["keep_backups"] < 0:
        module.fail_json(msg="keep_backups must be 0 or more (the backup of this run is always kept), got %d"
                             % params["keep_backups"])
    for name in files:
        if name not in MANAGED_FILES:
            module.fail_json(msg="files: %r is not a file this module manages (plain names only: %s)"
                                 % (name, ", ".join(MANAGED_FILES)))
    new = {name: content.encode("utf-8") for name, content in files.items()}
    current = read_deployed(config_dir, files)[0]
    changed = sorted(name for name in files if current[name] != new[name])
    result["changed_files"] = changed
    # Unchanged content, wrong mode or owner (e.g. written by an older version): corrected in place. Not in the
    # peers dir: the refresher owns what it rewrote there, and root acts there by fd only.
    result["attributes_fixed"] = fix = sorted(name for name in files if name not in changed
                                              and name not in peers_dir.IN_PEERS_DIR
                                              and _set_attributes(module, os.path.join(config_dir, name)))
    result["changed"] = bool(fix or changed)
    result["restart_required"], result["reload"] = _needs(changed)
    result["sha256"] = {n: {"before": _sha256(current[n]), "after": _sha256(new[n])} for n in changed}
    if module._diff:
        result["diff"] = [{"before_header": peers_dir.file_path(config_dir, n),
                           "after_header": peers_dir.file_path(config_dir, n),
                           "before": _text(current[n]), "after": files[n]} for n in changed]
    _add_pending(module, result, state_dir)
    if not changed or module.check_mode:
        return
    with push_step(state_dir, params["lease"], "the push of %s" % config_dir):
        os.makedirs(config_dir, exist_ok=True)
        if params["test_start"]:
            _candidate(module, result)
        result.update(install(_target(module, result, state_dir), new, changed, params["keep_backups"], module.warn))


def _restored(module, result, state_dir):
    params = module.params
    config_dir = params["config_dir"]
    state_fd = push_state.open_state_dir(state_dir, create=False)
    try:
        files, absent = push_state.load_backup(state_dir, state_fd, params["backup"], MANAGED_FILES)
    finally:
        if state_fd is not None:
            os.close(state_fd)
    if not os.path.isdir(config_dir):
        module.fail_json(msg="config_dir %s does not exist: nothing to restore into" % config_dir)
    current, present = read_deployed(config_dir, list(files) + absent, check=absent)
    changed = sorted([name for name in files if current[name] != files[name]] + present)
    result["changed_files"] = changed
    result["sha256"] = {n: {"before": _sha256(current[n]), "after": _sha256(files.get(n))} for n in changed}
    result["restart_required"], result["reload"] = _needs(changed)
    result["changed"] = bool(changed)
    if module.check_mode or not changed:
        return
    with push_step(state_dir, params["lease"], "the rollback of %s" % config_dir):
        result["pending"] = restore(_target(module, result, state_dir), {n: files[n] for n in changed if n in files},
                                    present)


def main():
    module = AnsibleModule(
        argument_spec={
            "files": {"type": "dict", "default": {}},
            "config_dir": {"type": "path", "required": True},
            "state": {"type": "str", "choices": ["present", "restored"], "default": "present"},
            "backup": {"type": "path"},
            "state_dir": {"type": "path"},
            "lease": {"type": "str"},
            "keep_backups": {"type": "int", "default": 5},
            "test_start": {"type": "bool", "default": True},
            "binary": {"type": "path", "default": "/usr/sbin/kamailio"},
            "run_dir": {"type": "path", "default": DEFAULT_RUN_DIR},
            "start_timeout": {"type": "float", "default": 15.0},
            "shared_memory_mb": {"type": "int", "default": DEFAULT_SHARED_MEMORY_MB},
            "private_memory_mb": {"type": "int", "default": DEFAULT_PRIVATE_MEMORY_MB, "aliases": ["pkg_memory_mb"]},
            "memory_manager": {"type": "str", "choices": list(MEMORY_MANAGERS)},
            "run_as_user": {"type": "str", "default": "", "aliases": ["run_as"]},
            "mode": {"type": "str", "default": "0644"},
            "owner": {"type": "str"},
            "group": {"type": "str"},
        },
        required_if=[("state", "restored", ["backup"])],
        add_file_common_args=True,
        supports_check_mode=True,
    )
    result = {"changed": False, "changed_files": [], "attributes_fixed": [], "restart_required": False, "reload": [],
              "backup": "", "sha256": {}, "pending": None}
    state_dir = module.params["state_dir"] or state_dir_for(module.params["config_dir"])
    try:
        if module.params["state"] == "present":
            _present(module, result, state_dir)
        else:
            _restored(module, result, state_dir)
    except PUSH_ERRORS as exc:
        result["changed"] = bool(result["attributes_fixed"]) or isinstance(exc, SwapError) and not exc.restored
        module.fail_json(msg=str(exc), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
