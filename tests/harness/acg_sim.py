# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A simulated Azure Communications Gateway on loopback, built from an inventory's facts (R-28).

Made of the harness's real pieces, nothing re-implemented here:

* DNS: Knot (``harness.dns.DnsServer``) on a 127.0.53.x address, answering for every service region
  the ``_sip._tls.<regional hostname>`` SRV record (priorities and weights), the A record of each
  target, the MCP SRV records when the deployment has MCP hostnames, and the provisioning API name
  (``provapi.<base domain>``, TTL 60 s, R-21). Names come from the collection's plan module.
* Peers: for each region, N SIP peers on addresses .1, .2, ... of the region's first /28, port 5061,
  each a real TLS server (``harness.tls_front.TlsFront``: TLS >= 1.2, client certificate required,
  SNI required like ACG) relaying to a SIPp UAS (``harness.sipp.SippPeer``) on the same address,
  port 15061/UDP. Every peer is switchable at run time (``set_peer``): ``200`` (answers calls),
  ``408``/``503``/``504``/``486`` (answers INVITEs with that code), ``silent`` (TLS accepted,
  nothing ever answered), ``no-options`` (answers calls but ignores OPTIONS), ``down`` (nothing
  listens: connections refused). ``set_region(name, up=False)`` takes a whole region off: by default
  silent (connections accepted, nothing answered: a region whose packets go nowhere), or ``down``
  (connections refused); ``up=True`` puts each peer back to its own behaviour.
  ``set_close_after_response(True)`` makes every front close its connection after each final
  response (ACG closing idle or used connections: every transaction needs a new handshake).
* Region migration (R-23): ``migrate_region(name, hostname, ip_range)`` moves a region to a new
  regional hostname and /28: new peers there with certificates for the new name only, the new SRV
  and A records; the old peers keep running with their old name and records.
* PKI (``harness.pki``): an "ACG" test root signs each peer's certificate for its regional hostname
  (the SBC's ``ca_bundle``); an "operator" test root signs the SBC client certificate (ECDSA P-256)
  the peers require. ``<state dir>/pki/{ca-bundle.pem,sbc.chain.pem,sbc.key}`` are what an
  inventory points its ``commsgw_sbc.tls`` at.

Run as a daemon by ``scripts/acg-sim`` (``python -m harness.acg_sim``): ``up`` starts ``serve`` in
the background and waits until it is ready, the other commands talk to it over a UNIX socket in the
state directory (default ``.lab/acg-sim``): one JSON request per connection, one JSON answer.
Everything is bounded: start/stop timeouts, a lifetime (``--ttl``, default 2 h) after which the
daemon stops by itself, and ``down`` kills whatever a dead daemon left behind (pids are recorded).
Loopback only: every address is checked to lie in 127.0.0.0/8. See docs/lab.md.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import grp
import hashlib
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import typing as t
from pathlib import Path

from harness.dns import DnsServer
from harness.pki import TestCA
from harness.sipp import SippCaller, SippPeer
from harness.tls_front import TlsFront

from ansible_collections.commsgw.routing.plugins.module_utils.host_port import HostPortError, split_host_port
from ansible_collections.commsgw.routing.plugins.module_utils.plan import srv_name

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


# ---------------------------------------------------------------------------------------------------------------
# Inventory input


def read_inventory(inventory: t.Union[str, Path], extra_vars: t.Optional[t.Mapping[str, t.Any]] = None,
                   deployment_name: t.Optional[str] = None) -> dict[str, t.Any]:
    """The deployment, DNS settings and SBC settings of an inventory, templated as ansible-playbook would.

    Returns {"deployment": {...}, "nameservers": [...], "hosts": {host: {"sbc": {...}, "site": ...}}}.
    """
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    inv = InventoryManager(loader=loader, sources=[str(inventory)])
    manager = VariableManager(loader=loader, inventory=inv)
    deployments: dict[str, dict[str, t.Any]] = {}
    hosts: dict[str, dict[str, t.Any]] = {}
    nameservers: list[str] = []
    for host in inv.get_hosts():
        variables = dict(manager.get_vars(host=host))
        variables.update(extra_vars or {})
        templar = Templar(loader=loader, variables=variables)
        if "commsgw_deployment" not in variables:
            continue
        deployment = _plain(templar.template(variables["commsgw_deployment"]))
        if deployment_name and deployment.get("name") != deployment_name:
            continue
        deployments[str(deployment.get("name"))] = deployment
        if not nameservers and variables.get("commsgw_dns_nameservers"):
            nameservers = [str(n) for n in _plain(templar.template(variables["commsgw_dns_nameservers"]))]
        hosts[host.name] = {
            "deployment": deployment.get("name"),
            "site": _plain(templar.template(variables.get("commsgw_site"))),
            "sbc": _plain(templar.template(variables["commsgw_sbc"])) if "commsgw_sbc" in variables else None,
        }
    if not deployments:
        raise SimError("no commsgw_deployment%s in inventory %s" % (
            " named %s" % deployment_name if deployment_name else "", inventory))
    if len(deployments) > 1:
        raise SimError("inventory %s holds several deployments (%s): choose one with --deployment" % (
            inventory, ", ".join(sorted(deployments))))
    deployment = next(iter(deployments.values()))
    return {"deployment": deployment, "nameservers": nameservers, "hosts": hosts}


def _plain(value: t.Any) -> t.Any:
    """Ansible's tagged/lazy containers -> plain JSON data."""
    return json.loads(json.dumps(value, default=str))


# ---------------------------------------------------------------------------------------------------------------
# The simulator


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


# ---------------------------------------------------------------------------------------------------------------
# Daemon and control socket


def control_path(state_dir: Path) -> Path:
    """The control socket; UNIX socket paths are limited to 107 bytes, long state dirs use /tmp."""
    path = Path(state_dir).resolve() / "control.sock"
    if len(str(path)) < 100:
        return path
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:16]
    return Path("/tmp/commsgw-acg-sim-%s.sock" % digest)


def _pid_file(state_dir: Path) -> Path:
    return Path(state_dir) / "acg-sim.pid"


def request(state_dir: Path, payload: t.Mapping[str, t.Any], timeout_s: float = 30.0) -> dict[str, t.Any]:
    """One request to a running simulator; raises SimError when none runs or it refuses."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        try:
            sock.connect(str(control_path(state_dir)))
        except OSError as exc:
            raise SimError("no simulator runs for %s (%s): start it with scripts/acg-sim up" % (state_dir, exc))
        sock.sendall(json.dumps(payload).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n") and len(data) < (1 << 22):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        sock.close()
    if not data:
        raise SimError("the simulator closed the connection without an answer")
    answer = json.loads(data.decode())
    if not answer.get("ok"):
        raise SimError(answer.get("error") or "refused")
    return t.cast("dict[str, t.Any]", answer)


def serve(sim: AcgSim, state_dir: Path, ttl_s: float) -> None:
    """Run the simulator until ``shutdown``, SIGTERM/SIGINT or the end of its lifetime."""
    state_dir = Path(state_dir)
    stopping = {"why": ""}

    def on_signal(signum: int, _frame: t.Any) -> None:
        stopping["why"] = "signal %d" % signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    path = control_path(state_dir)
    if path.exists():
        path.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    server.settimeout(0.5)
    deadline = time.monotonic() + ttl_s
    try:
        sim.start()
        _write_json(state_dir / "children.json", {"pids": sim.child_pids()})
        _write_json(state_dir / "extra-vars.json", {"commsgw_dns_nameservers": [sim.dns.address if sim.dns else ""]})
        _write_json(state_dir / "status.json", sim.status())
        print("acg-sim: ready (dns %s, %d peers)" % (sim.dns.address if sim.dns else "?", len(sim.peers)), flush=True)
        while not stopping["why"]:
            if time.monotonic() > deadline:
                stopping["why"] = "lifetime of %.0f s reached" % ttl_s
                break
            try:
                conn = server.accept()[0]
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            with conn:
                conn.settimeout(10)
                answer = _handle(sim, conn, stopping)
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps(answer).encode() + b"\n")
            _write_json(state_dir / "children.json", {"pids": sim.child_pids()})
    finally:
        print("acg-sim: stopping (%s)" % (stopping["why"] or "error"), flush=True)
        server.close()
        with contextlib.suppress(OSError):
            path.unlink()
        sim.stop()
        with contextlib.suppress(OSError):
            (state_dir / "children.json").unlink()


def _handle(sim: AcgSim, conn: socket.socket, stopping: dict[str, str]) -> dict[str, t.Any]:
    data = b""
    try:
        while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        req = json.loads(data.decode() or "{}")
        command = req.get("command")
        if command == "status":
            return {"ok": True, "status": sim.status()}
        if command == "set-peer":
            sim.set_peer(str(req["peer"]), str(req["behaviour"]))
            return {"ok": True, "status": sim.status()}
        if command in ("region-down", "region-up"):
            sim.set_region(str(req["region"]), up=command == "region-up", mode=str(req.get("mode") or "silent"))
            return {"ok": True, "status": sim.status()}
        if command == "shutdown":
            stopping["why"] = "shutdown requested"
            return {"ok": True}
        return {"ok": False, "error": "unknown command %r" % command}
    except (SimError, KeyError, ValueError, RuntimeError, OSError) as exc:
        return {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}


def _write_json(path: Path, data: t.Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


def _alive(pid: int, needle: bytes = b"") -> bool:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return needle in handle.read()
    except OSError:
        return False


def _read_pid(state_dir: Path) -> int:
    try:
        return int(_pid_file(state_dir).read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def up(inventory: Path, state_dir: Path, peers: int, ttl_s: float, deployment: t.Optional[str],
       extra_vars: t.Mapping[str, t.Any], timeout_s: float = START_TIMEOUT_S) -> dict[str, t.Any]:
    """Start the daemon for ``inventory`` and wait until it serves; returns its status."""
    state_dir.mkdir(parents=True, exist_ok=True)
    pid = _read_pid(state_dir)
    if pid and _alive(pid, b"harness.acg_sim"):
        raise SimError("a simulator already runs for %s (pid %d): scripts/acg-sim down first" % (state_dir, pid))
    facts = read_inventory(inventory, extra_vars, deployment)  # fail here, in the caller, on a bad inventory
    log = open(state_dir / "acg-sim.log", "ab")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), str(REPO / ".collections"), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "harness.acg_sim", "--state-dir", str(state_dir), "serve", "--inventory",
           str(inventory), "--peers", str(peers), "--ttl", str(ttl_s)]
    if deployment:
        cmd += ["--deployment", deployment]
    if extra_vars:
        cmd += ["--extra-vars", json.dumps(dict(extra_vars))]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO),
                            env=env, start_new_session=True)
    log.close()
    _pid_file(state_dir).write_text("%d\n" % proc.pid)
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SimError("the simulator exited with %s while starting; log %s:\n%s" % (
                proc.returncode, state_dir / "acg-sim.log", _tail(state_dir / "acg-sim.log")))
        try:
            return request(state_dir, {"command": "status"}, timeout_s=5)["status"]
        except SimError as exc:
            last = str(exc)
        time.sleep(0.2)
    down(state_dir)
    raise SimError("the simulator did not become ready within %.0f s (%s); log:\n%s" % (
        timeout_s, last, _tail(state_dir / "acg-sim.log")))


def down(state_dir: Path, timeout_s: float = STOP_TIMEOUT_S) -> bool:
    """Stop the simulator of ``state_dir`` and everything it started; True if something was running."""
    was_running = False
    with contextlib.suppress(SimError, OSError, ValueError):
        request(state_dir, {"command": "shutdown"}, timeout_s=5)
        was_running = True
    pid = _read_pid(state_dir)
    if pid and _alive(pid, b"harness.acg_sim"):
        was_running = True
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _alive(pid, b"harness.acg_sim"):
            time.sleep(0.1)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if _alive(pid, b"harness.acg_sim"):
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
                time.sleep(1.0)
    # A daemon killed hard leaves its SIPp and knotd children: they were recorded.
    with contextlib.suppress(OSError, ValueError):
        children = json.loads((state_dir / "children.json").read_text()).get("pids", [])
        for child in children:
            if _alive(int(child), b"sipp") or _alive(int(child), b"knotd"):
                was_running = True
                with contextlib.suppress(OSError):
                    os.kill(int(child), signal.SIGKILL)
        (state_dir / "children.json").unlink()
    with contextlib.suppress(OSError):
        _pid_file(state_dir).unlink()
    with contextlib.suppress(OSError):
        control_path(state_dir).unlink()
    shutil.rmtree(state_dir / "run", ignore_errors=True)
    return was_running


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------------------------
# CLI (scripts/acg-sim)


def format_status(status: t.Mapping[str, t.Any]) -> str:
    lines = ["deployment %s, DNS %s:53 (TTL %s s), uptime %s s" % (
        status["deployment"], status["dns"]["address"], status["dns"]["records"]["ttl"], status["uptime_s"])]
    lines.append("%-8s %-14s %-5s %-40s %-4s %-6s %-11s %7s %7s %8s" % (
        "region", "address", "port", "SRV target", "prio", "weight", "state", "INVITEs", "OPTIONS", "answered"))
    for p in status["peers"]:
        lines.append("%-8s %-14s %-5d %-40s %-4d %-6d %-11s %7d %7d %8d" % (
            p["region"], p["address"], p["port"], p["target"], p["priority"], p["weight"], p["state"],
            p["received"].get("INVITE", 0), p["received"].get("OPTIONS", 0), p["received"].get("ANSWERED", 0)))
    for m in status.get("mcp", []):
        lines.append("MCP      %-14s %-5d" % (m["address"], m["port"]))
    lines.append("SBC files: ca_bundle %s, certificate %s, private_key %s" % (
        status["pki"]["ca_bundle"], status["pki"]["certificate"], status["pki"]["private_key"]))
    return "\n".join(lines)


def main(argv: t.Optional[t.Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="acg-sim", description="Simulated Azure Communications Gateway on loopback "
                                     "(docs/lab.md).")
    parser.add_argument("--state-dir", type=Path, default=Path(os.environ.get("COMMSGW_ACG_SIM_DIR", DEFAULT_STATE_DIR)),
                        help="state directory (default .lab/acg-sim, or $COMMSGW_ACG_SIM_DIR)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    sub = parser.add_subparsers(dest="command", required=True)

    def inventory_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--inventory", "-i", type=Path, default=REPO / "inventory" / "demo")
        p.add_argument("--deployment", help="deployment name when the inventory holds several")
        p.add_argument("--peers", type=int, default=3, help="SIP peers per region (default 3)")
        p.add_argument("--ttl", type=float, default=DEFAULT_TTL_S, help="lifetime in seconds (default 7200)")
        p.add_argument("--extra-vars", "-e", default="{}", help="JSON variables applied over the inventory's")

    inventory_args(sub.add_parser("up", help="start the simulator for an inventory (background) and wait until ready"))
    inventory_args(sub.add_parser("serve", help="run the simulator in the foreground (what 'up' starts)"))
    sub.add_parser("down", help="stop the simulator and everything it started")
    sub.add_parser("status", help="peers, states and what each received")
    p_set = sub.add_parser("set-peer", help="switch one peer's behaviour")
    p_set.add_argument("peer", help="peer address (e.g. 127.0.60.1) or SRV target name")
    p_set.add_argument("behaviour", choices=BEHAVIOURS)
    for name in ("region-down", "region-up"):
        what = "down" if name.endswith("down") else "back up"
        p_region = sub.add_parser(name, help="take every peer of a region %s" % what)
        p_region.add_argument("region", help="service region name as in the inventory (e.g. region1)")
        if name == "region-down":
            p_region.add_argument("--mode", choices=REGION_OUTAGES, default="silent",
                                  help="silent (default): TLS accepted, nothing answered; down: connections refused")
    p_call = sub.add_parser("call", help="place test calls as the operator core (SIPp UAC) through an SBC")
    p_call.add_argument("target", help="the SBC's core-side address:port, e.g. 127.0.80.1:5060")
    p_call.add_argument("--source", default="127.0.81.2", help="caller address (loopback)")
    p_call.add_argument("--count", type=int, default=5)
    p_call.add_argument("--rate", type=float, default=5.0)
    p_call.add_argument("--name", default="calls")
    args = parser.parse_args(argv)
    state_dir: Path = args.state_dir.resolve()

    try:
        if args.command == "serve":
            extra = json.loads(args.extra_vars)
            facts = read_inventory(args.inventory, extra, args.deployment)
            lock = open(state_dir / "acg-sim.lock", "a")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise SimError("another simulator holds %s" % state_dir)
            sbc_names = sorted("%s.operator.test" % h for h in facts["hosts"]) or ["sbc.operator.test"]
            sim = AcgSim(facts["deployment"], state_dir, peers_per_region=args.peers,
                         dns_address=(facts["nameservers"] or [None])[0], sbc_names=sbc_names)
            _check_inventory_paths(facts, state_dir)
            serve(sim, state_dir, args.ttl)
            return 0
        if args.command == "up":
            status = up(args.inventory, state_dir, args.peers, args.ttl, args.deployment, json.loads(args.extra_vars))
            print(json.dumps(status, indent=2) if args.json else format_status(status))
            if not os.environ.get("COMMSGW_LAB_MANAGED"):  # scripts/lab stops it itself
                hint = "" if state_dir == DEFAULT_STATE_DIR.resolve() else " --state-dir %s" % state_dir
                print("stop it with: scripts/acg-sim%s down" % hint, file=sys.stderr)
            return 0
        if args.command == "down":
            print("stopped" if down(state_dir) else "nothing was running")
            return 0
        if args.command == "status":
            status = request(state_dir, {"command": "status"})["status"]
        elif args.command == "set-peer":
            status = request(state_dir, {"command": "set-peer", "peer": args.peer, "behaviour": args.behaviour})["status"]
        elif args.command in ("region-down", "region-up"):
            status = request(state_dir, {"command": args.command, "region": args.region,
                                         "mode": getattr(args, "mode", "silent")})["status"]
        elif args.command == "call":
            result = place_calls(state_dir, args.target, args.source, args.count, args.rate, args.name)
            print(json.dumps(result, indent=2) if args.json else
                  "%d calls: %s" % (args.count, ", ".join("%s x%d" % (k, v) for k, v in sorted(result["codes"].items()))))
            return 0 if result["codes"].get("200", 0) == args.count else 1
        else:  # pragma: no cover - argparse enforces the choices
            return 2
        print(json.dumps(status, indent=2) if args.json else format_status(status))
        return 0
    except SimError as exc:
        print("acg-sim: %s" % exc, file=sys.stderr)
        return 1


def _check_inventory_paths(facts: t.Mapping[str, t.Any], state_dir: Path) -> None:
    """Warn when the inventory's SBC certificate paths are not the ones this simulator writes."""
    pki = (state_dir / "pki").resolve()
    for host, info in facts["hosts"].items():
        tls = (info.get("sbc") or {}).get("tls") or {}
        for key, value in tls.items():
            if isinstance(value, str) and not Path(value).resolve().is_relative_to(pki):
                print("acg-sim: warning: %s commsgw_sbc.tls.%s = %s is not under %s" % (host, key, value, pki),
                      file=sys.stderr)


def place_calls(state_dir: Path, target: str, source: str, count: int, rate: float = 5.0,
                name: str = "calls") -> dict[str, t.Any]:
    """``count`` calls from ``source`` (the operator core) to ``target`` (an SBC's core side); bounded."""
    try:
        host, port = split_host_port(target, default_port=5060)
    except HostPortError as exc:
        raise SimError("call target %s" % exc) from None
    _local(host)
    _local(source)
    if not 1 <= count <= 1000:
        raise SimError("count must be 1..1000")
    workdir = Path(state_dir) / "calls"
    caller = SippCaller("%s-%d" % (name, int(time.time() * 1000)), workdir, source, "%s:%s" % (host, port))
    timeout_s = int(count / max(rate, 0.1)) + 30
    result = caller.run(count, rate=rate, timeout_s=timeout_s)
    codes: dict[str, int] = {}
    for code, n in result.codes().items():
        codes[str(code) if code is not None else "none"] = n
    return {"count": count, "codes": codes, "successful": result.successful, "failed": result.failed,
            "returncode": result.returncode}


if __name__ == "__main__":
    sys.exit(main())
