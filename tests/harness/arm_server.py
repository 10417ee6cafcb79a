# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A local HTTPS stand-in for Azure Resource Manager and a Microsoft Entra authority.

Serves the recorded responses of tests/data/azure on 127.0.0.1 (an ephemeral port, so concurrent runs
never collide) with a certificate of a test CA. The resource name picks the answer:
``<file>`` -> tests/data/azure/<file>.json; ``status-<code>`` -> that error status with ARM's error
body; ``throttle-<n>`` -> 429 with Retry-After n times, then consistent.json; ``throttle-forever``.
ARM answers a GET with the ``id`` and ``name`` of the resource asked for; a recording serves under
several names (its file name, ``throttle-<n>``), so the server writes the request's id and name into
it. ``ArmServer(bodies={name: body})`` answers ``name`` with ``body`` exactly as given instead: a
hostile or broken ARM (an id with a newline, a name with a path).

The authority half speaks just enough OpenID Connect for azure-identity's ClientSecretCredential (MSAL):
``/<tenant>/v2.0/.well-known/openid-configuration`` and the token endpoint, which issues a token
for client secret ``s3cret`` and refuses any other. ARM requests must carry that token.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import typing as t
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness.pki import TestCA

DATA = Path(__file__).resolve().parents[1] / "data" / "azure"
TENANT = "11111111-1111-1111-1111-111111111111"
CLIENT_ID = "22222222-2222-2222-2222-222222222222"
CLIENT_SECRET = "s3cret"
TOKEN = "test-token-for-arm"
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
_RESOURCE = re.compile(r"\A/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.VoiceServices/"
                       r"communicationsGateways/([^/]+)\Z", re.IGNORECASE)
_ERRORS = {401: "InvalidAuthenticationToken", 403: "AuthorizationFailed", 404: "ResourceNotFound",
           429: "TooManyRequests", 500: "InternalServerError", 503: "ServiceUnavailable"}


class ArmServer:
    """``with ArmServer(tmp_path) as arm: arm.url, arm.ca`` (PEM path), ``arm.requests`` (method, path, query)."""

    def __init__(self, workdir: Path, provider: t.Optional[str] = "provider.json", retry_after: str = "1",
                 refuse_versions: t.Iterable[str] = (), bodies: t.Optional[t.Mapping[str, t.Any]] = None) -> None:
        self.workdir = Path(workdir)
        self.bodies = dict(bodies or {})  # resource name -> the answer, exactly as given
        self.provider = provider  # None: the provider document answers 403
        self.refuse_versions = set(refuse_versions)  # answered 400 as ARM does for an unknown api-version
        self.retry_after = retry_after
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.throttled: dict[str, int] = {}
        self._server: t.Optional[ThreadingHTTPServer] = None
        self._url = ""

    @property
    def url(self) -> str:
        """The server's base URL (still known after it stopped, for assertions on messages)."""
        assert self._url, "start the server first (with ArmServer(...) as arm)"
        return self._url

    def resource_id(self, name: str) -> str:
        return "/subscriptions/%s/resourceGroups/rg-acg/providers/Microsoft.VoiceServices/communicationsGateways/%s" % (
            SUBSCRIPTION, name)

    def __enter__(self) -> "ArmServer":
        ca = TestCA(self.workdir / "arm-ca", name="Test ARM Root")
        leaf = ca.issue_server("arm", dns=["localhost"], ips=["127.0.0.1"])
        self.ca = ca.cert
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(leaf.chain), str(leaf.key))
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._url = "https://127.0.0.1:%d" % self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: t.Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _Handler(BaseHTTPRequestHandler):
    server_owner: ArmServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: t.Any) -> None:  # noqa: A002  (quiet test output)
        pass

    def _reply(self, status: int, body: t.Any, headers: t.Optional[dict[str, str]] = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers: t.Optional[dict[str, str]] = None) -> None:
        self._reply(status, {"error": {"code": _ERRORS.get(status, "Error"), "message": message}}, headers)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        path = urllib.parse.urlsplit(self.path).path
        self.server_owner.requests.append(("POST", path, {k: v[0] for k, v in form.items() if k != "client_secret"}))
        if path != "/%s/oauth2/v2.0/token" % TENANT:
            self._reply(404, {"error": "not_found"})
        elif form.get("client_id") != [CLIENT_ID] or form.get("client_secret") != [CLIENT_SECRET]:
            self._reply(401, {"error": "invalid_client", "error_description":
                              "AADSTS7000215: Invalid client secret provided.", "error_codes": [7000215]})
        else:
            self._reply(200, {"token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600,
                              "access_token": TOKEN})

    def do_GET(self) -> None:  # noqa: N802
        split = urllib.parse.urlsplit(self.path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(split.query).items()}
        owner = self.server_owner
        owner.requests.append(("GET", split.path, query))
        base = "https://%s:%d" % self.server.server_address[:2]
        if split.path == "/%s/v2.0/.well-known/openid-configuration" % TENANT:
            self._reply(200, {"issuer": "%s/%s/v2.0" % (base, TENANT),
                              "authorization_endpoint": "%s/%s/oauth2/v2.0/authorize" % (base, TENANT),
                              "token_endpoint": "%s/%s/oauth2/v2.0/token" % (base, TENANT),
                              "device_authorization_endpoint": "%s/%s/oauth2/v2.0/devicecode" % (base, TENANT)})
            return
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            self._error(401, "The access token is invalid.")
            return
        if split.path.lower() == "/providers/microsoft.voiceservices":
            if owner.provider is None:
                self._error(403, "no read access to the provider")
                return
            self._reply(200, json.loads((DATA / owner.provider).read_text()))
            return
        match = _RESOURCE.match(split.path)
        if not match:
            self._error(404, "no route %s" % split.path)
            return
        self._resource(split.path, match.group(1), query.get("api-version", ""))

    def _resource(self, path: str, name: str, version: str) -> None:
        owner = self.server_owner
        if not re.match(r"\A\d{4}-\d{2}-\d{2}\Z", version) or version in owner.refuse_versions:
            self._reply(400, {"error": {"code": "InvalidApiVersionParameter", "message": "bad %s" % version}})
            return
        if name in owner.bodies:
            self._reply(200, owner.bodies[name])
            return
        asked = name
        if name.startswith("status-"):
            status = int(name.split("-", 1)[1])
            self._error(status, "recorded %d for %s" % (status, name),
                        {"Retry-After": owner.retry_after} if status == 503 else None)
            return
        if name.startswith("throttle-"):
            count = owner.throttled.get(name, 0)
            limit = 10 ** 6 if name == "throttle-forever" else int(name.split("-", 1)[1])
            if count < limit:
                owner.throttled[name] = count + 1
                self._error(429, "Number of 'read' requests exceeded.", {"Retry-After": owner.retry_after})
                return
            name = "consistent"
        recording = DATA / ("%s.json" % name)
        if not recording.is_file():
            self._error(404, "The Resource 'Microsoft.VoiceServices/communicationsGateways/%s' was not found." % name)
            return
        self._reply(200, dict(json.loads(recording.read_text()), id=path, name=asked))
