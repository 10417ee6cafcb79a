# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 21 item 2: root (the push, its backup and restore) writes the peer list into the refresher's own
directory without following anything the refresher controls."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import peers_dir

REF_ID = 64012


@pytest.fixture(name="peers")
def fixture_peers(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        pytest.skip("needs root (the refresher's directory belongs to another user)")
    peers = tmp_path / "etc" / "peers"
    peers.mkdir(parents=True)
    os.chown(peers, REF_ID, 0)
    os.chmod(peers, 0o2750)
    return peers


def test_a_symlink_the_refresher_planted_is_replaced_not_followed(peers: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's\n")
    os.chmod(victim, 0o600)
    (peers / "dispatcher.list").symlink_to(victim)
    with pytest.raises(OSError, match="symlinks are not followed"):
        peers_dir.read_nofollow(str(peers / "dispatcher.list"))
    peers_dir.write_in(str(peers), "dispatcher.list", "1 sip:192.0.2.1:5061\n", 0o640)
    info = os.lstat(peers / "dispatcher.list")
    assert stat.S_ISREG(info.st_mode) and (info.st_uid, stat.S_IMODE(info.st_mode)) == (REF_ID, 0o640)
    assert victim.read_text() == "root's\n" and os.stat(victim).st_uid == 0
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o600
    assert sorted(os.listdir(peers)) == ["dispatcher.list"]
    assert peers_dir.unlink_in(str(peers), "dispatcher.list") and not os.path.lexists(peers / "dispatcher.list")


def test_the_peers_dir_itself_must_not_be_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OSError):
        peers_dir.write_in(str(tmp_path / "link"), "dispatcher.list", "x\n", 0o640)
    assert os.listdir(tmp_path / "real") == []


def test_rendered_files_live_where_kamailio_reads_them() -> None:
    assert peers_dir.file_path("/etc/kamailio", "dispatcher.list") == "/etc/kamailio/peers/dispatcher.list"
    assert peers_dir.file_path("/etc/kamailio", "kamailio.cfg") == "/etc/kamailio/kamailio.cfg"
