# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The live probe: checks one site against ACG for real, from the routing plan.

Input is the site's routing plan (``plan.build_site_plan``): SRV names, regional hostnames, TLS SNI
and verification names, /28 ranges, transport, MCP records and the provisioning API name all come
from there; nothing is recomputed from the inventory. The probe then

1. resolves every SRV record live (``srv.resolve_srv``) and audits the targets against the region's
   /28 ranges (R-07, ``srv.audit_srv``), and checks the provisioning API TTL (R-21);
2. sends one SIP OPTIONS to **every** SRV target address at once (threads, one per peer, every wait
   bounded by one per-peer deadline) over TLS 1.2+ with the SBC's client certificate, SNI = the
   regional hostname and the peer certificate verified against that hostname (R-09, R-24); MCP
   targets get DNS + TCP/TLS + certificate checks only, never OPTIONS (R-19);
3. asks the SBC for its own view through a per-platform hook (``SBC_VIEWS``; Kamailio first) and
   compares it with the SRV answers (drift) and with what the probe saw (peer states); only an
   "active" peer is in service there, and while peers the probe reached are not active yet (a
   fresh restart) the view is read again, for a bounded time (``default_settle_s``);
4. turns all of it into verdicts per peer, region and site with configurable thresholds.

Runs on the SBC host with the standard library and dnspython only (no yaml/jinja2 here).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as _dt
import ipaddress
import math
import os
import re
import socket
import ssl
import threading
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils import kamailio_runtime as kr
from ansible_collections.commsgw.routing.plugins.module_utils.certificates import decode_pem, dns_names
from ansible_collections.commsgw.routing.plugins.module_utils import probe_limits as lim
from ansible_collections.commsgw.routing.plugins.module_utils import probe_sip as sip
from ansible_collections.commsgw.routing.plugins.module_utils import probe_tls as ptls
from ansible_collections.commsgw.routing.plugins.module_utils.srv import (
    DnsLookupError, ResolverSettings, audit_srv, check_ttl, resolve_srv)
from ansible_collections.commsgw.routing.plugins.module_utils.srv_lookup import limits_for

REPORT_SCHEMA_VERSION = 1

# Peer failure classes (PeerResult.failure).
DNS = "dns"
CONNECT_REFUSED = "connect_refused"
CONNECT_TIMEOUT = "connect_timeout"
CONNECT_ERROR = "connect_error"            # other socket errors (unreachable network, no route)
TLS_UNKNOWN_CA = "tls_unknown_ca"
TLS_HOSTNAME_MISMATCH = "tls_hostname_mismatch"
TLS_EXPIRED = "tls_expired"                # also "not yet valid": the validity period is wrong
TLS_PROTOCOL = "tls_protocol"              # no common version/cipher, or the peer does not speak TLS
TLS_CLIENT_REJECTED = "tls_client_rejected"  # the peer refused the SBC's client certificate
TLS_HANDSHAKE = "tls_handshake"            # any other handshake failure, including a handshake timeout
NO_REPLY = "no_reply"
MALFORMED_REPLY = "malformed_reply"
WRONG_TRANSACTION = "wrong_transaction"    # replies came, none for our Call-ID/branch/CSeq
NON_2XX = "non_2xx"
TRANSPORT_NOT_ALLOWED = "transport_not_allowed"
OUT_OF_RANGE = lim.OUT_OF_RANGE            # outside every /28 of the record: never contacted
TLS_SBC_HOST_CHECK = ptls.TLS_SBC_HOST_CHECK  # the regional hostname is not the first DNS SAN (the SBC's check)
MCP_UDP_UNCHECKED = "not contacted: over UDP only a SIP request could test MCP, and MCP is never sent OPTIONS"
FAILURE_CLASSES = (DNS, CONNECT_REFUSED, CONNECT_TIMEOUT, CONNECT_ERROR, TLS_UNKNOWN_CA, TLS_HOSTNAME_MISMATCH,
                   TLS_EXPIRED, TLS_PROTOCOL, TLS_CLIENT_REJECTED, TLS_HANDSHAKE, NO_REPLY, MALFORMED_REPLY,
                   WRONG_TRANSACTION, NON_2XX, TRANSPORT_NOT_ALLOWED, OUT_OF_RANGE, TLS_SBC_HOST_CHECK)
# The certificate presented by ACG is wrong: a security finding, not an outage (fails the task).
TLS_VERIFY_FAILURES = (TLS_UNKNOWN_CA, TLS_HOSTNAME_MISMATCH, TLS_EXPIRED, TLS_SBC_HOST_CHECK)

PASS, WARN, FAIL = "pass", "warn", "fail"
_RANK = {PASS: 0, WARN: 1, FAIL: 2}

# OpenSSL X509_V_ERR_* codes seen by ssl.SSLCertVerificationError.verify_code.
_UNKNOWN_CA_CODES = {2, 18, 19, 20, 21, 24, 27, 28}
_EXPIRED_CODES = {9, 10}
_HOSTNAME_CODES = {62, 63, 64}
# Alerts the peer sends when it refuses our client certificate.
_CLIENT_REJECTED_REASONS = {"TLSV1_ALERT_UNKNOWN_CA", "SSLV3_ALERT_BAD_CERTIFICATE", "SSLV3_ALERT_CERTIFICATE_EXPIRED",
                            "SSLV3_ALERT_CERTIFICATE_UNKNOWN", "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
                            "TLSV13_ALERT_CERTIFICATE_REQUIRED", "TLSV1_ALERT_ACCESS_DENIED",
                            "SSLV3_ALERT_CERTIFICATE_REVOKED", "TLSV1_ALERT_DECRYPT_ERROR"}
_PROTOCOL_REASONS = {"UNSUPPORTED_PROTOCOL", "TLSV1_ALERT_PROTOCOL_VERSION", "NO_PROTOCOLS_AVAILABLE",
                     "WRONG_VERSION_NUMBER", "SSLV3_ALERT_HANDSHAKE_FAILURE", "NO_SHARED_CIPHER",
                     "NO_CIPHERS_AVAILABLE", "TLSV1_ALERT_INSUFFICIENT_SECURITY", "RECORD_LAYER_FAILURE",
                     "PACKET_LENGTH_TOO_LONG", "HTTP_REQUEST", "UNKNOWN_PROTOCOL"}
_TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


# ----------------------------------------------------------------------------------------------------------
# Settings


@dataclasses.dataclass(frozen=True)
class Thresholds:
    """When the probe's verdicts turn to warn or fail (the module exposes each one)."""

    min_healthy_peers: int = 1            # per region (trunk group): fewer -> the region fails
    max_rtt_ms: t.Optional[float] = None  # a healthy peer slower than this -> warn
    cert_expiry_warn_days: int = 30       # a peer certificate expiring sooner -> warn
    fail_on_drift: bool = True
    fail_on_state_mismatch: bool = False  # SBC state vs probe: a timing artefact as often as a fault
    fail_on_out_of_range: bool = True
    fail_on_tls_verify: bool = True
    fail_on_provisioning_ttl: bool = True
    require_mcp_reachable: bool = True    # an MCP record none of whose targets is reachable fails


@dataclasses.dataclass(frozen=True)
class ProbeSettings:
    timeout_s: float = 3.0                # one bound per peer: connect + handshake + reply
    resolver: ResolverSettings = ResolverSettings()
    client_cert: t.Optional[str] = None
    client_key: t.Optional[str] = None
    ca_bundle: t.Optional[str] = None     # None: the system trust store (DigiCert Global Root G2, R-24)
    source_address: t.Optional[str] = None  # the SBC's ACG-side address (ACG only accepts its declared ranges)
    allowed_transports: tuple[str, ...] = ("tls",)  # UDP/TCP only where the deployment allows it (labs)
    concurrency: int = 64                 # 1 probes one peer after another (the benchmark's baseline)
    user_agent: str = "commsgw-probe"
    check_provisioning_ttl: bool = True
    thresholds: Thresholds = Thresholds()


# ----------------------------------------------------------------------------------------------------------
# Targets and results


@dataclasses.dataclass(frozen=True)
class PeerTarget:
    kind: str            # "sip" (OPTIONS) or "mcp" (reachability + certificate only)
    region: str
    srv_name: str
    hostname: str        # regional hostname: SNI and certificate name (R-24)
    verify_hostname: str
    target: str          # SRV target name
    address: t.Optional[str]
    port: int
    priority: int
    weight: int
    transport: str
    in_range: bool
    ranges: tuple[str, ...] = ()  # the /28s the address must be in (named when it is not)


@dataclasses.dataclass
class PeerResult:
    kind: str
    region: str
    srv_name: str
    target: str
    address: t.Optional[str]
    port: int
    priority: int
    weight: int
    transport: str
    in_range: bool
    healthy: bool = False
    failure: t.Optional[str] = None
    detail: str = ""
    code: t.Optional[int] = None
    reason: t.Optional[str] = None
    server: t.Optional[str] = None
    rtt_ms: t.Optional[float] = None
    connect_ms: t.Optional[float] = None
    handshake_ms: t.Optional[float] = None
    elapsed_ms: float = 0.0
    tls: t.Optional[dict[str, t.Any]] = None
    duplicates: int = 0
    stray_replies: list[str] = dataclasses.field(default_factory=list)  # the first lim.MAX_STRAY_KEPT
    stray_count: int = 0                                                # all of them
    verdict: str = PASS
    reasons: list[str] = dataclasses.field(default_factory=list)

    @property
    def label(self) -> str:
        where = self.address or "unresolved"
        return "%s %s:%d (%s)" % (self.transport, where, self.port, self.target)

    def as_dict(self) -> dict[str, t.Any]:
        data = dataclasses.asdict(self)
        data["label"] = self.label
        return data


def _result(target: PeerTarget) -> PeerResult:
    return PeerResult(kind=target.kind, region=target.region, srv_name=target.srv_name, target=target.target,
                      address=target.address, port=target.port, priority=target.priority, weight=target.weight,
                      transport=target.transport, in_range=target.in_range)


# ----------------------------------------------------------------------------------------------------------
# TLS


def tls_context(settings: ProbeSettings, verify_hostname: t.Optional[str], verify: bool = True) -> ssl.SSLContext:
    """A client context: TLS 1.2+ (R-09), the SBC's client certificate, the ACG trust anchors (R-24)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if verify:
        if settings.ca_bundle:
            ctx.load_verify_locations(cafile=settings.ca_bundle)
        else:
            ctx.load_default_certs()
        ctx.check_hostname = bool(verify_hostname)
        ctx.verify_mode = ssl.CERT_REQUIRED
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if settings.client_cert and verify:  # never on a diagnostic (unverified) connection
        ctx.load_cert_chain(settings.client_cert, settings.client_key or None)
    return ctx


class TlsContexts:
    """The client contexts of one probe run, built once and shared by every peer's thread.

    Building a context parses the certificate, key and CA files; doing that per peer made the
    threads queue behind each other (measured: peers started up to 70 ms apart). SSLContext is safe
    to share between threads for wrap_socket.
    """

    def __init__(self, settings: ProbeSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._contexts: dict[tuple[bool, bool], ssl.SSLContext] = {}

    def get(self, verify: bool, check_hostname: bool) -> ssl.SSLContext:
        key = (verify, check_hostname and verify)
        with self._lock:
            ctx = self._contexts.get(key)
            if ctx is None:
                # The name only switches hostname checking on; wrap_socket's server_hostname is what is checked.
                ctx = tls_context(self.settings, "hostname.check" if key[1] else None, verify=verify)
                self._contexts[key] = ctx
            return ctx


def classify_ssl_error(exc: BaseException) -> tuple[str, str]:
    """(failure class, detail) of a TLS handshake (or post-handshake alert) failure."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        code = getattr(exc, "verify_code", None)
        message = getattr(exc, "verify_message", None) or str(exc)
        if code in _HOSTNAME_CODES:
            return TLS_HOSTNAME_MISMATCH, message
        if code in _EXPIRED_CODES:
            return TLS_EXPIRED, message
        if code in _UNKNOWN_CA_CODES:
            return TLS_UNKNOWN_CA, message
        return TLS_HANDSHAKE, "certificate verification failed: %s (code %s)" % (message, code)
    if isinstance(exc, ssl.SSLError):
        reason = (getattr(exc, "reason", None) or "").upper()
        if reason in _CLIENT_REJECTED_REASONS:
            return TLS_CLIENT_REJECTED, "the peer refused the SBC's client certificate (%s)" % reason
        if reason in _PROTOCOL_REASONS:
            return TLS_PROTOCOL, "no usable TLS version or cipher (%s)" % reason
        return TLS_HANDSHAKE, reason or str(exc)
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return TLS_HANDSHAKE, "the TLS handshake did not finish in time"
    return TLS_HANDSHAKE, "%s: %s" % (type(exc).__name__, exc)


def _name_matches(pattern: str, hostname: str) -> bool:
    return ptls.name_matches(pattern, hostname)


def cert_summary(cert: t.Mapping[str, t.Any], now: t.Optional[float] = None) -> dict[str, t.Any]:
    """Subject, issuer, SAN and expiry of a decoded certificate (``getpeercert()`` form)."""
    def flat(rdns: t.Any) -> dict[str, str]:
        return {key: t.cast(str, lim.clip(value)) for rdn in rdns or () for key, value in rdn}
    now = time.time() if now is None else now
    not_after = cert.get("notAfter")
    days = None
    if not_after:
        try:
            days = int((ssl.cert_time_to_seconds(not_after) - now) // 86400)
        except ValueError:
            days = None
    return {"subject": flat(cert.get("subject")), "issuer": flat(cert.get("issuer")),
            "san": lim.clip_list(dns_names(cert)),
            "not_before": cert.get("notBefore"), "not_after": not_after, "days_to_expiry": days}


def _decode_der(der: bytes) -> t.Optional[dict[str, t.Any]]:
    """Decode a certificate the handshake refused, for the report (subject, SAN, dates).

    ``getpeercert()`` only decodes verified certificates; the standard library's decoder that takes a
    file is the only stdlib way for an unverified one. Private API, hence best effort.
    """
    try:
        return decode_pem(ssl.DER_cert_to_PEM_cert(der))
    except Exception:  # noqa: BLE001 - diagnostics only
        return None


# ----------------------------------------------------------------------------------------------------------
# One peer


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())


def _ms(start: float) -> float:
    return round((time.monotonic() - start) * 1000.0, 2)


def _connect(target: PeerTarget, settings: ProbeSettings, deadline: _Deadline) -> socket.socket:
    source = (settings.source_address, 0) if settings.source_address else None
    return socket.create_connection((t.cast(str, target.address), target.port), timeout=max(deadline.left(), 0.001),
                                    source_address=source)


def _connect_failure(exc: OSError) -> tuple[str, str]:
    if isinstance(exc, ConnectionRefusedError):
        return CONNECT_REFUSED, "connection refused (nothing listens on the port, or a firewall rejects)"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return CONNECT_TIMEOUT, "no TCP answer in time (silent host or a firewall dropping packets)"
    return CONNECT_ERROR, "%s: %s" % (type(exc).__name__, exc)


def _fetch_unverified_cert(target: PeerTarget, settings: ProbeSettings, deadline: _Deadline,
                           contexts: TlsContexts) -> t.Optional[dict]:
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
        decoded = _decode_der(der) if der else None
        return cert_summary(decoded) if decoded else None
    except (OSError, ssl.SSLError, ValueError):
        return None
    finally:
        raw.close()


def _tls_details(tls: ssl.SSLSocket, target: PeerTarget) -> dict[str, t.Any]:
    cipher = tls.cipher()
    details = {"version": tls.version(), "cipher": cipher[0] if cipher else None, "sni": target.hostname,
               "verified_against": target.verify_hostname}
    details.update(cert_summary(tls.getpeercert() or {}))
    return details


def _handshake(raw: socket.socket, target: PeerTarget, settings: ProbeSettings, deadline: _Deadline,
               result: PeerResult, contexts: TlsContexts) -> t.Optional[ssl.SSLSocket]:
    """TLS with SNI = regional hostname, verified against the regional hostname (R-24)."""
    same_name = target.hostname == target.verify_hostname
    ctx = contexts.get(True, same_name)
    start = time.monotonic()
    raw.settimeout(max(deadline.left(), 0.001))
    try:
        tls = ctx.wrap_socket(raw, server_hostname=target.hostname)
    except (ssl.SSLError, OSError) as exc:
        result.failure, result.detail = classify_ssl_error(exc)
        result.handshake_ms = _ms(start)
        if result.failure in TLS_VERIFY_FAILURES or result.failure == TLS_HANDSHAKE:
            cert = _fetch_unverified_cert(target, settings, deadline, contexts)
            if cert is not None:
                result.tls = dict(cert, sni=target.hostname, verified_against=target.verify_hostname)
                cn_only = ptls.sbc_host_check(cert["san"], ptls.subject_cn(cert["subject"]), target.verify_hostname)
                if result.failure == TLS_HOSTNAME_MISMATCH and cn_only:
                    result.detail = "%s; %s" % (result.detail, cn_only)
        return None
    result.handshake_ms = _ms(start)
    result.tls = _tls_details(tls, target)
    if not same_name:
        # SNI and the verification name differ in the plan: check the SAN ourselves.
        if not any(_name_matches(name, target.verify_hostname) for name in result.tls["san"]):
            result.failure = TLS_HOSTNAME_MISMATCH
            result.detail = "certificate names %s, expected %s" % (result.tls["san"], target.verify_hostname)
            tls.close()
            return None
    refused = ptls.sbc_host_check(result.tls["san"], ptls.subject_cn(result.tls["subject"]), target.verify_hostname)
    if refused:
        result.failure, result.detail = TLS_SBC_HOST_CHECK, refused
        tls.close()
        return None
    return tls


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


def _exchange(conn: t.Union[socket.socket, ssl.SSLSocket], target: PeerTarget, settings: ProbeSettings,
              deadline: _Deadline, result: PeerResult) -> None:
    """Send OPTIONS and read until our final response, a framing error, a close or the deadline."""
    stream = target.transport != "udp"
    local_host, local_port = conn.getsockname()[:2]
    request = sip.build_options(_request_uri(target), "sip:%s" % target.hostname, local_host, local_port,
                                target.transport, user_agent=settings.user_agent)
    start = time.monotonic()
    retransmit_at = start + 0.5  # RFC 3261 Timer E (T1) for UDP; streams never retransmit
    interval = 0.5
    malformed: t.Optional[str] = None
    buffer = b""
    final: t.Optional[sip.SipResponse] = None
    try:
        conn.sendall(request.data) if stream else conn.send(request.data)
        while deadline.left() > 0:
            wait = deadline.left()
            if not stream:
                wait = min(wait, max(retransmit_at - time.monotonic(), 0.001))
            conn.settimeout(max(wait, 0.001))
            try:
                data = conn.recv(65536)
            except (socket.timeout, TimeoutError):
                if not stream and time.monotonic() >= retransmit_at and deadline.left() > 0:
                    conn.send(request.data)
                    interval = min(interval * 2, 4.0)
                    retransmit_at = time.monotonic() + interval
                continue
            if not data:
                if final is None:
                    result.detail = "the peer closed the connection without a final reply"
                break
            if stream:
                buffer += data
                try:
                    messages, buffer = sip.split_stream(buffer)
                except sip.SipParseError as exc:
                    malformed = str(exc)
                    break  # framing is lost: nothing after this can be trusted
            else:
                messages = [data]
            for message in messages:
                verdict, response = _classify_stray(message, request, stream)
                if verdict == "final" and final is None:
                    final = response
                    result.rtt_ms = _ms(start)
                elif verdict == "final":
                    result.duplicates += 1  # the same transaction answered again
                elif verdict.startswith(("malformed:", "wrong:")):
                    if verdict.startswith("malformed:"):
                        malformed = malformed or verdict.split(":", 1)[1]
                    result.stray_count += 1
                    if len(result.stray_replies) < lim.MAX_STRAY_KEPT:
                        result.stray_replies.append(t.cast(str, lim.clip(verdict)))
            if final is not None:
                # Duplicates already in hand are counted; we never wait for more (bounded wall time).
                if stream and buffer.strip(b"\r\n"):
                    try:
                        more = sip.split_stream(buffer)[0]
                    except sip.SipParseError:
                        more = []
                    for message in more:
                        if _classify_stray(message, request, stream)[0] == "final":
                            result.duplicates += 1
                break
    except ssl.SSLError as exc:
        # TLS 1.3: a peer refusing our certificate says so after the client's handshake completed.
        result.failure, result.detail = classify_ssl_error(exc)
        return
    except ConnectionRefusedError:
        result.failure, result.detail = CONNECT_REFUSED, "ICMP port unreachable (nothing listens on the UDP port)"
        return
    except OSError as exc:
        if final is None:
            result.failure, result.detail = NO_REPLY, "connection failed after sending: %s: %s" % (
                type(exc).__name__, exc)
            return
    if final is not None:
        result.code, result.reason, result.server = final.code, lim.clip(final.reason), lim.clip(final.server)
        if 200 <= final.code < 300:
            result.healthy = True
        else:
            result.failure = NON_2XX
            result.detail = "OPTIONS answered %d %s" % (final.code, result.reason)
        return
    if malformed is not None:
        result.failure = MALFORMED_REPLY
        result.detail = t.cast(str, lim.clip(malformed))
    elif result.stray_replies:
        result.failure = WRONG_TRANSACTION
        result.detail = "only replies to other transactions: " + "; ".join(result.stray_replies[:3])
    elif buffer.strip(b"\r\n"):
        result.failure = MALFORMED_REPLY
        result.detail = "%s: an incomplete reply of %d bytes" % (sip.TRUNCATED, len(buffer))
    else:
        result.failure = NO_REPLY
        result.detail = result.detail or "no reply to OPTIONS within %.1f s" % settings.timeout_s


def probe_peer(target: PeerTarget, settings: ProbeSettings, contexts: t.Optional[TlsContexts] = None) -> PeerResult:
    """Probe one target; never raises (every outcome is a classified PeerResult)."""
    result = _result(target)
    start = time.monotonic()
    deadline = _Deadline(settings.timeout_s)
    try:
        _probe_peer(target, settings, deadline, result, contexts or TlsContexts(settings))
    except Exception as exc:  # noqa: BLE001 - one peer's surprise must not sink the whole probe
        result.healthy = False
        result.failure = result.failure or CONNECT_ERROR
        result.detail = "probe error %s: %s" % (type(exc).__name__, exc)
    result.elapsed_ms = _ms(start)
    return result


def _probe_peer(target: PeerTarget, settings: ProbeSettings, deadline: _Deadline, result: PeerResult,
                contexts: TlsContexts) -> None:
    if target.address is None:
        result.failure, result.detail = DNS, "the SRV target %s has no IPv4 address" % target.target
        return
    if not target.in_range:
        result.failure, result.detail = OUT_OF_RANGE, lim.out_of_range_detail(target.address, target.ranges)
        return
    if target.transport not in settings.allowed_transports:
        result.failure = TRANSPORT_NOT_ALLOWED
        result.detail = "transport %s is not allowed here (allowed: %s)" % (
            target.transport, ", ".join(settings.allowed_transports))
        return
    if target.kind == "mcp" and target.transport == "udp":
        # MCP never gets OPTIONS, and UDP has no handshake that could show it is there.
        result.healthy = True
        result.detail = MCP_UDP_UNCHECKED
        return
    if target.transport == "udp":
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            if settings.source_address:
                udp.bind((settings.source_address, 0))
            udp.connect((target.address, target.port))  # connected: ICMP errors surface, strangers filtered
            _exchange(udp, target, settings, deadline, result)
        return
    start = time.monotonic()
    try:
        raw = _connect(target, settings, deadline)
    except OSError as exc:
        result.failure, result.detail = _connect_failure(exc)
        result.connect_ms = _ms(start)
        return
    result.connect_ms = _ms(start)
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


# ----------------------------------------------------------------------------------------------------------
# DNS


def _in_ranges(address: str, ranges: t.Sequence[str]) -> bool:
    ip = ipaddress.ip_address(address)
    for value in ranges:
        try:
            if ip in ipaddress.ip_network(value, strict=False):
                return True
        except ValueError:
            continue
    return False


def _resolve_record(record: t.Mapping[str, t.Any], ranges: t.Sequence[str], kind: str, transport: str,
                    settings: ProbeSettings, path: str) -> tuple[dict[str, t.Any], list[PeerTarget]]:
    """Resolve one SRV record of the plan; the DNS report and the targets to probe."""
    hostname = record["hostname"]
    verify = (record.get("tls") or {}).get("verify_hostname") or hostname
    sni = (record.get("tls") or {}).get("sni") or hostname
    dns_report: dict[str, t.Any] = {"srv_name": record["srv_name"], "ok": False, "kind": None, "detail": "",
                                    "ttl": None, "targets": [], "out_of_range": [], "findings": []}
    start = time.monotonic()
    try:
        # RFC 2782 and the plan's srv_limits (issue 13): a hostile record gives its kind and no target to contact.
        limits = limits_for(transport, record.get("srv_limits"))
    except ValueError as exc:
        dns_report.update(kind="bad_srv_limits", detail="the plan's %s" % exc)
        return dns_report, []
    try:
        answer = resolve_srv(record["srv_name"], settings.resolver, limits)
    except DnsLookupError as exc:
        dns_report.update(kind=exc.kind, detail=str(exc), lookup_ms=_ms(start))
        return dns_report, []
    dns_report["lookup_ms"] = _ms(start)
    data = answer.as_dict()
    findings = audit_srv(answer, ranges, path)
    dns_report.update(ok=True, ttl=data["ttl"], targets=data["targets"],
                      findings=[f.render() for f in findings])
    targets = []
    for tgt in data["targets"]:
        addresses = tgt["addresses"] or [None]
        for address in addresses:
            in_range = address is not None and _in_ranges(address, ranges)
            if address is not None and not in_range:
                dns_report["out_of_range"].append("%s -> %s" % (tgt["target"], address))
            targets.append(PeerTarget(kind=kind, region=record["region"], srv_name=record["srv_name"], hostname=sni,
                                      verify_hostname=verify, target=tgt["target"], address=address,
                                      port=int(tgt["port"]), priority=int(tgt["priority"]),
                                      weight=int(tgt["weight"]), transport=transport, in_range=in_range))
    return dns_report, targets


# ----------------------------------------------------------------------------------------------------------
# The SBC's own view (per-platform hooks)


@dataclasses.dataclass
class SbcDestination:
    set_id: int
    uri: str
    host: str
    port: int
    transport: str
    address: t.Optional[str] = None      # host resolved to IPv4 (== host when host is an address)
    state: t.Optional[str] = None        # active | inactive | disabled | trying | None (file only)
    probing: t.Optional[bool] = None

    def as_dict(self) -> dict[str, t.Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class SbcView:
    platform: str
    source: str                               # what was read ("jsonrpc socket ...", "file ...")
    runtime: t.Optional[list[SbcDestination]] = None  # what the running SBC uses
    configured: t.Optional[list[SbcDestination]] = None  # what its deployed file says
    errors: list[str] = dataclasses.field(default_factory=list)


_URI_RE = re.compile(r"^sips?:(?:[^@;>]*@)?(\[[^\]]+\]|[^:;>]+)(?::(\d+))?(.*)$", re.IGNORECASE)


def parse_sip_uri(uri: str) -> tuple[str, int, str]:
    """(host, port, transport) of a dispatcher destination URI; port defaults by transport."""
    match = _URI_RE.match(uri.strip())
    if not match:
        raise ValueError("not a SIP URI: %r" % uri)
    host, port, params = match.group(1).strip("[]"), match.group(2), match.group(3)
    transport_match = re.search(r";transport=([a-z]+)", params, re.IGNORECASE)
    transport = transport_match.group(1).lower() if transport_match else (
        "tls" if uri.lower().startswith("sips:") else "udp")
    default = 5061 if transport == "tls" else 5060
    return host.lower(), int(port) if port else default, transport


def parse_dispatcher_list(text: str) -> list[SbcDestination]:
    """Kamailio's dispatcher.list: ``setid destination [flags [priority [attrs]]]`` per line."""
    found = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) < 2 or not fields[0].isdigit():
            raise ValueError("dispatcher.list line %r is not 'setid destination ...'" % line[:80])
        host, port, transport = parse_sip_uri(fields[1])
        found.append(SbcDestination(set_id=int(fields[0]), uri=fields[1], host=host, port=port, transport=transport))
    return found


def _kamailio_state(flags: str) -> tuple[str, bool]:
    """dispatcher.list RPC flags: first letter A(ctive)/I(nactive)/D(isabled)/T(rying), then P(robing)/X."""
    first = flags[:1].upper()
    state = {"A": "active", "I": "inactive", "D": "disabled", "T": "trying"}.get(first, "unknown")
    return state, "P" in flags[1:].upper()


def parse_dispatcher_rpc(result: t.Any) -> list[SbcDestination]:
    """The ``dispatcher.list`` jsonrpc result (Kamailio 5.6 and 6.0 share its shape)."""
    found = []
    if not isinstance(result, dict):
        raise ValueError("dispatcher.list returned %r" % type(result).__name__)
    for record in result.get("RECORDS") or []:
        group = record.get("SET") or {}
        set_id = int(group.get("ID"))
        targets = group.get("TARGETS") or []
        if isinstance(targets, dict):  # a single target is sometimes not wrapped in a list
            targets = [targets]
        for entry in targets:
            dest = entry.get("DEST") or entry
            uri = str(dest.get("URI"))
            host, port, transport = parse_sip_uri(uri)
            state, probing = _kamailio_state(str(dest.get("FLAGS", "")))
            found.append(SbcDestination(set_id=set_id, uri=uri, host=host, port=port, transport=transport,
                                        state=state, probing=probing))
    return found


def read_kamailio_view(options: t.Mapping[str, t.Any]) -> SbcView:
    """Kamailio: runtime destinations and states over jsonrpcs, configured ones from dispatcher.list.

    ``options``: ``config_dir`` (default /etc/kamailio; dispatcher.list and kamailio.cfg live there),
    ``dispatcher_list`` (overrides the file), ``run_dir`` (default /run/kamailio), ``rpc_socket`` /
    ``rpc_fifo`` (override what kamailio.cfg declares), ``rpc_timeout_s``.
    """
    config_dir = options.get("config_dir") or "/etc/kamailio"
    list_path = options.get("dispatcher_list") or os.path.join(config_dir, "dispatcher.list")
    view = SbcView(platform="kamailio", source="")
    sources = []
    try:
        with open(list_path, encoding="utf-8") as handle:
            view.configured = parse_dispatcher_list(handle.read())
        sources.append("file %s" % list_path)
    except (OSError, ValueError) as exc:
        view.errors.append("cannot read %s: %s" % (list_path, exc))
    run_dir = options.get("run_dir") or kr.DEFAULT_RUN_DIR
    endpoints = kr.RpcEndpoints(socket=os.path.join(run_dir, kr.DEFAULT_SOCKET_NAME),
                                fifo=os.path.join(run_dir, kr.DEFAULT_FIFO_NAME))
    cfg = os.path.join(config_dir, "kamailio.cfg")
    if os.path.exists(cfg):
        try:
            with open(cfg, encoding="utf-8") as handle:
                endpoints = kr.rpc_endpoints(handle.read(), run_dir)
        except OSError:
            pass
    if options.get("rpc_socket") or options.get("rpc_fifo"):
        endpoints = kr.RpcEndpoints(socket=options.get("rpc_socket"), fifo=options.get("rpc_fifo"),
                                    fifo_reply_dir=endpoints.fifo_reply_dir)
    try:
        rpc = kr.JsonRpc(endpoints, timeout_s=float(options.get("rpc_timeout_s") or 3.0))
        view.runtime = parse_dispatcher_rpc(rpc.call("dispatcher.list"))
        sources.append("jsonrpc %s" % (endpoints.socket or endpoints.fifo))
    except (kr.RpcError, OSError, ValueError, TypeError) as exc:
        view.errors.append("cannot ask Kamailio for dispatcher.list: %s" % exc)
    view.source = ", ".join(sources) or "nothing readable"
    return view


SBC_VIEWS: dict[str, t.Callable[[t.Mapping[str, t.Any]], SbcView]] = {"kamailio": read_kamailio_view}
SBC_ACTIVE = "active"  # the only runtime state in which the SBC counts a peer as in service
SETTLE_INTERVAL_S = 0.5  # re-read period while the SBC's view settles
SETTLE_CAP_S = 15.0      # upper bound of the default settle limit (default_settle_s)


def _resolve_hosts(destinations: t.Iterable[SbcDestination], settings: ProbeSettings) -> None:
    for dest in destinations:
        try:
            dest.address = str(ipaddress.IPv4Address(dest.host))
            continue
        except ValueError:
            pass
        try:
            answer = settings.resolver.resolver().resolve(dest.host, "A", search=False)
            dest.address = sorted(r.address for r in answer)[0]
        except Exception:  # noqa: BLE001 - an unresolvable destination stays None and shows as extra
            dest.address = None


def _empty_section(platform: str, source: str, errors: t.Sequence[str]) -> dict[str, t.Any]:
    return {"platform": platform, "source": source, "errors": list(errors), "destinations": [], "missing": [],
            "extra": [], "stale": [], "state_mismatch": [], "not_active": [], "active_peers": {}, "settle": None}


def compare_view(view: SbcView, peers: t.Sequence[PeerResult], dns_ok_records: t.Collection[str],
                 settings: ProbeSettings) -> dict[str, t.Any]:
    """Drift (missing/extra/stale) between the SBC's peer list and the SRV answers, plus peer states.

    missing: an SRV target the SBC does not use. extra: an SBC destination no SRV record lists.
    stale: the SBC has the peer's address with another port or transport, or the running list
    differs from the deployed file (written but not reloaded). Records whose DNS lookup failed are
    left out, so a DNS outage shows as a DNS failure rather than as drift.

    With runtime states (never from the file alone), for the ACG peers only (MCP targets are never
    pinged, R-19, so their state says nothing): not_active lists every peer the SBC lists in a state
    other than active (trying, inactive, disabled, or none/unknown), active_peers counts per SRV
    record the peers the SBC sees active (a peer it does not list at all counts as not active), and
    state_mismatch lists peers whose SBC state (active or not) disagrees with what the probe saw.
    """
    current = view.runtime if view.runtime is not None else view.configured
    out = _empty_section(view.platform, view.source, view.errors)
    if current is None:
        return out
    _resolve_hosts(current, settings)
    if view.runtime is not None and view.configured is not None:
        _resolve_hosts(view.configured, settings)
    out["destinations"] = [d.as_dict() for d in current]
    expected = {}
    for peer in peers:
        if peer.address is not None and peer.srv_name in dns_ok_records:
            expected[(peer.address, peer.port, peer.transport)] = peer
    have = {(d.address, d.port, d.transport): d for d in current}
    by_address = {}
    for dest in current:
        by_address.setdefault(dest.address, []).append(dest)
    for key, peer in sorted(expected.items(), key=lambda kv: kv[0][:2]):
        if key in have:
            continue
        olds = by_address.get(key[0], [])
        if olds:
            out["stale"].append({"peer": peer.label, "srv_name": peer.srv_name, "sbc": [d.uri for d in olds],
                                 "why": "the SBC uses this address with another port or transport"})
        else:
            out["missing"].append({"peer": peer.label, "srv_name": peer.srv_name})
    expected_addresses = {key[0] for key in expected}
    for key, dest in sorted(have.items(), key=lambda kv: (kv[1].set_id, kv[1].uri)):
        if key not in expected and dest.address not in expected_addresses:
            out["extra"].append({"uri": dest.uri, "set_id": dest.set_id, "address": dest.address})
    if view.runtime is not None and view.configured is not None:
        runtime_keys = {(d.set_id, d.address, d.port, d.transport) for d in view.runtime}
        file_keys = {(d.set_id, d.address, d.port, d.transport) for d in view.configured}
        if runtime_keys != file_keys:
            out["stale"].append({"why": "the running peer list differs from the deployed file (not reloaded?)",
                                 "only_running": sorted("%s %s:%s" % (k[0], k[1], k[2]) for k in runtime_keys - file_keys),
                                 "only_file": sorted("%s %s:%s" % (k[0], k[1], k[2]) for k in file_keys - runtime_keys)})
    if view.runtime is None:
        return out  # the deployed file has no states: nothing to judge them by
    sip_expected = {(p.address, p.port, p.transport): p for p in peers
                    if p.kind == "sip" and p.address is not None and p.srv_name in dns_ok_records}
    for key, peer in sorted(sip_expected.items(), key=lambda kv: (kv[1].srv_name, kv[0][:2])):
        counts = out["active_peers"].setdefault(peer.srv_name, {"region": peer.region, "active": 0, "total": 0})
        counts["total"] += 1
        dest = have.get(key)
        if dest is None:
            continue  # not in the SBC's list: drift (missing/stale), and not active either
        if dest.state == SBC_ACTIVE:
            counts["active"] += 1
            continue
        out["not_active"].append({"peer": peer.label, "srv_name": peer.srv_name, "region": peer.region,
                                  "sbc_state": dest.state or "unknown", "probe": _probe_state(peer)})
    for key, dest in sorted(have.items(), key=lambda kv: (kv[1].set_id, kv[1].uri)):
        peer = sip_expected.get(key)
        # disabled: taken out by an operator, not by health; MCP: never pinged, its state means nothing.
        if peer is None or dest.state is None or dest.state == "disabled":
            continue
        # Only "active" is in service: a destination stays "trying" while the SBC's own OPTIONS to it
        # fail (production: every peer trying and the SBC answering 503).
        sbc_up = dest.state == SBC_ACTIVE
        if sbc_up != peer.healthy:
            out["state_mismatch"].append({
                "peer": peer.label, "sbc_state": dest.state, "probe": _probe_state(peer),
                "why": "the SBC sends calls to a peer the probe found unhealthy" if sbc_up
                else "the SBC does not see a peer active that the probe found healthy"})
    return out


def _probe_state(peer: PeerResult) -> str:
    return "healthy" if peer.healthy else (peer.failure or "unhealthy")


# ----------------------------------------------------------------------------------------------------------
# Verdicts


def _worse(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def _peer_verdict(peer: PeerResult, th: Thresholds) -> None:
    reasons = []
    verdict = PASS
    if not peer.in_range and peer.address is not None:
        reasons.append("address %s outside the region's /28 range(s) (R-07)" % peer.address)
        verdict = _worse(verdict, FAIL if th.fail_on_out_of_range else WARN)
    if peer.failure is not None:
        text = peer.failure + (" %d" % peer.code if peer.code is not None else "")
        reasons.append("%s: %s" % (text, peer.detail))
        verdict = FAIL  # an unhealthy peer; whether the region fails is decided per region
    if peer.healthy and th.max_rtt_ms is not None and peer.rtt_ms is not None and peer.rtt_ms > th.max_rtt_ms:
        reasons.append("round trip %.1f ms above %.1f ms" % (peer.rtt_ms, th.max_rtt_ms))
        verdict = _worse(verdict, WARN)
    days = (peer.tls or {}).get("days_to_expiry")
    if peer.healthy and days is not None and days < th.cert_expiry_warn_days:
        reasons.append("certificate expires in %d day(s)" % days)
        verdict = _worse(verdict, WARN)
    if peer.duplicates:
        reasons.append("%d duplicate repl%s" % (peer.duplicates, "y" if peer.duplicates == 1 else "ies"))
        verdict = _worse(verdict, WARN)
    if peer.detail == MCP_UDP_UNCHECKED:
        reasons.append(peer.detail)
        verdict = _worse(verdict, WARN)
    peer.verdict, peer.reasons = verdict, reasons


def _group_verdict(group: dict[str, t.Any], peers: list[PeerResult], th: Thresholds, mcp: bool) -> None:
    reasons = []
    verdict = PASS
    dns = group["dns"]
    if not dns["ok"]:
        reasons.append("DNS %s: %s" % (dns["kind"], dns["detail"]))
        verdict = FAIL
    healthy = [p for p in peers if p.healthy and p.in_range]
    group["healthy"] = len(healthy)
    group["total"] = len(peers)
    needed = 1 if mcp else th.min_healthy_peers
    if dns["ok"] and len(healthy) < needed:
        what = "reachable MCP target" if mcp else "healthy peer"
        reasons.append("%d %s(s) of %d, at least %d required" % (len(healthy), what, len(peers), needed))
        verdict = _worse(verdict, FAIL if (not mcp or th.require_mcp_reachable) else WARN)
    out_of_range = [p for p in peers if not p.in_range and p.address is not None]
    if out_of_range:
        reasons.append("target(s) outside the /28 range(s): %s (R-07)" % ", ".join(
            sorted({"%s -> %s" % (p.target, p.address) for p in out_of_range})))
        verdict = _worse(verdict, FAIL if th.fail_on_out_of_range else WARN)
    tls_bad = [p for p in peers if p.failure in TLS_VERIFY_FAILURES]
    if tls_bad:
        reasons.append("TLS verification failed: %s (R-24)" % ", ".join(
            "%s %s" % (p.label, p.failure) for p in tls_bad))
        verdict = _worse(verdict, FAIL if th.fail_on_tls_verify else WARN)
    degraded = [p for p in peers if p.verdict != PASS and p not in tls_bad and p not in out_of_range]
    if degraded and verdict == PASS:
        reasons.append("degraded: %s" % ", ".join("%s %s" % (p.label, p.failure or p.verdict) for p in degraded))
        verdict = WARN
    group["verdict"], group["reasons"] = verdict, reasons


def run_probe(plan: t.Mapping[str, t.Any], settings: ProbeSettings, host: t.Optional[str] = None,
              sbc_platform: t.Optional[str] = None, sbc_options: t.Optional[t.Mapping[str, t.Any]] = None,
              sbc_settle_s: t.Optional[float] = None, clock: t.Callable[[], float] = time.monotonic,
              sleep: t.Callable[[float], None] = time.sleep) -> dict[str, t.Any]:
    """Probe one site as its routing plan describes it; returns the JSON-serialisable report.

    ``sbc_settle_s``: how long the SBC-view step may wait for the SBC's own states to settle (peers
    the probe reached but the SBC does not see active yet, e.g. right after a restart); None is
    ``default_settle_s(plan)``, 0 reads once. ``clock``/``sleep`` time that wait (tests pass fakes).
    """
    th = settings.thresholds
    settle_s = default_settle_s(plan) if sbc_settle_s is None else max(0.0, float(sbc_settle_s))
    started = time.monotonic()
    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    records: list[tuple[str, dict[str, t.Any], list[str], str, str]] = []
    for tg in plan["trunk_groups"]:
        records.append(("sip", dict(tg), list(tg["ip_ranges"]), tg["transport"],
                        "trunk_groups[%s]" % tg["region"]))
    all_ranges = [entry["network"] for entry in plan["acl"]["ranges"]]
    mcp = plan.get("mcp") or None
    transport0 = plan["trunk_groups"][0]["transport"] if plan["trunk_groups"] else "tls"
    if mcp:
        for record in mcp["records"]:
            # an MCP record also lists the other region's MCP, so any range of the deployment is fine.
            rec = dict(record, tls={"sni": record["hostname"], "verify_hostname": record["hostname"]})
            records.append(("mcp", rec, all_ranges, transport0, "mcp.records[%s]" % record["region"]))

    for _kind, rec, *_rest in records:
        rec.setdefault("srv_limits", plan.get("srv_limits"))
    pool_size = max(1, min(settings.concurrency, 64))
    with concurrent.futures.ThreadPoolExecutor(max_workers=pool_size) as pool:
        # DNS for every record at once; the provisioning API TTL check alongside.
        dns_futures = [pool.submit(_resolve_record, rec, ranges, kind, transport, settings, path)
                       for kind, rec, ranges, transport, path in records]
        ttl_future = None
        if settings.check_provisioning_ttl and plan.get("provisioning_api"):
            api = plan["provisioning_api"]
            ttl_future = pool.submit(_provisioning_ttl, api, settings)
        resolved = [f.result() for f in dns_futures]
        dns_ms = _ms(started)
        targets = []
        for (_k, _rec, ranges, _tr, _p), (dns_report, tgts) in zip(records, resolved):
            kept, dns_report["capped"] = lim.cap_targets(tgts)
            targets.extend(dataclasses.replace(tgt, ranges=tuple(ranges)) for tgt in kept)
        probe_start = time.monotonic()
        contexts = TlsContexts(settings)
        peer_results = list(pool.map(lambda tgt: probe_peer(tgt, settings, contexts), targets))
        probe_ms = _ms(probe_start)
        provisioning = ttl_future.result() if ttl_future is not None else None

    groups = []
    for (kind, rec, ranges, transport, _path), (dns_report, _tgts) in zip(records, resolved):
        peers = [p for p in peer_results if p.srv_name == rec["srv_name"] and p.kind == kind]
        for peer in peers:
            _peer_verdict(peer, th)
        group = {"kind": kind, "region": rec["region"], "role": rec.get("role"), "hostname": rec["hostname"],
                 "srv_name": rec["srv_name"], "transport": transport, "ip_ranges": ranges, "dns": dns_report,
                 "peers": [p.as_dict() for p in peers]}
        _group_verdict(group, peers, th, mcp=(kind == "mcp"))
        if dns_report.get("capped"):
            group["reasons"].append(dns_report["capped"])
            group["verdict"] = _worse(group["verdict"], WARN)
        groups.append(group)

    sbc: t.Optional[dict[str, t.Any]] = None
    sbc_start = time.monotonic()
    if sbc_platform:
        sbc = _sbc_section(sbc_platform, sbc_options or {}, peer_results, groups, settings,
                           settle_s=settle_s, clock=clock, sleep=sleep)
    sbc_ms = _ms(sbc_start)

    reasons = []
    verdict = PASS
    for group in groups:
        if group["verdict"] != PASS:
            label = "%s %s" % ("region" if group["kind"] == "sip" else "MCP", group["region"])
            reasons.append("%s %s: %s" % (label, group["verdict"], "; ".join(group["reasons"])))
            verdict = _worse(verdict, group["verdict"])
    if provisioning is not None and provisioning["verdict"] != PASS:
        reasons.append("provisioning API: %s" % provisioning["detail"])
        verdict = _worse(verdict, provisioning["verdict"])
    if sbc is not None and sbc["verdict"] != PASS:
        reasons.append("SBC view %s: %s" % (sbc["verdict"], "; ".join(sbc["reasons"])))
        verdict = _worse(verdict, sbc["verdict"])
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "deployment": plan["deployment"]["name"],
        "site": plan["site"]["name"],
        "host": host,
        "started_at": started_at,
        "timings_ms": {"dns": dns_ms, "probe": probe_ms, "sbc_view": sbc_ms, "total": _ms(started)},
        "settings": {"timeout_s": settings.timeout_s, "nameservers": settings.resolver.describe(),
                     "source_address": settings.source_address, "concurrency": pool_size, "sbc_settle_s": settle_s,
                     "thresholds": dataclasses.asdict(th)},
        "regions": [g for g in groups if g["kind"] == "sip"],
        "mcp": [g for g in groups if g["kind"] == "mcp"],
        "provisioning_api": provisioning,
        "sbc_view": sbc,
        "verdict": verdict,
        "reasons": reasons,
    }


def _provisioning_ttl(api: t.Mapping[str, t.Any], settings: ProbeSettings) -> dict[str, t.Any]:
    finding = check_ttl(api["hostname"], int(api.get("max_ttl_s", 60)), settings.resolver,
                        path="provisioning_api.hostname")
    if finding is None:
        return {"hostname": api["hostname"], "verdict": PASS, "detail": "TTL within %s s" % api.get("max_ttl_s", 60)}
    if finding.severity == "error":
        verdict = FAIL if settings.thresholds.fail_on_provisioning_ttl else WARN
    else:
        verdict = WARN
    return {"hostname": api["hostname"], "verdict": verdict, "detail": finding.message}


def default_settle_s(plan: t.Mapping[str, t.Any]) -> float:
    """The default settle limit: the plan's health window plus one OPTIONS interval plus 1 s, at most 15 s.

    That is how long a peer the SBC has just (re)loaded needs to be pinged into "active"
    (``window_s`` = interval x failure threshold, plan R-13).
    """
    health = plan.get("health") or {}
    try:
        window = float(health.get("window_s") or 0)
        interval = float(health.get("interval_s") or 0)
    except (TypeError, ValueError):
        return SETTLE_CAP_S
    return min(SETTLE_CAP_S, max(0.0, window + interval + 1.0))


def _unsettled(view: SbcView, section: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    """Peers the probe reached that the SBC does not see active (yet); disabled is an operator's choice."""
    if view.runtime is None:
        return []
    return [e for e in section["not_active"] if e["probe"] == "healthy" and e["sbc_state"] != "disabled"]


def _read_settled(hook: t.Callable[[t.Mapping[str, t.Any]], SbcView], options: t.Mapping[str, t.Any],
                  peers: list[PeerResult], dns_ok: t.Collection[str], settings: ProbeSettings, settle_s: float,
                  clock: t.Callable[[], float], sleep: t.Callable[[float], None]
                  ) -> tuple[SbcView, dict[str, t.Any]]:
    """Read the SBC's view; while peers the probe reached are not active there, read it again.

    Right after a push or restart the SBC has not pinged its peers yet and shows them trying or
    inactive. Re-reads every SETTLE_INTERVAL_S until they are active, a re-read yields no runtime
    states (the last reading that had them is kept), or ``settle_s`` has passed; at most
    1 + ceil(settle_s / SETTLE_INTERVAL_S) readings.
    """
    view = hook(options)
    section = compare_view(view, peers, dns_ok, settings)
    pending = _unsettled(view, section)
    readings = 1
    waited = 0.0
    lost = ""
    if pending and settle_s > 0:
        start = clock()
        max_readings = 1 + int(math.ceil(settle_s / SETTLE_INTERVAL_S))
        while pending and readings < max_readings:
            left = settle_s - (clock() - start)
            if left <= 0:
                break
            sleep(min(SETTLE_INTERVAL_S, left))
            again = hook(options)
            readings += 1
            if again.runtime is None:
                lost = "; ".join(again.errors) or "no runtime states"
                break
            view, section = again, compare_view(again, peers, dns_ok, settings)
            pending = _unsettled(view, section)
        waited = round(max(0.0, clock() - start), 2)
    settled = view.runtime is not None and not pending
    if view.runtime is None:
        text = "no runtime states read"
    elif readings == 1 and settled:
        text = "settled at the first reading"
    elif settled:
        text = "settled after %.1f s (%d readings)" % (waited, readings)
    elif lost:
        text = "not settled, stopped after %.1f s: reading %d had no runtime states (%s)" % (waited, readings, lost)
    elif waited > 0 or readings > 1:
        text = "not settled after %.1f s (%d readings, limit %.1f s)" % (waited, readings, settle_s)
    else:
        text = "not settled, no wait (limit %.1f s)" % settle_s
    section["settle"] = {"limit_s": settle_s, "waited_s": waited, "readings": readings, "settled": settled,
                         "unsettled": [e["peer"] for e in pending], "text": text}
    return view, section


def _sbc_section(platform: str, options: t.Mapping[str, t.Any], peers: list[PeerResult],
                 groups: list[dict[str, t.Any]], settings: ProbeSettings, settle_s: float = 0.0,
                 clock: t.Callable[[], float] = time.monotonic, sleep: t.Callable[[float], None] = time.sleep
                 ) -> dict[str, t.Any]:
    th = settings.thresholds
    hook = SBC_VIEWS.get(platform)
    if hook is None:
        section = _empty_section(platform, "", [])
        section.update(verdict=WARN, reasons=["no SBC view for platform %s yet" % platform])
        return section
    dns_ok = {g["srv_name"] for g in groups if g["dns"]["ok"]}
    view, section = _read_settled(hook, options, peers, dns_ok, settings, settle_s, clock, sleep)
    reasons = []
    verdict = PASS
    if view.runtime is None and view.configured is None:
        reasons.append("could not read the SBC's peer list: %s" % "; ".join(view.errors))
        verdict = WARN
    elif view.runtime is None:
        reasons.append("peer states unknown (only the deployed file was readable): %s" % "; ".join(view.errors))
        verdict = WARN
    drift = [(name, section[name]) for name in ("missing", "extra", "stale") if section[name]]
    for name, entries in drift:
        reasons.append("drift %s: %s" % (name, ", ".join(
            e.get("peer") or e.get("uri") or e.get("why", "") for e in entries)))
    if drift:
        verdict = _worse(verdict, FAIL if th.fail_on_drift else WARN)
    settle = section["settle"]
    after = " after a %.1f s wait" % settle["waited_s"] if not settle["settled"] and settle["readings"] > 1 else ""
    section["state_verdict"], state_reasons = _state_verdict(section, groups, after)
    reasons.extend(state_reasons)
    verdict = _worse(verdict, section["state_verdict"])
    if section["state_mismatch"]:
        reasons.append("state mismatch: %s" % ", ".join(
            "%s SBC %s, probe %s" % (e["peer"], e["sbc_state"], e["probe"]) for e in section["state_mismatch"]))
        verdict = _worse(verdict, FAIL if th.fail_on_state_mismatch else WARN)
    section["verdict"], section["reasons"] = verdict, reasons
    return section


def _state_verdict(section: t.Mapping[str, t.Any], groups: t.Sequence[t.Mapping[str, t.Any]], after: str = ""
                   ) -> tuple[str, list[str]]:
    """What the SBC's own runtime states of the ACG peers mean for the site (MCP is never judged by state).

    Any peer the SBC does not see active is a warning (it is not used, or only while its pings fail);
    no peer of the local trunk group active, or no ACG peer active at all, fails: the SBC cannot send
    calls to its local region, or to ACG at all.
    """
    counts = section["active_peers"]
    if not counts:
        return PASS, []
    reasons = []
    verdict = PASS

    def breakdown(srv_names: t.Collection[str]) -> str:
        states: dict[str, int] = {}
        for entry in section["not_active"]:
            if entry["srv_name"] in srv_names:
                states[entry["sbc_state"]] = states.get(entry["sbc_state"], 0) + 1
        listed = sum(states.values())
        unlisted = sum(counts[name]["total"] - counts[name]["active"] for name in srv_names) - listed
        if unlisted:
            states["not in its list"] = unlisted
        return ", ".join("%d %s" % (n, state) for state, n in sorted(states.items()))

    total = sum(c["total"] for c in counts.values())
    if not any(c["active"] for c in counts.values()):
        reasons.append("the SBC sees none of the %d ACG peer(s) active (%s): it cannot send calls to ACG"
                       % (total, breakdown(counts)))
        verdict = FAIL
    else:
        for group in groups:
            entry = counts.get(group["srv_name"])
            if group["kind"] == "sip" and group.get("role") == "local" and entry and not entry["active"]:
                what = (group["region"], entry["total"], breakdown([group["srv_name"]]))
                reasons.append("the SBC sees no peer of the local trunk group %s active (0 of %d: %s): it cannot "
                               "send calls to its local region" % what)
                verdict = FAIL
    if section["not_active"]:
        reasons.append("not active in the SBC's view%s: %s" % (after, ", ".join(
            "%s %s" % (e["peer"], e["sbc_state"]) for e in section["not_active"])))
        verdict = _worse(verdict, WARN)
    return verdict, reasons
