# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Push safety on a real Kamailio (plain-process mode) driven by real ansible-playbook runs.

One SBC on loopback (address block 127.0.212-234.x, this module's own), a real DNS server (Knot via
tests/harness/dns.py) answering the lab SRV record. Scenarios, in order, on the same SBC:
first onboard starts it; a second run changes nothing; check mode shows the peer-list diff and
changes nothing; a changed peer list is reloaded without a restart (same PID); a config that
cannot start is rejected and the running SBC keeps serving.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import signal
import stat
import subprocess
import sys
import time
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402
from tests.harness.sipp import udp_options  # noqa: E402

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio_runtime import (  # noqa: E402
    JsonRpc, RpcEndpoints)

pytestmark = pytest.mark.integration

SRV = "_sip._tls.pstn-region1.acg-lab.commsgw.test"
PEERS = "127.0.212.0/28"
ACG = "127.0.222.1"
CORE = "127.0.232.1"
PLAYBOOK_TIMEOUT_S = 240


def _inventory(tmp: Path, dns_address: str, host: str = "sbc-push", acg: str = ACG, core: str = CORE,
               next_hop: str = "127.0.234.1:5060", peers: str = PEERS,
               extra: t.Optional[t.Mapping[str, t.Any]] = None) -> Path:
    """One plain-process SBC ``host`` in a lab deployment; ``extra``: more group_vars/all.yml
    (tests/integration/test_ansible_runner.py reuses it on addresses of its own)."""
    live = tmp / "live"
    inv = tmp / "inventory"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "hosts.yml").write_text(json.dumps({"all": {"children": {"acg_lab": {"children": {"site_lab": {
        "hosts": {host: {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "commsgw_sbc": {"acg_listen": {"address": acg, "port": 5060},
                            "core_listen": {"address": core, "port": 5060, "transport": "udp"},
                            "core_next_hop": next_hop,
                            "config_dir": str(live / "etc"), "run_dir": str(live / "run"),
                            "shared_memory_mb": 64}}}}}}}}}))
    (inv / "group_vars" / "acg_lab.yml").write_text(json.dumps({"commsgw_deployment": {
        "name": "lab", "type": "lab", "base_domain": "acg-lab.commsgw.test", "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True,
        "acg_transport": "udp",
        "service_regions": [{"name": "region1", "azure_region": "westeurope",
                             "hostname": "pstn-region1.acg-lab.commsgw.test", "ip_ranges": [peers]}],
        "sites": [{"name": "lab", "service_region": "region1"}],
        "routing": {"options_interval_s": 2, "failure_threshold": 2, "recovery_threshold": 1,
                    "invite_timer_ms": 1500}}}))
    (inv / "group_vars" / "site_lab.yml").write_text(json.dumps({"commsgw_site": "lab",
                                                                 "commsgw_sbc_platform": "kamailio"}))
    (inv / "group_vars" / "all.yml").write_text(json.dumps({
        "kamailio_service_manager": "process",
        "kamailio_log_file": str(live / "kamailio.log"),
        "kamailio_work_dir": str(live / "work"),
        "kamailio_refresher": False,  # tests/integration/test_refresher.py covers it
        "commsgw_dns_nameservers": [dns_address],
        "commsgw_onboard_probe": False,  # no ACG peers run here; tests/integration/test_probe_*.py prove the probe
        **(extra or {}),
    }))
    return inv / "hosts.yml"


def _play(args: list[str], inventory: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory)] + args
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True,
                          timeout=PLAYBOOK_TIMEOUT_S, check=False)
    if check and proc.returncode != 0:
        raise AssertionError("ansible-playbook %s failed (%d):\n%s\n%s"
                             % (args, proc.returncode, proc.stdout[-6000:], proc.stderr[-2000:]))
    return proc


def _recap(output: str, host: str) -> dict[str, int]:
    match = re.search(r"^%s\s*:\s*(.*)$" % re.escape(host), output, re.MULTILINE)
    assert match, output[-3000:]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


def _options(src: str, dst: str, port: int = 5060, timeout_s: float = 2.0) -> t.Optional[str]:
    return udp_options(src, dst, port, timeout_s, user="push-test")


class Sbc:
    def __init__(self, tmp: Path, inventory: Path, dns: DnsServer) -> None:
        self.tmp = tmp
        self.inventory = inventory
        self.dns = dns
        self.live = tmp / "live"
        self.etc = self.live / "etc"

    def pid(self) -> int:
        return int((self.live / "run" / "kamailio.pid").read_text().strip())

    def rpc(self) -> JsonRpc:
        run = str(self.live / "run")
        return JsonRpc(RpcEndpoints(run + "/kamailio_rpc.sock", run + "/kamailio_rpc.fifo"), timeout_s=3)

    def dispatcher_uris(self) -> set[str]:
        result = self.rpc().call("dispatcher.list")
        return {dest["DEST"]["URI"] for record in result["RECORDS"] for dest in record["SET"]["TARGETS"]}

    def snapshot(self) -> dict[str, str]:
        return {p.name: p.read_text() for p in self.etc.iterdir() if p.is_file()}

    def stop(self) -> None:
        try:
            pid = self.pid()
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and os.path.exists("/proc/%d" % pid):
            time.sleep(0.1)


def _set_peers(dns: DnsServer, peers: dict[str, str]) -> None:
    dns.set_records(srv={SRV: [(10, 50, 5060, name) for name in sorted(peers)]},
                    a={name: [address] for name, address in peers.items()}, ttl=30)


@pytest.fixture(scope="module")
def sbc(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Sbc]:
    tmp = tmp_path_factory.mktemp("push")
    dns = DnsServer.start_on_free_address(tmp / "dns", first=40)
    _set_peers(dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p2.acg-lab.commsgw.test": "127.0.212.2"})
    box = Sbc(tmp, _inventory(tmp, dns.nameservers[0]), dns)
    try:
        yield box
    finally:
        box.stop()
        dns.stop()


def test_first_onboard_starts_the_sbc(sbc: Sbc) -> None:
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert _recap(out, "sbc-push")["changed"] >= 2, out[-3000:]
    assert os.path.exists("/proc/%d" % sbc.pid())
    # Serves: an ACG address inside the /28 gets an answer, one outside is refused.
    assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"
    assert _options("127.0.99.9", ACG) == "SIP/2.0 403 Forbidden"
    assert sbc.dispatcher_uris() == {"sip:127.0.212.1:5060;transport=udp", "sip:127.0.212.2:5060;transport=udp"}


def test_kamailio_runs_as_kamailio_and_files_are_not_world_readable(sbc: Sbc) -> None:
    kamailio = pwd.getpwnam("kamailio")
    with open("/proc/%d/status" % sbc.pid(), encoding="ascii") as handle:
        uids = re.search(r"^Uid:\s+(\d+)\s+(\d+)", handle.read(), re.MULTILINE)
    assert uids and (int(uids.group(1)), int(uids.group(2))) == (kamailio.pw_uid, kamailio.pw_uid)
    for name in ("kamailio.cfg", "dispatcher.list", "address.list", "commsgw-srv.json"):
        info = (sbc.etc / name).stat()
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, kamailio.pw_gid, 0o640), name


def test_second_run_changes_nothing(sbc: Sbc) -> None:
    pid = sbc.pid()
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert _recap(out, "sbc-push")["changed"] == 0, out[-3000:]
    assert sbc.pid() == pid


def test_check_mode_shows_the_diff_and_changes_nothing(sbc: Sbc) -> None:
    pid = sbc.pid()
    before = sbc.snapshot()
    _set_peers(sbc.dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p3.acg-lab.commsgw.test": "127.0.212.3"})
    out = _play(["playbooks/onboard.yml", "--check", "--diff"], sbc.inventory).stdout
    assert _recap(out, "sbc-push")["changed"] >= 1
    assert re.search(r"^\+.*sip:127\.0\.212\.3:5060", out, re.MULTILINE), out[-3000:]
    assert re.search(r"^-.*sip:127\.0\.212\.2:5060", out, re.MULTILINE), out[-3000:]
    assert sbc.snapshot() == before
    assert sbc.pid() == pid
    assert "sip:127.0.212.2:5060;transport=udp" in sbc.dispatcher_uris()


def test_changed_peer_list_is_reloaded_without_restart(sbc: Sbc) -> None:
    pid = sbc.pid()
    cfg_before = (sbc.etc / "kamailio.cfg").read_text()
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert "Reload the peer list" in out and _recap(out, "sbc-push")["changed"] >= 2, out[-3000:]
    assert sbc.pid() == pid, "a peer-list change must not restart Kamailio"
    assert (sbc.etc / "kamailio.cfg").read_text() == cfg_before
    assert sbc.dispatcher_uris() == {"sip:127.0.212.1:5060;transport=udp", "sip:127.0.212.3:5060;transport=udp"}
    backups = list((sbc.etc / ".commsgw-backups").iterdir())
    assert any("127.0.212.2" in (b / "dispatcher.list").read_text() for b in backups if (b / "dispatcher.list").exists())


def test_config_that_cannot_start_is_rejected_and_sbc_keeps_serving(sbc: Sbc) -> None:
    pid = sbc.pid()
    before = sbc.snapshot()
    files = {name: before[name] for name in ("kamailio.cfg", "dispatcher.list", "address.list")}
    # Passes the parser's first look but fails at start: a function of a module that is not loaded.
    files["kamailio.cfg"] += '\nroute[COMMSGW_BROKEN] {\n    sl_send_reply("200", "never");\n    ds_no_such();\n}\n'
    playbook = sbc.tmp / "push.yml"
    playbook.write_text(json.dumps([{"name": "Push", "hosts": "all", "gather_facts": False, "tasks": [{
        "name": "Push files", "ansible.builtin.include_role": {"name": "commsgw.routing.kamailio"},
        "vars": {"kamailio_files": files}}]}]))
    proc = _play([str(playbook)], sbc.inventory, check=False)
    assert proc.returncode != 0
    assert "did not start" in proc.stdout, proc.stdout[-3000:]
    assert sbc.snapshot() == before
    assert sbc.pid() == pid
    assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"
