#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: kamailio_converged
short_description: Read in one round trip what a Kamailio push needs to know, and whether it has anything to do
version_added: 0.2.0
description:
  - O(state=read) (the kamailio role's render step) returns the Kamailio version, the deployed C(address.list)
    and what the last complete push recorded, so that the role can skip a push that would change nothing
    (docs/rerun.md). Read-only; runs in check mode.
  - The push may be skipped only when the controller's input digest is RV(recorded_input) and RV(reasons) is
    empty - every path of O(content), O(meta) and O(listed) is as the record has it, no push is pending or
    holds the SBC's lease, Kamailio (and the refresher) run, O(packages) are installed.
  - O(state=recorded) (the end of a push that ended well) records O(input_digest) and the paths' entries in the
    SBC's push state directory (root's, 0600). Nothing is recorded while a reason remains; the record is
    bookkeeping of the role, not a change of the SBC, so the module never reports a change.
  - Paths are read as root without following a symlink or waiting on a FIFO; the walk is bounded.
author: commsgw.routing contributors (@commsgw)
options:
  state:
    description: V(read) or V(recorded).
    type: str
    choices: [read, recorded]
    default: read
  config_dir:
    description: Kamailio's configuration directory (names the push state directory; holds C(address.list)).
    type: path
    required: true
  version_argv:
    description: The command that prints Kamailio's version (C(kamailio -v)); not run when omitted.
    type: list
    elements: str
  content:
    description: Paths fingerprinted by owner, mode and content (a directory with its whole tree).
    type: list
    elements: path
    default: []
  meta:
    description: Paths fingerprinted by owner and mode only (logs, directories whose other entries change on their own).
    type: list
    elements: path
    default: []
  listed:
    description: Directories fingerprinted with their direct entries (files with content, sub-directories by owner and mode).
    type: list
    elements: path
    default: []
  service_manager:
    description: How Kamailio runs - V(systemd) (O(active_units) and O(enabled_units) asked from systemctl) or V(process) (O(processes)).
    type: str
    choices: [systemd, process]
    default: systemd
  active_units:
    description: systemd units that must be active.
    type: list
    elements: str
    default: []
  enabled_units:
    description: systemd units that must be enabled.
    type: list
    elements: str
    default: []
  processes:
    description: Processes that must run, each C(pid_file) and C(program) (the start of its command's base name).
    type: list
    elements: dict
    default: []
  pid_file:
    description: Kamailio's pid file (a push pending for the running Kamailio is a reason).
    type: path
    required: true
  packages:
    description: Debian packages that must be installed (the role's C(kamailio_install)).
    type: list
    elements: str
    default: []
  input_digest:
    description: The controller's input digest to record (O(state=recorded)).
    type: str
  probe:
    description:
      - The options of M(commsgw.routing.probe) for this SBC (null values unset). With O(state=read), when the read finds
        no reason to push and a record of the last push, the probe runs in the same round trip and RV(probe) is its
        result, which the probe task of the run returns as its own when the push had nothing to do and its options
        are these (docs/rerun.md). The probe never fails the read.
    type: dict
attributes:
  check_mode:
    description: O(state=read) reads only; O(state=recorded) records nothing in check mode.
    support: full
  diff_mode:
    description: Nothing is changed on the SBC.
    support: none
"""

EXAMPLES = r"""
- name: Read the version, the deployed address.list and the last push's record
  commsgw.routing.kamailio_converged:
    config_dir: /etc/kamailio
    pid_file: /run/kamailio/kamailio.pid
    version_argv: [/usr/sbin/kamailio, -v]
    listed: [/etc/kamailio]
    content: [/etc/kamailio/peers/dispatcher.list, /etc/systemd/system/kamailio.service.d]
    active_units: [kamailio.service]
  register: kamailio_readback
  become: true
"""

RETURN = r"""
version_output:
  description: What O(version_argv) printed (empty when it was not run).
  returned: state=read
  type: str
address_list:
  description: The deployed C(address.list), or null when there is none.
  returned: state=read
  type: str
recorded_input:
  description: The input digest of the last complete push, or null without a usable record.
  returned: always
  type: str
reasons:
  description: Why the push must run whatever the input (a changed path, a stopped service, a pending push...); empty when it may be skipped.
  returned: always
  type: list
  elements: str
probe:
  description: The result of M(commsgw.routing.probe) run with O(probe), with C(failed) and C(options_digest); null when
    O(probe) is not set, the read found a reason to push, there is no record, or O(probe) are not valid probe options.
  returned: state=read
  type: dict
recorded:
  description: Whether the record was written.
  returned: state=recorded
  type: bool
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.host import lease
from ansible_collections.commsgw.routing.plugins.module_utils.host.push import pending
from ansible_collections.commsgw.routing.plugins.module_utils.host.push_state import process_started_at
from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import read_file
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.converged import (
    FingerprintError, fingerprint, read_record, verdict, write_record)
from ansible_collections.commsgw.routing.plugins.module_utils.probe.module import probe_with_read
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import Run


def _lines(module, argv):
    """What ``argv`` printed, a line each. Its exit status says less than the lines (systemctl is-active exits
    non-zero for any unit not active): a line that is not the wanted state, or a missing one, is a reason."""
    dummy_rc, out, dummy_err = module.run_command(argv, environ_update={"LC_ALL": "C"})
    return [line.strip() for line in out.splitlines()]


def not_ready(module, state_dir):
    """Why the SBC must be pushed whatever the input: a lease, a pending push, a stopped service, a package."""
    params = module.params
    reasons = []
    try:
        lease_fd = os.open(lease.lease_path(state_dir), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        lease_fd = None
    except OSError as exc:
        reasons.append("cannot read the push lease: %s" % exc)
        lease_fd = None
    if lease_fd is not None:
        try:
            held = lease.read_lease(lease_fd)
        finally:
            os.close(lease_fd)
        if held and lease.active(held, time.time()):
            reasons.append("another push holds the SBC: %s" % lease.describe(held))
    try:
        left = pending(state_dir, params["pid_file"], b"kamailio")
    except OSError as exc:
        left = {"error": str(exc)}
    if left:
        reasons.append("an earlier push left work for the running Kamailio")
    if params["service_manager"] == "systemd":
        for verb, units, wanted in (("is-active", params["active_units"], "active"),
                                    ("is-enabled", params["enabled_units"], "enabled")):
            if units:
                states = _lines(module, ["systemctl", verb, "--"] + units)
                for unit, unit_state in zip(units, states + [""] * len(units)):
                    if unit_state != wanted:
                        reasons.append("%s is %s, not %s" % (unit, unit_state or "unknown", wanted))
    for process in params["processes"]:
        if process_started_at(process["pid_file"], str(process["program"]).encode()) is None:
            reasons.append("%s (pid file %s) does not run" % (process["program"], process["pid_file"]))
    if params["packages"]:
        states = _lines(
            module, ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\\n", "--"] + params["packages"])
        installed = {line.split()[0] for line in states if line.endswith(" installed")}
        reasons.extend("package %s is not installed" % name for name in params["packages"] if name not in installed)
    return reasons


def main():
    module = AnsibleModule(
        argument_spec={
            "state": {"type": "str", "choices": ["read", "recorded"], "default": "read"},
            "config_dir": {"type": "path", "required": True},
            "version_argv": {"type": "list", "elements": "str"},
            "content": {"type": "list", "elements": "path", "default": []},
            "meta": {"type": "list", "elements": "path", "default": []},
            "listed": {"type": "list", "elements": "path", "default": []},
            "service_manager": {"type": "str", "choices": ["systemd", "process"], "default": "systemd"},
            "active_units": {"type": "list", "elements": "str", "default": []},
            "enabled_units": {"type": "list", "elements": "str", "default": []},
            "processes": {"type": "list", "elements": "dict", "default": []},
            "pid_file": {"type": "path", "required": True},
            "packages": {"type": "list", "elements": "str", "default": []},
            "input_digest": {"type": "str"},
            "probe": {"type": "dict"},
        },
        required_if=[("state", "recorded", ["input_digest"])],
        supports_check_mode=True,
    )
    params = module.params
    state_dir = lease.state_dir_for(params["config_dir"])
    result = {"changed": False}
    if params["state"] == "read":
        result["version_output"] = ""
        if params["version_argv"]:
            rc, out, err = module.run_command(params["version_argv"], environ_update={"LC_ALL": "C"})
            if rc != 0:
                module.fail_json(msg="%s failed (%d): %s" % (" ".join(params["version_argv"]), rc, err.strip()))
            result["version_output"] = out
        try:
            config_fd = os.open(params["config_dir"], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            config_fd = None
        address_list = None
        if config_fd is not None:
            try:
                address_list = read_file(config_fd, "address.list")
            finally:
                os.close(config_fd)
        result["address_list"] = address_list.decode("utf-8", "replace") if address_list is not None else None
    reasons = not_ready(module, state_dir)
    try:
        host = fingerprint(params["content"], params["meta"], params["listed"])
    except (FingerprintError, OSError) as exc:
        host = None
        reasons.append("cannot fingerprint the managed paths: %s" % exc)
    if params["state"] == "read":
        try:
            record = read_record(state_dir)
        except OSError as exc:
            record, reasons = None, reasons + ["cannot read the record of the last push: %s" % exc]
        outcome = verdict(record, host or {}, reasons)
        result.update(outcome)
        result["probe"] = None
        if params["probe"] and outcome["recorded_input"] and not outcome["reasons"]:
            # The push will likely have nothing to do: probe now, in this round trip, not in a second one later.
            run = Run(check_mode=module.check_mode)
            result["probe"] = probe_with_read(params["probe"], run)
            module.no_log_values.update(run.masked)
        module.exit_json(**result)
    recorded = not reasons and host is not None and not module.check_mode
    if recorded:
        try:
            write_record(state_dir, params["input_digest"], host)
        except OSError as exc:
            module.fail_json(msg="cannot record the push in %s: %s" % (state_dir, exc))
    module.exit_json(changed=False, recorded=recorded, recorded_input=params["input_digest"] if recorded else None,
                     reasons=reasons)


if __name__ == "__main__":
    main()
