# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 21 item 3: the read-only steps (read-back, the probe's SBC view, migration's peer-state poll) run as
Kamailio's user, not as root: a file only root may read stays unread, a step's error comes back named."""

from __future__ import annotations

import grp
import json
import os
import pwd
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.platform import KAMAILIO
from ansible_collections.commsgw.routing.plugins.module_utils.host.run_as import RunAsError, run_as
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import PeerStateError
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import ReadbackError

try:
    KAMAILIO_ACCOUNT: t.Optional[pwd.struct_passwd] = pwd.getpwnam("kamailio")
except KeyError:
    KAMAILIO_ACCOUNT = None

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or KAMAILIO_ACCOUNT is None,
                                reason="needs root and a kamailio account")

ROW = "101 sip:127.0.10.1:5060;transport=udp 8 65525 rweight=100;srvweight=60;target=p1.acg-lab.commsgw.test\n"


def _who() -> list[t.Any]:
    return [os.geteuid(), os.getegid(), sorted(os.getgroups())]


def test_run_as_takes_the_accounts_uid_gid_and_groups() -> None:
    assert KAMAILIO_ACCOUNT is not None
    uid, gid, groups = run_as("kamailio", _who)
    expected = sorted(os.getgrouplist("kamailio", KAMAILIO_ACCOUNT.pw_gid))
    assert (uid, gid, groups) == (KAMAILIO_ACCOUNT.pw_uid, KAMAILIO_ACCOUNT.pw_gid, expected)
    assert run_as("root", _who)[0] == 0 and run_as(None, _who)[0] == 0


def test_an_error_in_the_child_comes_back_named() -> None:
    def fail() -> None:
        raise ValueError("bad input")
    with pytest.raises(RunAsError, match="bad input") as info:
        run_as("kamailio", fail)
    assert info.value.kind == "ValueError"
    with pytest.raises(RunAsError, match="no user 'no-such-user-21'"):
        run_as("no-such-user-21", _who)


@pytest.fixture(name="config_dir")
def fixture_config_dir(tmp_path: Path) -> Path:
    """A config dir Kamailio's group may read, with a dispatcher.list and commsgw-srv.json only root may read."""
    os.chmod(tmp_path, 0o755)
    etc = tmp_path / "etc"
    etc.mkdir()
    os.chown(etc, 0, grp.getgrnam("kamailio").gr_gid)
    os.chmod(etc, 0o750)
    (etc / "peers").mkdir()
    os.chown(etc / "peers", 0, grp.getgrnam("kamailio").gr_gid)
    os.chmod(etc / "peers", 0o750)
    (etc / "peers" / "dispatcher.list").write_text(ROW)
    (etc / "commsgw-srv.json").write_text('{"trunk_groups": [], "sets": []}\n')
    (etc / "kamailio.cfg").write_text("#!KAMAILIO\n")
    for name in ("peers/dispatcher.list", "commsgw-srv.json", "kamailio.cfg"):
        os.chmod(etc / name, 0o600)  # root's only
    return etc


def test_probe_view_reads_as_kamailio_not_as_root(config_dir: Path, tmp_path: Path) -> None:
    view = KAMAILIO.probe_view(KAMAILIO.with_defaults({"config_dir": str(config_dir),
                                                       "run_dir": str(tmp_path / "run")}))
    assert view.configured is None, view
    assert any("Permission denied" in e and "dispatcher.list" in e for e in view.errors), view.errors
    # As root (run_as_user root) the same view reads the file: the denial above is the drop, not the file.
    view = KAMAILIO.probe_view(KAMAILIO.with_defaults({"config_dir": str(config_dir), "run_dir": str(tmp_path / "run"),
                                                       "run_as_user": "root"}))
    assert view.configured and view.configured[0].uri == "sip:127.0.10.1:5060;transport=udp"


def test_read_state_reads_as_kamailio_not_as_root(config_dir: Path, tmp_path: Path) -> None:
    options = {"config_dir": str(config_dir), "run_dir": str(tmp_path / "run")}
    assert KAMAILIO.read_state(KAMAILIO.with_defaults(options), runtime=False) is None  # unreadable: not onboarded
    with pytest.raises(ReadbackError):  # as root it is read (and is not a complete configuration)
        KAMAILIO.read_state(KAMAILIO.with_defaults(dict(options, run_as_user="root")), runtime=False)


def test_peer_states_reads_kamailio_cfg_as_kamailio(config_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(OSError, match="cannot read kamailio.cfg.*Permission denied"):
        KAMAILIO.peer_states(KAMAILIO.with_defaults({"config_dir": str(config_dir), "run_dir": str(tmp_path / "run")}))
    os.chown(config_dir / "kamailio.cfg", 0, grp.getgrnam("kamailio").gr_gid)
    os.chmod(config_dir / "kamailio.cfg", 0o640)
    poll = KAMAILIO.peer_states(KAMAILIO.with_defaults({"config_dir": str(config_dir), "run_dir": str(tmp_path / "run")}))
    with pytest.raises(PeerStateError, match="no jsonrpcs endpoint"):
        poll()


REFRESHER_UID = 64012  # the SRV refresher's user (commsgw-srv on a host): it owns <config_dir>/peers


def test_migration_diff_shows_no_file_the_refresher_links_in(tmp_path: Path) -> None:
    """The refresher's user may put anything in the directory it owns (peers/; in releases before issue 21 the
    whole config dir): a symlink named dispatcher.list to a file only root may read. migration_diff runs as
    root; its file diffs (printed in the playbook's output) must never carry that file's text."""
    from ansible_collections.commsgw.routing.tests.harness.tools import run_module
    from ansible_collections.commsgw.routing.tests.unit.migration.test_migration import _files, _plan, _production

    os.chmod(tmp_path, 0o755)
    secret = tmp_path / "root-only"
    secret.write_text("SECRET-OF-ROOT-21\n")
    os.chmod(secret, 0o600)
    etc = tmp_path / "etc"
    (etc / "peers").mkdir(parents=True)
    kamailio_gid = grp.getgrnam("kamailio").gr_gid
    plan = _plan(_production())
    for name, text in _files(plan).items():
        if name != "dispatcher.list":
            (etc / name).write_text(text)
            os.chown(etc / name, 0, kamailio_gid)
            os.chmod(etc / name, 0o640)
    os.chown(etc, 0, kamailio_gid)
    os.chmod(etc, 0o751)
    os.chown(etc / "peers", REFRESHER_UID, kamailio_gid)
    os.chmod(etc / "peers", 0o2750)
    # Where the refresher's user could write: peers/ now, the config dir itself before (root:commsgw-srv 0771).
    for link in (etc / "peers" / "dispatcher.list", etc / "dispatcher.list"):
        os.symlink(secret, link)
        os.lchown(link, REFRESHER_UID, REFRESHER_UID)
    new = _plan(_production("pstn-region2-new", ["20.82.170.48/28"]))
    for user in ("kamailio", "root"):
        rc, result = run_module("migration_diff", {"platform_options": {"config_dir": str(etc), "run_as_user": user},
                                                   "artefacts": _files(new), "plan": new}, tmp_path)
        assert rc == 0, result
        assert "SECRET-OF-ROOT-21" not in json.dumps(result), result["artefact_diffs"].get("dispatcher.list")
        assert result["onboarded"], result  # the rest of the deployed files were read (as Kamailio's group)
        assert result["artefact_diffs"]["dispatcher.list"].startswith(
            "--- %s/peers/dispatcher.list (absent)" % etc), result["artefact_diffs"]["dispatcher.list"][:200]
