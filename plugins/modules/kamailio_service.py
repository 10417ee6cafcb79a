#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: kamailio_service
short_description: Start, restart, stop or reload a Kamailio SBC and wait until it serves
version_added: 0.1.0
description:
  - Controls Kamailio either through systemd (O(manager=systemd), the Debian C(kamailio) unit) or as a
    plain daemon with a pid file (O(manager=process), for containers and tests).
  - Every start and restart waits until the new Kamailio answers the jsonrpc C(core.version) on the
    endpoints of its configuration, and fails (with the log tail in process mode) when it does not
    within O(timeout) seconds, so a caller can roll back.
  - O(state=reloaded) calls the jsonrpc methods in O(reload) (for example C(dispatcher.reload)) on the
    running Kamailio; its process is not restarted. A reload Kamailio refuses as too soon after the previous
    one (C(ongoing reload), its C(reload_delta) of 5 s) is tried again until O(timeout); RV(progress) says so.
  - O(binary), O(shared_memory_mb), O(private_memory_mb), O(memory_manager), O(run_as_user), O(log_file) and O(work_dir) apply to
    O(manager=process); in systemd mode the unit decides (the kamailio role writes them into a drop-in).
  - Every action runs under the SBC's push lock and fails, naming the holder, while another run holds its push
    lease (O(lease)). A successful start or restart clears the restart or reloads kamailio_config noted as
    pending in the SBC's state directory (O(state_dir)); a successful reload clears that reload.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.kamailio
  - commsgw.routing.kamailio.run_dir
  - commsgw.routing.push_state
  - commsgw.routing.push_state.lease
options:
  state:
    description: Wanted state.
    type: str
    choices: [started, restarted, stopped, reloaded]
    default: started
  manager:
    description: C(systemd) or C(process) (a daemon tracked by O(pid_file)).
    type: str
    choices: [systemd, process]
    default: systemd
  service:
    description: systemd unit name.
    type: str
    default: kamailio
  config:
    description: The kamailio.cfg to run (process mode) and to read the jsonrpc endpoints from.
    type: path
    default: /etc/kamailio/kamailio.cfg
  pid_file:
    description: Pid file of the main process (process mode).
    type: path
    default: /run/kamailio/kamailio.pid
  log_file:
    description: Where a process-mode Kamailio writes its log (it runs with C(-E)).
    type: path
    default: /var/log/kamailio-commsgw.log
  work_dir:
    description:
      - Working directory (core files land there); process mode.
      - Created 0770 for O(run_as_user) when missing; an existing one must be a real directory (not a symlink) owned by
        root or O(run_as_user), else the module fails naming it (another local user may have created a predictable name).
    type: path
    default: /var/tmp
  run_as_user:
    description:
      - Process mode; Kamailio drops to this user and its group after start (C(-u), C(-g)); the run directory is
        given to that user. O(user) is the same option under its old name.
      - systemd mode does not start Kamailio with it (the unit's C(User=), C(kamailio) in Debian's unit, decides) but still
        only takes RPC answers from this user or root, so it must name the unit's user.
    default: kamailio
    aliases: [user]
  reload:
    description: jsonrpc methods to call with O(state=reloaded).
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds to wait for a start, a stop or an RPC.
    type: float
    default: 20
attributes:
  check_mode:
    description: Reports whether the service would change state without acting.
    support: full
  diff_mode:
    description: Not supported; a service state change has no file diff.
    support: none
"""

EXAMPLES = r"""
- name: Restart on the new configuration and wait until it serves
  commsgw.routing.kamailio_service:
    state: restarted
    manager: process
    config: /srv/sbc/kamailio.cfg
    pid_file: /srv/sbc/run/kamailio.pid

- name: Apply a new peer list without a restart
  commsgw.routing.kamailio_service:
    state: reloaded
    reload: [dispatcher.reload]
"""

RETURN = r"""
pid:
  description: Pid of the Kamailio main process after the operation (0 when stopped or unknown).
  returned: always
  type: int
version:
  description: What C(core.version) answered.
  returned: when Kamailio runs
  type: str
action:
  description: What was (or in check mode would be) done - V(start), V(restart), V(stop), V(reload) or V(none).
  returned: always
  type: str
pid_before:
  description: Pid of the Kamailio main process before the operation (0 when it was not running).
  returned: always
  type: int
progress:
  description: One line about each second a reload waited for Kamailio's C(reload_delta) (what, elapsed, limit).
  returned: with O(state=reloaded) outside check mode
  type: list
  elements: str
reloaded:
  description: The jsonrpc methods called.
  returned: with O(state=reloaded)
  type: list
  elements: str
"""

import os
import pwd
import signal
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.core.daemon import start_detached
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (
    DEFAULT_CONFIG_DIR, DEFAULT_PRIVATE_MEMORY_MB, DEFAULT_RUN_DIR, DEFAULT_SHARED_MEMORY_MB, MEMORY_MANAGERS,
    memory_manager_args, memory_manager_of)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import JsonRpc, RpcError, rpc_endpoints
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.reload import ReloadFailed, reload
from ansible_collections.commsgw.routing.plugins.module_utils.host import push_state
from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import LeaseBusy, push_step, state_dir_for
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import UnsafePathError, owned_directory


def _read_pid(path):
    try:
        with open(path, encoding="ascii") as handle:
            return int(handle.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def _alive(pid):
    if pid <= 0:
        return False
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return b"kamailio" in handle.read()
    except OSError:
        return False


class Controller:
    def __init__(self, module):
        self.module = module
        self.p = module.params
        cfg_text = ""
        if os.path.exists(self.p["config"]):
            with open(self.p["config"], encoding="utf-8") as handle:
                cfg_text = handle.read()
        # Answers count only from run_as_user (or root): the configured account, not the live run dir's owner.
        self.rpc = JsonRpc(rpc_endpoints(cfg_text, self.p["run_dir"]), timeout_s=min(5.0, self.p["timeout"]),
                           kamailio_user=self.p["run_as_user"])

    # --- state of the world
    def pid(self):
        if self.p["manager"] == "process":
            pid = _read_pid(self.p["pid_file"])
            return pid if _alive(pid) else 0
        out = self._systemctl("show", "--property=MainPID", "--value", self.p["service"], check=False)
        try:
            pid = int(out.strip() or 0)
        except ValueError:
            pid = 0
        return pid

    def running(self):
        return self.pid() > 0

    def _systemctl(self, *args, **kwargs):
        rc, out, err = self.module.run_command(["systemctl"] + list(args))
        if kwargs.get("check", True) and rc != 0:
            self.module.fail_json(msg="systemctl %s failed: %s" % (" ".join(args), (err or out).strip()))
        return out

    # --- actions
    def start(self):
        if self.p["manager"] == "systemd":
            self._systemctl("start", self.p["service"])
        else:
            account = None
            if self.p["run_as_user"]:
                try:
                    account = pwd.getpwnam(self.p["run_as_user"])
                except KeyError:
                    self.module.fail_json(msg="user %r does not exist on this host" % self.p["run_as_user"])
            uid, gid = (account.pw_uid, account.pw_gid) if account else (-1, -1)
            os.makedirs(os.path.dirname(self.p["pid_file"]), exist_ok=True)
            try:
                # Created private (0770, Kamailio's user); an existing one must be a real directory of root
                # or that user: a predictable name in a shared place may have been planted by anyone.
                owned_directory(self.p["run_dir"], "run_dir", uid, gid)
                owned_directory(self.p["work_dir"], "work_dir", uid, gid)
            except OSError as exc:
                self.module.fail_json(msg="cannot prepare Kamailio's directories: %s" % exc)
            if account:
                # The run dir is Kamailio's own (its RPC endpoints); others may search it (0771) to reach the
                # jsonrpcs socket, which only Kamailio's user and its RPC group may write to (0660).
                os.chown(self.p["run_dir"], uid, gid)
                os.chmod(self.p["run_dir"], 0o771)
            # -E keeps the log on stderr after daemonising, so it lands in log_file.
            cmd = [self.p["binary"], "-f", self.p["config"], "-P", self.p["pid_file"], "-E",
                   "-w", self.p["work_dir"], "-m", str(self.p["shared_memory_mb"]),
                   "-M", str(self.p["private_memory_mb"])]
            manager = self.p["memory_manager"] or self.configured_memory_manager()
            if manager:
                cmd += memory_manager_args(manager)
            if account:
                # Numeric ids: a kamailio_rootfs wrapper resolves names in its own tree's passwd.
                cmd += ["-u", str(uid), "-g", str(gid)]
            rc = start_detached(cmd, self.p["log_file"], self.p["timeout"])
            if rc not in (0, None):
                self.fail_start("kamailio exited with status %s while starting" % rc)
        self.wait_serving()

    def configured_memory_manager(self):
        """The manager the configuration being started names (its #memory_manager= line): a rollback to an older
        configuration starts it under the manager it ran under. None: Kamailio's default."""
        try:
            with open(self.p["config"], encoding="utf-8") as handle:
                return memory_manager_of(handle.read())
        except (OSError, UnicodeDecodeError):
            return None

    def stop(self):
        if self.p["manager"] == "systemd":
            self._systemctl("stop", self.p["service"])
            return
        pid = self.pid()
        if not pid:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.p["timeout"]
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
        # Children exit with the main process; wait so that the ports are free for a restart.
        deadline = time.monotonic() + self.p["timeout"]
        while time.monotonic() < deadline and self._children_alive(pid):
            time.sleep(0.05)
        try:
            os.unlink(self.p["pid_file"])
        except OSError:
            pass

    @staticmethod
    def _children_alive(pid):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % entry, encoding="ascii", errors="replace") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[1] == str(pid) and fields[0] != "Z":
                return True
        return False

    def wait_serving(self):
        deadline = time.monotonic() + self.p["timeout"]
        last = "not started"
        while time.monotonic() < deadline:
            if self.p["manager"] == "process" and not self.running() and os.path.exists(self.p["pid_file"]):
                self.fail_start("the main process died")
            try:
                return self.rpc.call("core.version")
            except RpcError as exc:
                last = str(exc)
            time.sleep(0.1)
        self.fail_start("no answer to core.version within %.1f s (%s)" % (self.p["timeout"], last))
        return None

    def fail_start(self, why):
        tail = ""
        if self.p["manager"] == "process" and os.path.exists(self.p["log_file"]):
            with open(self.p["log_file"], encoding="utf-8", errors="replace") as handle:
                tail = handle.read()[-3000:]
        self.module.fail_json(msg="Kamailio did not come up: %s" % why, log=tail, pid=self.pid())


def _act(module, ctl, result, state_dir):
    """Do ``result["action"]`` and clear what it satisfied of the pending restart/reloads."""
    action = result["action"]
    if action in ("start", "restart"):
        if action == "restart":
            ctl.stop()
        result["version"] = str(ctl.start() or "").strip()
    elif action == "stop":
        ctl.stop()
    else:
        result["progress"] = []
        for method in module.params["reload"]:
            try:
                result["progress"] += reload(ctl.rpc.call, method, module.params["timeout"])
            except ReloadFailed as exc:
                module.fail_json(msg=str(exc), **result)
    if action != "stop":
        state_fd = push_state.open_state_dir(state_dir, create=False)
        if state_fd is not None:
            try:
                push_state.clear_pending(state_fd, action != "reload", module.params["reload"])
            finally:
                os.close(state_fd)


def main():
    module = AnsibleModule(
        argument_spec={
            "state": {"type": "str", "choices": ["started", "restarted", "stopped", "reloaded"], "default": "started"},
            "manager": {"type": "str", "choices": ["systemd", "process"], "default": "systemd"},
            "service": {"type": "str", "default": "kamailio"},
            "config": {"type": "path", "default": DEFAULT_CONFIG_DIR + "/kamailio.cfg"},
            "binary": {"type": "path", "default": "/usr/sbin/kamailio"},
            "pid_file": {"type": "path", "default": "/run/kamailio/kamailio.pid"},
            "run_dir": {"type": "path", "default": DEFAULT_RUN_DIR},
            "log_file": {"type": "path", "default": "/var/log/kamailio-commsgw.log"},
            "work_dir": {"type": "path", "default": "/var/tmp"},
            "run_as_user": {"type": "str", "default": "kamailio", "aliases": ["user"]},
            "shared_memory_mb": {"type": "int", "default": DEFAULT_SHARED_MEMORY_MB},
            "private_memory_mb": {"type": "int", "default": DEFAULT_PRIVATE_MEMORY_MB, "aliases": ["pkg_memory_mb"]},
            "memory_manager": {"type": "str", "choices": list(MEMORY_MANAGERS)},
            "reload": {"type": "list", "elements": "str", "default": []},
            "timeout": {"type": "float", "default": 20.0},
            "state_dir": {"type": "path"},
            "lease": {"type": "str"},
        },
        supports_check_mode=True,
    )
    ctl = Controller(module)
    state = module.params["state"]
    result = {"changed": False, "pid": ctl.pid()}
    result["pid_before"] = result["pid"]
    running = result["pid"] > 0
    result["action"] = "none"
    if state == "started" and not running or state == "restarted":
        result["action"] = "restart" if running else "start"
    elif state == "stopped" and running:
        result["action"] = "stop"
    elif state == "reloaded":
        if not running:
            module.fail_json(msg="Kamailio is not running: nothing to reload", **result)
        result["reloaded"] = list(module.params["reload"])
        result["action"] = "reload" if result["reloaded"] else "none"
    result["changed"] = result["action"] != "none"
    if result["changed"] and not module.check_mode:
        state_dir = module.params["state_dir"] or state_dir_for(os.path.dirname(module.params["config"]))
        try:
            with push_step(state_dir, module.params["lease"], "Kamailio's %s" % result["action"]):
                _act(module, ctl, result, state_dir)
        except (LeaseBusy, UnsafePathError) as exc:
            module.fail_json(msg=str(exc), **result)
    if state == "started" and running:
        # Running but wedged counts as a failure, not as "ok".
        try:
            result["version"] = str(ctl.rpc.call("core.version")).strip()
        except RpcError as exc:
            module.fail_json(msg="Kamailio runs (pid %d) but does not answer: %s" % (result["pid"], exc), **result)
    result["pid"] = ctl.pid()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
