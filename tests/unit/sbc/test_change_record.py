# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 11 item 7: the change record's logic (tests/integration/test_push.py checks a real onboard run's
record against the files on the SBC). Issue 22: the record takes the contract's neutral change steps; here they
come from the kamailio role's results (real kamailio_config / kamailio_service shapes, skipped tasks included)
through its filter kamailio_change_step, and from an API platform's apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.filter.kamailio_change_step import kamailio_change_step
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.change_record import (
    ChangeRecordError, apply, record_path, update_file)
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import write_text_atomic

CONTEXT = {"now": "2026-11-30T10:00:00.000Z", "ansible_version": "2.19.4", "collection_version": "0.1.0",
           "check_mode": False}
SKIPPED = {"changed": False, "skipped": True, "false_condition": "not kamailio_started.changed"}


def _at(second: int) -> dict[str, object]:
    return dict(CONTEXT, now="2026-11-30T10:00:%02d.000Z" % second)


def _push(changed: dict[str, tuple[str | None, str | None]], backup: str = "/etc/kamailio/.commsgw-backups/1"):
    return {"changed": True, "changed_files": sorted(changed), "backup": backup,
            "sha256": {n: {"before": b, "after": a} for n, (b, a) in changed.items()}}


def _service(action: str, before: int, after: int, **extra: object) -> dict[str, object]:
    return dict({"changed": action != "none", "action": action, "pid_before": before, "pid": after}, **extra)


def _run(steps: list[dict[str, object]], failed: bool = False, gates: list[dict[str, object]] = ()):  # type: ignore
    params = {"state": "opened", "run_id": "r1", "playbook": "migrate.yml", "dir": "/x"}
    record = apply(None, params, CONTEXT)
    record = apply(record, dict(params, state="sbc_started", host="sbc-1"), _at(1))
    neutral = [kamailio_change_step(step["push"], step["kind"], step["services"]) if "push" in step else step
               for step in steps]
    record = apply(record, dict(params, state="sbc_finished", host="sbc-1", steps=neutral, failed=failed,
                                error="gate failed" if failed else "", gates=list(gates)), _at(9))
    return apply(record, dict(params, state="closed"), _at(12))


def test_a_restart_records_both_pids_and_the_strongest_action() -> None:
    record = _run([{"kind": "push", "push": _push({"kamailio.cfg": ("aa", "bb")}),
                    "services": [_service("none", 40, 40), _service("restart", 40, 77), SKIPPED]}])
    entry = record["sbcs"]["sbc-1"]
    assert (entry["service_action"], entry["pid_before"], entry["pid_after"]) == ("restart", 40, 77)
    assert entry["files"] == [{"name": "kamailio.cfg", "sha256_before": "aa", "sha256_after": "bb"}]
    assert (entry["duration_s"], record["duration_s"], record["result"]) == (8.0, 12.0, "ok")


def test_a_migration_nets_the_files_over_widen_and_narrow_and_keeps_the_gates() -> None:
    widen = {"kind": "push", "push": _push({"dispatcher.list": ("old", "mid"), "address.list": ("a1", "a2")}),
             "services": [_service("none", 5, 5), SKIPPED, _service("reload", 5, 5, reloaded=["dispatcher.reload"])]}
    narrow = {"kind": "push", "push": _push({"dispatcher.list": ("mid", "new")}),
              "services": [_service("none", 5, 5), SKIPPED, _service("reload", 5, 5, reloaded=["dispatcher.reload"])]}
    record = _run([widen, narrow], gates=[{"step": "widened", "verdict": "warn"}, {"step": "narrowed", "verdict": "pass"}])
    entry = record["sbcs"]["sbc-1"]
    assert entry["files"] == [{"name": "address.list", "sha256_before": "a1", "sha256_after": "a2"},
                              {"name": "dispatcher.list", "sha256_before": "old", "sha256_after": "new"}]
    assert [s["reloaded"] for s in entry["steps"]] == [["dispatcher.reload"]] * 2
    assert entry["probe"] == {"verdict": "pass", "gates": [{"step": "widened", "verdict": "warn"},
                                                           {"step": "narrowed", "verdict": "pass"}]}


def test_a_rolled_back_sbc_is_failed_with_its_message_and_fails_the_run() -> None:
    push = {"kind": "push", "push": _push({"kamailio.cfg": ("aa", "bb")}),
            "services": [_service("none", 40, 40), {"failed": True, "action": "restart", "pid_before": 40, "pid": 0}]}
    rollback = {"kind": "rollback", "push": _push({"kamailio.cfg": ("bb", "aa")}),
                "services": [_service("restart", 0, 81)]}
    record = _run([push, rollback], failed=True)
    entry = record["sbcs"]["sbc-1"]
    assert (entry["status"], entry["message"], record["result"]) == ("failed", "gate failed", "failed")
    assert [s["kind"] for s in entry["steps"]] == ["push", "rollback"]
    assert entry["files"] == [{"name": "kamailio.cfg", "sha256_before": "aa", "sha256_after": "aa"}]
    assert (entry["pid_before"], entry["pid_after"]) == (40, 81)


def test_a_failed_probe_verdict_fails_the_run_and_an_unfinished_sbc_leaves_it_incomplete() -> None:
    params = {"state": "opened", "run_id": "r2", "playbook": "onboard.yml", "dir": "/x"}
    record = apply(None, params, CONTEXT)
    record = apply(record, dict(params, state="sbc_started", host="a"), CONTEXT)
    record = apply(record, dict(params, state="sbc_finished", host="a", steps=[]), CONTEXT)
    record = apply(record, dict(params, state="sbc_probed", host="a", verdict="fail"), CONTEXT)
    record = apply(record, dict(params, state="sbc_started", host="b"), CONTEXT)
    assert apply(json.loads(json.dumps(record)), dict(params, state="closed"), CONTEXT)["result"] == "failed"
    del record["sbcs"]["a"]
    assert apply(record, dict(params, state="closed"), CONTEXT)["result"] == "incomplete"


def test_bad_input_names_the_option() -> None:
    with pytest.raises(ChangeRecordError, match="run_id '../x' is not a file name"):
        record_path("/tmp", "../x")
    with pytest.raises(ChangeRecordError, match="open it first with state=opened"):
        apply(None, {"state": "closed", "run_id": "r", "dir": "/d"}, CONTEXT)
    record = apply(None, {"state": "opened", "run_id": "r", "dir": "/d"}, CONTEXT)
    with pytest.raises(ChangeRecordError, match="host is required with state=sbc_started"):
        apply(record, {"state": "sbc_started", "run_id": "r", "dir": "/d"}, CONTEXT)
    with pytest.raises(ChangeRecordError, match="already has a change record"):
        apply(record, {"state": "opened", "run_id": "r", "dir": "/d"}, CONTEXT)


def test_the_file_is_updated_in_place(tmp_path: Path) -> None:
    path = record_path(str(tmp_path), "r3")
    params = {"state": "opened", "run_id": "r3", "playbook": "onboard.yml", "dir": str(tmp_path)}
    update_file(path, lambda current: apply(current, params, CONTEXT), write_text_atomic)
    update_file(path, lambda current: apply(current, dict(params, state="sbc_started", host="a"), CONTEXT),
                write_text_atomic)
    saved = json.loads(Path(path).read_text())
    assert saved["sbcs"]["a"]["status"] == "in progress" and saved["result"] == "incomplete"


def test_an_api_platforms_apply_is_recorded_without_process_ids() -> None:
    """An API platform applies its artefacts through the device's management API: no process, no reload methods."""
    step = {"kind": "push", "changed": True, "artefacts": [{"name": "config.json", "before_sha256": None,
                                                           "after_sha256": "c1"}],
            "service": {"action": "applied", "detail": ["PUT /config"], "pid_before": None, "pid_after": None},
            "backup": "revision 7"}
    entry = _run([step])["sbcs"]["sbc-1"]
    assert (entry["service_action"], entry["pid_before"], entry["pid_after"]) == ("apply", None, None)
    assert entry["steps"][0]["backup"] == "revision 7" and entry["steps"][0]["reloaded"] == ["PUT /config"]
    assert entry["files"] == [{"name": "config.json", "sha256_before": None, "sha256_after": "c1"}]


@pytest.mark.parametrize("step", [
    {"kind": "push", "artefacts": [], "service": {"action": "rebooted"}},
    {"kind": "push", "artefacts": "kamailio.cfg"},
    {"kind": "push", "push": {}, "services": []},  # the kamailio role's raw results, not a neutral step
])
def test_a_step_that_is_not_a_neutral_change_step_is_refused(step: dict[str, object]) -> None:
    params = {"state": "opened", "run_id": "r3", "playbook": "onboard.yml", "dir": "/x"}
    record = apply(None, params, CONTEXT)
    with pytest.raises(ChangeRecordError, match="steps: "):
        apply(record, dict(params, state="sbc_finished", host="a", steps=[step]), CONTEXT)
