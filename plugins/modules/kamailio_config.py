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
  - Only then the current files are copied to a time-stamped backup directory and each changed file
    is replaced atomically. The result says what the running Kamailio needs, either a restart
    (RV(restart_required), when anything but the peer list or the address list changed) or run-time
    reloads (RV(reload), C(dispatcher.reload) for C(dispatcher.list), C(permissions.addressReload) for
    C(address.list)). The module never restarts or reloads anything itself.
  - With O(state=restored) the files of O(backup) are put back (files that did not exist before the
    push are removed), which is how a push that failed to come up is rolled back.
  - Check mode reports what would change without writing or starting anything; diff mode shows
    each changed file.
  - Files are replaced through Ansible's own file handling (C(atomic_move)); O(mode), O(owner), O(group)
    and the other file arguments apply to every written file and are corrected on unchanged ones.
author: commsgw.routing contributors (@commsgw)
requirements:
  - util-linux (unshare), iproute2 (ip), root privileges for the candidate start
options:
  files:
    description: File name (relative to O(config_dir), no directories) to content.
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
  backup_dir:
    description: Where backups are kept. Defaults to C(<config_dir>/.commsgw-backups).
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
  description: True when a file other than dispatcher.list, address.list or commsgw-srv.json changed.
  returned: always
  type: bool
reload:
  description: jsonrpc methods that apply the changed files at run time when no restart is required.
  returned: always
  type: list
  elements: str
  sample: [dispatcher.reload]
backup:
  description: Backup directory of the files replaced by this run (empty when nothing was written).
  returned: always
  type: str
backups_removed:
  description: Older backups removed to keep O(keep_backups) (names in the backup directory).
  returned: when files were written
  type: list
  elements: str
candidate:
  description: Outcome of the candidate start (ok, seconds, detail, log tail).
  returned: when a candidate was started
  type: dict
"""

import datetime
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import peers_dir
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.candidate import try_candidate
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (
    DEFAULT_PRIVATE_MEMORY_MB, DEFAULT_RUN_DIR, DEFAULT_SHARED_MEMORY_MB)
from ansible_collections.commsgw.routing.plugins.module_utils.module_files import install_text, prune_backups
from ansible_collections.commsgw.routing.plugins.module_utils.sbc_readback import sha256_text

# Files whose change the running Kamailio can take without a restart, and how.
RELOADS = {"dispatcher.list": "dispatcher.reload", "address.list": "permissions.addressReload"}
# Read by the SRV refresher on each run; Kamailio itself never reads it.
PASSIVE = ("commsgw-srv.json",)


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


# --- files in the refresher's peers directory (peers_dir.py): read, written and removed through its fd only

def _read_file(config_dir, name):
    """A rendered file's deployed text; in the peers dir without following anything (a symlink: unknown)."""
    if name not in peers_dir.IN_PEERS_DIR:
        return _read(os.path.join(config_dir, name))
    try:
        return peers_dir.read_nofollow(peers_dir.file_path(config_dir, name))
    except OSError:
        return None


def _write_file(module, config_dir, name, content):
    if name not in peers_dir.IN_PEERS_DIR:
        _write_atomic(os.path.join(config_dir, name), content, module)
        return
    # A missing peers dir (no role made it): root's, group of the config dir. Its files take its owner and group.
    peers_dir.ensure_peers_dir(config_dir, 0, os.stat(config_dir).st_gid)
    peers_dir.write_in(os.path.join(config_dir, peers_dir.PEERS_SUBDIR), name, content, int(module.params["mode"], 8))


def _remove_file(config_dir, name):
    if name in peers_dir.IN_PEERS_DIR:
        peers_dir.unlink_in(os.path.join(config_dir, peers_dir.PEERS_SUBDIR), name)
    elif os.path.exists(os.path.join(config_dir, name)):
        os.unlink(os.path.join(config_dir, name))


def _file_args(module, path):
    return module.load_file_common_arguments(module.params, path=path)


def _set_attributes(module, path):
    """Gives ``path`` the task's mode, owner, group (and SELinux/attributes) through Ansible's own file
    handling; True when any differed (in check mode: would differ, nothing changed)."""
    return module.set_fs_attributes_if_different(_file_args(module, path), False)


def _write_atomic(path, content, module):
    install_text(module, path, content, _file_args(module, path))


def _mirror_tree(source, dest):
    """Copy the live tree into ``dest``: subdirectories, symlinks as links, modes and owners.

    The candidate sees exactly what the live Kamailio will see after the swap (certificates in
    tls/, included files, links), owned as they are, since it runs as the live user.
    """
    def ignore(directory, names):
        return [n for n in names if n.startswith(".commsgw")] if directory == source else []
    shutil.copytree(source, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    for root, dirs, names in os.walk(dest):
        for name in [""] + dirs + names:
            copy = os.path.join(root, name) if name else root
            info = os.lstat(os.path.join(source, os.path.relpath(copy, dest)))
            os.lchown(copy, info.st_uid, info.st_gid)
    shutil.copystat(source, dest)


def _present(module, result):
    params = module.params
    config_dir = params["config_dir"]
    files = params["files"]
    if params["keep_backups"] < 0:
        module.fail_json(msg="keep_backups must be 0 or more (the backup of this run is always kept), got %d"
                             % params["keep_backups"])
    for name in files:
        if not name or "/" in name or name in (".", ".."):
            module.fail_json(msg="file names must be plain names inside config_dir, got %r" % name)
    current = {name: _read_file(config_dir, name) for name in files}
    changed = sorted(name for name, content in files.items() if current[name] != content)
    result["changed_files"] = changed
    # Unchanged content, wrong mode or owner (e.g. written by an older version): corrected in place. Not in the
    # peers dir: the refresher owns what it rewrote there, and root acts there by fd only.
    fix = sorted(name for name in files if name not in changed and name not in peers_dir.IN_PEERS_DIR
                 and _set_attributes(module, os.path.join(config_dir, name)))
    result["attributes_fixed"] = fix
    if fix:
        result["changed"] = True
    result["restart_required"] = any(name not in RELOADS and name not in PASSIVE for name in changed)
    result["reload"] = [] if result["restart_required"] else [RELOADS[n] for n in changed if n in RELOADS]
    result["sha256"] = {n: {"before": sha256_text(current[n]), "after": sha256_text(files[n])} for n in changed}
    if module._diff:
        result["diff"] = [{"before_header": peers_dir.file_path(config_dir, n),
                           "after_header": peers_dir.file_path(config_dir, n),
                           "before": current[n] or "", "after": files[n]} for n in changed]
    if not changed:
        return
    result["changed"] = True
    if module.check_mode:
        return
    os.makedirs(config_dir, exist_ok=True)
    if params["test_start"]:
        # The candidate is the whole future tree: unchanged files too, since the cfg includes them.
        # A private parent (0700): the tree may hold the private key; only its mount point is seen.
        parent = tempfile.mkdtemp(prefix="commsgw-staging-")
        staging = os.path.join(parent, "config")
        try:
            _mirror_tree(config_dir, staging)
            for name, content in files.items():
                path = peers_dir.file_path(staging, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                if os.path.lexists(path):
                    os.unlink(path)
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(content)
                _set_attributes(module, path)
            outcome = try_candidate(staging, config_dir, binary=params["binary"], run_dir=params["run_dir"],
                                    timeout_s=params["start_timeout"], shm_mb=params["shared_memory_mb"],
                                    pkg_mb=params["private_memory_mb"], user=params["run_as_user"] or None)
        finally:
            shutil.rmtree(parent, ignore_errors=True)
        result["candidate"] = {"ok": outcome.ok, "seconds": outcome.seconds, "detail": outcome.detail,
                               "log": outcome.log}
        if not outcome.ok:
            result["changed"] = False
            module.fail_json(msg="the candidate configuration did not start (%s); nothing was installed. "
                                 "Kamailio said:\n%s" % (outcome.detail, outcome.log[-2000:]), **result)
    backup_dir = params["backup_dir"] or os.path.join(config_dir, ".commsgw-backups")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    backup = os.path.join(backup_dir, stamp)
    os.makedirs(backup, mode=0o700)
    absent = []
    for name in files:
        source = os.path.join(config_dir, name)
        if name in peers_dir.IN_PEERS_DIR:
            if current[name] is None:
                absent.append(name)
            else:
                with open(os.path.join(backup, name), "w", encoding="utf-8") as handle:
                    handle.write(current[name])
        elif os.path.exists(source):
            shutil.copy2(source, os.path.join(backup, name))
        else:
            absent.append(name)
    # Remembered so that a restore also removes what this push added.
    with open(os.path.join(backup, ".absent"), "w", encoding="utf-8") as handle:
        handle.write("".join(n + "\n" for n in absent))
    result["backup"] = backup
    for name in changed:
        _write_file(module, config_dir, name, files[name])
    result["backups_removed"] = prune_backups(backup_dir, params["keep_backups"], backup)


def _restored(module, result):
    params = module.params
    backup = params["backup"]
    config_dir = params["config_dir"]
    if not backup or not os.path.isdir(backup):
        module.fail_json(msg="backup %r is not a backup directory" % backup)
    names = [n for n in os.listdir(backup) if not n.startswith(".")]
    absent = (_read(os.path.join(backup, ".absent")) or "").split()
    changed = sorted(n for n in names if _read_file(config_dir, n) != _read(os.path.join(backup, n)))
    changed += sorted(n for n in absent if os.path.lexists(peers_dir.file_path(config_dir, n)))
    result["changed_files"] = changed
    result["sha256"] = {n: {"before": sha256_text(_read_file(config_dir, n)),
                            "after": sha256_text(None if n in absent else _read(os.path.join(backup, n)))}
                        for n in changed}
    result["restart_required"] = any(n not in RELOADS and n not in PASSIVE for n in changed)
    result["reload"] = [] if result["restart_required"] else [RELOADS[n] for n in changed if n in RELOADS]
    result["changed"] = bool(changed)
    if module.check_mode or not changed:
        return
    for name in names:
        if name in changed:
            _write_file(module, config_dir, name, _read(os.path.join(backup, name)))
    for name in absent:
        _remove_file(config_dir, name)


def main():
    module = AnsibleModule(
        argument_spec={
            "files": {"type": "dict", "default": {}},
            "config_dir": {"type": "path", "required": True},
            "state": {"type": "str", "choices": ["present", "restored"], "default": "present"},
            "backup": {"type": "path"},
            "backup_dir": {"type": "path"},
            "keep_backups": {"type": "int", "default": 5},
            "test_start": {"type": "bool", "default": True},
            "binary": {"type": "path", "default": "/usr/sbin/kamailio"},
            "run_dir": {"type": "path", "default": DEFAULT_RUN_DIR},
            "start_timeout": {"type": "float", "default": 15.0},
            "shared_memory_mb": {"type": "int", "default": DEFAULT_SHARED_MEMORY_MB},
            "private_memory_mb": {"type": "int", "default": DEFAULT_PRIVATE_MEMORY_MB, "aliases": ["pkg_memory_mb"]},
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
              "backup": "", "sha256": {}}
    if module.params["state"] == "present":
        _present(module, result)
    else:
        _restored(module, result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
