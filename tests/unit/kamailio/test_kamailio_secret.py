# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC's own secret file (kamailio/secret.py, module kamailio_secret): made on the host, kept as it is
once valid, readable by root and Kamailio's user only, never through a link or a directory another user
controls, nothing made in check mode. Kamailio reading it: tests/integration/test_kamailio_tls.py."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import (
    SecretError, ensure_secret, is_secret_text)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="owners are set as root, like on an SBC host")
KAMAILIO_UID = pwd.getpwnam("nobody").pw_uid  # any unprivileged user stands in for kamailio


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_made_once_then_kept_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "secret" / "secret.cfg"
    first = ensure_secret(str(path), KAMAILIO_UID)
    assert (first.changed, first.created) == (True, True)
    text = path.read_text()
    assert is_secret_text(text)
    assert (path.stat().st_uid, path.stat().st_gid, _mode(path)) == (KAMAILIO_UID, 0, 0o400)
    assert (path.parent.stat().st_uid, _mode(path.parent)) == (0, 0o711)
    again = ensure_secret(str(path), KAMAILIO_UID)
    assert (again.changed, again.fixed) == (False, []) and path.read_text() == text
    assert [p.name for p in path.parent.iterdir()] == ["secret.cfg"]  # no temporary file left


def test_two_secrets_differ(tmp_path: Path) -> None:
    texts = set()
    for name in ("a", "b"):
        ensure_secret(str(tmp_path / name / "secret.cfg"), KAMAILIO_UID)
        texts.add((tmp_path / name / "secret.cfg").read_text())
    assert len(texts) == 2


def test_check_mode_makes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "secret" / "secret.cfg"
    result = ensure_secret(str(path), KAMAILIO_UID, check_mode=True)
    assert (result.changed, result.created) == (True, True) and not path.parent.exists()
    path.parent.mkdir(mode=0o711)
    assert ensure_secret(str(path), KAMAILIO_UID, check_mode=True).changed and not path.exists()


def test_owner_and_mode_are_corrected_the_secret_kept(tmp_path: Path) -> None:
    path = tmp_path / "secret" / "secret.cfg"
    ensure_secret(str(path), KAMAILIO_UID)
    text = path.read_text()
    os.chown(path, 0, 0)
    path.chmod(0o644)
    checked = ensure_secret(str(path), KAMAILIO_UID, check_mode=True)
    assert checked.changed and sorted(checked.fixed) == ["mode", "owner"] and _mode(path) == 0o644
    fixed = ensure_secret(str(path), KAMAILIO_UID)
    assert sorted(fixed.fixed) == ["mode", "owner"] and not fixed.created
    assert (path.stat().st_uid, _mode(path), path.read_text()) == (KAMAILIO_UID, 0o400, text)


# The last: a secret file of a release before issue 25 (the dialog key itself, for crypto_hmac_sha256) is replaced
# by one with HMAC's padded keys, which kamailio.cfg needs.
@pytest.mark.parametrize("content", ["", "#!substdef \"!COMMSGW_DIALOG_KEY!short!\"\n", "x" * 10000,
                                     "# commsgw.routing: this SBC's own secret, generated here; never copy it "
                                     "(docs/kamailio-tls.md)\n#!substdef \"!COMMSGW_DIALOG_KEY!%s!\"\n"
                                     "#!substdef \"!COMMSGW_PING_TOKEN!%s!\"\n" % ("ab" * 32, "cd" * 16)])
def test_a_file_that_is_no_valid_secret_is_replaced(tmp_path: Path, content: str) -> None:
    path = tmp_path / "secret" / "secret.cfg"
    path.parent.mkdir(mode=0o711)
    path.write_text(content)
    result = ensure_secret(str(path), KAMAILIO_UID)
    assert result.changed and "content" in result.fixed
    assert is_secret_text(path.read_text()) and _mode(path) == 0o400


def test_a_symlink_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("not yours")
    path = tmp_path / "secret" / "secret.cfg"
    path.parent.mkdir(mode=0o711)
    path.symlink_to(target)
    with pytest.raises(SecretError, match="symlink"):
        ensure_secret(str(path), KAMAILIO_UID)
    assert target.read_text() == "not yours" and _mode(target) != 0o400


@pytest.mark.parametrize("why", ["group-writable", "not root's", "a symlink"])
def test_a_directory_another_user_could_change_is_refused(tmp_path: Path, why: str) -> None:
    directory = tmp_path / "secret"
    if why == "a symlink":
        (tmp_path / "real").mkdir(mode=0o711)
        directory.symlink_to(tmp_path / "real")
    else:
        directory.mkdir(mode=0o711)
        if why == "group-writable":
            directory.chmod(0o771)
        else:
            os.chown(directory, KAMAILIO_UID, 0)
    with pytest.raises(SecretError):
        ensure_secret(str(directory / "secret.cfg"), KAMAILIO_UID)
    assert not (directory / "secret.cfg").exists()


def test_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret" / "secret.cfg"
    path.mkdir(parents=True)
    (tmp_path / "secret").chmod(0o711)
    with pytest.raises(SecretError, match="not a regular file"):
        ensure_secret(str(path), KAMAILIO_UID)
