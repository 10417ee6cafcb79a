# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""probe_peer against misbehaving peers: garbage, truncated, oversized, non-UTF-8, wrong transaction,
duplicate replies, provisional-only, closed connections, UDP retransmission.

The peers are small scripted socket servers on loopback (127.0.190.x, the probe's test block): real
sockets and the real probe code, with the peer's bytes chosen by the test. Each case must end as a
classified PeerResult, never an exception, within the per-peer bound.
"""

from __future__ import annotations

import dataclasses
import re
import socket
import threading
import time
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe import verdicts as probe_verdicts

ADDRESS = "127.0.190.1"
Reply = t.Callable[[bytes], t.Sequence[bytes]]  # request -> chunks to send (b"" = close, None-less)


def fields(request: bytes) -> dict[str, str]:
    text = request.decode()
    return {"via": re.search(r"^Via: (.*)$", text, re.M).group(1).strip(),  # type: ignore[union-attr]
            "call_id": re.search(r"^Call-ID: (.*)$", text, re.M).group(1).strip(),  # type: ignore[union-attr]
            "from": re.search(r"^From: (.*)$", text, re.M).group(1).strip()}  # type: ignore[union-attr]


def response(request: bytes, code: int = 200, reason: str = "OK", call_id: t.Optional[str] = None,
             via: t.Optional[str] = None, cseq: str = "1 OPTIONS", body: bytes = b"") -> bytes:
    f = fields(request)
    return ("SIP/2.0 %d %s\r\nVia: %s\r\nFrom: %s\r\nTo: <sip:x>;tag=p\r\nCall-ID: %s\r\nCSeq: %s\r\n"
            "Content-Length: %d\r\n\r\n" % (code, reason, via or f["via"], f["from"], call_id or f["call_id"], cseq,
                                            len(body))).encode() + body


class StreamPeer:
    """Accepts one TCP connection, reads the request, sends the scripted chunks, then idles."""

    def __init__(self, reply: Reply, close_after: bool = False) -> None:
        self.reply = reply
        self.close_after = close_after
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((ADDRESS, 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(10)
        try:
            conn, dummy = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            for chunk in self.reply(data):
                conn.sendall(chunk)
                time.sleep(0.01)
            if not self.close_after:
                time.sleep(3)

    def close(self) -> None:
        self.sock.close()


class DatagramPeer:
    """Answers (or ignores) each datagram per a script taking the request and its sequence number."""

    def __init__(self, reply: t.Callable[[bytes, int], t.Sequence[bytes]]) -> None:
        self.reply = reply
        self.received = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((ADDRESS, 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(10)
        while True:
            try:
                data, peer = self.sock.recvfrom(65536)
            except OSError:
                return
            self.received += 1
            for chunk in self.reply(data, self.received):
                self.sock.sendto(chunk, peer)

    def close(self) -> None:
        self.sock.close()


def target(port: int, transport: str = "tcp") -> probe.PeerTarget:
    return probe.PeerTarget(kind="sip", region="region1", srv_name="_sip._tls.r1.test", hostname="r1.test",
                            verify_hostname="r1.test", target="p1.r1.test", address=ADDRESS, port=port, priority=10,
                            weight=10, transport=transport, in_range=True)


SETTINGS = probe.ProbeSettings(timeout_s=1.0, allowed_transports=("tcp", "udp", "tls"))


def run_stream(reply: Reply, close_after: bool = False) -> probe.PeerResult:
    peer = StreamPeer(reply, close_after)
    try:
        start = time.monotonic()
        result = probe.probe_peer(target(peer.port), SETTINGS)
        assert time.monotonic() - start < SETTINGS.timeout_s + 0.5  # bounded whatever the peer does
        return result
    finally:
        peer.close()


def test_good_reply_after_provisional() -> None:
    result = run_stream(lambda req: [response(req, 100, "Trying"), response(req, 200, "OK")])
    assert result.healthy and result.code == 200 and result.failure is None and result.rtt_ms is not None


def test_reply_split_into_tiny_chunks() -> None:
    def chunks(req: bytes) -> list[bytes]:
        data = response(req, 200, "OK", body=b"x" * 40)
        return [data[i:i + 7] for i in range(0, len(data), 7)]
    result = run_stream(chunks)
    assert result.healthy and result.code == 200


@pytest.mark.parametrize("reply, failure, detail", [
    (lambda req: [b"\x00\xff garbage \x80\r\n\r\n"], probe.MALFORMED_REPLY, "not_utf8"),
    (lambda req: [b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"], probe.MALFORMED_REPLY, "bad_start_line"),
    (lambda req: [response(req)[:-30]], probe.MALFORMED_REPLY, "truncated"),
    (lambda req: [b"SIP/2.0 200 OK\r\n" + b"X-Pad: " + b"a" * 20000], probe.MALFORMED_REPLY, "oversized"),
    (lambda req: [response(req).replace(b"Content-Length: 0", b"Content-Length: 99999999")], probe.MALFORMED_REPLY,
     "oversized"),
    (lambda req: [response(req, call_id="someone-else")], probe.WRONG_TRANSACTION, "Call-ID"),
    (lambda req: [response(req, via="SIP/2.0/TCP 1.2.3.4;branch=z9hG4bKnope")], probe.WRONG_TRANSACTION, "branch"),
    (lambda req: [response(req, cseq="7 OPTIONS")], probe.WRONG_TRANSACTION, "CSeq"),
    (lambda req: [response(req, 180, "Ringing")], probe.NO_REPLY, "no reply"),
    (lambda req: [], probe.NO_REPLY, "no reply"),
    (lambda req: [response(req, 404, "Not Found")], probe.NON_2XX, "404"),
])
def test_bad_replies_are_classified(reply: Reply, failure: str, detail: str) -> None:
    result = run_stream(reply)
    assert not result.healthy
    assert result.failure == failure and detail in result.detail, (result.failure, result.detail)


def test_closed_without_reply() -> None:
    result = run_stream(lambda req: [], close_after=True)
    assert result.failure == probe.NO_REPLY and "closed" in result.detail


def test_wrong_transaction_then_ours() -> None:
    result = run_stream(lambda req: [response(req, 200, call_id="stale"), response(req, 200)])
    assert result.healthy and len(result.stray_replies) == 1 and result.stray_replies[0].startswith("wrong:")


def test_duplicate_reply_counted_without_waiting() -> None:
    result = run_stream(lambda req: [response(req) + response(req)])
    assert result.healthy and result.duplicates == 1
    probe_verdicts.peer_verdict(result, probe.Thresholds())
    assert result.verdict == "warn" and "duplicate" in result.reasons[0]


def test_connect_refused_and_transport_not_allowed() -> None:
    probe_sock = socket.socket()
    probe_sock.bind((ADDRESS, 0))
    port = probe_sock.getsockname()[1]
    probe_sock.close()  # nothing listens there now
    assert probe.probe_peer(target(port), SETTINGS).failure == probe.CONNECT_REFUSED
    tls_only = probe.ProbeSettings(timeout_s=1.0)
    assert probe.probe_peer(target(port, "udp"), tls_only).failure == probe.TRANSPORT_NOT_ALLOWED


def test_tls_to_a_peer_that_speaks_plain_sip_is_a_protocol_failure() -> None:
    peer = StreamPeer(lambda req: [])
    try:
        # The peer reads the ClientHello as a request it never completes; then the socket idles.
        result = probe.probe_peer(target(peer.port, "tls"), SETTINGS)
    finally:
        peer.close()
    assert result.failure in (probe.TLS_HANDSHAKE, probe.TLS_PROTOCOL), result


def test_udp_retransmits_and_ignores_garbage() -> None:
    # First request: garbage back. Second (the Timer E retransmission after 0.5 s): the real reply.
    peer = DatagramPeer(lambda req, n: [b"\xff\xfe"] if n == 1 else [response(req)])
    try:
        result = probe.probe_peer(target(peer.port, "udp"), SETTINGS)
    finally:
        peer.close()
    assert result.healthy and peer.received == 2 and result.stray_replies == ["malformed:not_utf8: start line "
                                                                              "b'\\xff\\xfe' is not UTF-8"]


def test_mcp_over_udp_is_never_sent_a_request() -> None:
    # MCP does not answer OPTIONS; over UDP there is nothing else to send, so nothing is sent.
    peer = DatagramPeer(lambda req, n: [response(req)])
    try:
        mcp = dataclasses.replace(target(peer.port, "udp"), kind="mcp")
        result = probe.probe_peer(mcp, SETTINGS)
        time.sleep(0.2)
    finally:
        peer.close()
    assert peer.received == 0
    assert result.healthy and result.detail == probe.MCP_UDP_UNCHECKED and result.code is None


def test_udp_port_unreachable_is_refused() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((ADDRESS, 0))
    port = sock.getsockname()[1]
    sock.close()
    result = probe.probe_peer(target(port, "udp"), SETTINGS)
    assert result.failure == probe.CONNECT_REFUSED
