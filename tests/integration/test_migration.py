# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Region migration on real software: playbooks/migrate.yml against two real Kamailio SBCs.

A production-type deployment over plain UDP (allow_plain_transport) with two sites, each with one
SBC (Kamailio 5.6 in plain-process mode), SIPp UAS peers as the ACG regions and Knot as DNS. This
module's loopback block: 127.0.240.x-127.0.247.x.

  region1 peers        127.0.240.1-2   (/28 127.0.240.0/28)
  region2 old peers    127.0.241.1-2   (/28 127.0.241.0/28)  pstn-region2.<domain>
  region2 new peers    127.0.242.1-2   (/28 127.0.242.0/28)  pstn-region2b.<domain>
  region2 dead peers   127.0.243.1-2   (/28 127.0.243.0/28)  nothing listens (rollback scenario)
  SBC ams / fra        ACG side 127.0.244.1 / .2, core side 127.0.245.1 / .2, core next hop 127.0.246.1
  caller (the core)    127.0.246.2

Scenarios, in order, on the same two SBCs: onboard; check mode reports the migration and changes
nothing; a migration onto unreachable peers is rolled back automatically while calls keep flowing;
the real migration of region 2 under steady SIPp traffic loses no call, then calls reach only the
new peers and the ACL admits the new /28 and no longer the old one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402
from tests.harness.sipp import CallResult, SippCaller, SippPeer, udp_options  # noqa: E402
from tests.harness.tools import play  # noqa: E402

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (  # noqa: E402
    JsonRpc, RpcEndpoints)

pytestmark = pytest.mark.integration

DOMAIN = "acg-mig.commsgw.test"
HOST_R1 = "pstn-region1." + DOMAIN
HOST_R2_OLD = "pstn-region2." + DOMAIN
HOST_R2_NEW = "pstn-region2b." + DOMAIN
HOST_R2_DEAD = "pstn-region2c." + DOMAIN
R1, R2_OLD, R2_NEW, R2_DEAD = "127.0.240", "127.0.241", "127.0.242", "127.0.243"
SBCS = {"sbc-ams": {"site": "ams", "acg": "127.0.244.1", "core": "127.0.245.1"},
        "sbc-fra": {"site": "fra", "acg": "127.0.244.2", "core": "127.0.245.2"}}
CORE_NEXT_HOP = "127.0.246.1"
CALLER = "127.0.246.2"
PLAYBOOK_TIMEOUT_S = 300
# Steady traffic: batches of BATCH calls at RATE calls/s while a playbook runs, at most MAX_BATCHES.
RATE = 10
BATCH = 50
MAX_BATCHES = 30


def _routing() -> dict[str, int]:
    return {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1, "invite_timer_ms": 1000}


def _deployment(region2_host: str, region2_prefix: str) -> dict[str, t.Any]:
    return {"commsgw_deployment": {
        "name": "mig", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True, "acg_transport": "udp",
        "service_regions": [
            {"name": "region1", "azure_region": "westeurope", "hostname": HOST_R1, "ip_ranges": [R1 + ".0/28"]},
            {"name": "region2", "azure_region": "northeurope", "hostname": region2_host,
             "ip_ranges": [region2_prefix + ".0/28"]}],
        "sites": [{"name": "ams", "service_region": "region1"}, {"name": "fra", "service_region": "region2"}],
        "routing": _routing(),
        "emergency_dial_strings": ["112"]}}


def _records(dns: DnsServer) -> None:
    srv: dict[str, list[tuple[int, int, int, str]]] = {}
    a: dict[str, list[str]] = {"provapi." + DOMAIN: ["127.0.246.9"]}
    for host, prefix, label in ((HOST_R1, R1, "r1"), (HOST_R2_OLD, R2_OLD, "r2"), (HOST_R2_NEW, R2_NEW, "r2b"),
                                (HOST_R2_DEAD, R2_DEAD, "r2c")):
        srv["_sip._tls." + host] = []
        for n in (1, 2):
            target = "%s-sip%d.%s" % (label, n, DOMAIN)
            srv["_sip._tls." + host].append((10, 50, 5060, target))
            a[target] = ["%s.%d" % (prefix, n)]
    dns.set_records(srv=srv, a=a, ttl=30)


class Lab:
    def __init__(self, tmp: Path, dns: DnsServer) -> None:
        self.tmp = tmp
        self.dns = dns
        self.inv = tmp / "inventory"
        (self.inv / "group_vars").mkdir(parents=True)
        hosts = {}
        for name, sbc in SBCS.items():
            live = tmp / name
            hosts[name] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                           "kamailio_log_file": str(live / "kamailio.log"), "kamailio_work_dir": str(live / "work"),
                           "commsgw_sbc": {"acg_listen": {"address": sbc["acg"], "port": 5060},
                                           "core_listen": {"address": sbc["core"], "port": 5060, "transport": "udp"},
                                           "core_next_hop": "%s:5060" % CORE_NEXT_HOP,
                                           # Required in a production deployment: the caller (the next hop
                                           # is allowed implicitly).
                                           "core_allowed_sources": [CALLER + "/32"],
                                           "config_dir": str(live / "etc"), "run_dir": str(live / "run"),
                                           "shared_memory_mb": 64, "udp_workers": 4}}
        (self.inv / "hosts.yml").write_text(json.dumps({"all": {"children": {"acg_mig": {"children": {
            "site_ams": {"hosts": {"sbc-ams": hosts["sbc-ams"]}},
            "site_fra": {"hosts": {"sbc-fra": hosts["sbc-fra"]}}}}}}}))
        (self.inv / "group_vars" / "site_ams.yml").write_text(json.dumps({"commsgw_site": "ams",
                                                                          "commsgw_sbc_platform": "kamailio"}))
        (self.inv / "group_vars" / "site_fra.yml").write_text(json.dumps({"commsgw_site": "fra",
                                                                          "commsgw_sbc_platform": "kamailio"}))
        (self.inv / "group_vars" / "all.yml").write_text(json.dumps({
            "kamailio_service_manager": "process",
            "kamailio_refresher": False,  # test_refresher covers it; the pause/resume path is the same
            "commsgw_dns_nameservers": [dns.address],
            "commsgw_probe_on_controller": True,
            "commsgw_probe_nameservers": [dns.address],
            "commsgw_probe_timeout": 1.5,
        }))
        self.set_region2(HOST_R2_OLD, R2_OLD)

    def set_region2(self, hostname: str, prefix: str) -> None:
        (self.inv / "group_vars" / "acg_mig.yml").write_text(json.dumps(_deployment(hostname, prefix)))

    def play(self, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return play(self.inv / "hosts.yml", args, self.tmp, check=check, timeout_s=PLAYBOOK_TIMEOUT_S)

    def etc(self, host: str) -> Path:
        return self.tmp / host / "etc"

    def snapshot(self, host: str) -> dict[str, str]:
        # The rendered files by name, dispatcher.list from peers/ (where Kamailio reads it).
        return {p.name: p.read_text() for d in (self.etc(host), self.etc(host) / "peers") if d.is_dir()
                for p in d.iterdir() if p.is_file() and not p.name.startswith(".")}

    def pid(self, host: str) -> int:
        return int((self.tmp / host / "run" / "kamailio.pid").read_text().strip())

    def dispatcher_uris(self, host: str) -> set[str]:
        run = str(self.tmp / host / "run")
        result = JsonRpc(RpcEndpoints(run + "/kamailio_rpc.sock", run + "/kamailio_rpc.fifo"), 3).call(
            "dispatcher.list")
        return {d["DEST"]["URI"] for r in result["RECORDS"] for d in r["SET"]["TARGETS"]}

    def stop(self) -> None:
        for host in SBCS:
            try:
                os.kill(self.pid(host), signal.SIGTERM)
            except (OSError, ValueError):
                continue
        time.sleep(1)


def _options(src: str, dst: str, port: int = 5060, timeout_s: float = 2.0) -> t.Optional[str]:
    return udp_options(src, dst, port, timeout_s, user="mig-test")


class Traffic:
    """Steady calls from the core through one SBC while a playbook runs: back-to-back SIPp batches
    (each runs to completion, so no call is cut by the test itself), bounded by MAX_BATCHES."""

    def __init__(self, workdir: Path, target: str) -> None:
        self.workdir = workdir
        self.target = target
        self.results: list[CallResult] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: t.Optional[BaseException] = None

    def _run(self) -> None:
        try:
            for batch in range(MAX_BATCHES):
                if self._stop.is_set():
                    return
                caller = SippCaller("calls-%d" % batch, self.workdir, CALLER, self.target, port=15060 + batch % 2)
                self.results.append(caller.run(BATCH, RATE, timeout_s=BATCH // RATE + 30))
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def __enter__(self) -> "Traffic":
        self._thread.start()
        return self

    def __exit__(self, *exc: t.Any) -> None:
        self._stop.set()
        self._thread.join(timeout=BATCH / RATE + 60)

    @property
    def placed(self) -> int:
        return sum(len(r.calls) for r in self.results)

    @property
    def failed(self) -> list[tuple[str, t.Optional[int]]]:
        return [(cid, code) for r in self.results for cid, (_sent, code) in r.calls.items() if code != 200] + \
            [("sipp-counter", None)] * sum(r.failed for r in self.results)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[tuple[Lab, dict[str, SippPeer]]]:
    tmp = tmp_path_factory.mktemp("migration")
    dns = DnsServer.start_on_free_address(tmp / "dns", first=240)
    _records(dns)
    peers: dict[str, SippPeer] = {}
    box = Lab(tmp, dns)
    try:
        for prefix in (R1, R2_OLD, R2_NEW):
            for n in (1, 2):
                address = "%s.%d" % (prefix, n)
                peers[address] = SippPeer("peer-%s" % address, tmp / "sipp", address).start()
        # The core next hop (calls from ACG would go there); kept with the peers for cleanup.
        peers[CORE_NEXT_HOP] = SippPeer("core", tmp / "sipp", CORE_NEXT_HOP).start()
        box.play(["playbooks/onboard.yml"])
        yield box, peers
    finally:
        box.stop()
        for peer in peers.values():
            peer.stop()
        dns.stop()


def _invites(peers: dict[str, SippPeer], prefix: str) -> int:
    return sum(p.received_invites() for a, p in peers.items() if a.startswith(prefix + "."))


def test_onboarded_sbcs_use_the_old_region2(lab: tuple[Lab, dict[str, SippPeer]]) -> None:
    box = lab[0]
    for host, sbc in SBCS.items():
        assert "sip:%s.1:5060;transport=udp" % R2_OLD in box.dispatcher_uris(host)
        assert _options(R2_OLD + ".9", sbc["acg"]) == "SIP/2.0 200 OK"
        assert _options(R2_NEW + ".9", sbc["acg"]) == "SIP/2.0 403 Forbidden"


def test_check_mode_reports_the_migration_and_changes_nothing(lab: tuple[Lab, dict[str, SippPeer]]) -> None:
    box = lab[0]
    before = {h: box.snapshot(h) for h in SBCS}
    pids = {h: box.pid(h) for h in SBCS}
    box.set_region2(HOST_R2_NEW, R2_NEW)
    out = box.play(["playbooks/migrate.yml", "--check"]).stdout
    for host in SBCS:
        assert "%s: region region2 hostname %s -> %s" % (host, HOST_R2_OLD, HOST_R2_NEW) in out, out[-6000:]
        assert "%s: ACL admits %s.0/28" % (host, R2_NEW) in out
        assert "%s: ACL no longer admits %s.0/28" % (host, R2_OLD) in out
        assert "%s: region region2 SRV target lost: r2-sip1.%s (%s.1:5060)" % (host, DOMAIN, R2_OLD) in out
        assert "%s: region region2 SRV target gained: r2b-sip2.%s (%s.2:5060)" % (host, DOMAIN, R2_NEW) in out
    # The textual diff of the rendered files (address.list and dispatcher.list lines).
    # (printed as a YAML list, one diff line per item)
    assert re.search(r"^\s*- '?-1 %s 28 0 region=region2;tls=%s'?$" % (re.escape(R2_OLD + ".0"), re.escape(HOST_R2_OLD)),
                     out, re.MULTILINE), out[-6000:]
    assert re.search(r"^\s*- '?\+1 %s 28 0 region=region2;tls=%s'?$" % (re.escape(R2_NEW + ".0"), re.escape(HOST_R2_NEW)),
                     out, re.MULTILINE)
    assert re.search(r"^\s*- '?\+201 sip:%s:5060;transport=udp" % re.escape(R2_NEW + ".1"), out, re.MULTILINE)
    assert {h: box.snapshot(h) for h in SBCS} == before
    assert {h: box.pid(h) for h in SBCS} == pids
    for host in SBCS:
        assert "sip:%s.1:5060;transport=udp" % R2_OLD in box.dispatcher_uris(host)


def test_migration_onto_unreachable_peers_is_rolled_back_with_service_intact(
        lab: tuple[Lab, dict[str, SippPeer]]) -> None:
    box, peers = lab
    before = {h: box.snapshot(h) for h in SBCS}
    pids = {h: box.pid(h) for h in SBCS}
    box.set_region2(HOST_R2_DEAD, R2_DEAD)
    # fra is the region-2 site: its calls go to region 2 first, so this is where a bad migration hurts.
    with Traffic(box.tmp / "traffic-rollback", SBCS["sbc-fra"]["core"]) as traffic:
        proc = box.play(["playbooks/migrate.yml", "-e", "commsgw_migrate_hosts=sbc-fra",
                         "-e", "commsgw_migrate_timeout_s=12",
                         "-e", "commsgw_change_record_dir=%s" % (box.tmp / "changes-rollback")], check=False)
    out = proc.stdout
    print("rollback scenario: %d calls placed, %d failed" % (traffic.placed, len(traffic.failed)))
    assert traffic.error is None, traffic.error
    assert proc.returncode != 0, out[-6000:]
    assert "Widen - push the in-flight configuration" in out
    assert "peers not healthy" in out and "rolled back to the configuration saved in" in out, out[-6000:]
    assert "Narrow - push the new configuration" not in out
    # Issue 11 item 7: the wait showed its progress while it ran (what, elapsed, limit), and the change
    # record names the failed SBC, its push and rollback, and why.
    assert re.search(r"sbc-fra: waiting for 2 new peer\(s\) active \(watched at least \d+ s\): [\d.]+ s of 12\.0 s; "
                     r"(unhealthy|missing) ", out), out[-6000:]
    [record] = [json.loads(p.read_text()) for p in (box.tmp / "changes-rollback").glob("*.json")]
    fra = record["sbcs"]["sbc-fra"]
    assert (record["playbook"], record["result"], fra["status"]) == ("migrate.yml", "failed", "failed")
    assert "peers not healthy" in fra["message"] and [s["kind"] for s in fra["steps"]] == ["push", "rollback"]
    assert all(f["sha256_before"] == f["sha256_after"] for f in fra["files"]), fra["files"]
    assert fra["pid_before"] == fra["pid_after"] == pids["sbc-fra"] and set(record["sbcs"]) == {"sbc-fra"}
    # The previous configuration is back, running in the same Kamailio, and serving.
    assert box.snapshot("sbc-fra") == before["sbc-fra"]
    assert box.pid("sbc-fra") == pids["sbc-fra"]
    assert box.dispatcher_uris("sbc-fra") == {"sip:%s.%d:5060;transport=udp" % (p, n)
                                              for p in (R1, R2_OLD) for n in (1, 2)}
    assert _options(R2_OLD + ".9", SBCS["sbc-fra"]["acg"]) == "SIP/2.0 200 OK"
    assert _options(R2_DEAD + ".9", SBCS["sbc-fra"]["acg"]) == "SIP/2.0 403 Forbidden"
    # The other SBC was never touched.
    assert box.snapshot("sbc-ams") == before["sbc-ams"] and box.pid("sbc-ams") == pids["sbc-ams"]
    assert traffic.placed >= BATCH
    assert traffic.failed == [], traffic.failed[:10]
    old_before = _invites(peers, R2_OLD)
    result = SippCaller("after-rollback", box.tmp / "traffic-rollback", CALLER, SBCS["sbc-fra"]["core"],
                        port=15070).run(20, RATE)
    assert result.successful == 20 and result.failed == 0
    assert _invites(peers, R2_OLD) > old_before


def test_region2_migration_under_traffic_loses_no_call(lab: tuple[Lab, dict[str, SippPeer]]) -> None:
    box, peers = lab
    pids = {h: box.pid(h) for h in SBCS}
    box.set_region2(HOST_R2_NEW, R2_NEW)
    started = time.monotonic()
    with Traffic(box.tmp / "traffic-migration", SBCS["sbc-fra"]["core"]) as traffic:
        proc = box.play(["playbooks/migrate.yml", "-e", "commsgw_change_record_dir=%s" % (box.tmp / "changes")],
                        check=False)
    seconds = time.monotonic() - started
    out = proc.stdout
    print("migration: %d calls placed at %d cps through sbc-fra in %.0f s, %d failed"
          % (traffic.placed, RATE, seconds, len(traffic.failed)))
    (box.tmp.parent / "migration-calls.json").write_text(json.dumps(
        {"placed": traffic.placed, "failed": len(traffic.failed), "seconds": round(seconds, 1), "rate": RATE}))
    assert proc.returncode == 0, out[-8000:] + proc.stderr[-2000:]
    assert traffic.error is None, traffic.error
    assert traffic.placed >= 100
    assert traffic.failed == [], traffic.failed[:10]
    # Both SBCs went through widen -> prove -> narrow (playbooks/tasks/migrate_sbc.yml, the same for every platform,
    # over the kamailio role's entry points), reloading only (same Kamailio process).
    assert out.count("TASK [Widen - push the in-flight configuration]") == 2, out[-6000:]
    assert out.count("TASK [commsgw.routing.kamailio : Validating arguments against arg spec 'hold'") == 2
    assert {h: box.pid(h) for h in SBCS} == pids
    [record] = [json.loads(p.read_text()) for p in (box.tmp / "changes").glob("*.json")]
    assert record["result"] == "ok" and set(record["sbcs"]) == set(SBCS)
    for host, entry in record["sbcs"].items():
        assert (entry["service_action"], entry["pid_before"], entry["pid_after"]) == ("reload", pids[host], pids[host])
        # (Failed once in CI with only "narrowed" for one SBC: the rollout steps each SBC printed say which path it took.)
        assert [g["step"] for g in entry["probe"]["gates"]] == ["widened", "narrowed"], (
            host, entry["probe"], re.findall(r"steps: [^\n\"]*", out), out[-6000:])
        now = box.snapshot(host)
        for changed in entry["files"]:
            assert changed["sha256_after"] == hashlib.sha256(now[changed["name"]].encode()).hexdigest(), changed
    # Afterwards: only the new region-2 peers get calls, and the ACL admits the new /28 only.
    for host, sbc in SBCS.items():
        assert box.dispatcher_uris(host) == {"sip:%s.%d:5060;transport=udp" % (p, n)
                                             for p in (R1, R2_NEW) for n in (1, 2)}
        assert _options(R2_NEW + ".9", sbc["acg"]) == "SIP/2.0 200 OK"
        assert _options(R2_OLD + ".9", sbc["acg"]) == "SIP/2.0 403 Forbidden"
    old_before, new_before = _invites(peers, R2_OLD), _invites(peers, R2_NEW)
    result = SippCaller("after-migration", box.tmp / "traffic-migration", CALLER, SBCS["sbc-fra"]["core"],
                        port=15070).run(20, RATE)
    assert result.successful == 20 and result.failed == 0
    assert _invites(peers, R2_OLD) == old_before
    assert _invites(peers, R2_NEW) == new_before + 20
    # A second run finds nothing to do.
    again = box.play(["playbooks/migrate.yml"]).stdout
    assert "sbc-fra: no routing change" in again and "sbc-ams: no routing change" in again
