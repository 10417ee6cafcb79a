# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 21 item 9: one push per SBC. The lease spans the tasks of a push (several processes), each step
checks and renews it, and the SRV refresher - its own unprivileged user - can observe and lock it but not
change it. The refresher side runs as user nobody with the libraries installed as on an SBC host."""

from __future__ import annotations

import grp
import os
import pwd
import subprocess
import textwrap
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import (
    LeaseBusy, acquire, lease_path, push_step, release, state_dir_for)
from tests.harness.refresher_install import install_refresher
from tests.harness.tools import run_module


def test_the_state_directory_is_one_name_per_config_dir_as_systemd_escape_makes_it() -> None:
    assert state_dir_for("/etc/kamailio") == "/var/lib/commsgw-routing/etc-kamailio"
    assert state_dir_for("/srv/sbc-1/etc/") == "/var/lib/commsgw-routing/srv-sbc\\x2d1-etc"
    assert lease_path(state_dir_for("/etc/kamailio")) == "/var/lib/commsgw-routing/etc-kamailio.lease"
    escaped = subprocess.run(["systemd-escape", "--path", "/srv/sbc-1/etc.d/k_a:m"], capture_output=True, text=True,
                             check=True).stdout.strip()
    assert state_dir_for("/srv/sbc-1/etc.d/k_a:m").endswith("/" + escaped)


def test_a_second_run_fails_naming_the_first_and_the_first_renews_and_releases(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    lease, renewed = acquire(state, "run-1", ttl_s=60, controller="ops@ctl")
    assert not renewed and lease["run_id"] == "run-1"
    with pytest.raises(LeaseBusy) as busy:
        acquire(state, "run-2")
    assert "another push holds this SBC: run run-1 (controller ops@ctl" in str(busy.value)
    with pytest.raises(LeaseBusy, match="kamailio_config refused: another push holds this SBC: run run-1"):
        with push_step(state, None, "kamailio_config"):
            pass
    with push_step(state, "run-1", "kamailio_config") as mine:
        assert mine and mine["expires"] >= lease["expires"]
    assert acquire(state, "run-1")[1] is True  # the same run again: renewed
    assert not release(state, "run-2") and release(state, "run-1")
    assert acquire(state, "run-2")[0]["run_id"] == "run-2"


def test_an_expired_lease_is_free(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    acquire(state, "dead-run", ttl_s=5, clock=lambda: 1000.0)
    assert acquire(state, "next-run", clock=lambda: 1006.0)[0]["run_id"] == "next-run"


def test_kamailio_config_and_kamailio_service_refuse_to_act_during_another_runs_push(tmp_path: Path) -> None:
    etc, state = tmp_path / "etc", tmp_path / "state"
    etc.mkdir()
    acquire(str(state), "someone-else")
    rc, result = run_module("kamailio_config", {"files": {"address.list": "x\n"}, "config_dir": str(etc),
                                                "test_start": False, "state_dir": str(state)}, tmp_path)
    assert rc != 0 and "another push holds this SBC: run someone-else" in result["msg"], result
    assert not (etc / "address.list").exists()
    rc, result = run_module("kamailio_service", {"state": "started", "manager": "process", "config": str(etc / "k.cfg"),
                                                 "pid_file": str(tmp_path / "none.pid"), "state_dir": str(state),
                                                 "lease": "mine", "timeout": 1}, tmp_path)
    assert rc != 0 and "Kamailio's start refused: another push holds this SBC: run someone-else" in result["msg"]


REFRESHER_SIDE = """
import os, sys
sys.path.insert(0, sys.argv[1])
from host import lease as push_lease
with push_lease.refresher_turn(sys.argv[2], wait_s=1) as busy:
    print("busy:", busy)
path = push_lease.lease_path(push_lease.state_dir_for(sys.argv[2]))
for what, action in (("write", lambda: open(path, "w")),
                     ("plant", lambda: open(os.path.join(os.path.dirname(path), "planted"), "w"))):
    try:
        action()
        print(what, "allowed")
    except OSError as exc:
        print(what, "refused", exc.errno)
"""


def _as_refresher(tmp_path: Path, config_dir: Path, user: str) -> str:
    libs = tmp_path / "refresher"
    libs.mkdir(exist_ok=True)
    install_refresher(libs)
    (libs / "side.py").write_text(textwrap.dedent(REFRESHER_SIDE))
    for path in [libs, *libs.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    account = pwd.getpwnam(user)
    proc = subprocess.run(["setpriv", "--reuid=%d" % account.pw_uid, "--regid=%d" % account.pw_gid, "--init-groups",
                           "/usr/bin/python3", str(libs / "side.py"), str(libs), str(config_dir)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="runs the refresher side as another user")
def test_the_refresher_user_observes_the_lease_but_can_neither_change_it_nor_plant_a_name(tmp_path: Path) -> None:
    config_dir = tmp_path / "etc"
    state = state_dir_for(str(config_dir))  # where the refresher looks: derived, never configured
    nogroup = grp.getgrgid(pwd.getpwnam("nobody").pw_gid).gr_gid
    acquire(state, "run-7", group=nogroup)
    out = _as_refresher(tmp_path, config_dir, "nobody")
    assert "busy: a push holds this SBC: run run-7" in out, out
    assert "write refused 13" in out and "plant refused 13" in out, out
    info = os.stat(lease_path(state))
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (0, nogroup, 0o640)
    release(state, "run-7")
    assert "busy: None" in _as_refresher(tmp_path, config_dir, "nobody")
