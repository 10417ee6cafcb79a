# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kamailio_config's files: issue 11 item 6 (Ansible's file handling and file common arguments; ``keep_backups:
0`` never deletes the backup a rollback needs) and issue 21 items 6 and 7 (a rollback deletes nothing outside
the configuration directory, backups are root's alone; a push ends all-new or all-old, on a full disk too).
The module runs as Ansible runs it (tests/harness/tools.run_module), without the candidate start
(tests/integration/test_push.py)."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import SwapError, swap
from tests.harness.tools import fill, run_module, tmpfs


def _push(tmp_path: Path, files: dict[str, str], **args: object) -> dict[str, object]:
    params = {"files": files, "config_dir": str(tmp_path / "etc"), "test_start": False, "mode": "0640",
              "state_dir": str(tmp_path / "state")}
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
                                                  "backup": str(backup), "mode": "0640",
                                                  "state_dir": str(tmp_path / "state")}, tmp_path)
    assert rc == 0 and restored["changed_files"] == ["dispatcher.list"], restored
    assert (tmp_path / "etc" / "peers" / "dispatcher.list").read_text() == "1 sip:b\n"


def test_keep_backups_keeps_the_newest(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    for n in range(4):
        last = _push(tmp_path, {"address.list": "1 127.0.0.%d 32\n" % n}, keep_backups=2)
    kept = sorted(p.name for p in (tmp_path / "state" / "backups").iterdir())
    assert len(kept) == 2 and os.path.basename(str(last["backup"])) == kept[-1]


def test_a_negative_keep_backups_is_refused_naming_the_option(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    rc, result = run_module("kamailio_config", {"files": {"kamailio.cfg": "x"}, "config_dir": str(tmp_path / "etc"),
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
    assert sorted(os.listdir(etc)) == ["kamailio.cfg", "tls.cfg"]
    # Unchanged content, other mode: corrected through the same file arguments.
    again = _push(tmp_path, {"kamailio.cfg": "#!KAMAILIO\n"}, mode="0640")
    assert again["changed_files"] == [] and again["attributes_fixed"] == ["kamailio.cfg"]
    assert stat.S_IMODE(os.stat(etc / "kamailio.cfg").st_mode) == 0o640


# --- Issue 21 item 6: a rollback deletes nothing outside the configuration directory, and backups live where
# only root can write. The attacks use the options an older release took (no state_dir): the module looks for
# backups in the SBC's own state directory, derived from config_dir.

STAMP = "20260101T000000.000000Z"


def _restore(tmp_path: Path, backup: Path, **args: object) -> dict[str, t.Any]:
    params = {"config_dir": str(tmp_path / "etc"), "state": "restored", "backup": str(backup), "mode": "0640"}
    params.update(args)
    rc, result = run_module("kamailio_config", params, tmp_path)
    result["rc"] = rc
    return result


def _planted(directory: Path, absent: str, files: t.Optional[dict[str, str]] = None) -> Path:
    directory.mkdir(parents=True)
    (directory / ".absent").write_text(absent)
    for name, text in (files or {}).items():
        (directory / name).write_text(text)
    return directory


def test_a_planted_backup_with_a_path_in_absent_deletes_nothing_outside(tmp_path: Path) -> None:
    """Planted where the refresher's user could write (the old <config_dir>/.commsgw-backups/)."""
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "kamailio.cfg").write_text("#!KAMAILIO\n")
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    planted = _planted(etc / ".commsgw-backups" / STAMP, "../victim\nkamailio.cfg\n")
    result = _restore(tmp_path, planted)
    assert victim.exists(), "the rollback deleted a file outside the configuration directory"
    assert (etc / "kamailio.cfg").read_text() == "#!KAMAILIO\n"
    assert result["rc"] != 0 and "is not a backup of this SBC" in result["msg"], result


def test_a_backup_naming_anything_but_a_managed_file_is_refused_before_anything_changes(tmp_path: Path) -> None:
    """Even inside the state directory (root's): names are checked, a symlinked backup is refused."""
    etc, state = tmp_path / "etc", tmp_path / "state"
    etc.mkdir()
    (etc / "server.key").write_text("KEY\n")
    (etc / "peers").mkdir()
    (etc / "peers" / "dispatcher.list").write_text("1 sip:now\n")
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    _push(tmp_path, {"dispatcher.list": "1 sip:new\n"})  # creates the state directory as the module does
    cases = {
        "../victim": _planted(state / "backups" / "20260101T000000.000001Z", "../victim\n",
                              {"dispatcher.list": "1 sip:old\n"}),
        "server.key": _planted(state / "backups" / "20260101T000000.000002Z", "server.key\n"),
        "/etc/passwd": _planted(state / "backups" / "20260101T000000.000003Z", "", {"passwd": "x\n"}),
    }
    outside = _planted(tmp_path / "attacker", "../victim\ndispatcher.list\n")
    (state / "backups" / "20260101T000000.000004Z").symlink_to(outside)
    for what, backup in cases.items():
        result = _restore(tmp_path, backup, state_dir=str(state))
        assert result["rc"] != 0 and "not a file the push manages" in result["msg"], (what, result)
    result = _restore(tmp_path, state / "backups" / "20260101T000000.000004Z", state_dir=str(state))
    assert result["rc"] != 0 and "a symlink is refused" in result["msg"], result
    assert victim.read_text() == "keep me\n" and (etc / "server.key").read_text() == "KEY\n"
    assert (etc / "peers" / "dispatcher.list").read_text() == "1 sip:new\n"


def test_backups_are_root_only_and_old_ones_are_taken_over_only_when_only_root_could_write_them(
        tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "peers").mkdir()
    (etc / "peers" / "dispatcher.list").write_text("1 sip:a\n")
    old = etc / ".commsgw-backups"
    good = _planted(old / "20250101T000000.000000Z", "kamailio.cfg\n", {"dispatcher.list": "1 sip:old\n"})
    for path in (old, good):
        path.chmod(0o700)
    bad = _planted(old / "20250101T000000.000001Z", "../victim\n")
    bad.chmod(0o700)
    nobody = pwd.getpwnam("nobody")
    theirs = _planted(old / "20250101T000000.000002Z", "dispatcher.list\n")
    os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
    result = _push(tmp_path, {"dispatcher.list": "1 sip:b\n"})
    state = tmp_path / "state"
    assert result["backups_imported"] == [good.name] and not old.exists()
    info = os.stat(state)
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o700)
    assert sorted(p.name for p in (state / "backups").iterdir()) == sorted([good.name, Path(str(result["backup"])).name])
    restored = _restore(tmp_path, state / "backups" / good.name, state_dir=str(state))
    assert restored["rc"] == 0 and (etc / "peers" / "dispatcher.list").read_text() == "1 sip:old\n", restored
    # The refresher's user (here: nobody) can neither write the state directory nor the backups.
    probe = subprocess.run(["setpriv", "--reuid=%d" % nobody.pw_uid, "--regid=%d" % nobody.pw_gid, "--clear-groups",
                            "touch", str(state / "backups" / "planted")], capture_output=True, text=True, check=False)
    assert probe.returncode != 0 and not (state / "backups" / "planted").exists()


@pytest.mark.parametrize("owner, mode", [("nobody", 0o755), ("root", 0o777)])
def test_a_state_directory_another_user_could_change_is_refused(tmp_path: Path, owner: str, mode: int) -> None:
    (tmp_path / "etc").mkdir()
    parent = tmp_path / "shared"
    parent.mkdir()
    os.chown(parent, pwd.getpwnam(owner).pw_uid, -1)
    parent.chmod(mode)
    rc, result = run_module("kamailio_config", {"files": {"address.list": "x\n"}, "config_dir": str(tmp_path / "etc"),
                                                "test_start": False, "state_dir": str(parent / "state")}, tmp_path)
    assert rc != 0 and "push state directory: %s" % parent in result["msg"], result
    assert not (tmp_path / "etc" / "address.list").exists()


# --- Issue 21 item 7: a push on a full disk leaves the SBC all-old, and a fault between two renames is undone.

OLD = {"kamailio.cfg": "#!KAMAILIO\n# old\n", "address.list": "1 127.0.0.1 32 0 old\n"}
NEW = {"kamailio.cfg": "#!KAMAILIO\n" + "# new\n" * 4000, "address.list": "1 127.0.0.1 32 0 new\n"}


def _old_tree(etc: Path) -> dict[str, bytes]:
    for name, text in OLD.items():
        (etc / name).write_text(text)
    return {name: (etc / name).read_bytes() for name in OLD}


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs")
def test_a_push_onto_a_full_disk_leaves_every_file_old(tmp_path: Path) -> None:
    """Room for the small file and the backup but not for the big one: the old push renamed address.list
    into place, then failed writing kamailio.cfg."""
    etc = tmp_path / "etc"
    with tmpfs(etc, "size=128k"):
        before = _old_tree(etc)
        fill(etc, leave_bytes=4 * 4096)
        try:
            rc, result = run_module("kamailio_config", {"files": NEW, "config_dir": str(etc), "test_start": False,
                                                        "mode": "0640"}, tmp_path)
        except AssertionError as crash:  # a traceback instead of a result: judged by the files below
            rc, result = 1, {"msg": str(crash)}
        after = {name: (etc / name).read_bytes() for name in OLD}
        assert after == before, "half-new: %s" % sorted(n for n in OLD if after[n] != before[n])
        assert rc != 0 and "not enough free space in %s" % etc in result["msg"], result
        assert sorted(os.listdir(etc)) == ["address.list", "filler.bin", "kamailio.cfg"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs")
def test_a_push_that_runs_out_of_inodes_while_staging_changes_nothing(tmp_path: Path) -> None:
    """Free bytes but no free inode for the second staged file: the space check passes, staging fails."""
    etc = tmp_path / "etc"
    with tmpfs(etc, "size=1m,nr_inodes=4"):  # the directory, the two files, one more
        before = _old_tree(etc)
        rc, result = run_module("kamailio_config", {"files": NEW, "config_dir": str(etc), "test_start": False,
                                                    "state_dir": str(tmp_path / "state")}, tmp_path)
        assert {name: (etc / name).read_bytes() for name in OLD} == before
        assert rc != 0 and "staging the new files in %s failed" % etc in result["msg"], result
        assert "nothing was changed" in result["msg"] and sorted(os.listdir(etc)) == sorted(OLD)


def test_a_fault_between_two_renames_puts_the_first_file_back(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    before = _old_tree(etc)
    (etc / "kamailio.cfg").chmod(0o640)
    real_rename = os.rename
    calls: list[str] = []

    def second_rename_fails(src: t.Any, dst: t.Any, **kwargs: t.Any) -> None:
        calls.append(str(dst))
        if len(calls) == 2:
            raise OSError(5, "Input/output error (injected)")
        real_rename(src, dst, **kwargs)

    monkeypatch.setattr(os, "rename", second_rename_fails)
    fd = os.open(etc, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(SwapError) as failure:
            swap(fd, {name: text.encode() for name, text in NEW.items()}, where=str(etc))
    finally:
        os.close(fd)
    assert calls[:2] == ["kamailio.cfg", "address.list"], calls  # the first went live before the fault
    assert failure.value.restored and "the previous files are back" in str(failure.value)
    assert {name: (etc / name).read_bytes() for name in OLD} == before
    assert stat.S_IMODE(os.stat(etc / "kamailio.cfg").st_mode) == 0o640  # the very same file, not a copy
    assert sorted(os.listdir(etc)) == sorted(OLD)
