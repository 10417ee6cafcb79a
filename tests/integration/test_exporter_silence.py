# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""migrate.yml's Alertmanager silence (playbooks/tasks/alertmanager_silence.yml) against a real Alertmanager
(Debian's prometheus-alertmanager): created with the run's deployments, warning alerts only and an end, then
expired; migrate.yml creates it before the rollout and expires it at the end and when an SBC fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
import yaml

from harness.prometheus import Alertmanager
from harness.tools import needs

pytestmark = [pytest.mark.integration, needs("prometheus-alertmanager")]

REPO = Path(__file__).resolve().parents[2]


PLANS = {"host_plans": {"sbc-a": {"deployment": {"name": "demo.1"}}, "sbc-b": {"deployment": {"name": "other"}}}}


def _silence_task(state: str) -> dict[str, t.Any]:
    return {"name": "Silence %s" % state,
            "ansible.builtin.include_tasks": str(REPO / "playbooks/tasks/alertmanager_silence.yml"),
            "vars": {"commsgw_alertmanager_silence_state": state}}


def _play(tmp_path: Path, tasks: list[dict[str, t.Any]], variables: dict[str, t.Any]) -> subprocess.CompletedProcess[str]:
    """A playbook on localhost whose routing plans are a fact, as migrate.yml's plan play leaves them."""
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump([{"name": "Silence", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "The run's plans", "ansible.builtin.set_fact": {"commsgw_plans": PLANS}}] + tasks}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(playbook),
                           "-e", json.dumps(variables)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_silence_created_for_the_deployments_then_expired(tmp_path: Path) -> None:
    with Alertmanager(tmp_path / "am") as am:
        # One run creates and expires it (the id travels in localhost's facts, as in migrate.yml).
        look = {"name": "Look", "ansible.builtin.uri": {"url": am.url + "/api/v2/silences"}, "register": "seen"}
        keep = {"name": "Keep", "ansible.builtin.copy": {
            "content": "{{ seen.json | to_json }}", "dest": str(tmp_path / "during.json"), "mode": "0600"}}
        proc = _play(tmp_path, [_silence_task("present"), look, keep, _silence_task("absent")],
                     {"commsgw_alertmanager_url": am.url + "/", "commsgw_alertmanager_silence_duration_s": 3600})
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        during = json.loads((tmp_path / "during.json").read_text())
        assert len(during) == 1 and during[0]["status"]["state"] == "active", during
        silence = during[0]
        matchers = {m["name"]: (m["value"], m["isRegex"]) for m in silence["matchers"]}
        assert matchers == {"deployment": ("demo\\.1|other", True), "alertname": ("Commsgw.*", True),
                            "severity": ("warning", False)}
        assert silence["createdBy"] == "commsgw.routing migrate.yml"
        assert "planned region migration of demo.1, other" in silence["comment"]
        after = am.silences()
        assert [s["status"]["state"] for s in after] == ["expired"], after


def test_nothing_to_expire_without_a_silence(tmp_path: Path) -> None:
    with Alertmanager(tmp_path / "am") as am:
        proc = _play(tmp_path, [_silence_task("absent")], {"commsgw_alertmanager_url": am.url})
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert am.silences() == []


def test_migrate_yml_silences_around_the_rollout() -> None:
    plays = yaml.safe_load((REPO / "playbooks" / "migrate.yml").read_text())
    names = [play["name"] for play in plays]
    silence = names.index("Silence the deployment's warnings in Alertmanager for the run (with -e "
                          "commsgw_alertmanager_url=URL)")
    rollout = names.index("Show the difference and migrate, one SBC at a time")
    assert silence < rollout
    rescue = plays[rollout]["tasks"][0]["rescue"]
    expire = [task for task in rescue if task["name"] == "Expire the Alertmanager silence"]
    assert expire and rescue.index(expire[0]) < len(rescue) - 1  # before the play stops
    final = plays[-1]["tasks"]
    assert final[-1]["name"] == "Expire the Alertmanager silence"
    check = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "--syntax-check",
                            "playbooks/migrate.yml", "-i", "inventory/demo"], cwd=REPO, capture_output=True,
                           text=True, timeout=120, check=False,
                           env=dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg")))
    assert check.returncode == 0, check.stdout + check.stderr
