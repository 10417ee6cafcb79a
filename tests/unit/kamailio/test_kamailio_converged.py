# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 25 item 2: what a re-run compares to skip a push that would change nothing (kamailio.converged,
kamailio.push_input). tests/integration/test_push.py shows the skip, and a hand edit undoing it, on a real SBC;
test_role_conventions.py that every path the push manages is fingerprinted."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import converged
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.push_input import code_digest, input_digest


def _tree(tmp_path: Path) -> Path:
    config = tmp_path / "etc"
    (config / "peers").mkdir(parents=True)
    (config / "kamailio.cfg").write_text("listen=udp:127.0.0.1:5060\n")
    (config / "peers" / "dispatcher.list").write_text("1 sip:192.0.2.1:5060\n")
    (config / "peers" / ".state.json").write_text("{}")
    lib = tmp_path / "lib"
    (lib / "kamailio").mkdir(parents=True)
    (lib / "kamailio" / "refresher.py").write_text("print('hi')\n")
    return config


def _print(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "etc"
    return converged.fingerprint(content=[str(config / "peers" / "dispatcher.list"), str(tmp_path / "lib")],
                                 meta=[str(config / "peers"), str(tmp_path / "log")], listed=[str(config)])


def test_a_hand_edit_a_mode_a_new_file_or_a_removed_one_is_a_difference(tmp_path: Path) -> None:
    config = _tree(tmp_path)
    before = _print(tmp_path)
    assert before == _print(tmp_path)
    assert before[str(tmp_path / "log")] == "absent"
    (config / "kamailio.cfg").write_text("listen=udp:127.0.0.1:5060\n# hand edit\n")
    assert converged.differences(before, _print(tmp_path)) == [str(config / "kamailio.cfg")]
    edited = _print(tmp_path)
    os.chmod(config / "kamailio.cfg", 0o666)
    assert converged.differences(edited, _print(tmp_path)) == [str(config / "kamailio.cfg")]
    moded = _print(tmp_path)
    (config / "dispatcher.list").write_text("left behind\n")  # a file the push removes, back in the config dir
    (tmp_path / "lib" / "kamailio" / "refresher.py").unlink()
    assert converged.differences(moded, _print(tmp_path)) == [
        str(config / "dispatcher.list"), str(tmp_path / "lib" / "kamailio" / "refresher.py")]


def test_what_changes_on_its_own_is_not_a_difference(tmp_path: Path) -> None:
    config = _tree(tmp_path)
    (tmp_path / "log").write_text("one line\n")
    before = _print(tmp_path)
    (config / "peers" / ".state.json").write_text('{"refreshed": 1}')  # the refresher's own state
    (tmp_path / "log").write_text("one line\nanother\n")  # a log grows
    (tmp_path / "lib" / "kamailio" / "__pycache__").mkdir()  # root ran the refresher by hand
    (tmp_path / "lib" / "kamailio" / "__pycache__" / "refresher.cpython-313.pyc").write_bytes(b"\0")
    assert converged.differences(before, _print(tmp_path)) == []


def test_a_link_is_recorded_not_followed_and_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    config = _tree(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("not to be read through the link\n")
    before = _print(tmp_path)
    (config / "peers" / "dispatcher.list").unlink()
    (config / "peers" / "dispatcher.list").symlink_to(secret)
    os.mkfifo(config / "peers" / "fifo")  # not listed: meta only for peers/
    os.mkfifo(config / "wait.fifo")
    done: list[dict[str, str]] = []
    worker = threading.Thread(target=lambda: done.append(_print(tmp_path)), daemon=True)
    worker.start()
    worker.join(5)
    assert done, "the fingerprint waited on a FIFO"
    after = done[0]
    assert after[str(config / "peers" / "dispatcher.list")].endswith(" -> " + str(secret))
    assert after[str(config / "wait.fifo")].startswith("other ")
    assert converged.differences(before, after) == [str(config / "peers" / "dispatcher.list"), str(config / "wait.fifo")]


def test_the_walk_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.setattr(converged, "MAX_ENTRIES", 3)
    with pytest.raises(converged.FingerprintError, match="more than 3 paths"):
        _print(tmp_path)


def test_the_record_round_trips_in_a_root_only_directory_and_a_bad_one_is_none(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    assert converged.read_record(state) is None
    converged.write_record(state, "abc", {"/etc/x": "file 640 0:0 00"})
    record = converged.read_record(state)
    assert record is not None and record["input"] == "abc" and record["host"] == {"/etc/x": "file 640 0:0 00"}
    assert os.stat(os.path.join(state, converged.RECORD)).st_mode & 0o777 == 0o600
    assert os.stat(state).st_mode & 0o777 == 0o700
    Path(state, converged.RECORD).write_text('{"version": 0, "input": "abc", "host": {}}')
    assert converged.read_record(state) is None


def test_the_verdict_names_each_reason_and_without_a_record_there_is_no_input_to_match() -> None:
    host = {"/a": "file 640 0:0 1", "/b": "absent"}
    assert converged.verdict(None, host, []) == {"recorded_input": None, "reasons": ["no record of a complete push"]}
    record = {"input": "abc", "host": dict(host)}
    assert converged.verdict(record, host, []) == {"recorded_input": "abc", "reasons": []}
    assert converged.verdict(record, dict(host, **{"/b": "file 640 0:0 2"}), ["kamailio.service is inactive, not active"]) == {
        "recorded_input": "abc", "reasons": ["/b changed since the last push", "kamailio.service is inactive, not active"]}
    many = {"/p%02d" % n: "absent" for n in range(25)}
    reasons = converged.verdict({"input": "x", "host": {}}, many, [])["reasons"]
    assert len(reasons) == 21 and reasons[-1] == "and 5 other paths"


def test_the_input_digest_follows_files_variables_and_code(tmp_path: Path) -> None:
    files = {"kamailio.cfg": "a", "address.list": "b"}
    variables = {"kamailio_user": "kamailio", "commsgw_sbc": {"tls": {"certificate": "/etc/c.pem"}}}
    digest = input_digest(files, variables, "code")
    assert digest == input_digest(dict(reversed(list(files.items()))), variables, "code")
    assert digest != input_digest(dict(files, **{"kamailio.cfg": "a "}), variables, "code")
    assert digest != input_digest(files, dict(variables, kamailio_user="root"), "code")
    assert digest != input_digest(files, variables, "other code")
    root = tmp_path / "collection"
    (root / "plugins" / "modules" / "__pycache__").mkdir(parents=True)
    (root / "roles").mkdir()
    (root / "plugins" / "modules" / "m.py").write_text("x = 1\n")
    (root / "plugins" / "modules" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    first = code_digest(str(root))
    assert code_digest(str(root)) == first and len(first) == 64
    converged_root = tmp_path / "other"
    (converged_root / "plugins").mkdir(parents=True)
    (converged_root / "plugins" / "m.py").write_text("x = 2\n")
    assert code_digest(str(converged_root)) != first
