# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 21 item 8: what a push leaves pending for the running SBC (a restart, reloads) until the restart or
reload is done, and how drift names it; tests/integration/test_drift.py cuts a real push off before its restart."""

from __future__ import annotations

import os
from pathlib import Path

from ansible_collections.commsgw.routing.plugins.module_utils.host import push_state


def _state(tmp_path: Path) -> int:
    fd = push_state.open_state_dir(str(tmp_path / "state"))
    assert fd is not None
    return fd


def test_reloads_add_up_a_restart_covers_them_and_each_is_cleared_by_what_does_it(tmp_path: Path) -> None:
    fd = _state(tmp_path)
    try:
        push_state.note_pending(fd, False, ["dispatcher.reload"], ["dispatcher.list"], now=10.0)
        pending = push_state.note_pending(fd, False, ["permissions.addressReload"], ["address.list"], now=20.0)
        assert pending == {"restart": False, "reload": ["dispatcher.reload", "permissions.addressReload"],
                           "files": ["address.list", "dispatcher.list"], "since": 20.0}
        push_state.clear_pending(fd, False, ["dispatcher.reload"])
        assert push_state.read_pending(fd)["reload"] == ["permissions.addressReload"]  # type: ignore[index]
        push_state.note_pending(fd, True, [], ["kamailio.cfg"], now=30.0)
        assert push_state.read_pending(fd)["reload"] == []  # type: ignore[index]
        push_state.clear_pending(fd, False, ["permissions.addressReload"])
        assert push_state.read_pending(fd)["restart"] is True  # type: ignore[index]  # a reload is no restart
        push_state.clear_pending(fd, True)
        assert push_state.read_pending(fd) is None and os.listdir(fd) == []
    finally:
        os.close(fd)


def test_a_process_started_after_the_change_has_taken_it(tmp_path: Path) -> None:
    pending = {"restart": True, "reload": [], "files": ["kamailio.cfg"], "since": 100.0}
    assert push_state.outstanding(pending, None) == pending
    assert push_state.outstanding(pending, 99.0) == pending
    assert push_state.outstanding(pending, 101.0) is None
    pid_file = tmp_path / "self.pid"
    pid_file.write_text("%d\n" % os.getpid())
    started = push_state.process_started_at(str(pid_file), name=b"python")
    assert started is not None and started <= __import__("time").time()
    assert push_state.process_started_at(str(pid_file), b"kamailio") is None  # not a kamailio
