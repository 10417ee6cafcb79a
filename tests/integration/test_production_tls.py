# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end over TLS on production-shaped hosts: restarts, closing peers and region migrations.

Two Debian 13 SBC hosts (Kamailio 6.0 from the distribution package, systemd, reached over SSH as
``ops`` with sudo: tests/harness/sbc_hosts.py) are onboarded once with playbooks/onboard.yml as the
two sites of a production deployment over mutual TLS, with the README's defaults. The simulated ACG
(tests/harness/acg_sim.py) behaves like ACG where it hurts: every peer refuses a TLS handshake
without SNI and demands the SBC's client certificate. Calls come from SIPp on the host (the
operator core) through an SBC's core side, cross the bridge over TLS to the peers' fronts and end
on SIPp behind them.

In order, on the same two hosts (bridge ``cgwtls0``, 10.216.0.0/24):

1. ``systemctl restart kamailio`` and calls at once: none fails, afterwards Kamailio's own
   dispatcher view shows every peer active and no peer saw a handshake without SNI from the SBC.
2. The peers close the connection after every response: for two health windows and more every peer
   stays active, calls complete, still no handshake without SNI.
3. Region 2 (Dublin's local region) moves to a new regional hostname and a new /28 with new peers
   (certificates for the new name only; the old peers' carry only the old one) while calls held
   60 s each arrive at 10 calls/s through Dublin for the whole playbooks/migrate.yml run: no new call
   fails, no call in progress is dropped (every BYE, also of calls set up on the old peers before the
   narrow step, is answered 200), Kamailio keeps its process (reloads, no restart), afterwards calls
   reach only the new peers and the ACL admits the new /28 and not the old one.
4. A migration onto peers that are not there under the same traffic (calls of 30 s, so that many
   are up across the rollback): the playbook fails for Dublin, its previous files are back, no call
   is lost and calls still reach the peers of before.

Address plan (the /28s stand in for ACG's public ranges):

  10.216.0.1          the host's bridge address      10.216.0.2   the core (SIPp callers)
  10.216.0.11 / .12   tls-ams-1 / tls-dub-1          10.216.0.53  the simulated ACG's DNS (Knot)
  10.216.0.16/28      region 1 peers .17, .18        10.216.0.32/28  region 2 peers .33, .34
  10.216.0.80/28      region 2 after the migration: peers .81, .82 (pstn-region2b)
  10.216.0.96/28      region 2 in the rollback: peers .97, .98 that do not exist (pstn-region2c)
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
import typing as t
from pathlib import Path

import pytest

from harness.acg_sim import AcgSim, SimPeer
from harness.sbc_hosts import Guest, SbcHostLab
from harness.sipp import CallResult, SippCaller
from harness.tls_front import Connection, sip_options, tls_client
from harness.tools import needs
from integration.test_production_hosts import (
    TLS_DIR, Hosts, _install_tls_files, _play, _recap, _sbc, _write_inventory)

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.live import peer_states

# An SBC host suite: started first, one SBC host suite at a time (tests/conftest.py).
pytestmark = [pytest.mark.integration, needs("systemd-nspawn", "debootstrap", "sipp", "knotd", "ssh"),
              pytest.mark.sbc_hosts, pytest.mark.xdist_group("sbc-hosts")]

BRIDGE = "cgwtls0"
SUBNET = "10.216.0.0/24"
CORE = "10.216.0.2"
CORE_NEXT_HOP = "10.216.0.3:5060"
ACG_DNS = "10.216.0.53"
AMS = Guest("tls-ams-1", "trixie", "10.216.0.11")
DUB = Guest("tls-dub-1", "trixie", "10.216.0.12")
DOMAIN = "acg-tls.commsgw.test"
HOST_R1, HOST_R2 = "pstn-region1." + DOMAIN, "pstn-region2." + DOMAIN
HOST_R2_NEW, HOST_R2_DEAD = "pstn-region2b." + DOMAIN, "pstn-region2c." + DOMAIN
REGION1, REGION2 = "10.216.0.16/28", "10.216.0.32/28"
REGION2_NEW, REGION2_DEAD = "10.216.0.80/28", "10.216.0.96/28"
PEERS_PER_REGION = 2
ROUTING = {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1, "invite_timer_ms": 1000}
HEALTH_WINDOW_S = ROUTING["options_interval_s"] * ROUTING["failure_threshold"]
RATE = 10            # calls/s from the core
HOLD_MS = 60000      # how long each call of the migration lasts
# The rollback playbook takes about 40 s: calls of 30 s set up from its start on are still up when
# it puts the old files back (and the test is 30 s shorter than with HOLD_MS).
ROLLBACK_HOLD_MS = 30000
LEAD_IN_S = 5.0      # calls already up (on the old peers) before a migration playbook starts
LEAD_OUT_S = 3.0     # calls still placed after it finished
CLOSING_CALLS = 150   # calls through each SBC (both at once) while the peers close every idle connection


def _deployment(region2_hostname: str = HOST_R2, region2_range: str = REGION2) -> dict[str, t.Any]:
    return {
        "name": "tlse2e", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
        # Bridge addresses stand in for ACG's public /28s: explicitly allowed for this test rig only.
        "allow_non_public_ranges": True, "acg_transport": "tls",
        "service_regions": [
            {"name": "region1", "azure_region": "westeurope", "hostname": HOST_R1, "ip_ranges": [REGION1]},
            {"name": "region2", "azure_region": "northeurope", "hostname": region2_hostname,
             "ip_ranges": [region2_range]}],
        "sites": [{"name": "amsterdam", "service_region": "region1"}, {"name": "dublin", "service_region": "region2"}],
        "routing": dict(ROUTING),
        "emergency_dial_strings": ["112", "999"],
    }


def _address(cidr: str, index: int) -> str:
    """The index-th host address of a /28 (0 = .1)."""
    return str(list(ipaddress.IPv4Network(cidr).hosts())[index])


PROBE_OLD, PROBE_NEW = _address(REGION2, 10), _address(REGION2_NEW, 10)  # ACG-side OPTIONS sources


class TlsRig(Hosts):
    """The two onboarded hosts, the simulated ACG and the inventory file the playbooks read."""

    def __init__(self, lab: SbcHostLab, sim: AcgSim, tmp: Path) -> None:
        super().__init__(lab, sim, tmp, core=CORE)
        self.inventory = tmp / "inventory" / "hosts.json"
        self.write_inventory(_deployment())

    def write_inventory(self, deployment: dict[str, t.Any]) -> None:
        extra = {"commsgw_dns_nameservers": [ACG_DNS], "commsgw_onboard_probe": True,
                 # The simulator's operator CA signs the SBC's certificate; ACG's roots are another CA.
                 "kamailio_tls_chain_ca": TLS_DIR + "/operator-root.pem"}
        sites = {"amsterdam": [(AMS, _sbc(AMS, core_next_hop=CORE_NEXT_HOP, core=CORE))],
                 "dublin": [(DUB, _sbc(DUB, core_next_hop=CORE_NEXT_HOP, core=CORE))]}
        _write_inventory(self.inventory, self.lab, deployment, sites, extra)

    def peer_states(self, guest: Guest) -> dict[str, str]:
        """``address:port`` -> the neutral state (active, inactive, probing...) of every ACG peer, as Kamailio sees
        it (its dispatcher flags through the platform's read-back)."""
        return peer_states(self.rpc(guest, "dispatcher.list"))

    def place(self, guests: t.Sequence[Guest], count: int, name: str) -> dict[str, CallResult]:
        """``count`` short calls from the core through each of ``guests`` at once, RATE calls/s each."""
        callers = {g.name: SippCaller("%s-%s-%d" % (name, g.name, int(time.time() * 1000)), self.tmp / "sipp", CORE,
                                      "%s:5070" % g.address, hold_ms=100).start(count, rate=RATE,
                                                                                timeout_s=count // RATE + 30)
                   for g in guests}
        return {n: c.wait(count // RATE + 60) for n, c in callers.items()}

    def held_traffic(self, guest: Guest, name: str, hold_ms: int = HOLD_MS) -> SippCaller:
        """Calls at RATE calls/s, each held ``hold_ms``, until ``finish()`` (bounded: 20 minutes of calls)."""
        caller = SippCaller("%s-%d" % (name, int(time.time() * 1000)), self.tmp / "sipp", CORE,
                            "%s:5070" % guest.address, hold_ms=hold_ms)
        return caller.start(RATE * 1200, rate=RATE, limit=RATE * (hold_ms // 1000 + 30),
                            timeout_s=hold_ms // 1000 + 900)

    def config_digests(self, guest: Guest) -> str:
        return self.root(guest, "cd /etc/kamailio && sha256sum kamailio.cfg tls.cfg peers/dispatcher.list address.list "
                                "commsgw-srv.json")

    def journal(self, guest: Guest, since: float) -> str:
        """Kamailio's log lines of notice and above since ``since`` (failure evidence): each kind of
        line once with its count (Call-IDs, addresses of the moment and numbers folded), then the last lines."""
        proc = self.lab.ssh(guest.name, "journalctl -u kamailio -p notice --no-pager -o short-precise --since @%d "
                            "| tail -n 5000" % int(since), become=True, timeout=60)
        lines = proc.stdout.splitlines()
        kinds: dict[str, list[t.Any]] = {}
        for line in lines:
            text = line.split(": ", 1)[-1]
            key = re.sub(r"\{[^}]*\}|\d+", "#", text)
            kinds.setdefault(key, [0, line])[0] += 1
        summary = ["%6d x %s" % (n, first) for n, first in sorted(kinds.values(), key=lambda k: -k[0])]
        return "%s: Kamailio log since %.0f, %d lines; by kind (count x first):\n%s\nlast lines:\n%s" % (
            guest.name, since, len(lines), "\n".join(summary[:25]), "\n".join(lines[-15:]))

    def settle(self, peers: t.Sequence[SimPeer], timeout_s: float = 20.0) -> None:
        """Wait (bounded) until both SBCs see exactly ``peers``, all active: each test starts healthy."""
        deadline = time.monotonic() + timeout_s
        states = {}
        while time.monotonic() < deadline:
            states = {g.name: self.peer_states(g) for g in (AMS, DUB)}
            if all(_all_active(s, peers) for s in states.values()):
                return
            time.sleep(0.5)
        raise AssertionError("peers not all active within %.0f s: %s" % (timeout_s, states))


def _invites(peers: t.Iterable[SimPeer]) -> int:
    return sum(p.counts().get("INVITE", 0) for p in peers)


def _handshakes(sim: AcgSim, source: str, since: float) -> list[tuple[str, Connection]]:
    """(peer address, connection) of every handshake from ``source`` to a peer since ``since``."""
    return [(p.address, c) for p in sim.peers if p.front is not None for c in p.front.snapshot()
            if c.peer[0] == source and c.opened_at >= since and c.ok is not None]


def _without_sni(sim: AcgSim, source: str, since: float) -> list[str]:
    """Handshakes from ``source`` since ``since`` that came without SNI (the fronts refused them)."""
    return ["%s at %.3f: %s" % (peer, c.opened_at, c.error or "accepted without SNI")
            for peer, c in _handshakes(sim, source, since) if c.error == "NO_SNI" or (c.ok and not c.sni)]


def _call_evidence(sim: AcgSim, sbc: Guest, result: CallResult, limit: int = 3) -> str:
    """For the first calls that failed or whose BYE did not get a 200: the peer that got the call and
    what its front saw from the SBC meanwhile (connections: opened, closed, SNI, requests, responses)."""
    lines = []
    bad = [cid for cid, (_sent, code) in result.calls.items() if code != 200]
    bad += [cid for cid, (_sent, code) in result.byes.items() if code != 200]
    for cid in bad[:limit]:
        # The moments that matter: around the BYE when the BYE failed, else the call's setup.
        start = result.byes[cid][0] - 0.3 if cid in result.byes else result.calls[cid][0] - 0.3
        end = start + (0.6 if cid in result.byes else 3.0)
        lines.append("call %s: INVITE at %.3f answered %s, BYE (sent, answer) %s" % (
            cid, result.calls[cid][0], result.calls[cid][1], result.byes.get(cid)))
        for peer in sim.peers:
            if peer.backend is None or peer.front is None:
                continue
            if cid not in {m.call_id for m in peer.backend.received_requests("INVITE")}:
                continue
            for c in peer.front.snapshot():
                if c.peer[0] == sbc.address and c.opened_at <= end and (c.closed_at or end) >= start:
                    lines.append("  peer %s conn %d %s:%d opened %.3f closed %s sni %s error %s requests %s "
                                 "responses %s" % (peer.address, c.id, c.peer[0], c.peer[1], c.opened_at,
                                                   "%.3f" % c.closed_at if c.closed_at else "-", c.sni, c.error,
                                                   c.requests, c.responses))
            lines += ["  peer %s answered over a new connection to %s at %.3f: %s" % (peer.address, target, when, what)
                      for when, target, what in list(peer.front.responses_back) if start <= when <= end + 1]
    return "\n".join(lines)


def _all_active(states: t.Mapping[str, str], peers: t.Iterable[SimPeer]) -> bool:
    return _all_in(states, peers, ("active",))


def _all_in_service(states: t.Mapping[str, str], peers: t.Iterable[SimPeer]) -> bool:
    return _all_in(states, peers, ("active", "probing"))


def _all_in(states: t.Mapping[str, str], peers: t.Iterable[SimPeer], wanted_states: t.Sequence[str]) -> bool:
    wanted = ["%s:5061" % p.address for p in peers]
    return all(states.get(w) in wanted_states for w in wanted) and set(states) == set(wanted)


def _acg_options(rig: TlsRig, sbc: Guest, source: str, hostname: str) -> str:
    """Status line of an OPTIONS that ACG sends the SBC over mutual TLS from ``source`` with the
    certificate of ``hostname``'s peers (empty when nothing came back)."""
    cert = rig.sim.peer_certs[hostname]
    assert rig.sim.operator_ca is not None
    result = tls_client((sbc.address, 5061), rig.sim.operator_ca.cert, cert=cert.chain, key=cert.key,
                        send=sip_options(source, "sip:%s:5061;transport=tls" % sbc.address, "e2e"), source=source)
    return result.reply.split(b"\r\n", 1)[0].decode() if result.reply else ""


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[TlsRig]:
    tmp = tmp_path_factory.mktemp("production-tls")
    with SbcHostLab([AMS, DUB], bridge=BRIDGE, subnet=SUBNET, nameserver=ACG_DNS) as lab:
        for cidr in (REGION1, REGION2, REGION2_NEW):
            for index in range(PEERS_PER_REGION):
                lab.add_address(_address(cidr, index))
        for address in (CORE, ACG_DNS, PROBE_OLD, PROBE_NEW):
            lab.add_address(address)
        sim = AcgSim(_deployment(), tmp / "acg-sim", peers_per_region=PEERS_PER_REGION, dns_address=ACG_DNS)
        try:
            sim.start()
            box = TlsRig(lab, sim, tmp)
            for guest in (AMS, DUB):
                _install_tls_files(box, guest)
            out = _play(box.inventory, "playbooks/onboard.yml").stdout
            for guest in (AMS, DUB):
                assert re.search(r"site \S+ on %s: PASS" % guest.name, out), out[-6000:]
                assert "kamailio 6.0" in box.root(guest, "kamailio -v")
            yield box
        finally:
            sim.stop()


def test_restart_with_sni_refusing_peers_loses_no_call(rig: TlsRig) -> None:
    """Right after a restart Kamailio has no connection to any peer: whatever opens the first one
    (a dispatcher ping or a call) must send SNI, or the peer refuses it and calls fail."""
    pid = rig.main_pid(DUB)
    since = time.time()
    rig.root(DUB, "systemctl restart kamailio")
    result = rig.place([DUB], 50, "after-restart")[DUB.name]
    states = rig.peer_states(DUB)
    refused = _without_sni(rig.sim, DUB.address, since)
    print("restart: calls %s, peers %s, handshakes %d, without SNI %d"
          % (result.codes(), states, len(_handshakes(rig.sim, DUB.address, since)), len(refused)))
    if refused or result.codes() != {200: 50}:
        print(rig.journal(DUB, since))
    assert rig.main_pid(DUB) != pid, "kamailio was not restarted"
    assert result.codes() == {200: 50} and result.failed == 0, (result.codes(), refused[:10])
    assert _all_active(states, rig.sim.peers), states
    assert refused == [], refused[:20]


def test_peers_closing_every_connection_stay_active(rig: TlsRig) -> None:
    """ACG may close a connection at any time: then every ping and call needs a new handshake, and
    each one must carry SNI, or the dispatcher takes the peer out."""
    rig.settle(rig.sim.peers)
    rig.sim.set_close_after_response(True)
    try:
        since = time.time()
        samples: dict[str, list[dict[str, str]]] = {AMS.name: [], DUB.name: []}
        deadline = since + 3 * HEALTH_WINDOW_S + 1
        while time.time() < deadline:
            for guest in (AMS, DUB):
                samples[guest.name].append(rig.peer_states(guest))
            time.sleep(0.5)
        results = rig.place([AMS, DUB], CLOSING_CALLS, "closing")
        for guest in (AMS, DUB):
            samples[guest.name].append(rig.peer_states(guest))
        figures = {g.name: (len(_handshakes(rig.sim, g.address, since)), len(_without_sni(rig.sim, g.address, since)))
                   for g in (AMS, DUB)}
        print("closing peers: handshakes/without SNI %s over %.1f s, calls %s, BYEs not answered 200 %s"
              % (figures, time.time() - since, {n: r.codes() for n, r in results.items()},
                 {n: sorted(str(code) for _sent, code in r.byes.values() if code != 200) for n, r in results.items()}))
    finally:
        rig.sim.set_close_after_response(False)
    for guest in (AMS, DUB):  # evidence of both SBCs first
        if (results[guest.name].failed or results[guest.name].codes() != {200: CLOSING_CALLS}
                or _without_sni(rig.sim, guest.address, since)
                or not all(_all_in_service(s, rig.sim.peers) for s in samples[guest.name])):
            print(rig.journal(guest, since))
            print(_call_evidence(rig.sim, guest, results[guest.name]))
    for guest in (AMS, DUB):
        # Never taken out: a peer may show "probing" (Kamailio's trying: one ping lost, still routed to) when the
        # front closed the connection just as the next ping went out on it; that race is the closing's, not a
        # refused handshake (those are counted below: none without SNI).
        inactive = [s for s in samples[guest.name] if not _all_in_service(s, rig.sim.peers)]
        refused = _without_sni(rig.sim, guest.address, since)
        assert inactive == [], (guest.name, inactive[:3], refused[:10])
        assert results[guest.name].codes() == {200: CLOSING_CALLS}, (guest.name, results[guest.name].codes())
        assert results[guest.name].failed == 0, (guest.name, "BYEs not answered 200", {
            cid: bye for cid, bye in results[guest.name].byes.items() if bye[1] != 200})
        assert refused == [], (guest.name, refused[:20])
        # The fronts really closed: every peer was reached on new connections again and again.
        assert figures[guest.name][0] >= 3 * len(rig.sim.peers), figures


def test_region_migration_over_tls_under_load_reloads_and_loses_no_call(rig: TlsRig) -> None:
    rig.settle(rig.sim.peers)
    old_peers = [p for p in rig.sim.peers if p.hostname == HOST_R2]
    new_peers = rig.sim.migrate_region("region2", HOST_R2_NEW, REGION2_NEW)
    region1 = [p for p in rig.sim.peers if p.region == "region1"]
    assert _acg_options(rig, DUB, PROBE_OLD, HOST_R2).startswith("SIP/2.0 200"), "the old /28 is not admitted"
    assert _acg_options(rig, DUB, PROBE_NEW, HOST_R2_NEW).startswith("SIP/2.0 403")
    rig.write_inventory(_deployment(HOST_R2_NEW, REGION2_NEW))
    pids = {g.name: rig.main_pid(g) for g in (AMS, DUB)}
    since = time.time()
    traffic = rig.held_traffic(DUB, "migration")
    try:
        time.sleep(LEAD_IN_S)
        started = time.time()
        proc = _play(rig.inventory, "playbooks/migrate.yml", check=False)
        finished = time.time()
        time.sleep(LEAD_OUT_S)
    finally:
        traffic.finish()
        result = traffic.wait(HOLD_MS / 1000 + 60)  # the calls in progress end (bounded: then killed)
    pids_after = {g.name: rig.main_pid(g) for g in (AMS, DUB)}
    out = proc.stdout
    (rig.tmp / "migrate.log").write_text(out + proc.stderr)

    answered = [cid for cid, (_sent, code) in result.calls.items() if code == 200]
    failed = {cid: code for cid, (_sent, code) in result.calls.items() if code != 200}
    byes_ok = [cid for cid, (_sent, code) in result.byes.items() if code == 200]
    dropped = sorted(set(answered) - set(byes_ok))
    on_old = {m.call_id for p in old_peers if p.backend is not None
              for m in p.backend.received_requests("INVITE")} & set(result.calls)  # this traffic's calls only
    narrowed = _last_request(old_peers, DUB.address, "OPTIONS")
    old_byes_after_narrow = [cid for cid in on_old if cid in result.byes and result.byes[cid][0] > narrowed]
    old_byes_after_narrow_ok = [cid for cid in old_byes_after_narrow if result.byes[cid][1] == 200]
    figures = {
        "playbook_s": round(finished - started, 1), "calls_placed": len(result.calls), "calls_failed": len(failed),
        "calls_dropped": len(dropped), "byes_sent": len(result.byes), "byes_200": len(byes_ok),
        "calls_on_old_peers": len(on_old), "old_peer_byes_after_narrow": len(old_byes_after_narrow),
        "old_peer_byes_after_narrow_200": len(old_byes_after_narrow_ok),
        "sipp_failed_counter": result.failed, "pid_before": pids, "pid_after": pids_after}
    print("TLS migration figures: %s" % json.dumps(figures))
    (rig.tmp.parent / "tls-migration-figures.json").write_text(json.dumps(figures, indent=1))
    if proc.returncode != 0 or failed or dropped or pids != pids_after:
        print(rig.journal(DUB, since))
        print("failed calls %s" % sorted(failed.items())[:10])
        print("BYEs not answered 200 %s" % [(cid, result.byes.get(cid)) for cid in dropped[:10]])

    assert proc.returncode == 0, out[-8000:] + proc.stderr[-2000:]
    assert out.count("TASK [Widen - push the in-flight configuration]") == 2, out[-6000:]
    assert len(result.calls) >= 0.9 * RATE * (finished - since), figures
    assert failed == {}, figures
    assert dropped == [] and result.failed == 0, figures
    assert len(byes_ok) == len(result.byes) == len(answered), figures
    # Calls set up on the old peers before the narrow step and ended after it: their BYEs still arrive.
    assert on_old and old_byes_after_narrow, figures
    assert old_byes_after_narrow_ok == old_byes_after_narrow, figures
    assert pids_after == pids, "Kamailio was restarted during the migration: %s -> %s" % (pids, pids_after)

    # Afterwards: only region 1 and the new region 2 peers, all active; new calls reach the new peers.
    for guest in (AMS, DUB):
        states = rig.peer_states(guest)
        assert _all_active(states, region1 + new_peers), (guest.name, states)
    old_before, new_before = _invites(old_peers), _invites(new_peers)
    after = rig.place([DUB], 20, "after-migration")[DUB.name]
    assert after.codes() == {200: 20}, after.codes()
    assert _invites(old_peers) == old_before and _invites(new_peers) == new_before + 20
    # The ACL admits the new /28 and no longer the old one (requests from ACG over mutual TLS).
    assert _acg_options(rig, DUB, PROBE_NEW, HOST_R2_NEW).startswith("SIP/2.0 200")
    assert _acg_options(rig, DUB, PROBE_OLD, HOST_R2).startswith("SIP/2.0 403")
    address_list = rig.root(DUB, "cat /etc/kamailio/address.list")
    new_net, old_net = (r.split("/", maxsplit=1)[0] for r in (REGION2_NEW, REGION2))
    assert re.search(r"^1 %s 28 0 " % re.escape(new_net), address_list, re.M), address_list
    assert not re.search(r"^1 %s " % re.escape(old_net), address_list, re.M), address_list
    # Issue 21: the old /28 is retired under its old name, for the retention only (12 h by default): its peers
    # may still end their calls, nothing else. A plain re-run of onboard.yml keeps it and changes nothing.
    retired = re.search(r"^3 %s 28 0 region=region2;tls=%s;until=(\d+)$" % (re.escape(old_net), re.escape(HOST_R2)),
                        address_list, re.M)
    assert retired and 0 < int(retired.group(1)) - time.time() <= 43200, address_list
    again = _play(rig.inventory, "playbooks/onboard.yml", "-e", "commsgw_onboard_probe=false").stdout
    assert _recap(again, DUB.name)["changed"] == 0, again[-6000:]
    assert rig.root(DUB, "cat /etc/kamailio/address.list") == address_list


def _last_request(peers: t.Iterable[SimPeer], source: str, method: str) -> float:
    """When the last ``method`` from ``source`` reached any of ``peers`` (0 if none did)."""
    return max([0.0] + [when for p in peers if p.front is not None for when in p.front.request_times(method, source)])


def test_migration_onto_unreachable_peers_rolls_back_without_losing_calls(rig: TlsRig) -> None:
    current = [p for p in rig.sim.peers if p.hostname == HOST_R2_NEW]
    region1 = [p for p in rig.sim.peers if p.region == "region1"]
    rig.settle(region1 + current)
    rig.sim.migrate_region("region2", HOST_R2_DEAD, REGION2_DEAD, behaviour="down")
    before = {g.name: rig.config_digests(g) for g in (AMS, DUB)}
    pid = rig.main_pid(DUB)
    rig.write_inventory(_deployment(HOST_R2_DEAD, REGION2_DEAD))
    since = time.time()
    traffic = rig.held_traffic(DUB, "rollback", hold_ms=ROLLBACK_HOLD_MS)
    try:
        time.sleep(LEAD_IN_S)
        proc = _play(rig.inventory, "playbooks/migrate.yml", "-e", "commsgw_migrate_hosts=" + DUB.name,
                     "-e", "commsgw_migrate_timeout_s=12", check=False)
        finished = time.time()
        time.sleep(LEAD_OUT_S)
    finally:
        traffic.finish()
        result = traffic.wait(ROLLBACK_HOLD_MS / 1000 + 60)
    out = proc.stdout
    (rig.tmp / "rollback.log").write_text(out + proc.stderr)
    answered = [cid for cid, (_sent, code) in result.calls.items() if code == 200]
    failed = {cid: code for cid, (_sent, code) in result.calls.items() if code != 200}
    dropped = [cid for cid in answered if result.byes.get(cid, (0.0, None))[1] != 200]
    # Calls up across the rollback: set up before the playbook's last 15 s (its rescue tasks take fewer),
    # ended after it.
    spanning = [cid for cid in answered
                if result.calls[cid][0] < finished - 15 and result.byes.get(cid, (0.0, None))[0] > finished]
    print("TLS rollback figures: %s" % json.dumps({
        "calls_placed": len(result.calls), "calls_failed": len(failed), "calls_dropped": len(dropped),
        "byes_sent": len(result.byes), "calls_up_across_rollback": len(spanning), "pid_before": pid,
        "pid_after": rig.main_pid(DUB)}))
    if failed or dropped:
        print(rig.journal(DUB, since))

    assert proc.returncode != 0, out[-6000:]
    assert _recap(out, DUB.name)["failed"] >= 1, out[-4000:]
    assert "rolled back to the configuration saved in" in out, out[-6000:]
    assert "Narrow - push the new configuration" not in out
    assert {g.name: rig.config_digests(g) for g in (AMS, DUB)} == before
    # The refresher resumes on the restored input, not on the in-flight one (whose dead peers it would put back).
    rig.root(DUB, "cmp /etc/kamailio/commsgw-srv.json /etc/commsgw-srv-refresh/commsgw-srv.json")
    assert failed == {} and dropped == [] and result.failed == 0, (sorted(failed.items())[:10], dropped[:10])
    assert len(result.calls) >= RATE * LEAD_IN_S and spanning, (len(result.calls), len(spanning))
    # Calls still flow to the peers of before, all of them active again in Kamailio's view.
    assert _all_active(rig.peer_states(DUB), region1 + current), rig.peer_states(DUB)
    old_before = _invites(current)
    after = rig.place([DUB], 20, "after-rollback")[DUB.name]
    assert after.codes() == {200: 20}, after.codes()
    assert _invites(current) == old_before + 20
