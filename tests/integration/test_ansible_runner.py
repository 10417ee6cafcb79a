# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""onboard.yml and probe.yml through ansible-runner, the engine AWX / AAP run jobs with (issue 11
item 2), each with a private data dir whose artifacts are what AWX reads: rc, status and the job
events.

The lab is the cheapest live one: a real Kamailio in plain-process mode (as in test_push.py),
Knot answering the lab SRV record with one peer, and SIPp on that peer answering OPTIONS (plain UDP
transport, as the lab deployment allows), so both the SBC's pings and the probe get their 200.
Address block 127.0.235-238.x is this module's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402
from tests.harness.tools import needs  # noqa: E402
from tests.harness.lab_inventory import lab_inventory, stop_kamailio  # noqa: E402

pytestmark = [pytest.mark.integration, needs("kamailio", "sipp", "knotd")]

ansible_runner = pytest.importorskip("ansible_runner")

SRV = "_sip._tls.pstn-region1.acg-lab.commsgw.test"
PEER, PEER_NAME = "127.0.237.1", "p1.acg-lab.commsgw.test"
ACG, CORE = "127.0.235.1", "127.0.236.1"
DOMAIN = "acg-lab.commsgw.test"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("runner")
    dns = DnsServer.start_on_free_address(tmp / "dns", first=60)
    sipp = None
    try:
        dns.set_records(srv={SRV: [(10, 50, 5060, PEER_NAME)]}, a={PEER_NAME: [PEER]}, ttl=30)
        sipp = subprocess.Popen(
            ["sipp", "-sf", str(ROOT / "tests/harness/sipp/probe_options_200.xml"), "-i", PEER, "-p", "5060",
             "-t", "u1", "-nostdin", "-timeout", "600"],
            cwd=str(tmp), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        inventory = lab_inventory(tmp, dns.address, "sbc-runner", DOMAIN, "127.0.237.0/28", ACG, CORE,
                                  "127.0.238.1:5060",
                                  extra={"commsgw_probe_on_controller": True, "commsgw_onboard_probe": True})
        yield {"tmp": tmp, "inventory": inventory}
    finally:
        stop_kamailio(tmp / "live" / "run" / "kamailio.pid")
        if sipp is not None:
            sipp.terminate()
            sipp.wait(5)
        dns.stop()


def _run(lab: dict[str, Path], playbook: str) -> tuple[Path, list[dict[str, t.Any]]]:
    """One job in a private data dir of its own; returns its artifact dir and job events."""
    private = lab["tmp"] / ("pdd-" + playbook.split(".")[0])
    private.mkdir()
    env = {"PATH": "%s:%s" % (Path(sys.executable).parent, os.environ.get("PATH", "")),
           "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")}
    runner = ansible_runner.run(private_data_dir=str(private), project_dir=str(ROOT),
                                playbook="playbooks/" + playbook, inventory=str(lab["inventory"]),
                                envvars=env, ident="job", quiet=True, timeout=300)
    artifacts = private / "artifacts" / "job"
    events = [json.loads(p.read_text()) for p in sorted((artifacts / "job_events").glob("*.json"),
                                                        key=lambda p: int(p.name.split("-")[0]))]
    assert runner.rc == 0, (artifacts / "stdout").read_text()[-6000:]
    return artifacts, events


def _task_names(events: list[dict[str, t.Any]], kind: str) -> list[str]:
    return [e["event_data"].get("task", "") for e in events if e["event"] == kind]


def _check_job(artifacts: Path, events: list[dict[str, t.Any]]) -> None:
    assert (artifacts / "rc").read_text().strip() == "0"
    assert (artifacts / "status").read_text().strip() == "successful"
    assert not [e for e in events if e["event"] in ("runner_on_failed", "runner_on_unreachable")], \
        _task_names(events, "runner_on_failed")
    stats = [e for e in events if e["event"] == "playbook_on_stats"]
    assert len(stats) == 1 and not stats[0]["event_data"]["failures"], stats


def test_onboard_then_probe_through_ansible_runner(lab: dict[str, Path]) -> None:
    artifacts, events = _run(lab, "onboard.yml")
    _check_job(artifacts, events)
    ok = _task_names(events, "runner_on_ok")
    for task in ("Build the routing plans", "Probe DNS, SIP peers, MCP and the SBC's own view"):
        assert task in ok, sorted(set(ok))
    assert (lab["tmp"] / "live" / "etc" / "kamailio.cfg").is_file()

    artifacts, events = _run(lab, "probe.yml")
    _check_job(artifacts, events)
    probe = [e for e in events if e["event"] == "runner_on_ok"
             and e["event_data"]["task"] == "Probe DNS, SIP peers, MCP and the SBC's own view"]
    assert len(probe) == 1, sorted(set(_task_names(events, "runner_on_ok")))
    result = probe[0]["event_data"]["res"]
    assert result["verdict"] in ("pass", "warn"), result.get("summary")
    assert PEER in json.dumps(result["report"])
