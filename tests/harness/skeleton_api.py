# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The management API of the walking-skeleton SBC platform (tests/platforms/.../commsgw_test/skeleton): a tiny
stdlib HTTP server on loopback that stands for a device driven only through its API.

It holds one configuration document (``config.json``, the skeleton's one artefact) with a revision history, a
lock, and the live state of the peers the configuration names. Every request needs HTTP Basic authentication.

    GET    /config                 -> {"revision": n, "content": text or null}
    PUT    /config {content, lock} -> {"revision": n + 1}       (409 while another lock holds the device)
    POST   /config/restore {revision, lock} -> {"revision": n + 1}
    GET    /peers                  -> {"peers": [{"address", "port", "status"}]}  status: up, down, checking, off
    POST   /lock                   -> {"token"}                (409 when held)
    DELETE /lock {token}           -> {}

Tests change the device behind the collection's back with ``edit`` (a hand edit on the device) and
``set_status`` (a peer's live status); ``requests`` records every request (method, path, user).
"""

from __future__ import annotations

import base64
import http.server
import json
import secrets
import threading
import typing as t

STATUSES = ("up", "down", "checking", "off")


class SkeletonDevice:
    """The device's state, shared by the server's threads."""

    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password
        self.revisions: list[t.Optional[str]] = [None]  # revision 0: nothing configured
        self.status: dict[str, str] = {}
        self.lock: t.Optional[str] = None
        self.requests: list[tuple[str, str, str]] = []
        self.mutex = threading.Lock()

    @property
    def content(self) -> t.Optional[str]:
        return self.revisions[-1]

    def edit(self, change: t.Callable[[dict[str, t.Any]], None]) -> None:
        """A hand edit on the device: ``change`` mutates the configuration document."""
        with self.mutex:
            document = json.loads(self.content or "{}")
            change(document)
            self.revisions.append(json.dumps(document, indent=2, sort_keys=True) + "\n")

    def set_status(self, address_port: str, status: str) -> None:
        assert status in STATUSES, status
        with self.mutex:
            self.status[address_port] = status

    def peers(self) -> list[dict[str, t.Any]]:
        document = json.loads(self.content or "{}")
        found = {}
        for region in (document.get("regions") or {}).values():
            for peer in region.get("peers") or []:
                key = "%s:%d" % (peer["address"], int(peer["port"]))
                found[key] = {"address": peer["address"], "port": int(peer["port"]),
                              "status": self.status.get(key, "up")}
        return [found[key] for key in sorted(found)]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "SkeletonServer"

    def log_message(self, *args: t.Any) -> None:  # quiet
        pass

    def _user(self) -> t.Optional[str]:
        header = self.headers.get("Authorization") or ""
        if not header.startswith("Basic "):
            return None
        try:
            user, _colon, password = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return None
        device = self.server.device
        good = secrets.compare_digest(user, device.username) and secrets.compare_digest(password, device.password)
        return user if good else None

    def _answer(self, status: int, body: t.Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, t.Any]:
        length = int(self.headers.get("Content-Length") or 0)
        return t.cast(dict, json.loads(self.rfile.read(length) or b"{}"))

    def _handle(self, method: str) -> None:
        user = self._user()
        device = self.server.device
        device.requests.append((method, self.path, user or "-"))
        if user is None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="skeleton"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with device.mutex:
            status, body = self._route(method, device)
        self._answer(status, body)

    def _route(self, method: str, device: SkeletonDevice) -> tuple[int, t.Any]:
        if (method, self.path) == ("GET", "/config"):
            return 200, {"revision": len(device.revisions) - 1, "content": device.content}
        if (method, self.path) == ("GET", "/peers"):
            return 200, {"peers": device.peers()}
        body = self._body()
        if method in ("PUT", "POST") and self.path.startswith("/config") and device.lock not in (None, body.get("lock")):
            return 409, {"error": "the device is locked by another client"}
        if (method, self.path) == ("PUT", "/config"):
            if not isinstance(body.get("content"), str):
                return 400, {"error": "content: expected the configuration document as text"}
            device.revisions.append(body["content"])
            return 200, {"revision": len(device.revisions) - 1}
        if (method, self.path) == ("POST", "/config/restore"):
            revision = body.get("revision")
            if not isinstance(revision, int) or not 0 <= revision < len(device.revisions):
                return 400, {"error": "revision: no such revision"}
            device.revisions.append(device.revisions[revision])
            return 200, {"revision": len(device.revisions) - 1}
        if (method, self.path) == ("POST", "/lock"):
            if device.lock is not None:
                return 409, {"error": "the device is locked by another client"}
            device.lock = secrets.token_hex(8)
            return 200, {"token": device.lock}
        if (method, self.path) == ("DELETE", "/lock"):
            if body.get("token") == device.lock:
                device.lock = None
            return 200, {}
        return 404, {"error": "no such resource: %s %s" % (method, self.path)}

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._handle("GET")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")


class SkeletonServer(http.server.ThreadingHTTPServer):
    """``with SkeletonServer("127.0.0.1") as server: server.url``; ``server.device`` is the device."""

    daemon_threads = True

    def __init__(self, address: str = "127.0.0.1", username: str = "ops", password: str = "") -> None:
        super().__init__((address, 0), _Handler)
        self.device = SkeletonDevice(username, password or secrets.token_hex(8))
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return "http://%s:%d" % self.server_address[:2]

    def __enter__(self) -> "SkeletonServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: t.Any) -> None:
        self.shutdown()
        self.server_close()
