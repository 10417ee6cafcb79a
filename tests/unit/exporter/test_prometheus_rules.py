# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Prometheus rules shipped in files/prometheus: promtool accepts them and their unit tests pass (the same
commands as scripts/test's promtool stage), every alert has a case where it fires and one where it does not,
every metric a rule names is one the exporter produces, and docs/monitoring.md lists every alert."""

from __future__ import annotations

import re
import subprocess
import typing as t
from pathlib import Path

import pytest
import yaml

from ansible_collections.commsgw.routing.plugins.module_utils.exporter import metrics, selfmetrics
from harness.tools import needs

REPO = Path(__file__).resolve().parents[3]
RULES = REPO / "files" / "prometheus" / "commsgw-rules.yml"
TESTS = sorted((REPO / "files" / "prometheus" / "tests").glob("*.test.yml"))


def _rules() -> list[dict[str, t.Any]]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def _alerts() -> list[str]:
    return [rule["alert"] for rule in _rules() if "alert" in rule]


@needs("promtool")
def test_promtool_checks_and_tests_the_rules() -> None:
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60,
                           check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    run = subprocess.run(["promtool", "test", "rules", *[p.name for p in TESTS]], cwd=TESTS[0].parent,
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    firing: set[str] = set()
    quiet: set[str] = set()
    for path in TESTS:
        for case in yaml.safe_load(path.read_text())["tests"]:
            for check in case.get("alert_rule_test") or []:
                (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    alerts = set(_alerts())
    assert alerts - firing == set(), "alerts never tested firing: %s" % sorted(alerts - firing)
    assert alerts - quiet == set(), "alerts never tested quiet: %s" % sorted(alerts - quiet)
    assert firing | quiet <= alerts, "tests name alerts that do not exist: %s" % sorted((firing | quiet) - alerts)


def test_rules_name_only_metrics_the_exporter_produces() -> None:
    known = set(metrics.FAMILIES) | set(selfmetrics.FAMILIES) | {"up"}
    recorded = {rule["record"] for rule in _rules() if "record" in rule}
    named = set()
    for rule in _rules():
        named |= set(re.findall(r"\b((?:commsgw|probe|process)_[a-z_]+|up)\b(?=\s*[{\[)=<>!]|\s*$|\s+(?:and|or)\b)",
                                rule["expr"]))
    assert named - known - recorded == set()
    assert {"commsgw_region_healthy_peers", "commsgw_sbc_peer_state", "commsgw_peer_options_up"} <= named


@pytest.mark.parametrize("alert", _alerts())
def test_docs_list_every_alert(alert: str) -> None:
    assert "`%s`" % alert in (REPO / "docs" / "monitoring.md").read_text()
