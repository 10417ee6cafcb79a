# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Recorded SRV answers (issue 11 item 4) and validation warnings as Ansible warnings (item 5).

routing_plan's ``srv_answers`` reads an answers file, a plan JSON or a directory of them; every
format error names the file and the path inside it, the answers get the same checks as live ones,
a record the deployment uses but the recording lacks is an error, and old recordings are warned about.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.filter.srv_answers_file import srv_answers_file
from ansible_collections.commsgw.routing.plugins.module_utils.srv.recorded import (
    FROM_FILE, FROM_MTIME, format_age, format_time, utc_now)
from ansible_collections.commsgw.routing.plugins.modules.routing_plan import outcome as routing_plan
from ansible_collections.commsgw.routing.plugins.modules.validate_inventory import outcome as validate_inventory
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars
from ansible_collections.commsgw.routing.tests.unit.plan.test_plan import answer

DOMAIN = "a1b2c3d4e5f6g7h8.commsgw.azure.com"
SRV1 = "_sip._tls.pstn-region1." + DOMAIN
SRV2 = "_sip._tls.pstn-region2." + DOMAIN
LIVE = {SRV1: answer(SRV1, 60, (10, 50, 5061, "sbc1.pstn-region1." + DOMAIN, ["20.61.48.17"]),
                     (10, 50, 5061, "sbc2.pstn-region1." + DOMAIN, ["20.61.48.18"])),
        SRV2: answer(SRV2, 60, (10, 50, 5061, "sbc1.pstn-region2." + DOMAIN, ["20.82.160.33"]))}


def _hosts(**changes: t.Any) -> dict[str, dict[str, t.Any]]:
    hosts = copy.deepcopy(load_hostvars(INVENTORIES / "production"))
    for variables in hosts.values():
        variables["commsgw_deployment"].update(changes)
    return hosts


def _plan(srv_answers: t.Optional[str] = None, resolved: t.Optional[dict[str, t.Any]] = None,
          max_age: t.Optional[int] = None, **changes: t.Any) -> tuple[bool, dict[str, t.Any]]:
    params: dict[str, t.Any] = {"hosts": _hosts(**changes), "require_sbc_settings": False,
                                "resolved": resolved or {}, "srv_answers": srv_answers}
    if max_age is not None:
        params["srv_answers_max_age"] = max_age
    return routing_plan(params)


def _ago(seconds: int) -> str:
    return format_time(utc_now() - datetime.timedelta(seconds=seconds))


def _write(path: Path, document: t.Any) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def _document(recorded_at: t.Optional[str] = None, answers: t.Optional[dict[str, t.Any]] = None) -> dict[str, t.Any]:
    return srv_answers_file({"results": [{"answers": answers if answers is not None else copy.deepcopy(LIVE)}]},
                            recorded_at or _ago(600))


# -- the recording gives the very plans the live answers give ----------------------------------------------
def test_an_answers_file_gives_the_plans_of_the_live_answers_and_says_what_it_used(tmp_path: Path) -> None:
    failed, live = _plan(resolved=copy.deepcopy(LIVE))
    assert not failed, live
    source = _write(tmp_path / "answers.json", _document(_ago(3 * 3600 + 120)))
    failed, recorded = _plan(srv_answers=source)
    assert not failed, recorded
    assert recorded["plans"] == live["plans"] and recorded["host_plans"] == live["host_plans"]
    assert [(e["srv_name"], e["source"], e["where"], e["recorded_at_from"]) for e in recorded["recorded_answers"]] \
        == [(SRV1, source, "answers[%s]" % SRV1, FROM_FILE), (SRV2, source, "answers[%s]" % SRV2, FROM_FILE)]
    assert all(3 * 3600 + 120 <= e["age_s"] < 3 * 3600 + 180 for e in recorded["recorded_answers"])
    assert "from recorded SRV answers, touching no DNS: %s from %s" % (SRV1, source) in recorded["msg"]
    assert "3 h 2 min ago" in recorded["msg"]
    assert recorded["warnings"] == [] and "recorded_answers" not in live


def test_a_yaml_answers_file_with_an_unquoted_time_is_read(tmp_path: Path) -> None:
    import yaml
    document = _document()
    document["recorded_at"] = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    path = tmp_path / "answers.yml"
    path.write_text(yaml.safe_dump(document))
    assert "recorded_at: 20" in path.read_text()  # a YAML timestamp, not a string
    failed, result = _plan(srv_answers=str(path))
    assert not failed, result
    assert {e["age"][:4] for e in result["recorded_answers"]} == {"1 h "}


def test_plans_written_earlier_are_a_recording_dated_by_their_files(tmp_path: Path) -> None:
    failed, live = _plan(resolved=copy.deepcopy(LIVE))
    assert not failed
    for key, plan in live["plans"].items():
        _write(tmp_path / ("%s.json" % key.replace("/", "__")), plan)
    old = (utc_now() - datetime.timedelta(days=3)).timestamp()
    for path in tmp_path.iterdir():
        os.utime(path, (old, old))
    failed, recorded = _plan(srv_answers=str(tmp_path))
    assert not failed, recorded
    assert recorded["plans"] == live["plans"]
    assert {e["recorded_at_from"] for e in recorded["recorded_answers"]} == {FROM_MTIME}
    assert {Path(e["source"]).parent for e in recorded["recorded_answers"]} == {tmp_path}
    # Three days is older than the default day: a warning per answer, shown and kept.
    assert len(recorded["warnings"]) == 2 and recorded["advice"] == recorded["warnings"]
    assert "recorded SRV answer %s from %s" % (SRV1, tmp_path) in recorded["warnings"][0]
    assert "is 3 d 0 h old" in recorded["warnings"][0] and "older than srv_answers_max_age (86400 s)" \
        in recorded["warnings"][0]


def test_plans_without_peers_record_nothing(tmp_path: Path) -> None:
    failed, offline = _plan()
    for key, plan in offline["plans"].items():
        _write(tmp_path / ("%s.json" % key.replace("/", "__")), plan)
    failed, result = _plan(srv_answers=str(tmp_path))
    assert failed and "records no SRV answer (plans written without commsgw_resolve=true" in result["problems"]


@pytest.mark.parametrize("max_age, warned", [(3600, True), (7200, False)])
def test_an_answer_older_than_max_age_is_a_warning(tmp_path: Path, max_age: int, warned: bool) -> None:
    source = _write(tmp_path / "answers.json", _document(_ago(5400)))
    failed, result = _plan(srv_answers=source, max_age=max_age)
    assert not failed
    assert bool(result["warnings"]) is warned and result["advice"] == result["warnings"]
    if warned:
        assert result["warnings"][0].startswith("recorded SRV answer %s from %s is 1 h 30 min old" % (SRV1, source))


# -- the same checks as live answers; nothing missing ----------------------------------------------------------
def test_a_record_missing_from_the_recording_is_an_error_naming_it(tmp_path: Path) -> None:
    source = _write(tmp_path / "answers.json", _document(answers={SRV1: copy.deepcopy(LIVE[SRV1])}))
    failed, result = _plan(srv_answers=source)
    assert failed and "plans" not in result
    assert result["problems"] == ("deployment contoso-emea: %s: no recorded SRV answer for %s (needed for "
                                  "commsgw_deployment.service_regions[1].hostname) in %s\n" % (SRV2, SRV2, source))


@pytest.mark.parametrize("target, addresses, needle", [
    ("x;obproxy=sip:evil.example", ["20.61.48.17"], "[bad_target_name]"),     # RFC 2782 / RFC 1123
    ("sbc1.pstn-region1." + DOMAIN, ["20.82.160.33"], "outside the range(s)"),
])
def test_hostile_recorded_answers_are_refused_like_live_ones(tmp_path: Path, target: str, addresses: list[str],
                                                             needle: str) -> None:
    answers = copy.deepcopy(LIVE)
    answers[SRV1]["targets"][0].update(target=target, addresses=addresses)
    source = _write(tmp_path / "answers.json", _document(answers=answers))
    failed, result = _plan(srv_answers=source)
    assert failed and "plans" not in result
    lines = result["problems"].splitlines()
    assert len(lines) == 1 and needle in lines[0], lines
    assert lines[0].startswith("deployment contoso-emea: %s: answers[%s]: " % (source, SRV1))
    # Passed in as live answers, the very same checks refuse them.
    failed, live = _plan(resolved=answers)
    assert failed and needle in live["problems"]


# -- the file is checked at the boundary: every error names the file and the path inside it ---------------
def _broken(change: t.Callable[[dict[str, t.Any]], None]) -> dict[str, t.Any]:
    document = _document()
    change(document)
    return document


def _target(document: dict[str, t.Any]) -> dict[str, t.Any]:
    return t.cast(t.Dict[str, t.Any], document["answers"][SRV1]["targets"][0])


@pytest.mark.parametrize("change, where, what", [
    (lambda d: _target(d).update(port="5061"), "answers[%s].targets[0].port" % SRV1, "is not a 16-bit number"),
    (lambda d: _target(d).update(priority=70000), "answers[%s].targets[0].priority" % SRV1, "is not a 16-bit number"),
    (lambda d: _target(d).pop("weight"), "answers[%s].targets[0].weight" % SRV1, "is missing"),
    (lambda d: _target(d).update(addresses=["20.61.48.300"]), "answers[%s].targets[0].addresses[0]" % SRV1,
     "is not an IPv4 address"),
    (lambda d: _target(d).update(addresses=["2001:db8::1"]), "answers[%s].targets[0].addresses[0]" % SRV1,
     "is not an IPv4 address"),
    (lambda d: d["answers"][SRV1].update(targets=[]), "answers[%s].targets" % SRV1, "is not a list of SRV targets"),
    (lambda d: d["answers"][SRV1].update(ttl=-1), "answers[%s].ttl" % SRV1, "is not a TTL"),
    (lambda d: d["answers"][SRV1].update(tll=60), "answers[%s].tll" % SRV1, "is unknown"),
    (lambda d: d["answers"].update({"pstn-region3.example": d["answers"][SRV1]}), "answers[pstn-region3.example]",
     "is not an SRV record name"),
    (lambda d: d.update(recorded_at="yesterday"), "recorded_at", "is not a time"),
    (lambda d: d.update(recorded_at="2026-11-30T22:10:00"), "recorded_at", "has no time zone"),
    (lambda d: d.update(recorded_at=_ago(-3600)), "recorded_at", "lies in the future"),
    (lambda d: d.pop("recorded_at"), "answers[%s].recorded_at" % SRV1, "is missing (and the file has no recorded_at)"),
    (lambda d: d.update(version=2), "version", "is not a version this collection reads"),
    (lambda d: d.update(answers=[]), "answers", "is not a mapping of SRV answers"),
    (lambda d: d.update(format="something.else"), "format", "is neither an SRV answers file nor a routing plan"),
])
def test_every_format_error_names_the_file_and_the_path_inside_it(
        tmp_path: Path, change: t.Callable[[dict[str, t.Any]], None], where: str, what: str) -> None:
    source = _write(tmp_path / "answers.json", _broken(change))
    failed, result = _plan(srv_answers=source)
    assert failed and "plans" not in result, result
    assert "%s: %s: %s (got " % (source, where, what) in result["problems"], result["problems"]
    assert "problem(s) with the recorded SRV answers" in result["msg"]


def test_an_answer_may_carry_its_own_time(tmp_path: Path) -> None:
    document = _document()
    del document["recorded_at"]
    for entry in document["answers"].values():
        entry["recorded_at"] = _ago(60)
    failed, result = _plan(srv_answers=_write(tmp_path / "answers.json", document))
    assert not failed, result
    assert all(60 <= e["age_s"] < 120 for e in result["recorded_answers"])


@pytest.mark.parametrize("text, needle", [("{not json", "is not JSON"), ("[1, 2]", "is neither an SRV answers")])
def test_a_file_that_is_not_a_recording_is_named(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "answers.json"
    path.write_text(text)
    failed, result = _plan(srv_answers=str(path))
    assert failed and result["problems"].startswith("%s: " % path) and needle in result["problems"]


def test_a_missing_path_and_an_empty_directory_are_named(tmp_path: Path) -> None:
    failed, result = _plan(srv_answers=str(tmp_path / "nope.json"))
    assert failed and "%s: does not exist" % (tmp_path / "nope.json") in result["problems"]
    failed, result = _plan(srv_answers=str(tmp_path))
    assert failed and "%s: is a directory without a .json/.yml file" % tmp_path in result["problems"]


def test_two_files_disagreeing_on_a_record_are_refused_naming_both(tmp_path: Path) -> None:
    first = _write(tmp_path / "a.json", _document())
    other = copy.deepcopy(LIVE)
    other[SRV1]["targets"][0]["addresses"] = ["20.61.48.20"]
    second = _write(tmp_path / "b.json", _document(answers=other))
    failed, result = _plan(srv_answers=str(tmp_path))
    assert failed
    assert "%s: answers[%s]: differs from the answer for %s in %s: answers[%s]" % (second, SRV1, SRV1, first, SRV1) \
        in result["problems"]


def test_the_same_answer_in_two_files_uses_the_newer_recording(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", _document(_ago(7200)))
    newer = _write(tmp_path / "b.json", _document(_ago(60)))
    failed, result = _plan(srv_answers=str(tmp_path))
    assert not failed and {e["source"] for e in result["recorded_answers"]} == {newer}


def test_recorded_and_live_answers_together_are_refused(tmp_path: Path) -> None:
    failed, result = _plan(srv_answers=_write(tmp_path / "answers.json", _document()), resolved=copy.deepcopy(LIVE))
    assert failed and "srv_answers and resolved both given" in result["msg"]
    failed, result = _plan(srv_answers=_write(tmp_path / "answers.json", _document()), max_age=-1)
    assert failed and "srv_answers_max_age (commsgw_srv_answers_max_age) is -1" in result["msg"]


def test_format_age() -> None:
    assert [format_age(s) for s in (0, 59, 61, 3600, 3 * 86400 + 7200)] == ["0 s", "59 s", "1 min 1 s", "1 h 0 min",
                                                                            "3 d 2 h"]


# -- item 5: validation warnings reach Ansible (warnings) and stay in routing_plan's result (advice) --------
WARNING = ("deployment contoso-emea: emergency_dial_strings: is empty: nothing keeps emergency calls off the ACG "
           "trunks (got []; expected your network's emergency numbers, e.g. ['112', '999']) [R-25]")


def test_routing_plan_shows_and_keeps_validation_warnings() -> None:
    failed, result = _plan(emergency_dial_strings=[])
    assert not failed
    assert result["warnings"] == [WARNING] and result["advice"] == [WARNING]
    failed, result = _plan()
    assert not failed and result["warnings"] == [] and result["advice"] == []


def test_routing_plan_shows_validation_warnings_when_it_refuses_the_inventory() -> None:
    failed, result = _plan(emergency_dial_strings=[], routing={"invite_timer_ms": 15})
    assert failed and "invite_timer_ms" in result["problems"]
    assert result["warnings"] == [WARNING] and WARNING not in result["problems"]


def test_validate_inventory_shows_validation_warnings() -> None:
    params = {"hosts": _hosts(emergency_dial_strings=[]), "require_sbc_settings": False, "fail_on_warnings": False}
    failed, result = validate_inventory(params)
    assert not failed and result["warnings"] == [WARNING] and result["warnings_found"] == [WARNING]
    failed, result = validate_inventory(dict(params, fail_on_warnings=True))
    # Failing on warnings: they are the problems, not warnings on top.
    assert failed and WARNING in result["problems"] and "warnings" not in result


def test_a_plan_and_its_answers_file_agreeing_use_the_recorded_time(tmp_path: Path) -> None:
    failed, live = _plan(resolved=copy.deepcopy(LIVE))
    source = _write(tmp_path / "answers.json", _document(_ago(7200)))
    for key, plan in live["plans"].items():  # written later than the answers' recorded time
        _write(tmp_path / ("%s.json" % key.replace("/", "__")), plan)
    failed, result = _plan(srv_answers=str(tmp_path))
    assert not failed and {(e["source"], e["recorded_at_from"]) for e in result["recorded_answers"]} \
        == {(source, FROM_FILE)}
