# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kamailio_service's reload waits out Kamailio's reload_delta (the fault text is Kamailio's own:
tests/integration/test_kamailio_core_policy.py meets it from a real Kamailio) with progress lines."""

from __future__ import annotations

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.reload import ReloadFailed, reload


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _kamailio(refusals: int, fault: str = "ongoing reload"):
    calls: list[str] = []

    def call(method: str) -> None:
        calls.append(method)
        if len(calls) <= refusals:
            raise RuntimeError("500 %s" % fault)
    return call, calls


# permissions.addressReload says "ongoing reload", dispatcher.reload "Ongoing reload" (Kamailio 5.6.3, seen by
# tests/integration/test_push.py's failed-reload rollback, which came within 5 s of the failed reload).
@pytest.mark.parametrize("fault", ["ongoing reload", '{"code": 500, "message": "Ongoing reload"}'])
def test_a_reload_refused_as_too_soon_is_tried_again_with_progress(fault: str) -> None:
    clock = Clock()
    call, calls = _kamailio(refusals=6, fault=fault)
    progress = reload(call, "dispatcher.reload", 15.0, clock=clock, sleep=clock.sleep)
    assert calls == ["dispatcher.reload"] * 7
    assert progress and len(progress) == 3  # about one line a second over 3 s
    assert progress[0] == ("waiting for dispatcher.reload (refused as too soon after the previous reload): "
                           "0.0 s of 15.0 s")


def test_an_accepted_reload_prints_nothing() -> None:
    call, calls = _kamailio(refusals=0)
    assert reload(call, "permissions.addressReload", 15.0) == [] and len(calls) == 1


def test_the_limit_is_named_when_kamailio_keeps_refusing() -> None:
    clock = Clock()
    call, _calls = _kamailio(refusals=1000)
    with pytest.raises(ReloadFailed, match=r"dispatcher.reload still refused after 3\.0 s \(limit 3\.0 s\)"):
        reload(call, "dispatcher.reload", 3.0, clock=clock, sleep=clock.sleep)


def test_another_fault_fails_at_once() -> None:
    clock = Clock()
    call, calls = _kamailio(refusals=5, fault="command not found")
    with pytest.raises(ReloadFailed, match="dispatcher.reload failed: 500 command not found"):
        reload(call, "dispatcher.reload", 15.0, clock=clock, sleep=clock.sleep)
    assert len(calls) == 1
