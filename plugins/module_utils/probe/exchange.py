# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One peer exchange: connect, TLS handshake, one SIP OPTIONS transaction, all under one deadline.

``probe_peer`` never raises: every outcome is a classified ``PeerResult`` (probe_settings).
MCP targets get TCP/TLS and certificate checks only, never OPTIONS (R-19).
"""

from __future__ import annotations

import dataclasses
import socket
import ssl
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as lim
from ansible_collections.commsgw.routing.plugins.module_utils.probe import sip
from ansible_collections.commsgw.routing.plugins.module_utils.probe import tls as ptls
from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import (
    CONNECT_ERROR, CONNECT_REFUSED, CONNECT_TIMEOUT, DNS, MALFORMED_REPLY, MCP_UDP_UNCHECKED, NO_REPLY, NON_2XX,
    OUT_OF_RANGE, TLS_HANDSHAKE, TLS_HOSTNAME_MISMATCH, TLS_SBC_HOST_CHECK, TLS_VERIFY_FAILURES,
    TRANSPORT_NOT_ALLOWED, WRONG_TRANSACTION, PeerResult, PeerTarget, ProbeSettings, result_for)


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())


def ms_since(start: float) -> float:
    return round((time.monotonic() - start) * 1000.0, 2)


# ----------------------------------------------------------------------------------------------------------
# Connection and handshake


def _connect(target: PeerTarget, settings: ProbeSettings, deadline: Deadline) -> socket.socket:
    source = (settings.source_address, 0) if settings.source_address else None
    return socket.create_connection((t.cast(str, target.address), target.port), timeout=max(deadline.left(), 0.001),
                                    source_address=source)


def _connect_failure(exc: OSError) -> tuple[str, str]:
    if isinstance(exc, ConnectionRefusedError):
        return CONNECT_REFUSED, "connection refused (nothing listens on the port, or a firewall rejects)"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return CONNECT_TIMEOUT, "no TCP answer in time (silent host or a firewall dropping packets)"
    return CONNECT_ERROR, "%s: %s" % (type(exc).__name__, exc)


def _fetch_unverified_cert(target: PeerTarget, settings: ProbeSettings, deadline: Deadline,
                           contexts: ptls.TlsContexts) -> t.Optional[dict]:
    """The certificate a refused peer presents, with verification off, for the report only."""
    if deadline.left() <= 0.05:
        return None
    try:
        raw = _connect(target, settings, deadline)
    except OSError:
        return None
    try:
        raw.settimeout(max(deadline.left(), 0.001))
        with contexts.get(False, False).wrap_socket(raw, server_hostname=target.hostname) as tls:
            der = tls.getpeercert(binary_form=True)
        decoded = ptls.decode_der(der) if der else None
        return ptls.cert_summary(decoded) if decoded else None
    except (OSError, ssl.SSLError, ValueError):
        return None
    finally:
        raw.close()


def _describe_refused_cert(target: PeerTarget, settings: ProbeSettings, deadline: Deadline, result: PeerResult,
                           contexts: ptls.TlsContexts) -> None:
    """After a failed verification: the certificate the peer presented, and the SBC's view of its names."""
    cert = _fetch_unverified_cert(target, settings, deadline, contexts)
    if cert is None:
        return
    result.tls = dict(cert, sni=target.hostname, verified_against=target.verify_hostname)
    cn_only = ptls.sbc_host_check(cert["san"], ptls.subject_cn(cert["subject"]), target.verify_hostname)
    if result.failure == TLS_HOSTNAME_MISMATCH and cn_only:
        result.detail = "%s; %s" % (result.detail, cn_only)


def _handshake(raw: socket.socket, target: PeerTarget, settings: ProbeSettings, deadline: Deadline,
               result: PeerResult, contexts: ptls.TlsContexts) -> t.Optional[ssl.SSLSocket]:
    """TLS with SNI = regional hostname, verified against the regional hostname (R-24).

    The plan gives one name for both (``tls.sni`` == ``tls.verify_hostname``), so the context's own
    hostname check is the whole verification.
    """
    ctx = contexts.get(True, True)
    start = time.monotonic()
    raw.settimeout(max(deadline.left(), 0.001))
    try:
        tls = ctx.wrap_socket(raw, server_hostname=target.hostname)
    except (ssl.SSLError, OSError) as exc:
        result.failure, result.detail = ptls.classify_ssl_error(exc)
        result.handshake_ms = ms_since(start)
        if result.failure in TLS_VERIFY_FAILURES or result.failure == TLS_HANDSHAKE:
            _describe_refused_cert(target, settings, deadline, result, contexts)
        return None
    result.handshake_ms = ms_since(start)
    result.tls = ptls.session_details(tls, target.hostname, target.verify_hostname)
    refused = ptls.sbc_host_check(result.tls["san"], ptls.subject_cn(result.tls["subject"]), target.verify_hostname)
    if refused:
        result.failure, result.detail = TLS_SBC_HOST_CHECK, refused
        tls.close()
        return None
    return tls


# ----------------------------------------------------------------------------------------------------------
# The OPTIONS transaction


def _request_uri(target: PeerTarget) -> str:
    # The regional hostname, not the SRV target: it is what the SBC routes to.
    suffix = ";transport=%s" % target.transport if target.transport != "udp" else ""
    return "sip:%s:%d%s" % (target.hostname, target.port, suffix)


def _classify_stray(message: bytes, request: sip.OptionsRequest, stream: bool) -> tuple[str, t.Optional[sip.SipResponse]]:
    """('final'|'provisional'|'wrong'|'malformed', response) for one received message."""
    try:
        response = sip.parse_response(message, stream=stream)
    except sip.SipParseError as exc:
        return "malformed:%s" % exc, None
    try:
        why = sip.mismatch(response, request)
    except sip.SipParseError as exc:
        return "malformed:%s" % exc, None
    if why is not None:
        return "wrong:%d %s" % (response.code, why), response
    if response.code < 200:
        return "provisional", response
    return "final", response


@dataclasses.dataclass
class _Transaction:
    """One OPTIONS transaction in flight: what was sent and what came back so far."""

    request: sip.OptionsRequest
    stream: bool
    start: float
    retransmit_at: float  # RFC 3261 Timer E (T1) for UDP; streams never retransmit
    interval: float = 0.5
    buffer: bytes = b""
    malformed: t.Optional[str] = None
    final: t.Optional[sip.SipResponse] = None


def _new_transaction(conn: t.Union[socket.socket, ssl.SSLSocket], target: PeerTarget,
                     settings: ProbeSettings) -> _Transaction:
    local_host, local_port = conn.getsockname()[:2]
    request = sip.build_options(_request_uri(target), "sip:%s" % target.hostname, local_host, local_port,
                                target.transport, user_agent=settings.user_agent)
    start = time.monotonic()
    return _Transaction(request=request, stream=target.transport != "udp", start=start, retransmit_at=start + 0.5)


def _receive(conn: t.Union[socket.socket, ssl.SSLSocket], tx: _Transaction, deadline: Deadline) -> t.Optional[bytes]:
    """The next data from the peer; None on a timeout (after retransmitting over UDP when Timer E fired)."""
    wait = deadline.left()
    if not tx.stream:
        wait = min(wait, max(tx.retransmit_at - time.monotonic(), 0.001))
    conn.settimeout(max(wait, 0.001))
    try:
        return conn.recv(65536)
    except (socket.timeout, TimeoutError):
        if not tx.stream and time.monotonic() >= tx.retransmit_at and deadline.left() > 0:
            conn.send(tx.request.data)
            tx.interval = min(tx.interval * 2, 4.0)
            tx.retransmit_at = time.monotonic() + tx.interval
        return None


def _split(tx: _Transaction, data: bytes) -> t.Optional[list[bytes]]:
    """The complete messages received so far; None when stream framing is lost (nothing after can be trusted)."""
    if not tx.stream:
        return [data]
    tx.buffer += data
    try:
        messages, tx.buffer = sip.split_stream(tx.buffer)
    except sip.SipParseError as exc:
        tx.malformed = str(exc)
        return None
    return messages


def _take(tx: _Transaction, message: bytes, result: PeerResult) -> None:
    """Account for one received message: our final reply, a duplicate of it, or a stray."""
    verdict, response = _classify_stray(message, tx.request, tx.stream)
    if verdict == "final" and tx.final is None:
        tx.final = response
        result.rtt_ms = ms_since(tx.start)
    elif verdict == "final":
        result.duplicates += 1  # the same transaction answered again
    elif verdict.startswith(("malformed:", "wrong:")):
        if verdict.startswith("malformed:"):
            tx.malformed = tx.malformed or verdict.split(":", 1)[1]
        result.stray_count += 1
        if len(result.stray_replies) < lim.MAX_STRAY_KEPT:
            result.stray_replies.append(t.cast(str, lim.clip(verdict)))


def _count_buffered_duplicates(tx: _Transaction, result: PeerResult) -> None:
    """Duplicates already in hand are counted; we never wait for more (bounded wall time)."""
    if not (tx.stream and tx.buffer.strip(b"\r\n")):
        return
    try:
        more = sip.split_stream(tx.buffer)[0]
    except sip.SipParseError:
        more = []
    for message in more:
        if _classify_stray(message, tx.request, tx.stream)[0] == "final":
            result.duplicates += 1


def _read_replies(conn: t.Union[socket.socket, ssl.SSLSocket], tx: _Transaction, deadline: Deadline,
                  result: PeerResult) -> None:
    """Read until our final response, a framing error, a close or the deadline."""
    while deadline.left() > 0:
        data = _receive(conn, tx, deadline)
        if data is None:
            continue
        if not data:
            if tx.final is None:
                result.detail = "the peer closed the connection without a final reply"
            return
        messages = _split(tx, data)
        if messages is None:
            return
        for message in messages:
            _take(tx, message, result)
        if tx.final is not None:
            _count_buffered_duplicates(tx, result)
            return


def _conclude(tx: _Transaction, result: PeerResult, settings: ProbeSettings) -> None:
    """The peer's outcome from what the transaction received."""
    final = tx.final
    if final is not None:
        result.code, result.reason, result.server = final.code, lim.clip(final.reason), lim.clip(final.server)
        if 200 <= final.code < 300:
            result.healthy = True
        else:
            result.failure = NON_2XX
            result.detail = "OPTIONS answered %d %s" % (final.code, result.reason)
        return
    if tx.malformed is not None:
        result.failure = MALFORMED_REPLY
        result.detail = t.cast(str, lim.clip(tx.malformed))
    elif result.stray_replies:
        result.failure = WRONG_TRANSACTION
        result.detail = "only replies to other transactions: " + "; ".join(result.stray_replies[:3])
    elif tx.buffer.strip(b"\r\n"):
        result.failure = MALFORMED_REPLY
        result.detail = "%s: an incomplete reply of %d bytes" % (sip.TRUNCATED, len(tx.buffer))
    else:
        result.failure = NO_REPLY
        result.detail = result.detail or "no reply to OPTIONS within %.1f s" % settings.timeout_s


def _exchange(conn: t.Union[socket.socket, ssl.SSLSocket], target: PeerTarget, settings: ProbeSettings,
              deadline: Deadline, result: PeerResult) -> None:
    """Send OPTIONS and read until our final response, a framing error, a close or the deadline."""
    tx = _new_transaction(conn, target, settings)
    try:
        conn.sendall(tx.request.data) if tx.stream else conn.send(tx.request.data)
        _read_replies(conn, tx, deadline, result)
    except ssl.SSLError as exc:
        # TLS 1.3: a peer refusing our certificate says so after the client's handshake completed.
        result.failure, result.detail = ptls.classify_ssl_error(exc)
        return
    except ConnectionRefusedError:
        result.failure, result.detail = CONNECT_REFUSED, "ICMP port unreachable (nothing listens on the UDP port)"
        return
    except OSError as exc:
        if tx.final is None:
            result.failure, result.detail = NO_REPLY, "connection failed after sending: %s: %s" % (
                type(exc).__name__, exc)
            return
    _conclude(tx, result, settings)


# ----------------------------------------------------------------------------------------------------------
# One peer


def probe_peer(target: PeerTarget, settings: ProbeSettings,
               contexts: t.Optional[ptls.TlsContexts] = None) -> PeerResult:
    """Probe one target; never raises (every outcome is a classified PeerResult)."""
    result = result_for(target)
    start = time.monotonic()
    deadline = Deadline(settings.timeout_s)
    try:
        _probe_peer(target, settings, deadline, result, contexts or ptls.TlsContexts(settings))
    except Exception as exc:  # noqa: BLE001 - one peer's surprise must not sink the whole probe
        result.healthy = False
        result.failure = result.failure or CONNECT_ERROR
        result.detail = "probe error %s: %s" % (type(exc).__name__, exc)
    result.elapsed_ms = ms_since(start)
    return result


def _not_contacted(target: PeerTarget, settings: ProbeSettings, result: PeerResult) -> bool:
    """Settle the result without any packet when the target must not (or need not) be contacted."""
    if target.address is None:
        result.failure, result.detail = DNS, "the SRV target %s has no IPv4 address" % target.target
        return True
    if not target.in_range:
        result.failure, result.detail = OUT_OF_RANGE, lim.out_of_range_detail(target.address, target.ranges)
        return True
    if target.transport not in settings.allowed_transports:
        result.failure = TRANSPORT_NOT_ALLOWED
        result.detail = "transport %s is not allowed here (allowed: %s)" % (
            target.transport, ", ".join(settings.allowed_transports))
        return True
    if target.kind == "mcp" and target.transport == "udp":
        # MCP never gets OPTIONS, and UDP has no handshake that could show it is there.
        result.healthy = True
        result.detail = MCP_UDP_UNCHECKED
        return True
    return False


def _probe_udp(target: PeerTarget, settings: ProbeSettings, deadline: Deadline, result: PeerResult) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        if settings.source_address:
            udp.bind((settings.source_address, 0))
        udp.connect((target.address, target.port))  # connected: ICMP errors surface, strangers filtered
        _exchange(udp, target, settings, deadline, result)


def _probe_stream(target: PeerTarget, settings: ProbeSettings, deadline: Deadline, result: PeerResult,
                  contexts: ptls.TlsContexts) -> None:
    start = time.monotonic()
    try:
        raw = _connect(target, settings, deadline)
    except OSError as exc:
        result.failure, result.detail = _connect_failure(exc)
        result.connect_ms = ms_since(start)
        return
    result.connect_ms = ms_since(start)
    try:
        conn: t.Union[socket.socket, ssl.SSLSocket] = raw
        if target.transport == "tls":
            tls = _handshake(raw, target, settings, deadline, result, contexts)
            if tls is None:
                return
            conn = tls
        if target.kind == "mcp":
            # MCP does not answer OPTIONS; a completed (verified) handshake is the health signal.
            result.healthy = True
            result.detail = "reachable" + (" (TLS verified)" if target.transport == "tls" else "")
            return
        _exchange(conn, target, settings, deadline, result)
    finally:
        raw.close()


def _probe_peer(target: PeerTarget, settings: ProbeSettings, deadline: Deadline, result: PeerResult,
                contexts: ptls.TlsContexts) -> None:
    if _not_contacted(target, settings, result):
        return
    if target.transport == "udp":
        _probe_udp(target, settings, deadline, result)
        return
    _probe_stream(target, settings, deadline, result, contexts)
