# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutual TLS towards ACG (R-09, R-24) on a real Kamailio 6.0, black-box.

Kamailio 6.0 everywhere: the host's on Debian 13, a cached Debian 13 rootfs (harness.rootfs) on
Debian 12 (5.6 corrupts memory under TLS with OpenSSL 3). The config is rendered by
render_kamailio from a plan built from real SRV answers (Knot DNS). Each ACG peer is a real TLS
server (harness.tls_front: Python ssl = OpenSSL, TLS >= 1.2, client certificate required, and like
ACG it refuses handshakes without SNI) relaying to a SIPp UAS; the operator core is a SIPp UAC.

Lab (Topology block 100): region 1 peers 127.0.110.1 (SRV 10/60), .2 (10/40), .3 (20/0); region 2
127.0.111.1/.2; SBC ACG side tls:127.0.120.1:5061, core side udp:127.0.130.1:5060; core next hop
127.0.131.1, caller 127.0.131.2. PKI (harness.pki, ECDSA P-256): "ACG root" signs the peers, the
"operator root" signs the SBC, plus an unrelated root and a trusted cert for wrong.example.
"""

from __future__ import annotations

import copy
import re
import subprocess
import time
import typing as t
import uuid
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import dialog_key
from harness import pki as pkimod
from harness import rootfs
from harness.dialog_mac import expected_dialog_mac
from harness.tools import needs
from harness.kamailio import BlockLease, KamailioError, KamailioProcess, Topology, sbc_secret, write_rendered
from harness.sip_dialog import CoreUac, Dialog, UdpSink, in_dialog, status
from harness.sipp import SippCaller, SippPeer
from harness.tls_front import Connection, HandshakeResult, TlsFront, tls_client

pytestmark = [
    pytest.mark.integration,
    needs("sipp", "knotd", "unshare", "openssl"),
]

BLOCK = 100
DOMAIN = "acg-k2.test"
TOPO = Topology(block=BLOCK, domain=DOMAIN)
R1_HOST = "pstn-region1." + DOMAIN
R2_HOST = "pstn-region2." + DOMAIN
PEER_PORT = 5060      # the SRV port of the lab records (harness.kamailio.Topology.dns_records)
BACKEND_PORT = 15060  # SIPp behind each TLS front
SBC_TLS_PORT = 5061
ROUTING = {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1, "invite_timer_ms": 1000}
R1 = [TOPO.region1(1), TOPO.region1(2), TOPO.region1(3)]
R2 = [TOPO.region2(1), TOPO.region2(2)]
SBC_NAME = "sbc-ams-1.operator.test"


def _brief(front: TlsFront) -> list[tuple[float, t.Optional[str], t.Optional[bool], t.Optional[str], int]]:
    """Compact handshake history for assertion messages: (opened, SNI, ok, error, requests)."""
    return [(round(c.opened_at % 1000, 2), c.sni, c.ok, c.error, len(c.requests)) for c in front.snapshot()]


class TlsLab:
    """DNS + plan + render + Kamailio 6.0 (TLS) + one TLS front and SIPp per ACG peer."""

    def __init__(self, workdir: Path, runtime: rootfs.KamailioRuntime, key_type: pkimod.KeyType = "ec",
                 tcp_workers: int = 2, close_after_response: bool = False) -> None:
        self.workdir = workdir
        self.runtime = runtime
        self.tcp_workers = tcp_workers
        self.close_after_response = close_after_response
        self.cfg_dir = workdir / "cfg"
        self.run_dir = workdir / "run"
        # The SBC's own secret, outside the config dir as on a host (the role's kamailio_secret makes it there).
        self.secret_dir = workdir / "secret"
        # Certificates live under the config dir: it is bind-mounted into the rootfs as is.
        self.pki = pkimod.standard_pki(self.cfg_dir / "pki", [R1_HOST, R2_HOST], sbc_hostname=SBC_NAME,
                                       key_type=key_type)
        self.dns: t.Any = None
        self.kamailio: t.Optional[KamailioProcess] = None
        self.plan: dict[str, t.Any] = {}
        self.files: dict[str, str] = {}
        self.fronts: dict[str, TlsFront] = {}
        self.backends: dict[str, SippPeer] = {}

    def settings(self) -> dict[str, t.Any]:
        return {
            "acg_listen": {"address": TOPO.sbc_acg, "port": SBC_TLS_PORT},
            "core_listen": {"address": TOPO.sbc_core, "port": 5060, "transport": "udp"},
            "core_next_hop": "core.%s:5060" % DOMAIN,
            "config_dir": str(self.cfg_dir), "run_dir": str(self.run_dir), "udp_workers": 2, "tcp_workers": self.tcp_workers,
            # The core side: the next hop .1, the caller .2 (in-dialog requests from ACG may go to either).
            "core_allowed_sources": [TOPO.core_network], "secret_file": str(self.secret_dir / "secret.cfg"),
            "tls": {"certificate": str(self.pki.sbc.chain), "private_key": str(self.pki.sbc.key),
                    "ca_bundle": str(self.pki.acg_ca.cert)},
        }

    def start(self) -> "TlsLab":
        from harness.dns import DnsServer
        from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
        from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
        from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings, resolve_deployment
        from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment

        self.dns = DnsServer.start_on_free_address(self.workdir / "dns", first=(BLOCK * 2 + 17) % 254)
        srv, a = TOPO.dns_records()
        self.dns.set_records(srv=srv, a=a, ttl=60)
        deployment, findings = validate_deployment(TOPO.deployment_raw(ROUTING, "tls"),
                                                   [Sbc(host="sbc-ams-1", site="ams"), Sbc(host="sbc-fra-1", site="fra")])
        assert not findings.errors, [f.render() for f in findings.errors]
        resolved, problems = resolve_deployment(deployment, ResolverSettings(nameservers=[self.dns.address]))
        assert not [p for p in problems if p.severity == "error"], [p.render() for p in problems]
        self.plan = build_site_plan(deployment, deployment.sites[0], resolved)
        sbc_secret(self.secret_dir)
        self.write_files(self.plan)
        self.kamailio = KamailioProcess(self.cfg_dir / "kamailio.cfg", self.workdir / "kamailio", self.run_dir,
                                        resolv_conf=self.dns.resolv_conf, shared_memory_mb=256,
                                        rootfs=self.runtime.rootfs, binds=[self.secret_dir])
        self.kamailio.start()
        return self

    def write_files(self, plan: t.Mapping[str, t.Any]) -> None:
        """Render ``plan`` into the config dir (a push without the role: reload what changed yourself)."""
        from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio
        self.files = render_kamailio(plan, self.settings(), self.runtime.version)
        write_rendered(self.cfg_dir, self.files)

    # -- peers ---------------------------------------------------------------------------------
    def start_peer(self, address: str, cert: pkimod.Issued) -> None:
        """(Re)start the ACG peer at ``address`` presenting ``cert``: TLS front + SIPp UAS (200)."""
        self.stop_peer(address)
        backend = SippPeer("uas-%s-%d" % (address, len(self.backends)), self.workdir / "sipp", address,
                           port=BACKEND_PORT, code=200)
        backend.start()
        self.backends[address] = backend
        self.fronts[address] = TlsFront(listen=(address, PEER_PORT), backend=(address, BACKEND_PORT, "udp"),
                                        cert=cert.chain, key=cert.key, client_ca=self.pki.operator_ca.cert,
                                        require_sni=True, close_after_response=self.close_after_response).start()

    def stop_peer(self, address: str) -> None:
        front = self.fronts.pop(address, None)
        if front is not None:
            front.stop()
        backend = self.backends.pop(address, None)
        if backend is not None:
            backend.stop(kill=True)

    def start_all_peers(self, override: t.Optional[t.Mapping[str, pkimod.Issued]] = None) -> None:
        for address in R1 + R2:
            host = R1_HOST if address in R1 else R2_HOST
            self.start_peer(address, (override or {}).get(address, self.pki.peers[host]))

    def stop_all_peers(self) -> None:
        for address in list(self.fronts):
            self.stop_peer(address)

    def settle(self, bad: t.Sequence[str] = ()) -> None:
        """After (re)starting peers, wait until each peer saw the SBC try a handshake (or holds an
        open connection), the good ones are back in (OPTIONS) and the ``bad`` ones are out (bounded).
        Kamailio's own probing does it; nothing is forced over RPC."""
        assert self.kamailio is not None
        started = time.time()
        for address, front in self.fronts.items():
            # An open connection, or a handshake attempt since the reset.
            assert front.wait_for(lambda f: any((c.ok and c.closed_at is None)
                                                or (c.opened_at >= started and c.ok is not None)
                                                for c in f.snapshot()), timeout=8), (address, _brief(front), time.time() % 1000)
        for address in self.fronts:
            assert self.wait_active(address, address not in bad, 15), (
                address, self.kamailio.dispatcher_states(), self.kamailio.log_tail(30))

    def invites(self, address: str) -> int:
        backend = self.backends.get(address)
        return backend.received_invites() if backend else 0

    def invite_connections(self, address: str) -> list[Connection]:
        return [c for c in self.fronts[address].snapshot() if "INVITE" in c.requests]

    def state(self, address: str) -> str:
        assert self.kamailio is not None
        for uri, flags in self.kamailio.dispatcher_states().items():
            if uri.startswith("sip:%s:" % address):
                return flags
        return ""

    def wait_active(self, address: str, active: bool, timeout_s: float) -> bool:
        """Until the dispatcher has ``address`` Active ("A", it gets calls) or Inactive ("I").
        "T" (trying: a probe failed, threshold not reached) counts as neither: calls skip it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.state(address)[:1] == ("A" if active else "I"):
                return True
            time.sleep(0.1)
        return False

    def call(self, name: str, count: int, expect: int = 200) -> t.Any:
        caller = SippCaller(name, self.workdir / "sipp", TOPO.core_caller, "%s:5060" % TOPO.sbc_core, expect=expect)
        return caller.run(count, rate=5, timeout_s=30)

    def stop(self) -> None:
        self.stop_all_peers()
        if self.kamailio is not None:
            self.kamailio.stop()
        if self.dns is not None:
            self.dns.stop()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[TlsLab]:
    try:
        runtime = rootfs.kamailio6_runtime()
    except rootfs.RootfsUnavailable as exc:
        pytest.skip(str(exc))
    lease = BlockLease(blocks=(BLOCK,))
    lab = TlsLab(tmp_path_factory.mktemp("kamailio-tls"), runtime)
    try:
        lab.start()
        yield lab
    finally:
        lab.stop()
        lease.close()


@pytest.fixture
def peers(lab: TlsLab) -> t.Iterator[TlsLab]:
    """Fresh peers per test; every peer up again (dispatcher state) before the test's calls."""
    yield lab
    lab.stop_all_peers()


def test_mutual_tls_call_carries_sni_and_the_sbc_certificate(peers: TlsLab) -> None:
    """R-09/R-24: calls reach the local best-tier peers over TLS >= 1.2, with SNI = the regional
    hostname, the SBC's client certificate, and complete."""
    lab = peers
    lab.start_all_peers()
    # Every peer, also the ones no call goes to, gets a connection with SNI from the SBC: the
    # dispatcher's OPTIONS pings are relayed through the SBC itself (route COMMSGW_TLS_PING).
    for address in R1 + R2:
        front = lab.fronts[address]
        assert front.wait_for(lambda f: bool(f.handshakes(ok=True)), timeout=8), (address, _brief(front), time.time() % 1000)
    lab.settle()
    result = lab.call("tls-ok", 6)
    assert result.codes() == {200: 6}, result.codes()
    invites = {a: lab.invites(a) for a in R1 + R2}
    assert invites[R1[0]] + invites[R1[1]] == 6 and invites[R1[2]] == 0, invites
    assert invites[R2[0]] == invites[R2[1]] == 0, invites
    for address in R1[:2]:
        for conn in lab.invite_connections(address):
            assert conn.ok and conn.sni == R1_HOST, conn
            assert conn.tls_version in ("TLSv1.2", "TLSv1.3"), conn
            assert conn.client_subject and conn.client_subject.get("commonName") == SBC_NAME, conn
            # The SBC's ACG-facing address, which is what ACG's own ACL sees.
            assert conn.peer[0] == TOPO.sbc_acg, conn
    # Like ACG, the fronts refuse handshakes without SNI: the SBC never tried one, and every
    # connection carried its region's hostname.
    _assert_every_handshake_carried_sni(lab)


def _assert_every_handshake_carried_sni(lab: TlsLab) -> None:
    for address in R1 + R2:
        attempts = lab.fronts[address].snapshot()
        assert all(c.sni == (R1_HOST if address in R1 else R2_HOST) for c in attempts), (address, _brief(
            lab.fronts[address]))


def test_pings_carry_sni_when_peers_close_every_connection(peers: TlsLab) -> None:
    """Issue 15: peers that close the connection after every response (as ACG may close idle ones)
    make every ping and every call open a new connection. Kamailio's own pings cannot carry SNI; the
    SBC relays them through itself (obproxy -> route COMMSGW_TLS_PING) so they do: every handshake
    carries SNI, every peer stays active through two health windows, calls complete."""
    lab = peers
    lab.close_after_response = True
    try:
        lab.start_all_peers()
        lab.settle()
        deadline = time.monotonic() + 2 * 2 + 0.5  # two health windows (1 s x 2)
        while time.monotonic() < deadline:
            states = {a: lab.state(a)[:1] for a in R1 + R2}
            assert set(states.values()) == {"A"}, (states, lab.kamailio.log_tail(20) if lab.kamailio else "")
            time.sleep(0.25)
        result = lab.call("tls-reconnect", 6)
        assert result.codes() == {200: 6}, result.codes()
        for address in R1 + R2:
            # A ping a second for 4.5 s, each on its own connection.
            assert len(lab.fronts[address].handshakes(ok=True)) >= 4, (address, _brief(lab.fronts[address]))
        _assert_every_handshake_carried_sni(lab)
    finally:
        lab.close_after_response = False


def test_in_dialog_requests_keep_the_tls_name_of_their_dialog(peers: TlsLab) -> None:
    """Issue 15 / R-23: a region migration removes the call's /28 (address.list reloaded: neither ACL
    nor TLS name any more) while the call is up. Its BYE, on a new connection since the peer closes
    each one, still goes with the name the dialog was set up with (SNI) and its 200 is accepted
    against that name, because the SBC recorded the name in its Record-Route (parameter cgwtls)."""
    lab = peers
    assert lab.kamailio is not None
    lab.close_after_response = True
    address_list = lab.cfg_dir / "address.list"
    original = address_list.read_text()
    try:
        lab.start_all_peers()
        lab.settle()
        caller = SippCaller("tls-dialog", lab.workdir / "sipp", TOPO.core_caller, "%s:5060" % TOPO.sbc_core,
                            hold_ms=4000)
        caller.start(1, rate=1, timeout_s=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(lab.invites(a) for a in R1[:2]):
            time.sleep(0.1)
        assert any(lab.invites(a) for a in R1[:2]), lab.kamailio.log_tail(20)
        # The narrow step of a migration: region 1's ranges leave address.list (ACL and TLS names).
        narrowed = "".join(line for line in original.splitlines(keepends=True) if "tls=" + R1_HOST not in line)
        assert narrowed != original
        address_list.write_text(narrowed)
        _address_reload(lab)
        result = caller.wait(40)
        # SIPp counts a call successful only when its BYE got a 200.
        assert (result.successful, result.failed) == (1, 0), (result.codes(), [_brief(lab.fronts[a]) for a in R1[:2]],
                                                              lab.kamailio.log_tail(30))
        byes = [c for a in R1[:2] for c in lab.fronts[a].snapshot() if "BYE" in c.requests]
        assert byes and all(c.ok and c.sni == R1_HOST for c in byes), byes
    finally:
        address_list.write_text(original)
        _address_reload(lab)
        lab.close_after_response = False


def _address_reload(lab: TlsLab, timeout_s: float = 10.0) -> None:
    """permissions.addressReload, waiting out its minimum interval between reloads (5 s)."""
    assert lab.kamailio is not None
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            lab.kamailio.rpc("permissions.addressReload")
            return
        except KamailioError as exc:
            if "ongoing reload" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_peer_certificate_from_another_ca_is_refused(peers: TlsLab) -> None:
    """R-24: a peer whose certificate (right host name) chains to an unrelated root never gets a
    call: Kamailio aborts the handshake, the peer is taken out and calls complete on the other
    local peer."""
    lab = peers
    rogue = R1[0]
    lab.start_all_peers({rogue: lab.pki.rogue_peer})
    lab.settle(bad=[rogue])
    result = lab.call("tls-rogue", 4)
    assert result.codes() == {200: 4}, result.codes()
    assert lab.invites(rogue) == 0
    assert lab.invites(R1[1]) == 4
    front = lab.fronts[rogue]
    # The SBC's handshakes with SNI (calls, warm-up) reach the certificate stage, and Kamailio as the
    # client rejects it with an "unknown CA" alert; pings without SNI are refused by the peer itself.
    assert front.wait_for(lambda f: any(c.sni == R1_HOST for c in f.handshakes()), timeout=8), front.snapshot()
    attempts = front.handshakes()
    assert attempts and not any(c.ok for c in attempts), attempts
    assert all(c.error and "UNKNOWN_CA" in c.error.upper() for c in attempts if c.sni == R1_HOST), attempts


def test_trusted_certificate_for_the_wrong_host_is_refused(peers: TlsLab) -> None:
    """R-24: a peer certificate from the trusted root but for another host name (wrong.example) is
    refused although the chain verifies (Kamailio itself checks no host name): the peer is taken
    out, its connection closed, and calls complete on the other local peer."""
    lab = peers
    wrong = R1[0]
    lab.start_all_peers({wrong: lab.pki.wrong_host})
    lab.settle(bad=[wrong])
    before = lab.invites(wrong)
    result = lab.call("tls-wrong-host", 4)
    assert result.codes() == {200: 4}, result.codes()
    assert lab.invites(wrong) == before == 0
    assert lab.invites(R1[1]) == 4
    front = lab.fronts[wrong]
    # The chain is accepted (handshake ok, with SNI: the warm-up or a call opens it), but Kamailio
    # closes every such connection once it has seen the certificate's host name.
    assert front.wait_for(lambda f: any(c.sni == R1_HOST and c.closed_at for c in f.handshakes(ok=True)),
                          timeout=8), _brief(front)
    accepted = front.handshakes(ok=True)
    assert all(c.sni == R1_HOST for c in accepted), _brief(front)
    assert all(c.closed_at is not None for c in accepted if c.opened_at < time.time() - 2), _brief(front)
    assert not any("INVITE" in c.requests for c in accepted), _brief(front)
    assert lab.kamailio is not None and "refused (R-24)" in lab.kamailio.log_text()


def test_peers_refusing_connections_count_as_no_response(peers: TlsLab) -> None:
    """R-14: a local peer that refuses the connection gave no response at all, so the call moves on
    to the next local peer; the caller never sees Kamailio's local "477 send failed". Both best-tier
    peers go away at once, before OPTIONS can take them out, so the first call must try at least one
    of them and only the retry can complete it (on the priority-20 peer)."""
    lab = peers
    lab.start_all_peers()
    lab.settle()
    for address in R1[:2]:
        lab.stop_peer(address)  # nothing listens any more: connection refused
    result = lab.call("tls-refused", 1)
    assert result.codes() == {200: 1}, (result.codes(), lab.kamailio.log_tail(30) if lab.kamailio else "")
    assert lab.invites(R1[2]) == 1
    assert lab.invites(R2[0]) == lab.invites(R2[1]) == 0


def _options(source: str) -> bytes:
    return ("OPTIONS sip:%s:%d;transport=tls SIP/2.0\r\n"
            "Via: SIP/2.0/TLS %s:5061;branch=z9hG4bK-k2-%d\r\n"
            "From: <sip:acg@%s>;tag=k2\r\nTo: <sip:sbc@%s>\r\nCall-ID: k2-%d@%s\r\nCSeq: 1 OPTIONS\r\n"
            "Max-Forwards: 70\r\nContent-Length: 0\r\n\r\n" % (
                TOPO.sbc_acg, SBC_TLS_PORT, source, time.time_ns(), R1_HOST, SBC_NAME, time.time_ns(),
                source)).encode()


def test_sbc_tls_listener_requires_an_acg_client_certificate(lab: TlsLab) -> None:
    """R-24 inbound: the SBC's ACG-facing TLS listener refuses a client without a certificate, and
    one with a trusted certificate for the wrong host name; ACG's certificate is served."""
    address = (TOPO.sbc_acg, SBC_TLS_PORT)
    source = TOPO.region1(9)  # inside the ACG /28, so the ACL is not what refuses
    ca = lab.pki.operator_ca.cert  # the SBC presents its operator-signed certificate
    no_cert = tls_client(address, ca, sni=SBC_NAME, send=_options(source), source=source)
    assert not no_cert.ok and no_cert.reply is None, no_cert
    good = lab.pki.peers[R1_HOST]
    ok = tls_client(address, ca, cert=good.chain, key=good.key, sni=SBC_NAME, send=_options(source), source=source)
    assert ok.ok and ok.reply is not None and ok.reply.startswith(b"SIP/2.0 200"), ok
    assert ok.server_subject and ok.server_subject.get("commonName") == SBC_NAME
    wrong = lab.pki.wrong_host
    refused = tls_client(address, ca, cert=wrong.chain, key=wrong.key, sni=SBC_NAME, send=_options(source),
                         source=source)
    assert refused.reply is not None and refused.reply.startswith(b"SIP/2.0 403"), refused
    rogue = lab.pki.rogue_peer
    untrusted = tls_client(address, ca, cert=rogue.chain, key=rogue.key, sni=SBC_NAME, send=_options(source),
                           source=source)
    assert not untrusted.ok and untrusted.reply is None, untrusted


# ---- issue 21: who may make the SBC relay what -------------------------------------------------------------
def _to_sbc(lab: TlsLab, request: bytes, source: str, cert: pkimod.Issued) -> HandshakeResult:
    """``request`` over mutual TLS from ``source`` (presenting ``cert``) to the SBC's ACG-facing listener."""
    return _to_sbc_at(TOPO.sbc_acg, lab, request, source, cert)


def _to_sbc_at(address: str, lab: TlsLab, request: bytes, source: str, cert: pkimod.Issued) -> HandshakeResult:
    return tls_client((address, SBC_TLS_PORT), lab.pki.operator_ca.cert, cert=cert.chain, key=cert.key,
                      sni=SBC_NAME, send=request, source=source)


def _nobody_got(lab: TlsLab, marker: str, sinks: t.Sequence[UdpSink], method: str = "", settle_s: float = 1.5
                ) -> list[str]:
    """Where a request carrying ``marker`` (a Call-ID) arrived after ``settle_s``: sinks and ACG fronts
    (there only ``method`` requests, when given)."""
    time.sleep(settle_s)
    reached = ["%s:%d" % s.sock.getsockname() for s in sinks if any(marker.encode() in m for m in s.received)]
    return reached + [a for a, f in lab.fronts.items()
                      if [h for h in f.heads_with(marker.encode()) if h.startswith(method.encode())]]


def _retire(lab: TlsLab, hostname: str, until: float) -> None:
    """A narrowing's address.list: the /28s of ``hostname`` leave the ACL and are retired until ``until``
    (plan field acl.retired, as migration computes it), reloaded at run time: nothing else changes."""
    plan = copy.deepcopy(lab.plan)
    retired = [e for e in plan["acl"]["ranges"] if e["hostname"] == hostname]
    plan["acl"]["ranges"] = [e for e in plan["acl"]["ranges"] if e["hostname"] != hostname]
    plan["acl"]["retired"] = [dict(e, until=int(until)) for e in retired]
    before = dict(lab.files)
    lab.write_files(plan)
    # commsgw-srv.json (the refresher's input: its acl_ranges) is read by no Kamailio.
    assert {n for n in lab.files if lab.files[n] != before[n]} <= {"address.list", "commsgw-srv.json"}, "a reload"
    _address_reload(lab)


def _restore(lab: TlsLab) -> None:
    lab.write_files(lab.plan)
    _address_reload(lab)


def _route_of(dialog: Dialog, host: str) -> list[str]:
    """The dialog's route set with the SBC's own dialog parameters moved onto ``host`` (a forged top Route)."""
    params = re.search(r";cgwtls=[^>]*", dialog.record_route[0])
    assert params, dialog.record_route
    return ["<sip:%s:5060;lr%s>" % (host, params.group(0))] + dialog.record_route


def test_a_forged_dialog_route_from_outside_every_range_reaches_nobody(peers: TlsLab) -> None:
    """The reviewer's attack: a client outside every ACG /28, with a certificate chaining to the ACG
    root that names its own host, sends an in-dialog BYE whose Route carries the dialog parameter with
    its own name (the name its certificate passes for). Before issue 21 Kamailio relayed it from its
    core socket to whatever the Route named. Now: refused, nothing reaches any listener."""
    lab = peers
    lab.start_all_peers()
    lab.settle()
    attacker, target = TOPO.outsider(9), TOPO.outsider(10)
    own = lab.pki.wrong_host  # chains to the ACG root, names wrong.example (the attacker's own host)
    sinks = [UdpSink(target), UdpSink(TOPO.core_next_hop), UdpSink(TOPO.core_caller)]
    marker = "attack-%s" % uuid.uuid4().hex
    forged = Dialog(call_id=marker, caller_uri="sip:victim@%s:5060" % TOPO.core_next_hop, caller_tag="a1",
                    callee_uri="sip:+4930123456@%s" % TOPO.sbc_core, callee_tag="b2", callee_contact="",
                    record_route=[])
    sbc = "sip:%s:%d;transport=tls;lr" % (TOPO.sbc_acg, SBC_TLS_PORT)
    variants = {
        "the reviewer's Route": ["<sip:%s:5060;lr;cgwtls=wrong.example>" % target],
        "the SBC's Route, name without a MAC": ["<%s;cgwtls=wrong.example>" % sbc],
        "the SBC's Route, a forged MAC": ["<%s;cgwtls=wrong.example;cgwmac=%s>" % (sbc, "a" * 33)],
    }
    try:
        replies = {}
        for what, route in variants.items():
            request_uri = forged.caller_uri if what == "the reviewer's Route" else "sip:x@%s:5060" % target
            request = in_dialog(forged, attacker, route=route, request_uri=request_uri)
            replies[what] = status(_to_sbc(lab, request, attacker, own).reply)
        reached = _nobody_got(lab, marker, sinks)
    finally:
        for sink in sinks:
            sink.close()
    assert all(code in (403, 404) for code in replies.values()), replies
    assert reached == [], reached


def test_in_dialog_requests_from_acg_go_to_the_core_side_only(peers: TlsLab) -> None:
    """A peer inside an ACG /28, with the right certificate, sends an in-dialog BYE through the SBC
    (top Route: the SBC) to a host that is not the core: refused, the host gets nothing."""
    lab = peers
    lab.start_all_peers()
    lab.settle()
    source, target = TOPO.region2(9), TOPO.outsider(11)
    sink = UdpSink(target)
    marker = "hop-%s" % uuid.uuid4().hex
    dialog = Dialog(call_id=marker, caller_uri="sip:x@%s:5060" % target, caller_tag="c1",
                    callee_uri="sip:+4930123456@%s" % TOPO.sbc_core, callee_tag="d2", callee_contact="",
                    record_route=["<sip:%s:%d;transport=tls;lr>" % (TOPO.sbc_acg, SBC_TLS_PORT)])
    try:
        reply = _to_sbc(lab, in_dialog(dialog, source), source, lab.pki.peers[R2_HOST])
        reached = _nobody_got(lab, marker, [sink])
    finally:
        sink.close()
    assert status(reply.reply) == 403, reply
    assert reached == [], reached


def test_a_retired_peer_ends_its_call_and_nothing_else_passes(peers: TlsLab) -> None:
    """R-23 after a migration narrowed the ACL: the peer of a call set up before is out of every /28, its
    /28 retired (address.list group 3, reloaded). Its BYE still ends the call (200 from the caller),
    because its Route carries the dialog's name with the SBC's own MAC. Refused, reaching nobody: a
    forged MAC, the dialog's Route without its MAC, a valid MAC of another Call-ID, the SBC's parameters
    under a top Route that is not the SBC, a next hop that is not the core, and the real BYE once the
    retirement's time is up."""
    lab = peers
    lab.start_all_peers()
    lab.settle()
    uac = CoreUac(TOPO.net(31, 7), (TOPO.sbc_core, 5060))
    target = TOPO.outsider(12)
    sink = UdpSink(target)
    try:
        dialog = uac.call()
        [peer] = [a for a in R1 if lab.fronts[a].heads_with(dialog.call_id.encode())]
        _retire(lab, R1_HOST, time.time() + 3600)
        cert = lab.pki.peers[R1_HOST]
        route = dialog.record_route
        real = dialog_mac(lab.secret_dir / "secret.cfg", dialog.call_id, R1_HOST)
        forged = {
            "forged MAC": in_dialog(dialog, peer, route=_with_mac(route, "a" * 33)),
            "truncated MAC": in_dialog(dialog, peer, route=_with_mac(route, real[:-1])),
            "altered MAC": in_dialog(dialog, peer, route=_with_mac(route, real[:-1] + ("1" if real[-1] == "0" else "0"))),
            "lengthened MAC": in_dialog(dialog, peer, route=_with_mac(route, real + "0")),
            "no MAC": in_dialog(dialog, peer, route=[re.sub(r";cgwmac=[^;>]+", "", r) for r in route]),
            "MAC of another Call-ID": in_dialog(dialog, peer, call_id="other-" + dialog.call_id),
            "top Route not the SBC": in_dialog(dialog, peer, route=_route_of(dialog, target)),
            "next hop not the core": in_dialog(dialog, peer, request_uri="sip:x@%s:5060" % target),
        }
        replies = {what: status(_to_sbc(lab, msg, peer, cert).reply) for what, msg in forged.items()}
        reached = _nobody_got(lab, dialog.call_id, [sink], method="BYE ")
        byes_before = list(uac.requests_with("BYE "))
        # Bounded retention: once the retirement's time is up even the real BYE is refused.
        _retire(lab, R1_HOST, time.time() - 1)
        expired = status(_to_sbc(lab, in_dialog(dialog, peer), peer, cert).reply)
        _retire(lab, R1_HOST, time.time() + 3600)
        ended = _to_sbc(lab, in_dialog(dialog, peer), peer, cert)
        time.sleep(0.5)
        byes = uac.requests_with("BYE ")
    finally:
        sink.close()
        uac.close()
        _restore(lab)
    assert replies == {what: 403 for what in forged}, (replies, lab.kamailio.log_tail(20) if lab.kamailio else "")
    assert reached == [] and byes_before == [], (reached, byes_before)
    assert expired == 403
    assert status(ended.reply) == 200, (ended, lab.kamailio.log_tail(20) if lab.kamailio else "")
    assert len(byes) == 1 and dialog.call_id.encode() in byes[0], byes
    # The SBC recorded the peer's name and its MAC in both of its Record-Routes: HMAC-SHA256 with the key of
    # its secret file (Python's hmac), as docs/kamailio-tls.md describes it.
    assert all(re.search(r";cgwtls=%s;cgwmac=%s[;>]" % (re.escape(R1_HOST), real), rr)
               for rr in dialog.record_route), (real, dialog.record_route)


def test_a_core_request_with_the_sbcs_dialog_name_under_a_foreign_top_route_reaches_nobody(peers: TlsLab) -> None:
    """Issue 21 from the core side: an in-dialog BYE from the core whose top Route names another host is refused
    (403) and reaches neither that host nor any ACG peer, also when that Route carries the SBC's own dialog
    parameters (the name and its valid MAC, copied from the dialog's Record-Route): a name the SBC would believe
    does not make it follow a foreign Route. The route set the SBC recorded then ends the call at its peer.
    route[COMMON] reads a core request's dialog name from its top Route only after that refusal, which this test
    needs; the order itself is pinned by the render test."""
    lab = peers
    lab.start_all_peers()
    lab.settle()
    uac = CoreUac(TOPO.net(31, 7), (TOPO.sbc_core, 5060))
    target = TOPO.outsider(13)
    sink = UdpSink(target)
    try:
        dialog = uac.call()
        assert all(";cgwmac=" in rr for rr in dialog.record_route), dialog.record_route
        forged = _core_bye(uac, dialog, _route_of(dialog, target)[:1] + list(reversed(dialog.record_route)), cseq=2)
        reached = _nobody_got(lab, dialog.call_id, [sink], method="BYE ")
        ended = _core_bye(uac, dialog, list(reversed(dialog.record_route)), cseq=3)
        byes = [a for a in R1 for c in lab.fronts[a].snapshot() for h in c.heads
                if h.startswith(b"BYE ") and dialog.call_id.encode() in h]
    finally:
        sink.close()
        uac.close()
    assert forged == 403 and reached == [], (forged, reached, lab.kamailio.log_tail(20) if lab.kamailio else "")
    assert ended == 200 and len(byes) == 1, (ended, byes, lab.kamailio.log_tail(20) if lab.kamailio else "")


def _core_bye(uac: CoreUac, dialog: Dialog, route: t.Sequence[str], cseq: int) -> t.Optional[int]:
    """A BYE of ``dialog`` from the core's side (``uac``) with the Route set ``route``; the final status it got."""
    return status(uac.final_response(uac.send_in_dialog(dialog, "BYE", cseq, route), 5.0))


def _with_mac(route: list[str], mac: str) -> list[str]:
    return [re.sub(r"cgwmac=[^;>]+", "cgwmac=" + mac, r) for r in route]


def dialog_mac(secret_file: Path, call_id: str, name: str) -> str:
    """The dialog-name MAC docs/kamailio-tls.md describes, computed here with Python's hmac from the key of the
    SBC's secret file: the first 33 hex digits of HMAC-SHA256(key, "<len(name)>:<name>:<Call-ID>")."""
    key = dialog_key(secret_file.read_text())
    assert key, "no dialog key in %s" % secret_file
    return expected_dialog_mac(key, name, call_id)


# An unprivileged local user's OPTIONS to the ping relay (argv: bind address, relay address and port, ACG
# peer address and port, Call-ID prefix): once with From user "options", once with a guessed token.
LOCAL_USER_OPTIONS = r"""
import socket, sys
bind, relay, relay_port, peer, peer_port, marker = sys.argv[1:7]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((bind, 0))
s.settimeout(1.0)
port = s.getsockname()[1]
for n, user in enumerate(("options", "cgwping-" + "0" * 32)):
    msg = ("OPTIONS sip:%s:%s;transport=tls SIP/2.0\r\nVia: SIP/2.0/UDP %s:%d;branch=z9hG4bK%s%d\r\n"
           "Max-Forwards: 70\r\nFrom: <sip:%s@%s>;tag=l%d\r\nTo: <sip:%s:%s>\r\nCall-ID: %s-%d\r\n"
           "CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
           % (peer, peer_port, bind, port, marker, n, user, bind, n, peer, peer_port, marker, n))
    s.sendto(msg.encode(), (relay, int(relay_port)))
    try:
        print(s.recv(65535).split(b"\r\n")[0].decode())
    except socket.timeout:
        print("no reply")
"""


def test_the_ping_relay_relays_only_the_sbcs_own_pings(peers: TlsLab) -> None:
    """Issue 21 item 12: any local user may bind the ACG-facing address and send OPTIONS to the ping relay
    socket; only the SBC's own pings (its secret token in their From) are relayed with the SBC's
    certificate. An unprivileged user's OPTIONS never reaches the peer; the SBC's pings still do, and
    leave without the token."""
    lab = peers
    lab.start_all_peers()
    lab.settle()
    marker = "local-%s" % uuid.uuid4().hex
    proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3",
                           "-c", LOCAL_USER_OPTIONS, TOPO.sbc_acg, TOPO.sbc_acg, str(SBC_TLS_PORT), R1[0],
                           str(PEER_PORT), marker], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    reached = _nobody_got(lab, marker, [])
    assert reached == [], (reached, proc.stdout)
    assert "SIP/2.0 200" not in proc.stdout, proc.stdout
    # The dispatcher's own pings keep flowing through the relay, with SNI and without the token.
    front = lab.fronts[R1[0]]
    pings = [h for c in front.snapshot() if c.sni == R1_HOST for h, m in zip(c.heads, c.requests) if m == "OPTIONS"]
    assert pings, _brief(front)
    assert all(re.search(rb"^From: <?sip:options@", h, re.M | re.I) and b"cgwping-" not in h for h in pings), pings[:2]


def test_a_configuration_rendered_offline_starts_without_the_secret(lab: TlsLab, tmp_path: Path) -> None:
    """playbooks/render.yml renders for a directory and touches no host, so no secret file is there: the
    configuration still starts with `kamailio -f <dir>/kamailio.cfg` (import_file tolerates the missing
    file), and without the key it believes no dialog name and relays no ping (never an unkeyed value)."""
    from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio
    lease = BlockLease()
    topo = Topology(block=lease.block, domain=DOMAIN)
    config_dir = tmp_path / "render" / "sbc-ams-1"
    config_dir.mkdir(parents=True)
    settings = dict(lab.settings(), acg_listen={"address": topo.sbc_acg, "port": SBC_TLS_PORT},
                    core_listen={"address": topo.sbc_core, "port": 5060, "transport": "udp"},
                    core_next_hop="%s:5060" % topo.core_next_hop, core_allowed_sources=[topo.core_network],
                    config_dir=str(config_dir), run_dir=str(tmp_path / "run"),
                    secret_file=str(tmp_path / "absent" / "secret.cfg"))
    write_rendered(config_dir, render_kamailio(lab.plan, settings, lab.runtime.version))
    kamailio = KamailioProcess(config_dir / "kamailio.cfg", tmp_path / "kamailio", tmp_path / "run",
                               shared_memory_mb=256, rootfs=lab.runtime.rootfs, binds=[lab.cfg_dir / "pki"])
    try:
        kamailio.start()
        forged = Dialog(call_id="offline-%s" % uuid.uuid4().hex, caller_uri="sip:x@%s:5060" % topo.core_next_hop,
                        caller_tag="e1", callee_uri="sip:+4930123456@%s" % topo.sbc_core, callee_tag="f2",
                        callee_contact="", record_route=[])
        route = ["<sip:%s:%d;transport=tls;lr;cgwtls=wrong.example>" % (topo.sbc_acg, SBC_TLS_PORT)]
        reply = _to_sbc_at(topo.sbc_acg, lab, in_dialog(forged, topo.outsider(9), route=route), topo.outsider(9),
                           lab.pki.wrong_host)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "ping relay: no SBC secret" not in kamailio.log_text():
            time.sleep(0.2)
        log = kamailio.log_text()
    finally:
        kamailio.stop()
        lease.close()
    assert status(reply.reply) == 403, reply
    assert "ping relay: no SBC secret (%s)" % settings["secret_file"] in log, log[-3000:]
