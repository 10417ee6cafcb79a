# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""start_detached: exit status, log file output, timeout and session detachment."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from ansible_collections.commsgw.routing.plugins.module_utils.core.daemon import start_detached


def test_returns_the_exit_status_and_appends_output_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    log.write_text("earlier run\n")
    rc = start_detached(["sh", "-c", "echo out; echo err >&2; exit 3"], str(log), timeout=10)
    assert rc == 3
    assert log.read_text().splitlines() == ["earlier run", "out", "err"]


def test_a_daemon_whose_parent_exits_does_not_block_on_its_background_child(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    # The parent forks a long-lived child that keeps stdout/stderr open, then exits 0 at once.
    rc = start_detached(["sh", "-c", "sleep 30 & echo $! > %s; exit 0" % pid_file], str(log), timeout=10)
    elapsed = time.monotonic() - started
    child = int(pid_file.read_text())
    try:
        assert rc == 0
        assert elapsed < 5
        # The child runs in a session of its own, not in the test's.
        assert os.getsid(child) != os.getsid(0)
    finally:
        os.kill(child, signal.SIGTERM)


def test_still_running_after_the_timeout_gives_none(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    pid_file = tmp_path / "self.pid"
    rc = start_detached(["sh", "-c", "echo $$ > %s; exec sleep 30" % pid_file], str(log), timeout=0.3)
    try:
        assert rc is None
    finally:
        os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_a_symlink_planted_at_the_log_path_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    log = tmp_path / "daemon.log"
    log.symlink_to(victim)
    try:
        start_detached(["sh", "-c", "echo planted"], str(log), timeout=10)
    except OSError as exc:
        assert "daemon.log" in str(exc) or exc.filename == str(log)
    else:
        raise AssertionError("the log was opened through a symlink")
    assert victim.read_text() == "keep me\n"
