# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 22 item 6: the walking skeleton. A minimal SBC platform of another collection
(tests/platforms/ansible_collections/commsgw_test/skeleton, not shipped), reached only through an HTTP API on
loopback (tests/harness/skeleton_api.py), goes through the collection's own playbooks - onboard.yml (twice:
the second run changes nothing), drift.yml (in sync; a hand edit on the device is named in plan terms),
migrate.yml --check and a real migrate.yml - with no generic file edited for it: the inventory names it
(``commsgw_sbc_platform: commsgw_test.skeleton.skeleton``) and ANSIBLE_COLLECTIONS_PATH finds its collection.

A lab deployment over plain UDP (allow_plain_transport), SIPp UAS peers as ACG and Knot as DNS. This module's
loopback block: 127.0.226.x-127.0.228.x.

  region1 peers        127.0.226.1-2   (/28 127.0.226.0/28)  pstn-region1.<domain>
  region1 new peers    127.0.227.1-2   (/28 127.0.227.0/28)  pstn-region1b.<domain>
  SBC (settings only)  ACG side 127.0.228.1, core side 127.0.228.2, core next hop 127.0.228.9
  the device's API     127.0.228.5 (HTTP, Basic authentication)
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
from tests.harness.sipp import SippPeer  # noqa: E402
from tests.harness.skeleton_api import SkeletonServer  # noqa: E402
from tests.harness.tools import play, recap  # noqa: E402

pytestmark = pytest.mark.integration

HOST = "sbc-skel"

PLATFORM = "commsgw_test.skeleton.skeleton"
SKELETON = ROOT / "tests" / "platforms" / "ansible_collections" / "commsgw_test" / "skeleton"
DOMAIN = "acg-skel.commsgw.test"
HOST_OLD, HOST_NEW = "pstn-region1." + DOMAIN, "pstn-region1b." + DOMAIN
OLD, NEW = "127.0.226", "127.0.227"
PLAYBOOK_TIMEOUT_S = 300


def _deployment(hostname: str, prefix: str) -> dict[str, t.Any]:
    return {"commsgw_deployment": {
        "name": "skel", "type": "lab", "base_domain": DOMAIN, "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True, "acg_transport": "udp",
        "service_regions": [{"name": "region1", "azure_region": "westeurope", "hostname": hostname,
                             "ip_ranges": [prefix + ".0/28"]}],
        "sites": [{"name": "ams", "service_region": "region1"}],
        "routing": {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1, "invite_timer_ms": 1000},
        "emergency_dial_strings": ["112"]}}


class SkeletonLab:
    def __init__(self, tmp: Path, dns: DnsServer, server: SkeletonServer) -> None:
        self.tmp, self.server = tmp, server
        self.inv = tmp / "inventory"
        (self.inv / "group_vars").mkdir(parents=True)
        host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                "commsgw_sbc": {"acg_listen": {"address": "127.0.228.1", "port": 5060},
                                "core_listen": {"address": "127.0.228.2", "port": 5060, "transport": "tcp"},
                                "core_next_hop": "127.0.228.9:5060", "core_allowed_sources": ["127.0.228.0/28"],
                                "api_url": server.url, "api_username": server.device.username},
                "skeleton_api_password": server.device.password}
        (self.inv / "hosts.yml").write_text(json.dumps({"all": {"children": {"acg_skel": {"children": {
            "site_ams": {"hosts": {"sbc-skel": host}}}}}}}))
        (self.inv / "group_vars" / "site_ams.yml").write_text(json.dumps({"commsgw_site": "ams",
                                                                          "commsgw_sbc_platform": PLATFORM}))
        (self.inv / "group_vars" / "all.yml").write_text(json.dumps({
            "commsgw_dns_nameservers": [dns.address], "commsgw_probe_on_controller": True,
            "commsgw_probe_nameservers": [dns.address], "commsgw_probe_timeout": 1.5}))
        self.set_region(HOST_OLD, OLD)

    def set_region(self, hostname: str, prefix: str) -> None:
        (self.inv / "group_vars" / "acg_skel.yml").write_text(json.dumps(_deployment(hostname, prefix)))

    def play(self, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        # The skeleton's collection next to this one: nothing else tells the playbooks about it.
        return play(self.inv / "hosts.yml", args, self.tmp, check=check, collections=[ROOT / "tests" / "platforms"],
                    timeout_s=PLAYBOOK_TIMEOUT_S)

    def config(self) -> dict[str, t.Any]:
        return t.cast(dict, json.loads(self.server.device.content or "null"))

    def writes(self) -> list[tuple[str, str, str]]:
        return [r for r in self.server.device.requests if r[0] != "GET"]


def _records(dns: DnsServer) -> None:
    srv: dict[str, list[tuple[int, int, int, str]]] = {}
    a: dict[str, list[str]] = {"provapi." + DOMAIN: ["127.0.228.8"]}
    for host, prefix, label in ((HOST_OLD, OLD, "r1"), (HOST_NEW, NEW, "r1b")):
        srv["_sip._tls." + host] = []
        for n in (1, 2):
            target = "%s-sip%d.%s" % (label, n, DOMAIN)
            srv["_sip._tls." + host].append((10, 60 - 20 * n, 5060, target))
            a[target] = ["%s.%d" % (prefix, n)]
    dns.set_records(srv=srv, a=a, ttl=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[SkeletonLab]:
    tmp = tmp_path_factory.mktemp("skeleton")
    dns = DnsServer.start_on_free_address(tmp / "dns", first=226)
    _records(dns)
    peers = [SippPeer("peer-%s.%d" % (prefix, n), tmp / "sipp", "%s.%d" % (prefix, n)).start()
             for prefix in (OLD, NEW) for n in (1, 2)]
    try:
        with SkeletonServer("127.0.228.5") as server:
            yield SkeletonLab(tmp, dns, server)
    finally:
        for peer in peers:
            peer.stop()
        dns.stop()


def test_the_skeleton_lives_in_its_own_collection_under_tests() -> None:
    """Nothing of it is in the collection: every file of the platform is under tests/."""
    files = [p for p in SKELETON.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert {"plugins/module_utils/skeleton/platform.py", "roles/skeleton/tasks/main.yml"} <= {
        str(p.relative_to(SKELETON)) for p in files}
    assert all(str(p.relative_to(ROOT)).startswith("tests/") for p in files)
    assert not list((ROOT / "plugins").rglob("*skeleton*")) and not (ROOT / "roles" / "skeleton").exists()


def test_onboard_renders_applies_reads_back_and_probes_through_the_api(lab: SkeletonLab) -> None:
    out = lab.play(["playbooks/onboard.yml", "-e", "commsgw_change_record_dir=%s" % (lab.tmp / "changes")]).stdout
    config = lab.config()
    assert (config["site"], config["type"], config["transport"]) == ("ams", "lab", "udp")
    assert sorted(p["address"] for p in config["regions"]["region1"]["peers"]) == [OLD + ".1", OLD + ".2"]
    assert [w for w in lab.writes() if w[1] == "/config"] == [("PUT", "/config", "ops")]
    # The probe ran on the controller and read the device's own view through its API.
    assert "site skel/ams on sbc-skel: PASS" in out, out[-4000:]
    assert "SBC view (%s, api %s): PASS" % (PLATFORM, lab.server.url) in out, out[-4000:]
    [record] = [json.loads(p.read_text()) for p in (lab.tmp / "changes").glob("*.json")]
    entry = record["sbcs"]["sbc-skel"]
    assert (record["result"], entry["service_action"], entry["pid_before"]) == ("ok", "apply", None), record
    assert entry["files"][0]["name"] == "config.json" and entry["steps"][0]["backup"] == "revision 0"
    again = lab.play(["playbooks/onboard.yml"]).stdout
    assert recap(again, HOST)["changed"] == 0, again[-4000:]
    assert [w for w in lab.writes() if w[1] == "/config"] == [("PUT", "/config", "ops")]  # the second run wrote nothing


def test_drift_is_in_sync_then_names_a_hand_edit_on_the_device_in_plan_terms(lab: SkeletonLab) -> None:
    assert "in sync" in lab.play(["playbooks/drift.yml"]).stdout

    def drop_peer(document: dict[str, t.Any]) -> None:
        document["regions"]["region1"]["peers"] = [p for p in document["regions"]["region1"]["peers"]
                                                   if p["address"] != OLD + ".2"]
    lab.server.device.edit(drop_peer)
    proc = lab.play(["playbooks/drift.yml"], check=False)
    assert proc.returncode != 0, proc.stdout[-4000:]
    out = " ".join(proc.stdout.split())  # the YAML callback wraps long lines
    for source in ("deployed configuration", "running SBC"):
        assert "%s: region region1 peer %s.2:5060: absent, plan: %s.2:5060 (regions.region1.peers <> " \
               "trunk_groups[0].peers[r1-sip2.%s].addresses)" % (source, OLD, OLD, DOMAIN) in out, out[-4000:]
    lab.play(["playbooks/onboard.yml", "-e", "commsgw_onboard_probe=false"])  # puts the plan back
    assert "in sync" in lab.play(["playbooks/drift.yml"]).stdout


def test_migrate_check_shows_the_difference_and_changes_nothing(lab: SkeletonLab) -> None:
    before, writes = lab.server.device.content, list(lab.writes())
    lab.set_region(HOST_NEW, NEW)
    try:
        out = lab.play(["playbooks/migrate.yml", "--check"]).stdout
    finally:
        lab.set_region(HOST_OLD, OLD)
    assert "sbc-skel: region region1 hostname %s -> %s" % (HOST_OLD, HOST_NEW) in out, out[-6000:]
    assert "sbc-skel: ACL admits %s.0/28" % NEW in out and "sbc-skel: ACL no longer admits %s.0/28" % OLD in out
    assert "sbc-skel: region region1 SRV target gained: r1b-sip1.%s (%s.1:5060)" % (DOMAIN, NEW) in out
    assert "%s/config (config.json) (deployed)" % lab.server.url in out  # the textual diff of the artefact
    assert lab.server.device.content == before and lab.writes() == writes


def test_migrate_widens_proves_and_narrows_through_the_platform_role(lab: SkeletonLab) -> None:
    """The choreography written once (playbooks/tasks/migrate_sbc.yml) over the skeleton's entry points: hold (the
    device's lock), widen, settle (its live peer states), the probe gate, narrow, settle, gate, release."""
    lab.set_region(HOST_NEW, NEW)
    try:
        out = lab.play(["playbooks/migrate.yml", "-e", "commsgw_change_record_dir=%s" % (lab.tmp / "migrated")]).stdout
    finally:
        lab.set_region(HOST_OLD, OLD)
    assert "TASK [Widen - push the in-flight configuration]" in out, out[-6000:]
    config = lab.config()
    assert sorted(p["address"] for p in config["regions"]["region1"]["peers"]) == [NEW + ".1", NEW + ".2"]
    assert [e["network"] for e in config["acl"]] == [NEW + ".0/28"]
    # Widened (old + new), then narrowed: two writes under the device's lock, given back at the end.
    puts = [w for w in lab.writes() if w[1] in ("/config", "/lock")][-4:]
    assert puts == [("POST", "/lock", "ops"), ("PUT", "/config", "ops"), ("PUT", "/config", "ops"),
                    ("DELETE", "/lock", "ops")], puts
    assert lab.server.device.lock is None
    [record] = [json.loads(p.read_text()) for p in (lab.tmp / "migrated").glob("*.json")]
    entry = record["sbcs"]["sbc-skel"]
    assert record["result"] == "ok" and [g["step"] for g in entry["probe"]["gates"]] == ["widened", "narrowed"]
    lab.play(["playbooks/onboard.yml", "-e", "commsgw_onboard_probe=false"])  # back to the old region
