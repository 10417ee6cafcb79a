# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The exporter's optional web configuration, in the style of Prometheus' exporter-toolkit
(``--web.config.file``): TLS (``tls_server_config``) and basic authentication (``basic_auth_users``).

The file is JSON (which YAML readers accept too) with exporter-toolkit's keys. Passwords are stored as
PBKDF2-SHA256 hashes (``$pbkdf2-sha256$<iterations>$<salt>$<hash>``, base64): the standard library has
no bcrypt. ``commsgw-probe-exporter hash-password`` makes one from a password read on stdin.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import ssl
import threading
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.exporter.config import ConfigError, read_json

SCHEME = "pbkdf2-sha256"
ITERATIONS = 200_000
MIN_ITERATIONS = 100_000
CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
               "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
MIN_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
MAX_CREDENTIAL_CHARS = 512


def hash_password(password: str, iterations: int = ITERATIONS, salt: t.Optional[bytes] = None) -> str:
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return "$%s$%d$%s$%s" % (SCHEME, iterations, base64.b64encode(salt).decode(), base64.b64encode(digest).decode())


def _parse_hash(value: t.Any, path: str) -> tuple[int, bytes, bytes]:
    parts = value.split("$") if isinstance(value, str) else []
    try:
        if len(parts) != 5 or parts[0] or parts[1] != SCHEME:
            raise ValueError("not a $%s$ hash" % SCHEME)
        iterations = int(parts[2])
        if iterations < MIN_ITERATIONS:
            raise ValueError("%d iterations, at least %d expected" % (iterations, MIN_ITERATIONS))
        return iterations, base64.b64decode(parts[3], validate=True), base64.b64decode(parts[4], validate=True)
    except (ValueError, binascii.Error) as exc:
        raise ConfigError("%s: %s; expected the output of 'commsgw-probe-exporter hash-password' "
                          "($%s$<iterations>$<salt>$<hash>)" % (path, exc, SCHEME)) from exc


class BasicAuth:
    """Checks ``Authorization: Basic`` against the configured hashes in constant time.

    A verified credential is remembered as an HMAC under a per-process key, so the scraper's every
    request does not cost a PBKDF2 run; an unknown user costs one all the same (no user probing by time).
    """

    def __init__(self, users: t.Mapping[str, str]) -> None:
        self.users = {name: _parse_hash(value, "basic_auth_users.%s" % name) for name, value in users.items()}
        self._key = os.urandom(32)
        self._verified: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._dummy = (ITERATIONS, os.urandom(16), os.urandom(32))

    def check(self, header: t.Optional[str]) -> bool:
        if not header or len(header) > MAX_CREDENTIAL_CHARS or not header.startswith("Basic "):
            return False
        try:
            user, _colon, password = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return False
        mac = hmac.new(self._key, ("%s:%s" % (user, password)).encode("utf-8"), "sha256").digest()
        with self._lock:
            known = self._verified.get(user)
        if known is not None and hmac.compare_digest(known, mac):
            return True
        iterations, salt, expected = self.users.get(user, self._dummy)
        digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
        if user in self.users and hmac.compare_digest(digest, expected):
            with self._lock:
                self._verified[user] = mac
            return True
        return False


class WebConfig:
    """The parsed web configuration: an SSL context (or None) and basic auth (or None)."""

    def __init__(self, context: t.Optional[ssl.SSLContext], auth: t.Optional[BasicAuth]) -> None:
        self.context, self.auth = context, auth


def _tls_context(raw: t.Mapping[str, t.Any]) -> ssl.SSLContext:
    unknown = sorted(set(raw) - {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version"})
    if unknown:
        raise ConfigError("tls_server_config: unknown key(s) %s" % ", ".join(unknown))
    for key in ("cert_file", "key_file"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ConfigError("tls_server_config.%s: missing; expected a PEM file path" % key)
    auth_type = raw.get("client_auth_type") or ("RequireAndVerifyClientCert" if raw.get("client_ca_file")
                                                else "NoClientCert")
    if auth_type not in CLIENT_AUTH:
        raise ConfigError("tls_server_config.client_auth_type: %r; expected %s" % (auth_type, ", ".join(CLIENT_AUTH)))
    if CLIENT_AUTH[auth_type] != ssl.CERT_NONE and not raw.get("client_ca_file"):
        raise ConfigError("tls_server_config.client_ca_file: missing; %s needs the CA of the client "
                          "certificates" % auth_type)
    minimum = raw.get("min_version") or "TLS12"
    if minimum not in MIN_VERSIONS:
        raise ConfigError("tls_server_config.min_version: %r; expected %s" % (minimum, " or ".join(MIN_VERSIONS)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = MIN_VERSIONS[minimum]
    try:
        context.load_cert_chain(raw["cert_file"], raw["key_file"])
        if raw.get("client_ca_file"):
            context.load_verify_locations(cafile=raw["client_ca_file"])
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError("tls_server_config: cannot load the certificate, key or client CA: %s" % exc) from exc
    context.verify_mode = CLIENT_AUTH[auth_type]
    return context


def parse_web_config(raw: t.Any) -> WebConfig:
    if not isinstance(raw, dict):
        raise ConfigError("the web configuration: expected a JSON object")
    unknown = sorted(set(raw) - {"tls_server_config", "basic_auth_users"})
    if unknown:
        raise ConfigError("the web configuration: unknown key(s) %s (http_server_config is not supported)"
                          % ", ".join(unknown))
    tls = raw.get("tls_server_config")
    if tls is not None and not isinstance(tls, dict):
        raise ConfigError("tls_server_config: expected a mapping")
    users = raw.get("basic_auth_users") or {}
    if not isinstance(users, dict):
        raise ConfigError("basic_auth_users: expected a mapping of user name to password hash")
    return WebConfig(_tls_context(tls) if tls else None, BasicAuth(users) if users else None)


def load_web_config(path: t.Optional[str]) -> WebConfig:
    if not path:
        return WebConfig(None, None)
    return parse_web_config(read_json(path, "web configuration"))
