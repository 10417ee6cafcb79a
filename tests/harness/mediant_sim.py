# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in of the Mediant REST API (SBC 7.4) on 127.0.0.x, written from the published reference.

Not a Mediant: it models only what the REST reference and the grammar (plugins/module_utils/audiocodes/)
document, so that the client and the push logic are tested against the documented behaviour:

* HTTPS (test CA from harness.pki), HTTP Basic authentication of one user; 401 otherwise.
* ``GET /api/v1/status``: the reference's example fields.
* ``GET /api/v1/files/ini``: the in-memory configuration as ini tables (``ini.ini_from_rows``).
* ``PUT /api/v1/files/cliScript/incremental`` (multipart field ``file``): the script is checked against
  the STRICT documented grammar and applied line by line to the model; the first bad line stops it
  with 400, the device's description and an output naming the line (the lines before it stay
  applied: the worse of the two possibilities, since the reference does not say). Row integrity as
  the manual states it: names unique per table; a row may only name existing rows (Proxy Set,
  IP Group, Alternative Reasons Set, Message Policy); a row in use cannot be removed.
* 409 "Device is currently performing HA synchronization": ``busy(n)`` makes the next n requests
  answer it. ``refuse_line(text)``: a line containing ``text`` is refused (a device-side refusal of a
  grammatical script, for rollback tests).
* ``PUT /api/v1/files/ini`` (full upload) is recorded as a ``reset`` event: tests assert none.

Standalone: ``PYTHONPATH=.collections:tests python -m harness.mediant_sim --help``.
"""

from __future__ import annotations

import argparse
import base64
import copy
import http.server
import json
import re
import ssl
import tempfile
import threading
import time
import typing as t
from pathlib import Path

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import grammar, ini
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import PARENTS, Rows, empty_rows

BUSY = "Device is currently performing HA synchronization"
# Which parameter of which table names a row of which table (table key, name parameter).
REFERENCES = {("ip_group", "proxy-set-name"): ("proxy_set", "proxy-name"),
              ("ip_group", "sbc-alt-route-reasons-set"): ("alt_set", "name"),
              ("ip2ip", "src-ip-group-name"): ("ip_group", "name"),
              ("ip2ip", "dst-ip-group-name"): ("ip_group", "name"),
              ("classification", "src-ip-group-name"): ("ip_group", "name"),
              ("inbound_manipulation", "src-ip-group-name"): ("ip_group", "name"),
              ("sip_interface", "message-policy-name"): ("message_policy", "name")}
UNIQUE = {"proxy_set": "proxy-name", "ip_group": "name", "alt_set": "name", "message_policy": "name",
          "classification": "classification-name", "ip2ip": "route-name",
          "inbound_manipulation": "manipulation-name", "dns": "domain-name"}


def operator_rows() -> Rows:
    """What an operator's Mediant already holds: its SIP Interfaces and default rows (not ours)."""
    rows = empty_rows()
    rows["sip_interface"][(0,)] = {}
    rows["sip_interface"][(1,)] = {}
    rows["proxy_set"][(0,)] = {"proxy-name": "ProxySet_0", "proxy-enable-keep-alive": "disable"}
    rows["ip_group"][(0,)] = {"name": "Default_IPG", "type": "server", "proxy-set-name": "ProxySet_0"}
    return rows


class Device:
    """The configuration model and its switches; thread-safe."""

    def __init__(self, rows: t.Optional[Rows] = None) -> None:
        self.lock = threading.Lock()
        self.rows = rows if rows is not None else operator_rows()
        self.events: list[dict[str, t.Any]] = []
        self.busy_left = 0
        self.refused: t.Optional[str] = None
        self.refusals_left: t.Optional[int] = None

    def busy(self, times: int) -> None:
        with self.lock:
            self.busy_left = times

    def refuse_line(self, text: t.Optional[str], times: t.Optional[int] = None) -> None:
        """Answer 400 to a script line containing ``text`` (None: none), ``times`` scripts long (None: always)."""
        with self.lock:
            self.refused, self.refusals_left = text, times

    def resets(self) -> list[dict[str, t.Any]]:
        return [e for e in self.events if e["event"] == "reset"]

    def scripts(self) -> list[str]:
        return [e["script"] for e in self.events if e["event"] == "script"]

    # ---- the incremental CLI script -----------------------------------------------------------
    def apply_script(self, script: str) -> tuple[int, dict[str, t.Any]]:
        with self.lock:
            self.events.append({"event": "script", "script": script})
            ops, error = grammar.parse_prefix(script)
            pending: dict[tuple[str, tuple[int, ...]], dict[str, t.Any]] = {}
            lines = script.split("\n")
            for op in ops:
                problem = self._refused(lines[op.line - 1]) or self._do(op, pending)
                if problem:
                    return _rejected(op.line, problem)
            if error is not None:
                return _rejected(error.line, error.reason)
            return 200, {"description": "Incremental CLI Script file was loaded.", "output": ""}

    def _refused(self, line: str) -> t.Optional[str]:
        if not self.refused or self.refused not in line or self.refusals_left == 0:
            return None
        if self.refusals_left is not None:
            self.refusals_left -= 1
        return "command refused by the device"

    def _do(self, op: grammar.Op, pending: dict[tuple[str, tuple[int, ...]], dict[str, t.Any]]) -> t.Optional[str]:
        key = (op.table, op.index)
        table = self.rows[op.table]
        if op.action == "enter":
            if op.table in PARENTS and op.index[:1] not in self.rows[PARENTS[op.table]]:
                return "parent row %d does not exist" % op.index[0]
            pending[key] = copy.deepcopy(table.get(op.index, {}))
        elif op.action == "set":
            pending[key][op.param] = op.value
            if op.value == "":
                del pending[key][op.param]
        elif op.action == "commit":
            row = pending.get(key)
            if row is None:
                return None
            return self._check(op.table, op.index, row) or table.__setitem__(op.index, copy.deepcopy(row))
        elif op.action == "delete":
            if op.index not in table:
                return "row %s does not exist" % grammar.format_index(op.index)
            used = self._users(op.table, table[op.index])
            if used:
                return "row %s is in use by %s" % (grammar.format_index(op.index), used)
            del table[op.index]
            for child, parent in PARENTS.items():
                if parent == op.table:
                    for index in [i for i in self.rows[child] if i[:1] == op.index]:
                        del self.rows[child][index]
        return None

    def _check(self, table_key: str, index: tuple[int, ...], row: dict[str, t.Any]) -> t.Optional[str]:
        unique = UNIQUE.get(table_key)
        taken = [r.get(unique) for i, r in self.rows[table_key].items() if i != index] if unique else []
        if unique and row.get(unique) and row[unique] in taken:
            return "%s %r is already used by another row" % (unique, row[unique])
        for (source, param), (target, name_param) in REFERENCES.items():
            if source == table_key and row.get(param) and row[param] != "Any" and not any(
                    r.get(name_param) == row[param] for r in self.rows[target].values()):
                return "%s %r names no %s row" % (param, row[param], target)
        return None

    def _users(self, table_key: str, row: dict[str, t.Any]) -> t.Optional[str]:
        for (source, param), (target, name_param) in REFERENCES.items():
            if target == table_key and row.get(name_param):
                for index, other in self.rows[source].items():
                    if other.get(param) == row[name_param]:
                        return "%s %s" % (source, grammar.format_index(index))
        return None

    def ini(self) -> str:
        with self.lock:
            return ";**************\n;** Ini File **\n;**************\n\n[SIP Params]\n\nGWDEBUGLEVEL = 5\n\n" \
                + ini.ini_from_rows(self.rows)


def _rejected(line: int, reason: str) -> tuple[int, dict[str, t.Any]]:
    return 400, {"description": "Incremental CLI Script file was not loaded",
                 "output": "Error in line %d: %s" % (line, reason)}


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "MediantServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: t.Any) -> None:  # noqa: A002  quiet
        return

    def _send(self, status: int, body: t.Union[dict[str, t.Any], bytes], content_type: str = "application/json",
              extra: t.Optional[dict[str, str]] = None) -> None:
        payload = json.dumps(body).encode() if isinstance(body, dict) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.server.device.events.append({"event": "request", "method": self.command, "path": self.path,
                                          "status": status})

    def _gate(self) -> bool:
        """Authentication, then the 409 switch; True when the request may go on."""
        expected = "Basic " + base64.b64encode(self.server.credentials.encode()).decode()
        if self.headers.get("Authorization") != expected:
            self._send(401, {"description": "Unauthorized"}, extra={"WWW-Authenticate": 'Basic realm="device"'})
            return False
        device = self.server.device
        with device.lock:
            if device.busy_left > 0:
                device.busy_left -= 1
                busy = True
            else:
                busy = False
        if busy:
            self._send(409, {"description": BUSY})
            return False
        return True

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if 0 < length <= 4 * 1024 * 1024 else b""

    def do_GET(self) -> None:  # noqa: N802
        if not self._gate():
            return
        if self.path == "/api/v1/status":
            self._send(200, {"productType": "Mediant SW", "versionID": "7.40A.500.000", "protocolType": "SIP",
                             "operationalState": "UNLOCKED", "highAvailability": "Not Operational"})
        elif self.path == "/api/v1/files/ini":
            self._send(200, self.server.device.ini().encode(), "application/octet-stream")
        else:
            self._send(404, {"description": "Not found"})

    def do_PUT(self) -> None:  # noqa: N802
        body = self._body()
        if not self._gate():
            return
        if self.path == "/api/v1/files/ini":
            self.server.device.events.append({"event": "reset", "size": len(body)})
            self._send(200, {"description": "Device will reset now to activate new configuration"})
            return
        if self.path != "/api/v1/files/cliScript/incremental":
            self._send(404, {"description": "Not found"})
            return
        script = _file_part(body, self.headers.get("Content-Type", ""))
        if script is None:
            self._send(400, {"description": "Bad request: no multipart part named file"})
            return
        status, answer = self.server.device.apply_script(script)
        self._send(status, answer)


def _file_part(body: bytes, content_type: str) -> t.Optional[str]:
    match = re.search(r"boundary=([^;]+)", content_type)
    if not match:
        return None
    for part in body.split(b"--" + match.group(1).strip('"').encode()):
        head, _sep, content = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return content[:-2].decode("utf-8") if content.endswith(b"\r\n") else content.decode("utf-8")
    return None


class MediantServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: str, port: int, cert: Path, key: Path, username: str, password: str,
                 device: t.Optional[Device] = None) -> None:
        if not address.startswith("127."):
            raise ValueError("the stand-in listens on loopback only, not %s" % address)
        super().__init__((address, port), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(str(cert), str(key))
        self.socket = context.wrap_socket(self.socket, server_side=True)
        self.credentials = "%s:%s" % (username, password)
        self.device = device or Device()
        self._thread: t.Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        return "https://%s:%d" % self.server_address[:2]

    def start(self) -> "MediantServer":
        self._thread = threading.Thread(target=self.serve_forever, name="mediant-sim", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def main(argv: t.Optional[t.Sequence[str]] = None) -> int:
    from harness.pki import TestCA  # pylint: disable=import-outside-toplevel
    parser = argparse.ArgumentParser(prog="mediant-sim", description="Stand-in of the Mediant REST API "
                                     "(docs/platforms/audiocodes.md); loopback only.")
    parser.add_argument("--address", default="127.0.0.71")
    parser.add_argument("--port", type=int, default=8443)
    parser.add_argument("--user", default="admin")
    parser.add_argument("--password", required=True)
    parser.add_argument("--state-dir", type=Path, default=None, help="PKI directory (default: a temporary one)")
    parser.add_argument("--ttl", type=int, default=3600, help="stop by itself after this many seconds")
    args = parser.parse_args(argv)
    state = args.state_dir or Path(tempfile.mkdtemp(prefix="mediant-sim-"))
    ca = TestCA(state / "ca", name="Mediant stand-in CA")
    issued = ca.issue_server("mediant", dns=["mediant.test"], ips=[args.address])
    server = MediantServer(args.address, args.port, issued.chain, issued.key, args.user, args.password).start()
    print("%s (CA: %s), stops in %d s" % (server.url, ca.cert, args.ttl), flush=True)
    try:
        time.sleep(args.ttl)
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
