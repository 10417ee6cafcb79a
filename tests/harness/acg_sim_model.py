# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The simulated ACG's model (``harness.acg_sim``): DNS, PKI and the switchable TLS/SIPp peers of one
deployment, and the loopback guard. Constants shared by the daemon and the CLI live here too."""

from __future__ import annotations

import contextlib
import dataclasses
import grp
import ipaddress
import json
import os
import shutil
import socket
import sys
import time
import typing as t
from pathlib import Path

from harness.dns import DnsServer
from harness.pki import TestCA
from harness.sipp import SippPeer
from harness.tls_front import TlsFront

from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import srv_name

REPO = Path(__file__).resolve().parents[2]
DEFAULT_STATE_DIR = REPO / ".lab" / "acg-sim"
PEER_PORT = 5061        # the port in the SRV records (TLS)
BACKEND_PORT = 15061    # SIPp behind each TLS front, same address, UDP
MCP_PORT = 5061
# (SRV priority, weight) of peer 1, 2, 3... of each region: two equal peers in the first tier and a
# third in a second tier, like a region that keeps a standby.
DEFAULT_PEER_SRV = ((10, 50), (10, 50), (20, 100))
BEHAVIOURS = ("200", "408", "503", "504", "486", "silent", "no-options", "down")
REGION_OUTAGES = ("silent", "down")
DEFAULT_TTL_S = 7200.0
CERT_DAYS = 365
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
DNS_TTL_S = 60
MAX_REQUEST = 65536


class SimError(RuntimeError):
    """A request the simulator cannot carry out (unknown peer, bad behaviour, not running...)."""


def _local(address: str) -> str:
    """``address`` when it is on this machine: loopback, or an address of a test bridge we created
    (the production-shaped SBC hosts reach the simulator there). Anything else is refused, so the
    simulator can never send to or pose as a host that is not ours."""
    if ipaddress.IPv4Address(address).is_loopback:
        return address
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind((address, 0))
    except OSError:
        raise SimError("%s is neither a loopback address nor one of this machine's: the simulator runs on "
                       "127.0.0.0/8 or on addresses of a test bridge only" % address) from None
    finally:
        probe.close()
    return address


def _write_json(path: Path, data: t.Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


@dataclasses.dataclass(frozen=True)
class _Cert:
    """A reused peer certificate (the part of harness.pki.Issued the fronts need)."""

    chain: Path
    key: Path


@dataclasses.dataclass
class SimPeer:
    region: str
    index: int
    address: str
    target: str           # SRV target name
    hostname: str         # regional hostname (certificate SAN, SNI)
    priority: int
    weight: int
    behaviour: str = "200"
    # "" while the region is up, else what the region's outage looks like: "silent" or "down".
    region_outage: str = ""
    front: t.Optional[TlsFront] = None
    backend: t.Optional[SippPeer] = None
    # Requests counted by fronts that were stopped since (a front is replaced on down/up).
    past: dict[str, int] = dataclasses.field(default_factory=dict)
    generation: int = 0

    def counts(self) -> dict[str, int]:
        """Requests received over TLS (INVITE, OPTIONS) and calls answered 200 (ANSWERED), cumulative."""
        counts = dict(self.past)
        if self.front is not None:
            for name in ("INVITE", "OPTIONS"):
                counts[name] = counts.get(name, 0) + len(self.front.requests(name))
        if self.backend is not None:
            counts["ANSWERED"] = counts.get("ANSWERED", 0) + _answered(self.backend)
        return counts

    @property
    def effective(self) -> str:
        return self.region_outage or self.behaviour


def _key_for_kamailio(path: Path) -> None:
    """The SBC's key as an operator installs it: root's, readable by Kamailio's group (it runs as
    user kamailio), by nobody else; 0600 where there is no kamailio group."""
    try:
        gid = grp.getgrnam("kamailio").gr_gid
    except KeyError:
        os.chmod(path, 0o600)
        return
    os.chown(path, 0, gid)
    os.chmod(path, 0o640)


class AcgSim:
    """DNS + PKI + TLS/SIPp peers for one deployment (a dict shaped like ``commsgw_deployment``)."""

    def __init__(self, deployment: t.Mapping[str, t.Any], state_dir: Path, peers_per_region: int = 3,
                 dns_address: t.Optional[str] = None, sbc_names: t.Sequence[str] = ("sbc.operator.test",)) -> None:
        self.deployment = dict(deployment)
        self.state_dir = Path(state_dir)
        self.run_dir = self.state_dir / "run"
        self.pki_dir = self.state_dir / "pki"
        self.peers_per_region = peers_per_region
        self.dns_address = dns_address
        self.sbc_names = list(sbc_names)
        self.dns: t.Optional[DnsServer] = None
        self.peers: list[SimPeer] = []
        self.mcp_fronts: list[TlsFront] = []
        self.operator_ca: t.Optional[TestCA] = None
        self.acg_ca: t.Optional[TestCA] = None
        self.peer_certs: dict[str, t.Any] = {}
        self.close_after_response = False
        self.started_at = time.time()
        self._plan_peers()

    # -- layout ------------------------------------------------------------------------------------
    def _regions(self) -> list[dict[str, t.Any]]:
        return list(self.deployment.get("service_regions") or [])

    def _plan_peers(self) -> None:
        if not 1 <= self.peers_per_region <= 13:
            raise SimError("peers per region must be 1..13 (a /28 has 14 host addresses; .14 is kept for MCP)")
        for region in self._regions():
            network = ipaddress.IPv4Network(region["ip_ranges"][0])
            hosts = list(network.hosts())
            _local(str(hosts[0]))  # fail early, before anything starts
            for index in range(1, self.peers_per_region + 1):
                priority, weight = DEFAULT_PEER_SRV[index - 1] if index <= len(DEFAULT_PEER_SRV) else (20, 100)
                self.peers.append(SimPeer(
                    region=region["name"], index=index, address=str(hosts[index - 1]),
                    target="sip%d.%s" % (index, region["hostname"].rstrip(".").lower()),
                    hostname=region["hostname"].rstrip(".").lower(), priority=priority, weight=weight))

    def peer(self, address: str) -> SimPeer:
        for peer in self.peers:
            if peer.address == address or peer.target == address.rstrip(".").lower():
                return peer
        raise SimError("no simulated peer %s (peers: %s)" % (address, ", ".join(p.address for p in self.peers)))

    # -- start/stop --------------------------------------------------------------------------------
    def start(self) -> "AcgSim":
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._make_pki()
        self._start_dns()
        for peer in self.peers:
            self._apply(peer)
        self._start_mcp()
        return self

    def stop(self) -> None:
        for peer in self.peers:
            self._stop_peer(peer)
        for front in self.mcp_fronts:
            front.stop()
        self.mcp_fronts = []
        if self.dns is not None:
            self.dns.stop()
            self.dns = None

    def _make_pki(self) -> None:
        """The test PKI; an existing one for the same names is reused while it has 30+ days left, so
        that a restarted simulator still trusts (and is trusted by) SBCs onboarded before."""
        names = sorted({p.hostname for p in self.peers} | set(self._mcp_hostnames()))
        manifest_path = self.pki_dir / "manifest.json"
        wanted = {"names": names, "sbc_names": self.sbc_names}
        with contextlib.suppress(OSError, ValueError, KeyError):
            manifest = json.loads(manifest_path.read_text())
            if ({k: manifest[k] for k in wanted} == wanted
                    and time.time() < manifest["created"] + (CERT_DAYS - 30) * 86400
                    and all(Path(f).exists() for f in manifest["files"])):
                self.operator_ca = TestCA.__new__(TestCA)  # paths only: nothing is issued any more
                self.operator_ca.cert = Path(manifest["operator_ca"])
                self.acg_ca = TestCA.existing(self.pki_dir / "acg-ca", name="commsgw lab ACG Root")
                self.peer_certs = {n: _Cert(Path(c), Path(k)) for n, (c, k) in manifest["peers"].items()}
                _key_for_kamailio(self.pki_dir / "sbc.key")
                return
        if self.pki_dir.exists():
            shutil.rmtree(self.pki_dir)
        # A year, so that the probe's certificate expiry warning (30 days) stays quiet in the lab.
        acg_ca = self.acg_ca = TestCA(self.pki_dir / "acg-ca", name="commsgw lab ACG Root", days=CERT_DAYS)
        self.operator_ca = TestCA(self.pki_dir / "operator-ca", name="commsgw lab Operator Root", days=CERT_DAYS)
        names = sorted({p.hostname for p in self.peers} | set(self._mcp_hostnames()))
        self.peer_certs = {name: acg_ca.issue_server("acg-" + name.split(".")[0], dns=[name], days=CERT_DAYS)
                           for name in names}
        sbc = self.operator_ca.issue_client("sbc", dns=self.sbc_names, days=CERT_DAYS)
        # Stable names for the inventory (commsgw_sbc.tls): the SBC trusts the ACG root, presents
        # its chain and key.
        shutil.copyfile(acg_ca.cert, self.pki_dir / "ca-bundle.pem")
        shutil.copyfile(sbc.chain, self.pki_dir / "sbc.chain.pem")
        shutil.copyfile(sbc.cert, self.pki_dir / "sbc.crt")
        shutil.copyfile(sbc.key, self.pki_dir / "sbc.key")
        _key_for_kamailio(self.pki_dir / "sbc.key")
        peers = {n: (str(c.chain), str(c.key)) for n, c in self.peer_certs.items()}
        files = [str(self.pki_dir / f) for f in ("ca-bundle.pem", "sbc.chain.pem", "sbc.key")]
        files += [str(self.operator_ca.cert)] + [f for pair in peers.values() for f in pair]
        _write_json(manifest_path, dict(wanted, created=time.time(), operator_ca=str(self.operator_ca.cert),
                                        peers=peers, files=files))

    def _mcp_hostnames(self) -> list[str]:
        return [r["mcp_hostname"].rstrip(".").lower() for r in self._regions() if r.get("mcp_hostname")]

    def dns_records(self) -> tuple[dict[str, list[tuple[int, int, int, str]]], dict[str, list[str]]]:
        srv: dict[str, list[tuple[int, int, int, str]]] = {}
        a: dict[str, list[str]] = {}
        for peer in self.peers:
            srv.setdefault(srv_name(peer.hostname), []).append((peer.priority, peer.weight, PEER_PORT, peer.target))
            a[peer.target] = [peer.address]
        regions = self._regions()
        for region in regions:
            if not region.get("mcp_hostname"):
                continue
            # a region's MCP record lists its own MCP first and the other region's second.
            records = []
            for other in regions:
                if not other.get("mcp_hostname"):
                    continue
                target = "mcp.%s" % other["hostname"].rstrip(".").lower()
                records.append((10 if other is region else 20, 100, MCP_PORT, target))
                a[target] = [self._mcp_address(other)]
            srv[srv_name(region["mcp_hostname"])] = records
        base = str(self.deployment.get("base_domain") or "").rstrip(".").lower()
        if base:
            # The provisioning API name answers inside region 1's /28 (.13); only its TTL matters (R-21).
            first = ipaddress.IPv4Network(regions[0]["ip_ranges"][0])
            a["provapi." + base] = [str(list(first.hosts())[12])]
        return srv, a

    @staticmethod
    def _mcp_address(region: t.Mapping[str, t.Any]) -> str:
        return str(list(ipaddress.IPv4Network(region["ip_ranges"][0]).hosts())[13])

    def _start_dns(self) -> None:
        srv, a = self.dns_records()
        workdir = self.run_dir / "dns"
        if self.dns_address:
            try:
                self.dns = DnsServer(workdir, address=_local(self.dns_address)).start()
            except RuntimeError as exc:  # AddressBusy is a RuntimeError: fall back to a free address
                print("acg-sim: DNS address %s unavailable (%s); picking a free 127.0.53.x" % (self.dns_address, exc),
                      file=sys.stderr)
                self.dns = None
        if self.dns is None:
            self.dns = DnsServer.start_on_free_address(workdir, first=60)
        self.dns.set_records(srv=srv, a=a, ttl=DNS_TTL_S)

    def _start_mcp(self) -> None:
        assert self.operator_ca is not None
        for region in self._regions():
            if not region.get("mcp_hostname"):
                continue
            cert = self.peer_certs[region["mcp_hostname"].rstrip(".").lower()]
            # MCP is reachable over TLS with its certificate; it never answers OPTIONS in ACG, and a
            # front without a backend answers by itself, so MCP here is a front relaying nowhere.
            self.mcp_fronts.append(TlsFront(listen=(self._mcp_address(region), MCP_PORT),
                                            backend=(self._mcp_address(region), BACKEND_PORT, "udp"),
                                            cert=cert.chain, key=cert.key, client_ca=self.operator_ca.cert).start())

    # -- peers -------------------------------------------------------------------------------------
    def _stop_peer(self, peer: SimPeer) -> None:
        peer.past = peer.counts()
        if peer.front is not None:
            peer.front.stop()
            peer.front = None
        if peer.backend is not None:
            peer.backend.stop(kill=True)
            peer.backend = None

    def _apply(self, peer: SimPeer) -> None:
        """Make the running processes of ``peer`` match its effective behaviour."""
        assert self.operator_ca is not None
        behaviour = peer.effective
        if peer.backend is not None:
            peer.past["ANSWERED"] = peer.past.get("ANSWERED", 0) + _answered(peer.backend)
            peer.backend.stop(kill=True)
            peer.backend = None
        if behaviour == "down":
            self._stop_peer(peer)
            return
        if peer.front is None:
            cert = self.peer_certs[peer.hostname]
            peer.front = TlsFront(listen=(_local(peer.address), PEER_PORT),
                                  backend=(peer.address, BACKEND_PORT, "udp"), cert=cert.chain, key=cert.key,
                                  client_ca=self.operator_ca.cert, require_sni=True,
                                  close_after_response=self.close_after_response).start()
        if behaviour == "silent":
            return  # the front accepts TLS and relays into a port where nothing listens
        code = 200 if behaviour in ("200", "no-options") else int(behaviour)
        peer.generation += 1
        peer.backend = SippPeer("%s-%d-g%d" % (peer.region, peer.index, peer.generation), self.run_dir / "sipp",
                                peer.address, port=BACKEND_PORT, code=code,
                                answer_options=behaviour != "no-options").start()

    def set_peer(self, address: str, behaviour: str) -> SimPeer:
        if behaviour not in BEHAVIOURS:
            raise SimError("unknown behaviour %r; one of %s" % (behaviour, ", ".join(BEHAVIOURS)))
        peer = self.peer(address)
        peer.behaviour = behaviour
        self._apply(peer)
        return peer

    def set_region(self, region: str, up: bool, mode: str = "silent") -> list[SimPeer]:
        """Take a whole region off (``mode`` silent: connections accepted, nothing ever answered, like
        a region whose packets go nowhere; down: connections refused) or put it back."""
        if mode not in REGION_OUTAGES:
            raise SimError("unknown region outage %r; one of %s" % (mode, ", ".join(REGION_OUTAGES)))
        peers = [p for p in self.peers if p.region == region]
        if not peers:
            raise SimError("no service region %r (regions: %s)" % (region, ", ".join(r["name"] for r in self._regions())))
        for peer in peers:
            peer.region_outage = "" if up else mode
            self._apply(peer)
        return peers

    def set_close_after_response(self, on: bool) -> None:
        """Every front (running and future) closes its connection after each final response it relays
        (``on``), or keeps connections open (the default)."""
        self.close_after_response = on
        for front in [p.front for p in self.peers if p.front is not None] + self.mcp_fronts:
            front.close_after_response = on

    def migrate_region(self, region: str, hostname: str, ip_range: str, behaviour: str = "200") -> list[SimPeer]:
        """Microsoft moved ``region`` (R-23): from now on it is ``hostname`` with the /28 ``ip_range``.

        As many new peers as the region had under its current name (same SRV priorities and weights)
        on the first addresses of ``ip_range``, each with a certificate for the new hostname only,
        and the new ``_sip._tls`` SRV and A records. The old peers keep running under their old
        name and records (calls set up on them end there). ``behaviour`` is the new peers' (``down``:
        the records exist but nothing listens). Returns the new peers.
        """
        if behaviour not in BEHAVIOURS:
            raise SimError("unknown behaviour %r; one of %s" % (behaviour, ", ".join(BEHAVIOURS)))
        regions = self._regions()
        current = [r for r in regions if r["name"] == region]
        if not current:
            raise SimError("no service region %r (regions: %s)" % (region, ", ".join(r["name"] for r in regions)))
        hostname = hostname.rstrip(".").lower()
        old_name = current[0]["hostname"].rstrip(".").lower()
        old_peers = [p for p in self.peers if p.region == region and p.hostname == old_name]
        hosts = list(ipaddress.IPv4Network(ip_range).hosts())
        if not old_peers or len(old_peers) > len(hosts) - 1:
            raise SimError("region %s has %d peers under %s: cannot move them to %s" % (
                region, len(old_peers), old_name, ip_range))
        if hostname not in self.peer_certs:
            assert self.acg_ca is not None
            self.peer_certs[hostname] = self.acg_ca.issue_server("acg-" + hostname.split(".")[0], dns=[hostname],
                                                                 days=CERT_DAYS)
        first_index = max(p.index for p in self.peers if p.region == region) + 1
        added = [SimPeer(region=region, index=first_index + n, address=str(hosts[n]),
                         target="sip%d.%s" % (first_index + n, hostname), hostname=hostname,
                         priority=old.priority, weight=old.weight, behaviour=behaviour)
                 for n, old in enumerate(old_peers)]
        self.deployment["service_regions"] = [dict(r, hostname=hostname, ip_ranges=[ip_range])
                                              if r["name"] == region else r for r in regions]
        for peer in added:
            self.peers.append(peer)
            self._apply(peer)
        if self.dns is not None:
            srv, a = self.dns_records()
            self.dns.set_records(srv=srv, a=a, ttl=DNS_TTL_S)
        return added

    # -- reporting ---------------------------------------------------------------------------------
    def status(self) -> dict[str, t.Any]:
        return {
            "deployment": self.deployment.get("name"),
            "dns": {"address": self.dns.address if self.dns else None, "port": 53,
                    "records": {"srv": {k: [list(r) for r in v] for k, v in self.dns_records()[0].items()},
                                "a": self.dns_records()[1], "ttl": DNS_TTL_S}},
            "pki": {"ca_bundle": str(self.pki_dir / "ca-bundle.pem"), "certificate": str(self.pki_dir / "sbc.chain.pem"),
                    "private_key": str(self.pki_dir / "sbc.key")},
            "peers": [{"region": p.region, "index": p.index, "address": p.address, "port": PEER_PORT,
                       "target": p.target, "hostname": p.hostname, "priority": p.priority, "weight": p.weight,
                       "behaviour": p.behaviour, "region_outage": p.region_outage, "state": p.effective,
                       "received": p.counts()} for p in self.peers],
            "mcp": [{"address": f.listen[0], "port": f.listen[1]} for f in self.mcp_fronts],
            "uptime_s": round(time.time() - self.started_at, 1),
        }

    def child_pids(self) -> list[int]:
        """Processes this simulator started (for ``down`` to clean up after a killed daemon)."""
        pids = [p.backend.proc.pid for p in self.peers if p.backend is not None and p.backend.proc is not None]
        proc = getattr(self.dns, "_proc", None)
        if proc is not None:
            pids.append(proc.pid)
        return pids


def _answered(backend: SippPeer) -> int:
    """Calls a SIPp peer answered with 200 (distinct Call-IDs of 200 responses to INVITE it sent)."""
    return len({m.call_id for m in backend.messages("sent")
                if m.first_line.startswith("SIP/2.0 200") and m.cseq_method == "INVITE"})
