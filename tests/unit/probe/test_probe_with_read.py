# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 25 item 2 (docs/rerun.md): the probe a platform's read ran stands for the probe task only for the very same
options, a passing verdict and no report file; anything else probes live. The real round trip is shown in
tests/integration/test_production_hosts.py."""

from __future__ import annotations

import typing as t

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.commsgw.routing.plugins.module_utils.probe.module import (
    ARGUMENT_SPEC, PROBED_WITH_READ, options_digest, probe_with_read, reusable_read_result)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import Run

PLAN = {"site": "amsterdam", "deployment": "lab", "trunk_groups": []}
OPTIONS = {"plan": PLAN, "host": "sbc-ams-1", "nameservers": ["192.0.2.53"], "timeout": 2,
           "client_cert": "/etc/kamailio/tls/sbc.pem", "platform": "none", "thresholds": {}}


def _validated(args: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    validation = ArgumentSpecValidator(ARGUMENT_SPEC).validate(dict(args))
    assert not validation.error_messages, validation.error_messages
    return validation.validated_parameters


def _read_result(**changes: t.Any) -> dict[str, t.Any]:
    """What the read returns for OPTIONS (the probe's outcome, not run here)."""
    result = {"changed": False, "failed": False, "verdict": "pass", "summary": ["site lab/amsterdam: PASS"],
              "report": {"verdict": "pass"}, "msg": "probe of site lab/amsterdam: pass", "probed_with_read": False,
              "options_digest": options_digest(_validated(OPTIONS))}
    result.update(changes)
    return result


def test_the_same_options_return_the_reads_result_marked_as_such() -> None:
    reused = reusable_read_result(_validated(dict(OPTIONS, result_from_read=_read_result(), fail_on_verdict=False)))
    assert reused is not None
    assert reused["verdict"] == "pass" and reused["report"] == {"verdict": "pass"} and reused["probed_with_read"]
    assert reused["summary"][-1].strip() == PROBED_WITH_READ and not reused["failed"] and not reused["changed"]


def test_the_task_passes_options_with_omit_where_the_read_had_null() -> None:
    """probe.yml omits an unset option where the read's request (playbooks/vars/probe.yml) has null."""
    with_nulls = dict(OPTIONS, source_address=None, sbc_settle_timeout=None, dns_port=None)
    assert options_digest(_validated({k: v for k, v in with_nulls.items() if v is not None})) == \
        _read_result()["options_digest"]


@pytest.mark.parametrize("change", [
    {"timeout": 3}, {"host": "sbc-ams-2"}, {"nameservers": ["192.0.2.54"]}, {"client_cert": "/other.pem"},
    {"thresholds": {"max_rtt_ms": 50}}, {"plan": dict(PLAN, site="dublin")}, {"platform": "kamailio"}],
    ids=lambda change: next(iter(change)))
def test_other_options_probe_live(change: dict[str, t.Any]) -> None:
    assert reusable_read_result(_validated(dict(OPTIONS, result_from_read=_read_result(), **change))) is None


@pytest.mark.parametrize("earlier", [
    {"verdict": "fail"}, {"failed": True}, {"verdict": None}, {"options_digest": None}, {"options_digest": "0" * 64}],
    ids=["verdict-fail", "failed", "no-verdict", "no-digest", "other-digest"])
def test_a_failing_or_foreign_result_probes_live(earlier: dict[str, t.Any]) -> None:
    assert reusable_read_result(_validated(dict(OPTIONS, result_from_read=_read_result(**earlier)))) is None


@pytest.mark.parametrize("report", ["report_json", "report_junit"])
def test_a_report_file_probes_live(report: str) -> None:
    args = dict(OPTIONS, result_from_read=_read_result(), **{report: "/tmp/report"})
    assert reusable_read_result(_validated(args)) is None


def test_where_a_report_goes_is_not_what_is_probed() -> None:
    assert options_digest(_validated(dict(OPTIONS, fail_on_verdict=False))) == options_digest(_validated(OPTIONS))


def test_the_read_probes_nothing_with_options_that_are_not_the_probes() -> None:
    assert probe_with_read(dict(OPTIONS, timeout="soon"), Run()) is None
    assert probe_with_read({"host": "sbc-ams-1"}, Run()) is None  # no plan


def test_a_probe_that_raises_never_fails_the_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.commsgw.routing.plugins.module_utils.probe import module  # pylint: disable=import-outside-toplevel

    def broken(params: t.Any, run: t.Any) -> t.NoReturn:
        raise RuntimeError("a bug in the probe")

    monkeypatch.setattr(module, "outcome", broken)
    assert probe_with_read(OPTIONS, Run()) is None
