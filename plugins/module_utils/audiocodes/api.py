# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""REST client of a Mediant (SBC firmware 7.4) on ``ansible.module_utils.urls.open_url`` (the collection's
one HTTP path: it runs on the controller and in an execution environment alike).

Only the documented calls (references.py): ``GET /api/v1/status``, ``GET /api/v1/files/ini`` and
``PUT /api/v1/files/cliScript/incremental`` (multipart field ``file``, applied without a reset).
There is deliberately no method for ``PUT /api/v1/files/ini``: a full ini upload resets the device.

* Every request: HTTP Basic authentication; HTTPS with the device certificate verified against
  ``ca_file`` (or the system store). ``verify=False`` only when asked, and it is recorded in
  ``warnings`` for the caller to show.
* 401: ``CredentialsError`` (wrong user or password; never retried). 400 on a script:
  ``ScriptRejected`` carrying the device's own description and the lines of its output that name the
  error. 409 (HA synchronisation in progress): waited out, at most ``conflict_attempts`` tries
  ``conflict_delay_s`` apart, then ``DeviceBusy``. Anything else: ``DeviceError``.
* ``round_trips`` counts the HTTP requests made, for the push result and the bench.
"""

from __future__ import annotations

import json
import time
import typing as t
import urllib.error

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import SSLValidationError, open_url

BOUNDARY = "----commsgw-routing-cli-script"


class DeviceError(RuntimeError):
    """The device answered something the reference does not list for the call."""

    def __init__(self, message: str, status: t.Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status


class CredentialsError(DeviceError):
    pass


class DeviceBusy(DeviceError):
    pass


class ScriptRejected(DeviceError):
    """400 on an incremental CLI script: ``description`` and ``error_lines`` are the device's words."""

    def __init__(self, description: str, error_lines: t.Sequence[str]) -> None:
        super().__init__("the device refused the CLI script: %s%s" % (
            description, (" (" + "; ".join(error_lines) + ")") if error_lines else ""), 400)
        self.description = description
        self.error_lines = list(error_lines)


def multipart(script: str, filename: str = "cli.txt") -> tuple[bytes, str]:
    """The multipart/form-data body of the reference's example: one part ``file``, octet-stream."""
    body = ("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n" % (BOUNDARY, filename)).encode("ascii")
    body += script.encode("utf-8") + ("\r\n--%s--\r\n" % BOUNDARY).encode("ascii")
    return body, "multipart/form-data; boundary=%s" % BOUNDARY


class MediantClient:
    def __init__(self, base_url: str, username: str, password: str, ca_file: t.Optional[str] = None,
                 verify: bool = True, timeout_s: float = 30.0, conflict_attempts: int = 10,
                 conflict_delay_s: float = 3.0, sleep: t.Callable[[float], None] = time.sleep) -> None:
        if not base_url.startswith(("https://", "http://")):
            raise ValueError("base_url %r: expected https://host[:port]" % base_url)
        self.base_url = base_url.rstrip("/")
        self.warnings: list[str] = []
        self._credentials = (username, password)
        self.ca_file = ca_file
        self.verify = verify
        self.timeout_s = timeout_s
        self.conflict_attempts = max(1, conflict_attempts)
        self.conflict_delay_s = conflict_delay_s
        self._sleep = sleep
        self.round_trips = 0
        if not self.base_url.startswith("https://"):
            self.warnings.append("plain HTTP to the Mediant REST API: credentials and configuration travel in clear")
        elif not verify:
            self.warnings.append("the Mediant's REST certificate is not verified (verify=false): anyone on the "
                                 "path can read the credentials and the configuration")

    def __repr__(self) -> str:  # never the credentials
        return "MediantClient(%r)" % self.base_url

    def _send(self, method: str, path: str, body: t.Optional[bytes], content_type: t.Optional[str]
              ) -> tuple[int, bytes]:
        """One HTTP exchange: (status, body) whatever the status; transport failures are DeviceError."""
        self.round_trips += 1
        headers = {"Content-Type": content_type} if content_type else {}
        try:
            response = open_url(self.base_url + path, data=body, headers=headers, method=method,
                                timeout=self.timeout_s, validate_certs=self.verify, ca_path=self.ca_file,
                                url_username=self._credentials[0], url_password=self._credentials[1],
                                force_basic_auth=True, use_proxy=False, follow_redirects="none", use_netrc=False)
            return int(response.getcode()), response.read()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read()
        except (SSLValidationError, UrlsConnectionError, urllib.error.URLError, OSError) as exc:
            raise DeviceError("%s %s: %s" % (method, path, getattr(exc, "reason", exc))) from exc

    def _request(self, method: str, path: str, body: t.Optional[bytes] = None,
                 content_type: t.Optional[str] = None) -> tuple[int, bytes]:
        attempt = 1
        while True:
            status, payload = self._send(method, path, body, content_type)
            if status == 401:
                raise CredentialsError("%s %s: 401, the device refused the user name or password" % (method, path),
                                       401)
            if status != 409:
                return status, payload
            if attempt >= self.conflict_attempts:
                raise DeviceBusy("%s %s: still 409 (HA synchronisation in progress) after %d tries %.0f s apart: %s"
                                 % (method, path, attempt, self.conflict_delay_s, _description(payload)), 409)
            self._sleep(self.conflict_delay_s)
            attempt += 1

    def status(self) -> dict[str, t.Any]:
        status, payload = self._request("GET", "/api/v1/status")
        if status != 200:
            raise DeviceError("GET /api/v1/status: %d %s" % (status, _description(payload)), status)
        return t.cast(dict, json.loads(payload.decode("utf-8")))

    def get_ini(self) -> str:
        status, payload = self._request("GET", "/api/v1/files/ini")
        if status != 200:
            raise DeviceError("GET /api/v1/files/ini: %d %s" % (status, _description(payload)), status)
        return payload.decode("utf-8", errors="replace")

    def put_incremental(self, script: str) -> str:
        """Apply an incremental CLI script; the device's output on success, ScriptRejected on 400."""
        body, content_type = multipart(script)
        status, payload = self._request("PUT", "/api/v1/files/cliScript/incremental", body, content_type)
        if status == 200:
            return str(_json(payload).get("output", ""))
        if status == 400:
            answer = _json(payload)
            output = str(answer.get("output", ""))
            lines = [line.strip() for line in output.replace(". ", "\n").split("\n")
                     if "error" in line.lower() or "line" in line.lower()]
            raise ScriptRejected(str(answer.get("description", "400 Bad Request")), lines)
        raise DeviceError("PUT /api/v1/files/cliScript/incremental: %d %s" % (status, _description(payload)), status)


def _json(payload: bytes) -> dict[str, t.Any]:
    try:
        value = json.loads(payload.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {"description": payload.decode("utf-8", errors="replace")[:200]}
    return value if isinstance(value, dict) else {"description": str(value)[:200]}


def _description(payload: bytes) -> str:
    return str(_json(payload).get("description", ""))
