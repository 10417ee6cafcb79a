# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 11 item 6: kamailio_config writes through Ansible's file handling (atomic_move, file common
arguments) and ``keep_backups: 0`` never deletes the backup a rollback needs. The module runs as Ansible
runs it (tests/harness/tools.run_module), without the candidate start (tests/integration/test_push.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.harness.tools import run_module


def _push(tmp_path: Path, files: dict[str, str], **args: object) -> dict[str, object]:
    params = {"files": files, "config_dir": str(tmp_path / "etc"), "test_start": False, "mode": "0640"}
    params.update(args)
    rc, result = run_module("kamailio_config", params, tmp_path)
    assert rc == 0, result
    return result


@pytest.mark.parametrize("keep", [0, 1])
def test_keep_backups_0_keeps_the_backup_just_made_and_a_rollback_works(tmp_path: Path, keep: int) -> None:
    (tmp_path / "etc").mkdir()
    _push(tmp_path, {"dispatcher.list": "1 sip:a\n"}, keep_backups=keep)
    _push(tmp_path, {"dispatcher.list": "1 sip:b\n"}, keep_backups=keep)
    third = _push(tmp_path, {"dispatcher.list": "1 sip:c\n"}, keep_backups=keep)
    backup = Path(str(third["backup"]))
    assert backup.is_dir() and (backup / "dispatcher.list").read_text() == "1 sip:b\n"
    assert sorted(p.name for p in backup.parent.iterdir()) == [backup.name]
    assert len(third["backups_removed"]) == 1  # type: ignore[arg-type]
    rc, restored = run_module("kamailio_config", {"config_dir": str(tmp_path / "etc"), "state": "restored",
                                                  "backup": str(backup), "mode": "0640"}, tmp_path)
    assert rc == 0 and restored["changed_files"] == ["dispatcher.list"], restored
    assert (tmp_path / "etc" / "peers" / "dispatcher.list").read_text() == "1 sip:b\n"


def test_keep_backups_keeps_the_newest(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    for n in range(4):
        last = _push(tmp_path, {"address.list": "1 127.0.0.%d 32\n" % n}, keep_backups=2)
    kept = sorted(p.name for p in (tmp_path / "etc" / ".commsgw-backups").iterdir())
    assert len(kept) == 2 and os.path.basename(str(last["backup"])) == kept[-1]


def test_a_negative_keep_backups_is_refused_naming_the_option(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    rc, result = run_module("kamailio_config", {"files": {"a.cfg": "x"}, "config_dir": str(tmp_path / "etc"),
                                                "test_start": False, "keep_backups": -1}, tmp_path)
    assert rc != 0 and "keep_backups must be 0 or more" in result["msg"]


def test_files_get_the_file_arguments_and_a_planted_symlink_is_replaced(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (etc / "kamailio.cfg").symlink_to(victim)
    result = _push(tmp_path, {"kamailio.cfg": "#!KAMAILIO\n", "tls.cfg": "[server:default]\n"}, mode="0604")
    assert result["changed_files"] == ["kamailio.cfg", "tls.cfg"]
    assert victim.read_text() == "keep me\n"
    for name in ("kamailio.cfg", "tls.cfg"):
        info = os.lstat(etc / name)
        assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o604, name
    assert sorted(p for p in os.listdir(etc) if not p.startswith(".commsgw-backups")) == ["kamailio.cfg", "tls.cfg"]
    # Unchanged content, other mode: corrected through the same file arguments.
    again = _push(tmp_path, {"kamailio.cfg": "#!KAMAILIO\n"}, mode="0640")
    assert again["changed_files"] == [] and again["attributes_fixed"] == ["kamailio.cfg"]
    assert stat.S_IMODE(os.stat(etc / "kamailio.cfg").st_mode) == 0o640
