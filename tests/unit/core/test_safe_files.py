# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 13 item 5: reports and work directories are never written through a name another user planted."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import (
    UnsafePathError, owned_directory, write_text_atomic)
from tests.harness.tools import run_module

# A module that writes as the probe writes its reports (module_files.install_text, Ansible's atomic_move),
# run the way Ansible runs modules.
WRITER = """
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.core.module_files import install_text
module = AnsibleModule(argument_spec={"path": {"type": "path"}, "text": {"type": "str"}})
install_text(module, module.params["path"], module.params["text"], create_dir=True)
module.exit_json(changed=True)
"""


def write_text(path: str, text: str) -> None:
    base = Path(path).parent.parent / ("writer-%d" % os.getpid())
    base.mkdir(exist_ok=True)
    script = base / "writer.py"
    script.write_text(WRITER)
    args = base / "args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"path": path, "text": text}}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, str(script), str(args)], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_symlink_planted_at_the_report_path_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    report = tmp_path / "reports" / "sbc1.json"
    report.parent.mkdir()
    report.symlink_to(victim)
    write_text(str(report), '{"reports": []}\n')
    assert victim.read_text() == "keep me\n"
    assert not report.is_symlink() and report.read_text() == '{"reports": []}\n'
    assert sorted(os.listdir(report.parent)) == ["sbc1.json"]


def test_a_symlink_planted_at_the_old_temporary_name_is_not_followed(tmp_path: Path) -> None:
    """The report used to go through "<path>.tmp.<pid>": a name anyone could predict and plant."""
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    report = tmp_path / "sbc1.xml"
    planted = Path("%s.tmp.%d" % (report, os.getpid()))
    planted.symlink_to(victim)
    write_text(str(report), "<testsuites/>\n")
    assert victim.read_text() == "keep me\n" and report.read_text() == "<testsuites/>\n"
    assert stat.S_IMODE(report.stat().st_mode) == 0o644 & ~_umask()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_work_dir_is_created_private(tmp_path: Path) -> None:
    path = tmp_path / "work"
    assert owned_directory(str(path), "work_dir", mode=0o770) is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o770
    assert owned_directory(str(path), "work_dir") is False  # ours: accepted as is


def test_a_planted_symlink_work_dir_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "work"
    link.symlink_to(target)
    with pytest.raises(UnsafePathError, match=r"work_dir .*/work is a symlink \(to .*elsewhere\); expected a real "
                                              r"directory owned by root"):
        owned_directory(str(link), "work_dir")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a directory to another user")
def test_a_work_dir_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "work"
    path.mkdir()
    os.chown(path, 65534, 65534)
    with pytest.raises(UnsafePathError, match="work_dir .* belongs to uid 65534, expected root or uid 4242 "
                                              r"\(the user the SBC runs as\): another local user"):
        owned_directory(str(path), "work_dir", uid=4242)
    os.chown(path, 4242, 4242)
    assert owned_directory(str(path), "work_dir", uid=4242) is False


def test_kamailio_service_refuses_a_planted_work_dir(tmp_path: Path) -> None:
    """Process mode, before anything starts: the error names the option, the path and what is expected."""
    target = tmp_path / "attacker"
    target.mkdir()
    (tmp_path / "work").symlink_to(target)
    cfg = tmp_path / "kamailio.cfg"
    cfg.write_text("#!KAMAILIO\n")
    rc, result = run_module("kamailio_service", {
        "state": "started", "manager": "process", "config": str(cfg), "binary": "/bin/false",
        "pid_file": str(tmp_path / "run" / "kamailio.pid"), "run_dir": str(tmp_path / "run"),
        "log_file": str(tmp_path / "kamailio.log"), "work_dir": str(tmp_path / "work"), "user": ""}, tmp_path)
    assert rc != 0 and result.get("failed")
    assert "work_dir %s is a symlink" % (tmp_path / "work") in result["msg"]
    assert os.listdir(target) == []


def test_the_one_writer_keeps_an_existing_files_mode_or_sets_an_exact_one(tmp_path: Path) -> None:
    """The refresher's needs: the previous file's mode (root), or exactly 0640 for a group (its own unit)."""
    target = tmp_path / "dispatcher.list"
    target.write_text("old\n")
    os.chmod(target, 0o604)
    write_text_atomic(str(target), "new\n", 0o644, None, keep_existing=True, umask=False, prefix=".commsgw-")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o604
    write_text_atomic(str(target), "newer\n", 0o640, None, group=os.getgid(), keep_existing=True, umask=False)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.stat().st_gid == os.getgid()
    fresh = tmp_path / "fresh.list"
    write_text_atomic(str(fresh), "x\n", 0o644, None, keep_existing=True, umask=False)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    assert sorted(os.listdir(tmp_path)) == ["dispatcher.list", "fresh.list"]


def test_the_one_writer_runs_prepare_on_the_temporary_file_and_cleans_up_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "kamailio.cfg"
    seen = []
    write_text_atomic(str(target), "cfg\n", None, None, prefix=".commsgw-", prepare=seen.append)
    assert len(seen) == 1 and os.path.basename(seen[0]).startswith(".commsgw-") and not os.path.exists(seen[0])
    assert target.read_text() == "cfg\n"

    def refuse(tmp: str) -> None:
        raise OSError("no")
    with pytest.raises(OSError):
        write_text_atomic(str(target), "other\n", None, None, prepare=refuse)
    assert target.read_text() == "cfg\n" and sorted(os.listdir(tmp_path)) == ["kamailio.cfg"]
    with pytest.raises(FileNotFoundError):  # dir_mode None: the directory must exist
        write_text_atomic(str(tmp_path / "missing" / "x"), "x\n", dir_mode=None)
