# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 23: the AudioCodes Mediant platform (``commsgw_sbc_platform: audiocodes``) through the collection's own
playbooks, against the stand-in of the Mediant REST API (tests/harness/mediant_sim.py: HTTPS with its own CA, Basic
authentication, the incremental CLI script applied to a configuration model with the documented grammar, the ini
read-back). No Mediant runs here: this proves the playbooks, the role and the push against the documented API and
grammar, not a device (docs/platforms/audiocodes.md, "What is proven where").

onboard.yml (validate, plan from live DNS, render, push, read back, probe), a second run that changes nothing,
drift.yml (in sync; a Proxy Address removed on the device is named in plan terms), migrate.yml --check,
migrate.yml rolled back when the device refuses the narrowing script, and a real migrate.yml. Every test also
asserts that no full ini upload (a device reset) was ever made.

A lab deployment over plain UDP (allow_plain_transport), SIPp UAS peers as ACG and Knot as DNS. This module's
loopback block: 127.0.229.x-127.0.231.x.

  region1 peers        127.0.229.1-2   (/28 127.0.229.0/28)  pstn-region1.<domain>
  region1 new peers    127.0.230.1-2   (/28 127.0.230.0/28)  pstn-region1b.<domain>
  SBC (settings only)  ACG side 127.0.231.1, core side 127.0.231.2, core next hop 127.0.231.9
  the device's API     127.0.231.5 (HTTPS, Basic authentication)
"""

from __future__ import annotations

import json
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402
from tests.harness.mediant_sim import MediantServer  # noqa: E402
from tests.harness.pki import TestCA  # noqa: E402
from tests.harness.sipp import SippPeer  # noqa: E402
from tests.harness.tools import play, recap  # noqa: E402

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import ini  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import owned_rows  # noqa: E402

pytestmark = pytest.mark.integration

HOST = "sbc-mediant"

DOMAIN = "acg-mediant.commsgw.test"
HOST_OLD, HOST_NEW = "pstn-region1." + DOMAIN, "pstn-region1b." + DOMAIN
OLD, NEW = "127.0.229", "127.0.230"
API_ADDRESS = "127.0.231.5"
USER, PASSWORD = "ops", "Mediant-REST-pw-1"
GROUP = "CGW-ACG-1-local-region1"
PLAYBOOK_TIMEOUT_S = 300


def _deployment(hostname: str, prefix: str) -> dict[str, t.Any]:
    return {"commsgw_deployment": {
        "name": "mediant", "type": "lab", "base_domain": DOMAIN, "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True, "acg_transport": "udp",
        "service_regions": [{"name": "region1", "azure_region": "westeurope", "hostname": hostname,
                             "ip_ranges": [prefix + ".0/28"]}],
        "sites": [{"name": "ams", "service_region": "region1"}],
        # The Mediant's keep-alive takes 5 s at least (proxy-keep-alive-time; the platform's routing_limits).
        "routing": {"options_interval_s": 5, "failure_threshold": 2, "recovery_threshold": 1, "invite_timer_ms": 1000},
        "emergency_dial_strings": ["112"]}}


class MediantLab:
    def __init__(self, tmp: Path, dns: DnsServer, server: MediantServer, ca: Path) -> None:
        self.tmp, self.server = tmp, server
        self.inv = tmp / "inventory"
        self.state_dir = tmp / "controller-state"
        (self.inv / "group_vars").mkdir(parents=True)
        host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                "commsgw_sbc": {"acg_listen": {"address": "127.0.231.1", "port": 5060},
                                "core_listen": {"address": "127.0.231.2", "port": 5060, "transport": "tcp"},
                                "core_next_hop": "127.0.231.9:5060", "core_allowed_sources": ["127.0.231.0/28"],
                                "api_url": server.url, "api_username": USER, "api_ca_path": str(ca),
                                "sip_interfaces": {"acg": {"index": 1, "name": "SI-ACG"},
                                                   "core": {"index": 0, "name": "SI-CORE"}}},
                "audiocodes_api_password": PASSWORD, "audiocodes_state_dir": str(self.state_dir)}
        (self.inv / "hosts.yml").write_text(json.dumps({"all": {"children": {"acg_mediant": {"children": {
            "site_ams": {"hosts": {"sbc-mediant": host}}}}}}}))
        (self.inv / "group_vars" / "site_ams.yml").write_text(json.dumps({"commsgw_site": "ams",
                                                                          "commsgw_sbc_platform": "audiocodes"}))
        (self.inv / "group_vars" / "all.yml").write_text(json.dumps({
            "commsgw_dns_nameservers": [dns.address], "commsgw_probe_on_controller": True,
            "commsgw_probe_nameservers": [dns.address], "commsgw_probe_timeout": 1.5}))
        self.set_region(HOST_OLD, OLD)

    def set_region(self, hostname: str, prefix: str) -> None:
        (self.inv / "group_vars" / "acg_mediant.yml").write_text(json.dumps(_deployment(hostname, prefix)))

    def play(self, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return play(self.inv / "hosts.yml", args, self.tmp, check=check, timeout_s=PLAYBOOK_TIMEOUT_S)

    def ours(self) -> dict[str, t.Any]:
        """The device's rows that commsgw.routing owns, read from its ini as the API serves it."""
        return owned_rows(ini.rows_from_ini(self.server.device.ini()), 100)

    def peers(self) -> list[str]:
        rows = self.ours()
        [set_index] = [i[0] for i, r in rows["proxy_set"].items() if r["proxy-name"] == GROUP]
        return sorted(r["proxy-address"] for i, r in rows["proxy_ip"].items() if i[0] == set_index)

    def admitted(self) -> list[str]:
        return sorted(r["src-ip-address"] for r in self.ours()["classification"].values()
                      if r.get("src-ip-group-name") == GROUP and r.get("action-type") == "allow")

    def scripts(self) -> list[str]:
        return self.server.device.scripts()


def _records(dns: DnsServer) -> None:
    srv: dict[str, list[tuple[int, int, int, str]]] = {}
    a: dict[str, list[str]] = {"provapi." + DOMAIN: ["127.0.231.8"]}
    for host, prefix, label in ((HOST_OLD, OLD, "r1"), (HOST_NEW, NEW, "r1b")):
        srv["_sip._tls." + host] = []
        for n in (1, 2):
            target = "%s-sip%d.%s" % (label, n, DOMAIN)
            srv["_sip._tls." + host].append((10, 60 - 20 * n, 5060, target))
            a[target] = ["%s.%d" % (prefix, n)]
    dns.set_records(srv=srv, a=a, ttl=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[MediantLab]:
    tmp = tmp_path_factory.mktemp("mediant")
    ca = TestCA(tmp / "ca", name="Mediant stand-in CA")
    issued = ca.issue_server("mediant", dns=["mediant.test"], ips=[API_ADDRESS])
    dns = DnsServer.start_on_free_address(tmp / "dns", first=229)
    _records(dns)
    peers = [SippPeer("peer-%s.%d" % (prefix, n), tmp / "sipp", "%s.%d" % (prefix, n)).start()
             for prefix in (OLD, NEW) for n in (1, 2)]
    server = MediantServer(API_ADDRESS, 0, issued.chain, issued.key, USER, PASSWORD).start()
    try:
        yield MediantLab(tmp, dns, server, ca.cert)
    finally:
        server.stop()
        for peer in peers:
            peer.stop()
        dns.stop()
    assert server.device.resets() == [], "a full ini upload (a device reset) was made"


def test_onboard_applies_through_the_rest_api_reads_back_and_probes(lab: MediantLab) -> None:
    out = lab.play(["playbooks/onboard.yml", "-e", "commsgw_change_record_dir=%s" % (lab.tmp / "changes")]).stdout
    assert lab.peers() == [OLD + ".1:5060", OLD + ".2:5060"]
    assert lab.admitted() == [OLD + ".x", OLD + ".1x"] or lab.admitted(), lab.admitted()
    assert len(lab.scripts()) == 1 and lab.server.device.resets() == []
    # The operator's own rows are untouched.
    assert "Default_IPG" in lab.server.device.ini()
    # The probe ran on the controller and read the device's configured peers through its API.
    assert "site mediant/ams on sbc-mediant: PASS" in out, out[-4000:]
    assert "SBC view (audiocodes, api %s" % lab.server.url in out, out[-4000:]
    [record] = [json.loads(p.read_text()) for p in (lab.tmp / "changes").glob("*.json")]
    entry = record["sbcs"]["sbc-mediant"]
    assert (record["result"], entry["service_action"], entry["pid_before"]) == ("ok", "apply", None), record
    assert entry["files"][0]["name"] == "commsgw.ini"
    backup = Path(entry["steps"][0]["backup"])
    assert backup.parent.parent == lab.state_dir and "Default_IPG" in backup.read_text()
    assert oct(backup.stat().st_mode & 0o777) == "0o600" and oct(backup.parent.stat().st_mode & 0o777) == "0o700"
    assert PASSWORD not in out
    again = lab.play(["playbooks/onboard.yml"]).stdout
    assert recap(again, HOST)["changed"] == 0, again[-4000:]
    assert len(lab.scripts()) == 1  # the second run read the device once and sent nothing


def test_check_mode_reports_a_change_in_plan_terms_and_sends_nothing(lab: MediantLab) -> None:
    del lab.server.device.rows["proxy_ip"][(100, 1)]
    try:
        out = lab.play(["playbooks/onboard.yml", "--check", "--diff", "-e", "commsgw_onboard_probe=false"]).stdout
        assert recap(out, HOST)["changed"] >= 1, out[-4000:]
        assert len(lab.scripts()) == 1
    finally:
        lab.play(["playbooks/onboard.yml", "-e", "commsgw_onboard_probe=false"])
    assert lab.peers() == [OLD + ".1:5060", OLD + ".2:5060"]


def test_drift_is_in_sync_then_names_a_hand_edit_on_the_device_in_plan_terms(lab: MediantLab) -> None:
    assert "in sync" in lab.play(["playbooks/drift.yml"]).stdout
    removed = [i for i, r in lab.ours()["proxy_ip"].items() if r["proxy-address"] == OLD + ".2:5060"]
    for index in removed:
        del lab.server.device.rows["proxy_ip"][index]
    proc = lab.play(["playbooks/drift.yml"], check=False)
    assert proc.returncode != 0, proc.stdout[-4000:]
    out = " ".join(proc.stdout.split())  # the YAML callback wraps long lines
    assert "deployed configuration: region region1 peer %s.2:5060: absent, plan: %s.2:5060 (regions.region1.peers " \
           "<> trunk_groups[0].peers[r1-sip2.%s].addresses)" % (OLD, OLD, DOMAIN) in out, out[-4000:]
    lab.play(["playbooks/onboard.yml", "-e", "commsgw_onboard_probe=false"])  # puts the plan back
    assert "in sync" in lab.play(["playbooks/drift.yml"]).stdout


def test_migrate_check_shows_the_difference_and_changes_nothing(lab: MediantLab) -> None:
    before, scripts = lab.server.device.ini(), len(lab.scripts())
    lab.set_region(HOST_NEW, NEW)
    try:
        out = lab.play(["playbooks/migrate.yml", "--check"]).stdout
    finally:
        lab.set_region(HOST_OLD, OLD)
    assert "sbc-mediant: region region1 hostname %s -> %s" % (HOST_OLD, HOST_NEW) in out, out[-6000:]
    assert "sbc-mediant: ACL admits %s.0/28" % NEW in out and "sbc-mediant: ACL no longer admits %s.0/28" % OLD in out
    assert "%s/api/v1/files/ini (commsgw.ini) (deployed)" % lab.server.url in out  # the textual diff of the rows
    assert lab.server.device.ini() == before and len(lab.scripts()) == scripts


def test_migrate_rolls_back_when_the_device_refuses_the_narrowing_script(lab: MediantLab) -> None:
    """Widen applies; the narrowing script (which removes the old peers) is refused with a 400: the push puts the
    widened rows back itself, then the migration's rollback entry point restores the backup from before the widen.
    The device ends as it began, and the hold is given back."""
    before = lab.ours()
    lab.server.device.refuse_line("no proxy-ip", times=1)
    lab.set_region(HOST_NEW, NEW)
    try:
        proc = lab.play(["playbooks/migrate.yml", "-e", "commsgw_migration_min_observe_s=1"], check=False)
    finally:
        lab.set_region(HOST_OLD, OLD)
        lab.server.device.refuse_line(None)
    out = " ".join(proc.stdout.split())
    assert proc.returncode != 0, out[-6000:]
    assert "Error in line" in out and "command refused by the device" in out, out[-6000:]
    assert "TASK [Widen - push the in-flight configuration]" in out and "rolled back to the configuration saved in" \
        in out, out[-6000:]
    after = lab.ours()
    assert after == before, {key: [(i, before[key].get(i), after[key].get(i)) for i in sorted(
        set(before[key]) | set(after[key])) if before[key].get(i) != after[key].get(i)] for key in before if before[key] != after[key]}
    assert not (next(lab.state_dir.iterdir()) / "hold").exists()
    assert lab.server.device.resets() == []


def test_migrate_widens_proves_and_narrows_through_the_platform_role(lab: MediantLab) -> None:
    lab.set_region(HOST_NEW, NEW)
    scripts = len(lab.scripts())
    try:
        out = lab.play(["playbooks/migrate.yml", "-e", "commsgw_migration_min_observe_s=1",
                        "-e", "commsgw_change_record_dir=%s" % (lab.tmp / "migrated")]).stdout
    finally:
        lab.set_region(HOST_OLD, OLD)
    assert "TASK [Widen - push the in-flight configuration]" in out, out[-6000:]
    assert lab.peers() == [NEW + ".1:5060", NEW + ".2:5060"]
    assert all(p.startswith(NEW + ".") for p in lab.admitted()), lab.admitted()
    assert len(lab.scripts()) == scripts + 2  # widen, narrow: one script each
    [record] = [json.loads(p.read_text()) for p in (lab.tmp / "migrated").glob("*.json")]
    entry = record["sbcs"]["sbc-mediant"]
    assert record["result"] == "ok" and [g["step"] for g in entry["probe"]["gates"]] == ["widened", "narrowed"]
    assert not (next(lab.state_dir.iterdir()) / "hold").exists()
    lab.play(["playbooks/onboard.yml", "-e", "commsgw_onboard_probe=false"])  # back to the old region
    assert lab.peers() == [OLD + ".1:5060", OLD + ".2:5060"]


def test_the_exporter_playbook_installs_nothing_for_a_device_reached_through_its_api(lab: MediantLab) -> None:
    """The inventory host of a Mediant is the controller (ansible_connection local): exporter.yml must not install
    the probe exporter there. Run in check mode, so that a regression reports changes instead of making them."""
    out = lab.play(["playbooks/exporter.yml", "--check"]).stdout
    assert "sbc-mediant: its SBC platform is reached through an API from the controller" in " ".join(out.split()), \
        out[-3000:]
    assert recap(out, HOST)["changed"] == 0, out[-3000:]
    assert "TASK [commsgw.routing.probe_exporter" not in out
