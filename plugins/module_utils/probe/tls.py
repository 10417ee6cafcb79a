# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's TLS: client contexts, handshake failure classes, certificate summaries, and what the
SBC's own certificate host check would make of a peer certificate (issue 13, item 4).

Kamailio exposes only the *first* DNS subjectAltName of a peer certificate, so the SBC's host check
(``route(COMMSGW_TLS_PEER_OK)``, docs/kamailio-tls.md) compares the expected regional hostname
with that first SAN or with the subject CN. RFC 6125 (6.4.4) says the CN is not used when DNS SANs
exist. The probe sees the whole certificate, so it can say at onboarding what the SBC would only
show at the first call: a certificate whose first DNS SAN is not the regional hostname.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.tls.certificates import decode_pem, dns_names
from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as lim

# TLS failure classes (PeerResult.failure).
TLS_UNKNOWN_CA = "tls_unknown_ca"
TLS_HOSTNAME_MISMATCH = "tls_hostname_mismatch"
TLS_EXPIRED = "tls_expired"                # also "not yet valid": the validity period is wrong
TLS_PROTOCOL = "tls_protocol"              # no common version/cipher, or the peer does not speak TLS
TLS_CLIENT_REJECTED = "tls_client_rejected"  # the peer refused the SBC's client certificate
TLS_HANDSHAKE = "tls_handshake"            # any other handshake failure, including a handshake timeout
TLS_SBC_HOST_CHECK = "tls_sbc_host_check"  # PeerResult.failure: the SBC's host check would refuse or rely on the CN
# The certificate presented by ACG is wrong: a security finding, not an outage (fails the task).
TLS_VERIFY_FAILURES = (TLS_UNKNOWN_CA, TLS_HOSTNAME_MISMATCH, TLS_EXPIRED, TLS_SBC_HOST_CHECK)

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

ADVICE = ("the SBC (Kamailio) sees only a certificate's first DNS subjectAltName and its CN "
          "(docs/kamailio-tls.md); ask ACG (Microsoft support) for a certificate whose first DNS "
          "subjectAltName is the regional hostname")


def name_matches(pattern: str, hostname: str) -> bool:
    """RFC 6125 matching: exact, or one left-most wildcard label (what the SBC's check does too)."""
    pattern, hostname = pattern.lower().rstrip("."), hostname.lower().rstrip(".")
    if pattern == hostname:
        return True
    if pattern.startswith("*.") and "." in hostname:
        return hostname.split(".", 1)[1] == pattern[2:]
    return False


def subject_cn(subject: t.Mapping[str, str]) -> t.Optional[str]:
    return subject.get("commonName")


def sbc_host_check(san: t.Sequence[str], cn: t.Optional[str], expected: str) -> t.Optional[str]:
    """Why the SBC's host check disagrees with RFC 6125 for this certificate, or None when it does not.

    ``san``: the certificate's DNS subjectAltNames in order; ``cn``: its subject CN. Only judged when
    DNS SANs exist (without them both the SBC and RFC 6125 use the CN).
    """
    if not san or name_matches(san[0], expected):
        return None
    later = [name for name in san[1:] if name_matches(name, expected)]
    in_cn = cn is not None and name_matches(cn, expected)
    if later and not in_cn:
        return ("the SBC would refuse this peer (total outage at the first call): %s is DNS subjectAltName "
                "#%d, not the first (%s); %s" % (expected, san.index(later[0]) + 1, san[0], ADVICE))
    if later:
        return ("the SBC accepts this peer only through the subject CN %s: %s is DNS subjectAltName #%d, not the "
                "first (%s), and RFC 6125 does not use the CN when DNS subjectAltNames exist; %s"
                % (cn, expected, san.index(later[0]) + 1, san[0], ADVICE))
    if in_cn:
        return ("%s is only the subject CN while the certificate has DNS subjectAltNames (%s): RFC 6125 does not "
                "use the CN then, so the certificate does not name the regional hostname (the SBC's check would "
                "still accept it through the CN); %s" % (expected, ", ".join(san[:5]), ADVICE))
    return None


# ----------------------------------------------------------------------------------------------------------
# Client contexts


def tls_context(settings: t.Any, verify_hostname: t.Optional[str], verify: bool = True) -> ssl.SSLContext:
    """A client context: TLS 1.2+ (R-09), the SBC's client certificate, the ACG trust anchors (R-24).

    ``settings``: a ``probe_settings.ProbeSettings`` (its ca_bundle, client_cert and client_key).
    """
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

    def __init__(self, settings: t.Any) -> None:
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


# ----------------------------------------------------------------------------------------------------------
# Failures and certificates


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


def decode_der(der: bytes) -> t.Optional[dict[str, t.Any]]:
    """Decode a certificate the handshake refused, for the report (subject, SAN, dates).

    ``getpeercert()`` only decodes verified certificates; the standard library's decoder that takes a
    file is the only stdlib way for an unverified one. Private API, hence best effort.
    """
    try:
        return decode_pem(ssl.DER_cert_to_PEM_cert(der))
    except Exception:  # noqa: BLE001 - diagnostics only
        return None


def session_details(tls: ssl.SSLSocket, sni: str, verified_against: str) -> dict[str, t.Any]:
    """Version, cipher, names and the peer certificate's summary of an established TLS session."""
    cipher = tls.cipher()
    details = {"version": tls.version(), "cipher": cipher[0] if cipher else None, "sni": sni,
               "verified_against": verified_against}
    details.update(cert_summary(tls.getpeercert() or {}))
    return details
