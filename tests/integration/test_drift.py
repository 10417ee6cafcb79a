# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-back (``commsgw.routing.sbc_state_info``) and playbooks/drift.yml on a real Kamailio (plain-process mode).

One lab SBC on loopback (this module's block: 127.0.70.x peers, 127.0.71.1 ACG side, 127.0.72.x core
side; the ACG address is leased like the harness's DNS addresses), Knot answering the SRV record with
two peers of different weights. Scenarios, in order, on the same SBC: after onboarding the SBC is "in
sync"; a hand edit of a row weight and a removed address row, reloaded over RPC, is named for the files
and for the running SBC; an edit of dispatcher.list without reload is named for the files only, and
``-e commsgw_drift_fail=false`` reports it without failing; a push cut off between its file swap and its
restart is reported as "restart pending" and completed by the next onboard (issue 21).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer, _Lease  # noqa: E402
from tests.harness.lab_inventory import lab_inventory, stop_kamailio  # noqa: E402
from tests.harness.tools import needs  # noqa: E402

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (  # noqa: E402
    JsonRpc, RpcEndpoints)

pytestmark = [pytest.mark.integration, needs("kamailio", "knotd")]

DOMAIN = "acg-drift.commsgw.test"
SRV = "_sip._tls.pstn-region1." + DOMAIN
PEERS = "127.0.70.0/28"
P1, P2 = "127.0.70.1", "127.0.70.2"
ACG = "127.0.71.1"
CORE = "127.0.72.1"
PLAYBOOK_TIMEOUT_S = 240


def _inventory(tmp: Path, dns_address: str) -> Path:
    return lab_inventory(tmp, dns_address, "sbc-drift", DOMAIN, PEERS, ACG, CORE, "127.0.72.9:5060")


class Sbc:
    def __init__(self, tmp: Path, inventory: Path) -> None:
        self.tmp = tmp
        self.inventory = inventory
        self.live = tmp / "live"
        self.etc = self.live / "etc"

    def play(self, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(self.inventory)] + args
        # Results as JSON (one report line per list item), not the configured YAML.
        env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_CALLBACK_RESULT_FORMAT="json")
        proc = subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True,
                              timeout=PLAYBOOK_TIMEOUT_S, check=False)
        (self.tmp / ("play-%d.log" % time.monotonic_ns())).write_text(proc.stdout + proc.stderr)
        if check and proc.returncode != 0:
            raise AssertionError("ansible-playbook %s failed (%d):\n%s\n%s"
                                 % (args, proc.returncode, proc.stdout[-6000:], proc.stderr[-2000:]))
        return proc

    def rpc(self, method: str) -> t.Any:
        run = str(self.live / "run")
        return JsonRpc(RpcEndpoints(run + "/kamailio_rpc.sock", run + "/kamailio_rpc.fifo"), timeout_s=3).call(method)

    def edit(self, name: str, old: str, new: str) -> None:
        path = Path(file_path(str(self.etc), name))
        text = path.read_text()
        assert old in text, text
        path.write_text(text.replace(old, new))

    def pid(self) -> int:
        return int((self.live / "run" / "kamailio.pid").read_text().strip())

    def stop(self) -> None:
        stop_kamailio(self.live / "run" / "kamailio.pid")


def _drift(sbc: Sbc, *extra: str, check: bool = False) -> tuple[int, list[str]]:
    """rc of playbooks/drift.yml and the report lines of the SBC's debug task."""
    proc = sbc.play(["playbooks/drift.yml", *extra], check=check)
    match = re.search(r"TASK \[Report the drift of this SBC\].*?\"msg\": (\[.*?\n\s*\])", proc.stdout, re.DOTALL)
    assert match, proc.stdout[-4000:]
    return proc.returncode, json.loads(match.group(1))


@pytest.fixture(scope="module")
def sbc(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Sbc]:
    tmp = tmp_path_factory.mktemp("drift")
    lease = _Lease(ACG, 5060)  # AddressBusy when another run uses this block
    dns = DnsServer.start_on_free_address(tmp / "dns", first=70)
    # Weights 60 and 20 in one tier: Kamailio keeps rweight 100 and 33 (the same ratio).
    dns.set_records(srv={SRV: [(10, 60, 5060, "p1." + DOMAIN), (10, 20, 5060, "p2." + DOMAIN)]},
                    a={"p1." + DOMAIN: [P1], "p2." + DOMAIN: [P2]}, ttl=30)
    box = Sbc(tmp, _inventory(tmp, dns.nameservers[0]))
    try:
        box.play(["playbooks/onboard.yml"])
        yield box
    finally:
        box.stop()
        dns.stop()
        lease.close()


def test_onboarded_sbc_is_in_sync(sbc: Sbc) -> None:
    rc, lines = _drift(sbc, check=True)
    assert rc == 0 and lines == ["in sync"]


def test_reloaded_hand_edits_are_named_for_files_and_running_sbc(sbc: Sbc) -> None:
    sbc.edit("dispatcher.list", "rweight=33;", "rweight=80;")
    sbc.edit("address.list", "1 127.0.70.0 28 0 ", "# removed by hand: 1 127.0.70.0 28 0 ")
    sbc.rpc("dispatcher.reload")
    sbc.rpc("permissions.addressReload")
    rc, lines = _drift(sbc)
    assert rc != 0, lines
    weight = "region region1 peer %s:5060 weight: 80, plan: 33" % P2
    acl = "ACL does not admit %s: absent, plan: %s" % (PEERS, PEERS)
    for source in ("deployed configuration", "running SBC"):
        assert any(line.startswith("%s: %s (regions.region1.peers[%s:5060].weight <> trunk_groups[0].peers[p2.%s]"
                                   ".weight)" % (source, weight, P2, DOMAIN)) for line in lines), lines
        assert any(line.startswith("%s: %s (acl <> acl.ranges[0])" % (source, acl)) for line in lines), lines
    assert len(lines) == 4, lines


def test_file_edit_without_reload_is_named_for_the_files_only(sbc: Sbc) -> None:
    sbc.play(["playbooks/onboard.yml"])  # puts the plan back (and reloads)
    assert _drift(sbc, check=True)[1] == ["in sync"]
    text = (sbc.etc / "peers" / "dispatcher.list").read_text()
    sbc.edit("dispatcher.list", next(line for line in text.splitlines() if P1 + ":5060" in line) + "\n", "")
    rc, lines = _drift(sbc, "-e", "commsgw_drift_fail=false", check=True)
    assert rc == 0
    assert lines == ["deployed configuration: region region1 peer %s:5060: absent, plan: %s:5060 "
                     "(regions.region1.peers <> trunk_groups[0].peers[p1.%s].addresses)" % (P1, P1, DOMAIN)], lines
    assert _drift(sbc)[0] != 0  # failing is the default


def _cut_off_push(sbc: Sbc) -> subprocess.CompletedProcess[str]:
    """What a push does before its restart - the plan, the render and kamailio_config as the role calls it -
    and no more: the run is cut off there (an SSH connection that dropped)."""
    playbook = sbc.tmp / "cut-off.yml"
    playbook.write_text(json.dumps([
        {"name": "Validate", "ansible.builtin.import_playbook": str(ROOT / "playbooks" / "validate.yml"),
         "vars": {"commsgw_require_sbc_settings": True}},
        {"name": "Plan", "hosts": "localhost", "gather_facts": False,
         "vars": {"commsgw_sbc_hosts": "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) }}"},
         "tasks": [{"name": "Plan", "ansible.builtin.include_tasks": str(ROOT / "playbooks" / "tasks" / "plan.yml"),
                    "vars": {"commsgw_require_sbc_settings": True}}]},
        {"name": "Push, cut off before the restart", "hosts": "all", "gather_facts": False, "tasks": [
            {"name": "Render",
             "ansible.builtin.include_role": {"name": "commsgw.routing.kamailio", "tasks_from": "render",
                                              "public": True},
             "vars": {"commsgw_sbc_plan": "{{ hostvars['localhost'].commsgw_plans.host_plans[inventory_hostname] }}"}},
            {"name": "Install", "commsgw.routing.kamailio_config": {
                "files": "{{ kamailio_files }}", "config_dir": "{{ kamailio_config_dir }}",
                "run_dir": "{{ kamailio_run_dir }}", "binary": "{{ kamailio_command }}",
                "shared_memory_mb": "{{ kamailio_shared_memory_mb | int }}", "mode": "{{ kamailio_file_mode }}",
                "owner": "{{ kamailio_file_owner }}", "group": "{{ kamailio_file_group }}",
                "run_as_user": "{{ kamailio_user }}"}}]}]))
    return sbc.play([str(playbook)])


def _set_log_level(sbc: Sbc, level: t.Optional[int]) -> None:
    hosts = json.loads(sbc.inventory.read_text())
    settings = hosts["all"]["children"]["acg_lab"]["children"]["site_lab"]["hosts"]["sbc-drift"]["commsgw_sbc"]
    if level is None:
        settings.pop("log_level", None)
    else:
        settings["log_level"] = level
    sbc.inventory.write_text(json.dumps(hosts))


def test_a_push_cut_off_before_its_restart_is_reported_and_completed_by_the_next_run(sbc: Sbc) -> None:
    """Issue 21 item 8: the next run saw no file change and never restarted, and drift said "in sync" while
    Kamailio ran the old core configuration."""
    sbc.play(["playbooks/onboard.yml"])
    pid = sbc.pid()
    cfg = (sbc.etc / "kamailio.cfg").read_text()
    _set_log_level(sbc, 3)  # kamailio.cfg's debug level: a change only a restart applies
    try:
        _cut_off_push(sbc)
        assert (sbc.etc / "kamailio.cfg").read_text() != cfg and sbc.pid() == pid
        rc, lines = _drift(sbc, "-e", "commsgw_drift_fail=false", check=True)
        assert any(line.startswith("running SBC: restart pending: kamailio.cfg changed ") for line in lines), lines
        assert _drift(sbc)[0] != 0
        out = sbc.play(["playbooks/onboard.yml"]).stdout
        assert re.search(r"TASK \[commsgw.routing.kamailio : Restart Kamailio because its core configuration changed"
                         r"[^\]]*\] \**\n+changed: \[sbc-drift\]", out), out[-4000:]
        assert sbc.pid() != pid
        assert _drift(sbc, check=True)[1] == ["in sync"]
        restarted = sbc.pid()
        sbc.play(["playbooks/onboard.yml"])
        assert sbc.pid() == restarted  # completed: the run after restarts nothing
    finally:
        _set_log_level(sbc, None)
        sbc.play(["playbooks/onboard.yml"])
