# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile SIP and TLS peers against the live probe (issue 13, items 3, 4 and the probe part of 10).

Scripted peers on real loopback sockets (UDP, TCP, and TLS with certificates from the harness PKI,
tests/harness/pki.py) answer the probe's OPTIONS with garbage, oversized messages, floods of stray
replies, huge reason phrases and headers, wrong Call-ID/CSeq, lying Content-Length, requests, NUL
bytes, and slowloris drips. The probe must not crash (a crash shows as "probe error" in the
result's detail), must stay within its per-peer time bound, and its result must stay small.
The totals (messages tried, crashes) are printed at the end.

Addresses: 127.0.191.1 (the probe's test block, third octet 150-199), ports chosen by the kernel
(port 0), so concurrent runs never collide.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import threading
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as lim
from ansible_collections.commsgw.routing.plugins.module_utils.probe import tls as probe_tls
from ansible_collections.commsgw.routing.plugins.module_utils.probe import verdicts as probe_verdicts
from harness.pki import StandardPKI, TestCA, standard_pki

pytestmark = pytest.mark.integration

ADDRESS = "127.0.191.1"
HOST = "pstn-region1.hostile.test"
TIMEOUT_S = 1.0
MAX_RESULT_CHARS = 6000  # the JSON of one peer's result, whatever the peer sent
Item = t.Union[bytes, float]  # bytes: sent as one write/datagram; float: a pause in seconds
Script = t.Callable[[bytes], t.Iterable[Item]]
TOTALS = {"behaviours": 0, "messages": 0, "bytes": 0, "crashes": 0, "over_time": 0, "over_size": 0}


def _field(request: bytes, name: str) -> str:
    for line in request.decode("utf-8", "replace").split("\r\n"):
        if line.lower().startswith(name.lower() + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def reply(request: bytes, code: int = 200, reason: str = "OK", call_id: t.Optional[str] = None,
          via: t.Optional[str] = None, cseq: str = "1 OPTIONS", extra: str = "", body: bytes = b"",
          length: t.Optional[str] = None) -> bytes:
    head = ("SIP/2.0 %d %s\r\nVia: %s\r\nFrom: %s\r\nTo: <sip:x>;tag=h\r\nCall-ID: %s\r\nCSeq: %s\r\n%s"
            "Content-Length: %s\r\n\r\n" % (code, reason, via or _field(request, "Via"), _field(request, "From"),
                                            call_id or _field(request, "Call-ID"), cseq, extra,
                                            length if length is not None else len(body)))
    return head.encode("utf-8", "surrogateescape") + body


def _flood(request: bytes, n: int = 400, then_ours: bool = True) -> list[Item]:
    items: list[Item] = [reply(request, 200, "Stray %d" % i, call_id="stray-%d-%s" % (i, "c" * 200))
                         for i in range(n)]
    return items + ([reply(request)] if then_ours else [])


def _drip(request: bytes) -> t.Iterator[Item]:
    yield b"SIP/2.0 200 OK\r\n"
    for dummy in range(400):  # far longer than the probe's bound
        yield 0.02
        yield b"X"


# name -> (script, whether the probe may call the peer healthy)
BEHAVIOURS: dict[str, tuple[Script, bool]] = {
    "binary_garbage": (lambda req: [os.urandom(3000)], False),
    "garbage_then_end_of_headers": (lambda req: [os.urandom(500) + b"\r\n\r\n"], False),
    "oversized_message": (lambda req: [reply(req, extra="X-Pad: %s\r\n" % ("p" * 60000))], False),
    "huge_reason_phrase": (lambda req: [reply(req, 200, "R" * 12000)], True),
    "huge_non_2xx_reason": (lambda req: [reply(req, 503, "U" * 12000)], False),
    "huge_server_header": (lambda req: [reply(req, extra="Server: %s\r\n" % ("S" * 12000))], True),
    "many_headers": (lambda req: [reply(req, extra="".join("X-H%d: v\r\n" % i for i in range(600)))], False),
    "folded_header_bomb": (lambda req: [reply(req, extra="X-Fold: a\r\n" + " b\r\n" * 3000)], False),
    "wrong_call_id_huge": (lambda req: [reply(req, call_id="c" * 9000)], False),
    "wrong_cseq_method": (lambda req: [reply(req, cseq="1 " + "INVITE" * 1000)], False),
    "wrong_cseq_number": (lambda req: [reply(req, cseq="999999999999999999999 OPTIONS")], False),
    "wrong_branch_huge": (lambda req: [reply(req, via="SIP/2.0/TCP h;branch=z9hG4bK" + "b" * 8000)], False),
    "stray_flood_then_ours": (_flood, True),
    "stray_flood_only": (lambda req: _flood(req, then_ours=False), False),
    "content_length_lies_high": (lambda req: [reply(req, length="999999999")], False),
    "content_length_not_a_number": (lambda req: [reply(req, length="-1")], False),
    "request_instead_of_reply": (lambda req: [req], False),
    "nul_and_control_bytes": (lambda req: [reply(req, 200, "O\x00K\x1b[31m")], True),
    "non_utf8_headers": (lambda req: [reply(req).replace(b"To: <sip:x>", b"To: <sip:\xff\xfe>")], False),
    "crlf_keepalive_flood": (lambda req: [b"\r\n" * 30000], False),
    "provisional_flood": (lambda req: [reply(req, 100, "Trying " + "t" * 500)] * 300, False),
    "duplicate_finals": (lambda req: [reply(req)] * 50, True),
    "slowloris_drip": (_drip, False),
}


class ScriptedPeer:
    """One UDP, TCP or TLS peer on ADDRESS that answers each request per a script, until closed."""

    def __init__(self, transport: str, script: Script, server_ctx: t.Optional[ssl.SSLContext] = None) -> None:
        self.transport, self.script, self.server_ctx = transport, script, server_ctx
        self.stop = threading.Event()
        self.sent = 0
        self.sent_bytes = 0
        self.client_certs: list[t.Optional[dict]] = []  # per TLS connection whose handshake completed
        self.requests = 0
        kind = socket.SOCK_DGRAM if transport == "udp" else socket.SOCK_STREAM
        self.sock = socket.socket(socket.AF_INET, kind)
        self.sock.bind((ADDRESS, 0))
        if transport != "udp":
            self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _play(self, request: bytes, send: t.Callable[[bytes], t.Any]) -> None:
        for item in self.script(request):
            if self.stop.is_set():
                return
            if isinstance(item, float):
                time.sleep(item)
                continue
            self.sent += 1  # counted when tried: the probe may close the connection mid-write
            self.sent_bytes += len(item)
            send(item)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                if self.transport == "udp":
                    data, peer = self.sock.recvfrom(65536)
                    self.requests += 1
                    self._play(data, lambda chunk, p=peer: self.sock.sendto(chunk[:65000], p))
                    continue
                conn, _addr = self.sock.accept()
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                return
            try:
                self._stream(conn)
            except (OSError, ssl.SSLError):
                pass  # the probe closed the connection at its deadline: expected
            finally:
                conn.close()

    def _stream(self, conn: socket.socket) -> None:
        conn.settimeout(2.0)
        if self.server_ctx is not None:
            conn = self.server_ctx.wrap_socket(conn, server_side=True)
            self.client_certs.append(conn.getpeercert() or None)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        self.requests += 1
        self._play(data, conn.sendall)
        conn.settimeout(0.1)
        while not self.stop.is_set():  # keep the connection open until the probe gives up
            try:
                if not conn.recv(4096):
                    return
            except (socket.timeout, TimeoutError):
                continue

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> StandardPKI:
    return standard_pki(tmp_path_factory.mktemp("pki"), [HOST])


def server_context(cert: t.Any, pki: StandardPKI) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert.chain), str(cert.key))
    ctx.verify_mode = ssl.CERT_OPTIONAL  # ask for the SBC's certificate, record whether it came
    ctx.load_verify_locations(cafile=str(pki.operator_ca.cert))
    return ctx


def settings(pki: StandardPKI) -> probe.ProbeSettings:
    return probe.ProbeSettings(timeout_s=TIMEOUT_S, allowed_transports=("udp", "tcp", "tls"),
                               client_cert=str(pki.sbc.cert), client_key=str(pki.sbc.key),
                               ca_bundle=str(pki.acg_ca.cert))


def target(port: int, transport: str) -> probe.PeerTarget:
    return probe.PeerTarget(kind="sip", region="region1", srv_name="_sip._%s.%s" % (transport, HOST), hostname=HOST,
                            verify_hostname=HOST, target="p1." + HOST, address=ADDRESS, port=port, priority=10,
                            weight=10, transport=transport, in_range=True, ranges=("127.0.191.0/28",))


def run(peer: ScriptedPeer, transport: str, pki: StandardPKI) -> tuple[probe.PeerResult, float]:
    start = time.monotonic()
    try:
        result = probe.probe_peer(target(peer.port, transport), settings(pki))
    finally:
        elapsed = time.monotonic() - start
        peer.close()
    probe_verdicts.peer_verdict(result, probe.Thresholds())
    return result, elapsed


@pytest.mark.parametrize("transport", ["udp", "tcp", "tls"])
@pytest.mark.parametrize("name", sorted(BEHAVIOURS))
def test_hostile_reply(name: str, transport: str, pki: StandardPKI) -> None:
    script, may_be_healthy = BEHAVIOURS[name]
    ctx = server_context(pki.peers[HOST], pki) if transport == "tls" else None
    peer = ScriptedPeer(transport, script, ctx)
    result, elapsed = run(peer, transport, pki)
    data = json.dumps(result.as_dict())
    TOTALS["behaviours"] += 1
    TOTALS["messages"] += peer.sent
    TOTALS["bytes"] += peer.sent_bytes
    crashed = result.detail.startswith("probe error")
    TOTALS["crashes"] += int(crashed)
    TOTALS["over_time"] += int(elapsed > TIMEOUT_S + 0.5)
    TOTALS["over_size"] += int(len(data) > MAX_RESULT_CHARS)
    assert peer.requests >= 1 and peer.sent >= 1, "the peer never answered: nothing was tried"
    assert not crashed, result.detail
    assert elapsed <= TIMEOUT_S + 0.5, "%.2f s, bound %.1f s" % (elapsed, TIMEOUT_S)
    assert len(data) <= MAX_RESULT_CHARS, "%d chars: %s" % (len(data), data[:500])
    assert result.healthy == (result.failure is None)
    if not may_be_healthy:
        assert not result.healthy and result.verdict == "fail", result
    assert len(result.stray_replies) <= lim.MAX_STRAY_KEPT
    for text in (result.reason, result.server):
        assert text is None or len(text) <= lim.MAX_REFLECTED_CHARS + len(lim.CLIP_MARKER) + 10
    if name.startswith("huge_") or name == "wrong_call_id_huge":
        assert "more chars]" in data, "a clipped field carries the marker"
    if name.startswith("stray_flood") and transport != "udp":
        assert result.stray_count >= 100 and len(result.stray_replies) == lim.MAX_STRAY_KEPT


def test_zz_totals(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints what the hostile suite tried (runs last: test names sort after test_hostile_reply)."""
    with capsys.disabled():
        print("\nhostile SIP to the probe: %(behaviours)d peers (behaviours x UDP/TCP/TLS), %(messages)d messages "
              "(%(bytes)d bytes) sent, crashes %(crashes)d, over time %(over_time)d, over size %(over_size)d"
              % TOTALS)
    assert TOTALS["crashes"] == 0 and TOTALS["over_time"] == 0 and TOTALS["over_size"] == 0
    if TOTALS["behaviours"]:
        assert TOTALS["behaviours"] == 3 * len(BEHAVIOURS)


# ---------------------------------------------------------------------------------------------------------
# Hostile TLS: what a peer's certificate makes the probe do


def test_refused_peer_never_gets_the_client_certificate(pki: StandardPKI) -> None:
    # A peer with a certificate from an unrelated CA: the verified handshake fails, and the probe
    # connects once more unverified to describe the certificate. That connection must not carry the
    # SBC's certificate: an impostor would otherwise learn it (and could replay who the SBC is).
    peer = ScriptedPeer("tls", lambda req: [reply(req)], server_context(pki.rogue_peer, pki))
    result, _elapsed = run(peer, "tls", pki)
    assert result.failure == probe.TLS_UNKNOWN_CA, result
    assert peer.client_certs, "the diagnostic connection was not made"
    assert peer.client_certs == [None] * len(peer.client_certs), peer.client_certs
    assert peer.requests == 0  # nor any OPTIONS
    assert result.tls is not None and result.tls["issuer"]["commonName"] == "Unrelated Rogue Root"


def test_verified_peer_does_get_the_client_certificate(pki: StandardPKI) -> None:
    peer = ScriptedPeer("tls", lambda req: [reply(req)], server_context(pki.peers[HOST], pki))
    result, _elapsed = run(peer, "tls", pki)
    assert result.healthy, result
    assert peer.client_certs and peer.client_certs[0] is not None  # mutual TLS where it belongs


@pytest.mark.parametrize("dns, cn, failure, words", [
    (["other.hostile.test", HOST], "other.hostile.test", probe_tls.TLS_SBC_HOST_CHECK, "would refuse this peer"),
    (["other.hostile.test", HOST], HOST, probe_tls.TLS_SBC_HOST_CHECK, "only through the subject CN"),
    (["other.hostile.test"], HOST, probe.TLS_HOSTNAME_MISMATCH, "only the subject CN"),
    ([HOST, "other.hostile.test"], "other.hostile.test", None, ""),
])
def test_regional_hostname_must_be_the_first_dns_san(pki: StandardPKI, tmp_path: Path, dns: list[str], cn: str,
                                                     failure: t.Optional[str], words: str) -> None:
    cert = TestCA.existing(pki.acg_ca.dir, pki.acg_ca.name).issue_server(
        "san-%d" % (abs(hash((tuple(dns), cn))) % 10**8), dns=dns, cn=cn)
    peer = ScriptedPeer("tls", lambda req: [reply(req)], server_context(cert, pki))
    result, _elapsed = run(peer, "tls", pki)
    if failure is None:
        assert result.healthy and result.failure is None and result.verdict != "fail", result
        return
    assert result.failure == failure and words in result.detail, (result.failure, result.detail)
    assert "first DNS subjectAltName" in result.detail  # the advice
    assert result.verdict == "fail" and not result.healthy
    group = {"dns": {"ok": True}}
    probe_verdicts.group_verdict(group, [result], probe.Thresholds(), mcp=False)
    assert group["verdict"] == "fail" and any("TLS verification failed" in r for r in group["reasons"])
