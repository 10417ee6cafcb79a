# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The push role refuses input it cannot honour before it changes anything, through a real ansible-playbook
run of roles/kamailio on the controller (issue 21 item 15).

``kamailio_rootfs`` with ``kamailio_service_manager: systemd``: the candidate start test runs the tree's
Kamailio through the rootfs wrapper, but Debian's systemd unit runs the host's binary, so the SBC would run
another Kamailio than the one tested (the host's 5.6 with TLS, say). Refused, naming both variables.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration

PLAY = """
- name: Push with the kamailio role
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Push
      ansible.builtin.include_role:
        name: commsgw.routing.kamailio
"""


def _push(tmp_path: Path, **variables: object) -> subprocess.CompletedProcess[str]:
    play = tmp_path / "push.yml"
    play.write_text(PLAY)
    # Everything the role might touch points into tmp_path: a run that got past its checks changes only that.
    variables = {"kamailio_files": {"kamailio.cfg": "# never installed\n"}, "kamailio_refresher": False,
                 "kamailio_config_dir": str(tmp_path / "etc"), "kamailio_run_dir": str(tmp_path / "run"),
                 "kamailio_rootfs_wrapper": str(tmp_path / "wrapper" / "kamailio"),
                 "ansible_python_interpreter": sys.executable, **variables}
    # --check: should the check ever stop refusing, the systemd-mode tasks that follow change nothing on this host.
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "--check", str(play), "-e", json.dumps(variables)]
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    return subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=120, check=False)


def test_kamailio_rootfs_with_systemd_is_refused_naming_both_variables(tmp_path: Path) -> None:
    proc = _push(tmp_path, kamailio_service_manager="systemd", kamailio_rootfs=str(tmp_path / "rootfs"))
    out = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0, out[-3000:]
    assert "TASK [commsgw.routing.kamailio : Refuse kamailio_rootfs with the systemd service manager]" in out, out[-3000:]
    assert ("kamailio_rootfs (%s) needs kamailio_service_manager: process, but it is systemd: the systemd unit runs "
            "the host's /usr/sbin/kamailio, not the Kamailio of kamailio_rootfs that the start test would run"
            % (tmp_path / "rootfs")) in out, out[-3000:]
    # Refused before anything changed: no task after the check ran.
    assert "changed=0" in out and "Create the SRV refresher" not in out and "drop-in" not in out, out[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["push.yml"]
