# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight of the SBC's TLS files, run on the SBC host before anything changes.

A key the SBC's user cannot read, an expired certificate or a chain ACG will not accept shows up
otherwise only as a failed live start or refused TLS connections. ``check_tls_files`` reads the files
as the caller (root) but judges readability for the user the SBC runs as (tls/file_access.py).

Standard library only (the SBC host has python3 but neither ``cryptography`` nor, reliably, the
``openssl`` binary). No message ever holds key material: only paths, modes, names and dates.
"""

from __future__ import annotations

import datetime as _dt
import platform
import re
import ssl
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.tls.certificates import can_decode, decode_pem, dns_names

_PEM_CERT = re.compile(r"-----BEGIN CERTIFICATE-----\r?\n.+?-----END CERTIFICATE-----", re.DOTALL)
_PEM_KEY_BEGIN = re.compile(r"-----BEGIN ((?:RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY)-----")
# OpenSSL verify codes for "certificate has expired" and "certificate is not yet valid".
_X509_V_ERR_TIME = (9, 10)
_X509_V_FLAG_NO_CHECK_TIME = 0x200000
_HANDSHAKE_ROUNDS = 16  # a TLS 1.2/1.3 handshake needs 2-3 round trips; more means something is stuck
_SECONDS_PER_DAY = 86400


from ansible_collections.commsgw.routing.plugins.module_utils.tls.file_access import (
    CA_BUNDLE, CERTIFICATE, CHAIN_CA, PRIVATE_KEY, PreflightResult, RunAsUser, check_file_access, check_key_group,
    check_key_mode, file_label, lookup_user)


def _openssl_reason(exc: ssl.SSLError) -> str:
    """'NO_CERTIFICATE_OR_CRL_FOUND' -> 'no certificate or crl found'; the full text holds source line numbers."""
    reason = getattr(exc, "reason", None)  # absent on an SSLError made here rather than by OpenSSL
    return reason.lower().replace("_", " ") if reason else str(exc)


def _read_text(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("ascii", errors="replace")


def _name_field(name: t.Any, field: str) -> t.Optional[str]:
    for rdn in name or ():
        for key, value in rdn:
            if key == field:
                return value
    return None


def _iso(seconds: float) -> str:
    return _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_certificate_dates(path: str, now: float, expiry_warning_days: int, result: PreflightResult) -> bool:
    """Decode the leaf (first) certificate, report validity; True when the leaf is outside its validity period."""
    label = file_label(CERTIFICATE, path)
    match = _PEM_CERT.search(_read_text(path))
    if match is None:
        result.errors.append("%s holds no PEM certificate (no -----BEGIN CERTIFICATE----- block); expected the SBC"
                             " certificate in PEM, leaf first, then intermediates" % label)
        return False
    if not can_decode():
        # A private CPython helper (present from 3.x through 3.13); without it no stdlib parser reads the dates.
        result.errors.append("%s: this host's Python (%s) cannot decode certificates; expected CPython 3 with"
                             " ssl._ssl._test_decode_cert" % (label, platform.python_version()))
        return False
    try:
        decoded = decode_pem(match.group(0))
    except (ssl.SSLError, ValueError) as exc:
        result.errors.append("%s: the first certificate cannot be decoded (%s); expected a valid PEM certificate"
                             % (label, exc))
        return False
    not_before = ssl.cert_time_to_seconds(decoded["notBefore"])
    not_after = ssl.cert_time_to_seconds(decoded["notAfter"])
    days_left = int((not_after - now) // _SECONDS_PER_DAY)
    subject_cn = _name_field(decoded.get("subject"), "commonName")
    result.certificate.update(
        subject=subject_cn, san=dns_names(decoded),
        issuer=_name_field(decoded.get("issuer"), "commonName"), not_before=_iso(not_before),
        not_after=_iso(not_after), days_left=days_left)
    named = "%s (CN=%s)" % (label, subject_cn) if subject_cn else label
    if now < not_before:
        result.errors.append("%s is not valid before %s; expected a certificate valid now: check the host clock or"
                             " install a certificate that is already valid" % (named, _iso(not_before)))
        return True
    if now >= not_after:
        result.errors.append("%s expired on %s (%d day(s) ago); expected a certificate valid now: renew it"
                             % (named, _iso(not_after), -days_left))
        return True
    if not_after - now < expiry_warning_days * _SECONDS_PER_DAY:
        result.warnings.append("%s expires on %s, in %d day(s) (expiry_warning_days=%d): renew it before then"
                               % (named, _iso(not_after), days_left, expiry_warning_days))
    return False


def check_ca_file(option: str, path: str, result: PreflightResult) -> bool:
    """The file loads as OpenSSL trust anchors and holds at least one certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cafile=path)
    except ssl.SSLError as exc:
        result.errors.append("%s does not load as a CA file (%s); expected one or more PEM CA certificates"
                             % (file_label(option, path), _openssl_reason(exc)))
        return False
    stats = context.cert_store_stats()
    result.checked.setdefault("files", {}).setdefault(option, {})["certificates"] = stats["x509"]
    if stats["x509_ca"] == 0:
        result.warnings.append("%s holds %d certificate(s) but no CA certificate (basicConstraints CA:TRUE);"
                               " expected the root CA(s) to trust" % (file_label(option, path), stats["x509"]))
    return True


class _KeyIsEncrypted(Exception):
    """Raised by the password callback: OpenSSL asks for a passphrase only for an encrypted key."""


def _refuse_passphrase() -> str:
    raise _KeyIsEncrypted()


def _server_context(certificate: str, private_key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # The callback keeps OpenSSL from prompting on a terminal for an encrypted key.
    context.load_cert_chain(certificate, private_key, password=_refuse_passphrase)
    return context


def check_key_matches(certificate: str, private_key: str, result: PreflightResult) -> bool:
    """The private key loads unencrypted and belongs to the (leaf) certificate."""
    key_label = file_label(PRIVATE_KEY, private_key)
    if _PEM_KEY_BEGIN.search(_read_text(private_key)) is None:
        result.errors.append("%s holds no PEM private key (no -----BEGIN ... PRIVATE KEY----- block); expected the"
                             " SBC's unencrypted private key in PEM" % key_label)
        return False
    try:
        _server_context(certificate, private_key)
    except _KeyIsEncrypted:
        result.errors.append("%s is encrypted (passphrase protected); the SBC cannot prompt for a passphrase:"
                             " expected an unencrypted PEM key, e.g. openssl pkey -in ENCRYPTED.key -out %s"
                             % (key_label, private_key))
        return False
    except ssl.SSLError as exc:
        if exc.reason == "KEY_VALUES_MISMATCH":
            result.errors.append("%s does not belong to %s (OpenSSL: key values mismatch); expected the key the"
                                 " certificate was issued for" % (key_label, file_label(CERTIFICATE, certificate)))
        else:
            result.errors.append("%s and %s cannot be loaded together (OpenSSL: %s); expected a PEM certificate and"
                                 " its unencrypted PEM private key" % (file_label(CERTIFICATE, certificate), key_label,
                                                                       _openssl_reason(exc)))
        return False
    return True


def _handshake_failure(certificate: str, private_key: str, trust: str,
                       check_time: bool = True) -> t.Optional[ssl.SSLError]:
    """A TLS handshake in memory: client trusting ``trust`` against a server presenting the certificate file."""
    client_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client_context.check_hostname = False  # ACG checks the SBC's name itself; here only the chain counts
    client_context.verify_mode = ssl.CERT_REQUIRED
    if not check_time:
        client_context.verify_flags |= _X509_V_FLAG_NO_CHECK_TIME  # type: ignore[assignment]
    client_context.load_verify_locations(cafile=trust)
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    server_out, client_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    server = _server_context(certificate, private_key).wrap_bio(to_server, server_out, server_side=True)
    client = client_context.wrap_bio(to_client, client_out)
    done = {"client": False, "server": False}
    for _round in range(_HANDSHAKE_ROUNDS):
        for side, peer in (("client", client), ("server", server)):
            if done[side]:
                continue
            try:
                peer.do_handshake()
                done[side] = True
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as exc:
                if side == "client":
                    return exc
                done[side] = True  # the server's view of a failure the client reports
        to_server.write(client_out.read())
        to_client.write(server_out.read())
        if all(done.values()):
            return None
    return ssl.SSLError("the in-memory TLS handshake did not finish in %d rounds" % _HANDSHAKE_ROUNDS)


def check_chain(certificate: str, private_key: str, trust_option: str, trust: str, leaf_out_of_date: bool,
                result: PreflightResult) -> bool:
    """The certificate file (leaf + intermediates) verifies up to a root in ``trust``, as ACG would check it."""
    failure = _handshake_failure(certificate, private_key, trust)
    if (isinstance(failure, ssl.SSLCertVerificationError) and failure.verify_code in _X509_V_ERR_TIME
            and leaf_out_of_date):
        # The leaf's dates are already reported; judge the chain itself too.
        failure = _handshake_failure(certificate, private_key, trust, check_time=False)
    if failure is None:
        return True
    if isinstance(failure, ssl.SSLCertVerificationError):
        result.errors.append(
            "%s does not verify against %s: %s; expected the certificate file to hold the leaf followed by every"
            " intermediate, and %s to hold the root CA that ACG trusts for the SBC's certificate"
            % (file_label(CERTIFICATE, certificate), file_label(trust_option, trust), failure.verify_message, trust_option))
    else:
        result.errors.append("%s: the test TLS handshake failed (%s); expected a handshake with %s as trust"
                             % (file_label(CERTIFICATE, certificate), _openssl_reason(failure), trust_option))
    return False


def check_tls_files(certificate: str, private_key: str, ca_bundle: str, chain_ca: t.Optional[str] = None, *,
                    run_as_user: str, now: t.Optional[float] = None,
                    expiry_warning_days: int = 30, key_group_leaving: t.Sequence[str] = ()) -> PreflightResult:
    """Check the SBC's TLS files before the SBC uses them; every problem names its option and file.

    ``run_as_user``: the account the SBC runs as (the platform's, never a default here); readability is judged for
    it. ``ca_bundle`` is what the SBC trusts for ACG; ``chain_ca`` (default: ``ca_bundle``) holds the root
    that ACG trusts for the SBC's own certificate. ``now`` (epoch seconds) is for tests. ``key_group_leaving``:
    accounts that leave the key's group in the same run (not counted as its other members).
    """
    result = PreflightResult()
    now = time.time() if now is None else now
    trust_option, trust = (CHAIN_CA, chain_ca) if chain_ca else (CA_BUNDLE, ca_bundle)
    result.checked.update(run_as_user={"name": run_as_user}, chain_ca=trust, key_matches_certificate=None,
                          chain_verified=None)
    user: t.Optional[RunAsUser]
    try:
        user = lookup_user(run_as_user)
    except KeyError:
        user = None
        result.errors.append("run_as_user %s: no such user on this host; expected the user the SBC runs as"
                             % run_as_user)
    else:
        result.checked["run_as_user"].update(uid=user.uid, gid=user.gid, groups=user.group_names())

    files = [(CERTIFICATE, certificate), (PRIVATE_KEY, private_key), (CA_BUNDLE, ca_bundle)]
    if chain_ca:
        files.append((CHAIN_CA, chain_ca))
    usable = {option: check_file_access(option, path, user, result) for option, path in files}

    if usable[PRIVATE_KEY]:
        check_key_mode(private_key, user, result)
        check_key_group(private_key, user, result, key_group_leaving)
    leaf_out_of_date = usable[CERTIFICATE] and check_certificate_dates(
        certificate, now, expiry_warning_days, result)
    bundle_loads = usable[CA_BUNDLE] and check_ca_file(CA_BUNDLE, ca_bundle, result)
    trust_usable = bundle_loads if trust_option == CA_BUNDLE else (
        usable[CHAIN_CA] and check_ca_file(CHAIN_CA, trust, result))
    if usable[CERTIFICATE] and usable[PRIVATE_KEY]:
        result.checked["key_matches_certificate"] = check_key_matches(certificate, private_key, result)
        if result.checked["key_matches_certificate"] and trust_usable:
            result.checked["chain_verified"] = check_chain(certificate, private_key, trust_option, trust,
                                                           leaf_out_of_date, result)
    return result
