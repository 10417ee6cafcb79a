# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline render from recorded SRV answers, and validation warnings where Ansible users look
(issue 11 items 4 and 5), through real ansible-playbook runs.

The answers are recorded by plan.yml from a real Knot (the split-horizon fixture of
test_inventory_playbooks); the offline runs point the inventory's nameservers at a silent
nameserver on a leased loopback address, which records whether anything asked it.
"""

from __future__ import annotations

import datetime
import json
import sys
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer, SilentNameserver  # noqa: E402
from tests.integration.test_inventory_playbooks import (  # noqa: E402,F401  # pylint: disable=unused-import
    SRV, _deployment, _inventory, _output, _play, _sbc_settings, _site_groups, knot)

pytestmark = pytest.mark.integration

VERSION = ["-e", "kamailio_version=6.0.1"]
PLAIN_UDP = ("deployment t13: acg_transport: is plain UDP: real ACG accepts TLS only (got 'udp'; expected tls "
             "outside a closed lab) [R-09]")


def _render_inventory(tmp: Path, nameserver: str, sbc_base: t.Optional[Path] = None) -> Path:
    """The inventory in ``tmp``; the SBC's directories under ``sbc_base`` (default ``tmp``)."""
    return _inventory(
        tmp, _site_groups(acg_t13={"commsgw_deployment": _deployment(), "commsgw_dns_nameservers": [nameserver]}),
        {"sbc-t13-1": ["site_lab"]},
        host_vars={"sbc-t13-1": {"commsgw_sbc": _sbc_settings(sbc_base or tmp, "sbc-t13-1")}})


def _render(args: list[str], inventory: Path, render: Path, keep: Path) -> str:
    """render.yml into ``render`` (the files name their own directory), then moved to ``keep``."""
    proc = _play(["playbooks/render.yml", "-e", "commsgw_render_dir=%s" % render] + VERSION + args, inventory)
    out = _output(proc)
    assert proc.returncode == 0, out[-4000:]
    render.rename(keep)
    return out


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture()
def silent() -> t.Iterator[SilentNameserver]:
    server = SilentNameserver.start_on_free_address(first=220)
    try:
        yield server
    finally:
        server.stop()


def test_render_from_recorded_answers_asks_no_dns_and_equals_the_live_render(
        tmp_path: Path, knot: tuple[DnsServer, DnsServer], silent: SilentNameserver) -> None:
    right, dummy = knot
    plans, render = tmp_path / "plans", tmp_path / "render"
    plans.mkdir()
    # Live: the answers recorded by plan.yml, and a render against Knot.
    live_inventory = _render_inventory(tmp_path / "live", right.address, tmp_path)
    proc = _play(["playbooks/plan.yml", "-e", "commsgw_resolve=true", "-e", "commsgw_plan_dir=%s" % plans],
                 live_inventory)
    assert proc.returncode == 0, _output(proc)[-4000:]
    recorded = json.loads((plans / "answers.json").read_text())
    assert recorded["format"] == "commsgw.routing.srv_answers" and list(recorded["answers"]) == [SRV]
    assert recorded["answers"][SRV]["targets"][0]["addresses"] == ["127.0.201.1"]
    _render([], live_inventory, render, tmp_path / "rendered-live")
    expected = _files(tmp_path / "rendered-live")
    assert b"127.0.201.1" in expected["sbc-t13-1/peers/dispatcher.list"]  # where the push puts it

    # Offline: the same inventory, but its nameserver never answers and tells whether it was asked.
    offline_inventory = _render_inventory(tmp_path / "offline", silent.address, tmp_path)
    for source in (plans / "answers.json", plans):
        keep = tmp_path / ("rendered-from-" + source.name)
        out = _render(["-e", "commsgw_srv_answers=%s" % source], offline_inventory, render, keep)
        assert not silent.was_asked(), "the offline render asked DNS"
        assert _files(keep) == expected
        said = " ".join(out.split())  # the callback wraps long lines
        assert "from recorded SRV answers, touching no DNS: %s from %s (answers[%s]), recorded at %s, " \
            % (SRV, plans / "answers.json", SRV, recorded["recorded_at"]) in said, out
        assert " s ago" in said and "[WARNING]: recorded SRV answer" not in said

    # A two-day-old recording still renders, with a warning naming the file and the answer's age.
    recorded["recorded_at"] = (datetime.datetime.now(datetime.timezone.utc)
                               - datetime.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(recorded))
    out = _render(["-e", "commsgw_srv_answers=%s" % old], offline_inventory, render, tmp_path / "rendered-old")
    assert "[WARNING]: recorded SRV answer %s from %s is 2 d 0 h old" % (SRV, old) in " ".join(out.split()), out
    assert _files(tmp_path / "rendered-old") == expected
    assert not silent.was_asked()


def test_a_recording_without_a_needed_record_stops_the_render(tmp_path: Path, silent: SilentNameserver) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"format": "commsgw.routing.srv_answers", "version": 1,
                                   "recorded_at": "2026-01-01T00:00:00Z", "answers": {
                                       "_sip._tls.pstn-region9.example.com": {"ttl": 30, "targets": [
                                           {"priority": 10, "weight": 50, "port": 5060, "target": "p1.example.com",
                                            "addresses": ["127.0.201.1"]}]}}}))
    render = tmp_path / "render"
    proc = _play(["playbooks/render.yml", "-e", "commsgw_render_dir=%s" % render,
                  "-e", "commsgw_srv_answers=%s" % answers] + VERSION, _render_inventory(tmp_path, silent.address))
    out = _output(proc)
    assert proc.returncode != 0
    assert "%s: no recorded SRV answer for %s (needed for commsgw_deployment.service_regions[0].hostname) in %s" \
        % (SRV, SRV, answers) in out, out[-4000:]
    assert not render.exists() and not silent.was_asked()


# -- item 5: validation warnings as Ansible warnings -------------------------------------------------------
PROBE_PLAY = """
- name: One commsgw module, its result saved
  hosts: localhost
  gather_facts: false
  vars:
    commsgw_sbc_hosts: "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) }}"
  tasks:
    - name: The module under test
      %s
      register: commsgw_result
    - name: Save the result
      ansible.builtin.copy:
        content: "{{ commsgw_result | to_json }}"
        dest: "%s"
        mode: "0644"
"""
MODULES = {
    "routing_plan": "commsgw.routing.routing_plan: {hosts: \"{{ commsgw_sbc_hosts }}\"}",
    "validate_inventory": "commsgw.routing.validate_inventory: {hosts: \"{{ commsgw_sbc_hosts }}\"}",
    "srv_audit": "commsgw.routing.srv_audit: {deployment: \"{{ commsgw_deployment_under_test }}\", "
                 "nameservers: [\"{{ commsgw_nameserver }}\"], check_provisioning_ttl: false}",
}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_validation_warnings_are_ansible_warnings(tmp_path: Path, knot: tuple[DnsServer, DnsServer],
                                                  module: str) -> None:
    right, dummy = knot
    inventory = _render_inventory(tmp_path, right.address)
    saved = tmp_path / "result.json"
    play = tmp_path / "play.yml"
    play.write_text(PROBE_PLAY % (MODULES[module], saved))
    proc = _play([str(play), "-e", json.dumps({"commsgw_deployment_under_test": _deployment(),
                                               "commsgw_nameserver": right.address})], inventory)
    out = _output(proc)
    assert proc.returncode == 0, out[-4000:]
    assert "[WARNING]: %s" % PLAIN_UDP in " ".join(out.split()), out[-4000:]
    result = json.loads(saved.read_text())
    if module == "routing_plan":
        assert PLAIN_UDP in result["advice"]
    if module == "validate_inventory":
        assert PLAIN_UDP in result["warnings_found"]


def test_plan_playbook_shows_the_warning_once(tmp_path: Path, knot: tuple[DnsServer, DnsServer]) -> None:
    """validate_inventory-worded warnings from srv_audit and routing_plan: Ansible shows the text once."""
    right, dummy = knot
    proc = _play(["playbooks/plan.yml", "-e", "commsgw_resolve=true"], _render_inventory(tmp_path, right.address))
    out = " ".join(_output(proc).split())
    assert proc.returncode == 0, out[-4000:]
    assert out.count("[WARNING]: %s" % PLAIN_UDP) == 1, out[-4000:]


@pytest.mark.parametrize("playbook", ["onboard.yml", "migrate.yml"])
def test_playbooks_that_push_refuse_recorded_answers(tmp_path: Path, silent: SilentNameserver, playbook: str) -> None:
    proc = _play(["playbooks/%s" % playbook, "-e", "commsgw_srv_answers=%s" % (tmp_path / "answers.json")],
                 _render_inventory(tmp_path, silent.address))
    out = " ".join(_output(proc).split())
    assert proc.returncode != 0
    assert "commsgw_srv_answers: recorded SRV answers are for plan.yml and render.yml (offline reviews); this " \
           "playbook pushes or probes, so it resolves the SRV records live" in out, out[-4000:]
    assert not (tmp_path / "etc").exists() and not silent.was_asked()
