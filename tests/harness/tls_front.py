# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real-TLS front (Python ssl = OpenSSL, TLS >= 1.2, mutual TLS) that plays an ACG peer's TLS side.

Debian's SIPp has no TLS, so an ACG peer in the tests is "TlsFront + SIPp behind it": the front
terminates SIP over TLS from Kamailio, requires a client certificate from ``client_ca``, records
what it saw per connection (SNI, handshake outcome and reason, client certificate subject, SIP
requests), and relays each SIP message to a backend SIPp over UDP or TCP on another loopback port.

SIP specifics the relay handles so that the backend SIPp can stay a plain UDP/TCP UAS:
- stream framing by Content-Length (also the compact ``l:`` form), CRLF keep-alives answered;
- one backend socket per TLS connection, so the backend's replies (SIPp answers to the source
  address) go back to the TLS connection the request came from;
- ``Contact`` in backend messages is rewritten to the front's TLS address (``;transport=tls``) so that
  in-dialog requests (ACK/BYE) come back over TLS through the front, not straight to the UDP port;
- requests *from* the backend (e.g. a BYE from the UAS) get their top ``Via`` replaced by the
  front's TLS address; the original is restored on the response before it goes to the backend;
- a response whose request's connection is gone (the request arrived as the front closed it) goes
  over a new TLS connection to the request's Via sent-by, as RFC 3261 18.2.2 asks of a server.

Everything runs on one asyncio loop in a daemon thread; ``stop()`` closes every socket. Bounded:
handshake timeout, limit on connections open at once, message size limit.

Example::

    front = TlsFront(listen=("127.0.110.1", 5061), backend=("127.0.110.1", 15061, "udp"),
                     cert=pki.peers[h].chain, key=pki.peers[h].key, client_ca=pki.operator_ca.cert)
    front.start(); ...; front.stop()
    [c.sni for c in front.connections if c.ok]
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import socket
import ssl
import threading
import time
import typing as t
from pathlib import Path

MAX_MESSAGE = 65536
MAX_CONNECTIONS = 256
HANDSHAKE_TIMEOUT_S = 5.0
# ACG's TLS 1.2 suites are ECDHE with AES-GCM (ECDSA and RSA); TLS 1.3 suites are OpenSSL's defaults.
DEFAULT_CIPHERS = "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:" \
                  "ECDHE-RSA-AES128-GCM-SHA256"


@dataclasses.dataclass
class Connection:
    """What the front saw on one accepted TCP connection."""

    id: int
    peer: tuple[str, int]
    opened_at: float
    sni: t.Optional[str] = None
    ok: t.Optional[bool] = None           # None while the handshake runs
    error: t.Optional[str] = None         # handshake failure: OpenSSL reason (e.g. PEER_DID_NOT_RETURN_A_CERTIFICATE)
    tls_version: t.Optional[str] = None
    cipher: t.Optional[str] = None
    client_subject: t.Optional[dict[str, str]] = None
    client_san_dns: tuple[str, ...] = ()
    requests: list[str] = dataclasses.field(default_factory=list)   # request methods received over TLS
    heads: list[bytes] = dataclasses.field(default_factory=list)    # their header sections (Call-ID, From...)
    responses: list[int] = dataclasses.field(default_factory=list)  # status codes received over TLS
    closed_at: t.Optional[float] = None
    relay_error: t.Optional[str] = None   # why the relay stopped early (framing error etc.)


# ---------------------------------------------------------------------------------------------------------------
# SIP framing helpers (also used by tests that speak SIP over TLS directly)

_CL_RE = re.compile(rb"^(?:content-length|l)[ \t]*:[ \t]*(\d+)[ \t]*\r?$", re.I | re.M)


def split_message(buf: bytearray) -> t.Optional[bytes]:
    """Remove and return one complete SIP message from ``buf`` (stream transport), or None if incomplete.

    Raises ValueError on a message without Content-Length (mandatory over streams, RFC 3261 18.3) or too big.
    """
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) > MAX_MESSAGE:
            raise ValueError("SIP header too large")
        return None
    head = bytes(buf[:end])
    m = _CL_RE.search(head)
    if m is None:
        raise ValueError("SIP message over a stream without Content-Length")
    total = end + 4 + int(m.group(1))
    if total > MAX_MESSAGE:
        raise ValueError("SIP message too large")
    if len(buf) < total:
        return None
    msg = bytes(buf[:total])
    del buf[:total]
    return msg


def first_line(msg: bytes) -> str:
    return msg.split(b"\r\n", 1)[0].decode("utf-8", "replace")


def status_code(msg: bytes) -> t.Optional[int]:
    """Status code of a response, None for a request."""
    line = first_line(msg)
    if line.startswith("SIP/2.0 "):
        return int(line.split()[1])
    return None


def method(msg: bytes) -> t.Optional[str]:
    line = first_line(msg)
    return None if line.startswith("SIP/2.0") else line.split(" ", 1)[0]


_CALL_ID_RE = re.compile(rb"^(?:Call-ID|i)[ \t]*:[ \t]*(\S+)", re.IGNORECASE | re.MULTILINE)


def call_id(msg: bytes) -> t.Optional[bytes]:
    m = _CALL_ID_RE.search(msg.split(b"\r\n\r\n", 1)[0])
    return m.group(1) if m else None


_VIA_SENT_BY_RE = re.compile(rb"SIP/2\.0/TLS[ \t]+([^;:, \t]+)(?::(\d+))?", re.IGNORECASE)
_VIA_RECEIVED_RE = re.compile(rb";received=([^;, \t]+)", re.IGNORECASE)
_CSEQ_RE = re.compile(rb"^CSeq[ \t]*:[ \t]*\d+[ \t]+(\S+)", re.IGNORECASE | re.MULTILINE)


def cseq_method(msg: bytes) -> t.Optional[str]:
    m = _CSEQ_RE.search(msg.split(b"\r\n\r\n", 1)[0])
    return m.group(1).decode("ascii", "replace").upper() if m else None


def _fix_content_length(msg: bytes) -> bytes:
    head, sep, body = msg.partition(b"\r\n\r\n")
    # Keep the line's own CR (the regex consumes it when the header is not the last one).
    head = _CL_RE.sub(lambda m: b"Content-Length: " + str(len(body)).encode() + (b"\r" if m.group(0).endswith(b"\r") else b""),
                      head, count=1)
    return head + sep + body


_CONTACT_RE = re.compile(rb"^((?:contact|m)[ \t]*:[^\r\n]*?<?sips?:(?:[^@>\r\n;]*@)?)([^>;\r\n]+)([^>\r\n]*)",
                         re.I | re.M)
_VIA_RE = re.compile(rb"^(?:via|v)[ \t]*:[^\r\n]*", re.I | re.M)
_BRANCH_RE = re.compile(rb";branch=([^;,\s]+)", re.I)


def rewrite_contact(msg: bytes, host: str, port: int) -> bytes:
    """Point the (first) Contact URI at the front's TLS address so in-dialog requests use TLS."""
    def repl(m: re.Match[bytes]) -> bytes:
        params = re.sub(rb";transport=[a-z]+", b"", m.group(3), flags=re.I)
        return m.group(1) + f"{host}:{port}".encode() + b";transport=tls" + params
    head, sep, body = msg.partition(b"\r\n\r\n")
    return _CONTACT_RE.sub(repl, head, count=1) + sep + body


def top_via(msg: bytes) -> t.Optional[bytes]:
    m = _VIA_RE.search(msg.partition(b"\r\n\r\n")[0])
    return m.group(0) if m else None


def branch_of(via: bytes) -> t.Optional[bytes]:
    m = _BRANCH_RE.search(via)
    return m.group(1) if m else None


def replace_top_via(msg: bytes, new: bytes) -> bytes:
    head, sep, body = msg.partition(b"\r\n\r\n")
    m = _VIA_RE.search(head)
    if not m:
        return msg
    # A Via header line may carry several comma-separated values; only the first (top) one is ours.
    line = m.group(0)
    value = line.split(b":", 1)[1]
    rest = b""
    if b"," in value:
        rest = b"," + value.split(b",", 1)[1]
    return head[:m.start()] + new + rest + head[m.end():] + sep + body


# ---------------------------------------------------------------------------------------------------------------


class _Relay:
    """One TLS connection and its backend socket."""

    def __init__(self, front: "TlsFront", conn: Connection, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.front = front
        self.conn = conn
        self.reader = reader
        self.writer = writer
        self.udp: t.Optional[asyncio.DatagramTransport] = None
        self.tcp_writer: t.Optional[asyncio.StreamWriter] = None
        self.via_map: dict[bytes, bytes] = {}  # branch -> original Via line of a backend request
        # Transactions open on this connection: top-Via branches of requests from the SBC not answered
        # finally, and b"ACK <Call-ID>" for an INVITE answered 2xx whose ACK has not come yet.
        self.pending: set[bytes] = set()

    # towards Kamailio ---------------------------------------------------------------------------------------
    def to_tls(self, msg: bytes) -> None:
        # The backend answers a call on the socket its first request came from; when the SBC has since
        # opened a new connection for that call (in-dialog requests after the old one closed), the
        # message belongs on the call's newest live connection.
        newest = self.front._call_relays.get(call_id(msg) or b"")
        if newest is not None and newest is not self and not newest.writer.is_closing():
            newest.to_tls(msg)
            return
        host, port = self.front.listen
        if status_code(msg) is None:  # request from the backend
            via = top_via(msg)
            br = branch_of(via) if via else None
            if via and br:
                self.via_map[br] = via
                msg = replace_top_via(msg, b"Via: SIP/2.0/TLS " + f"{host}:{port}".encode() + b";branch=" + br)
        msg = _fix_content_length(rewrite_contact(msg, host, port))
        if not self.writer.is_closing():
            self.writer.write(msg)
            code = status_code(msg)
            if code is not None and code >= 200:
                via = top_via(msg)
                self.pending.discard((branch_of(via) if via else None) or b"")
                if code < 300 and cseq_method(msg) == "INVITE":
                    # RFC 6026: after its 2xx the INVITE server transaction stays (Accepted) until the ACK.
                    self.pending.add(b"ACK " + (call_id(msg) or b""))
                if self.front.close_after_response and not self.pending:
                    # Forces a new handshake per transaction (handshake statistics, reconnect tests);
                    # like a server closing an idle connection, never one with a transaction open.
                    self.writer.close()
        elif status_code(msg) is not None:
            # RFC 3261 18.2.2: the connection the request came on is gone (it arrived as the front
            # closed it): the response goes over a new connection to the request's Via sent-by.
            self.front.respond_over_new_connection(msg)

    # towards the backend ------------------------------------------------------------------------------------
    def to_backend(self, msg: bytes) -> None:
        code = status_code(msg)
        if code is not None:
            self.conn.responses.append(code)
            via = top_via(msg)
            br = branch_of(via) if via else None
            if br and br in self.via_map:
                msg = replace_top_via(msg, self.via_map.pop(br))
        idle: list[_Relay] = []
        if code is None:
            m = method(msg) or "?"
            self.front._call_relays[call_id(msg) or b""] = self
            if m != "ACK":
                via = top_via(msg)
                self.pending.add((branch_of(via) if via else None) or b"")
            else:
                # The ACK ends its INVITE's transaction on whichever connection answered the INVITE.
                key = b"ACK " + (call_id(msg) or b"")
                for relay in list(self.front._relays):
                    if key in relay.pending:
                        relay.pending.discard(key)
                        if not relay.pending:
                            idle.append(relay)
            self.conn.requests.append(m)
            self.conn.heads.append(msg.partition(b"\r\n\r\n")[0][:4096])
            self.front._note_request(self.conn, m)
            answer = self.front._local_answer(msg)
            if answer is not None:
                if answer:
                    self.to_tls(answer)
                self._close_idle(idle)
                return
        if self.udp is not None:
            self.udp.sendto(msg)
        elif self.tcp_writer is not None:
            self.tcp_writer.write(msg)
        self._close_idle(idle)

    def _close_idle(self, relays: list["_Relay"]) -> None:
        """With close_after_response: close the connections an ACK left without an open transaction."""
        if self.front.close_after_response:
            for relay in relays:
                relay.writer.close()

    async def open_backend(self) -> None:
        if self.front.backend is None:
            return
        bhost, bport, proto = self.front.backend
        loop = asyncio.get_running_loop()
        if proto == "udp":
            relay = self

            class _Proto(asyncio.DatagramProtocol):
                def datagram_received(self, data: bytes, addr: t.Any) -> None:
                    relay.to_tls(data)

            # Bound to the front's own loopback address so SIPp sees a stable source host.
            self.udp, _proto = await loop.create_datagram_endpoint(
                _Proto, local_addr=(self.front.listen[0], 0), remote_addr=(bhost, bport))
        else:
            r, w = await asyncio.open_connection(bhost, bport, local_addr=(self.front.listen[0], 0))
            self.tcp_writer = w
            asyncio.ensure_future(self._pump_tcp_backend(r))

    async def _pump_tcp_backend(self, r: asyncio.StreamReader) -> None:
        buf = bytearray()
        try:
            while True:
                data = await r.read(16384)
                if not data:
                    break
                buf += data
                while True:
                    buf[:] = buf.lstrip(b"\r\n")
                    msg = split_message(buf)
                    if msg is None:
                        break
                    self.to_tls(msg)
        except (ConnectionError, ValueError):
            pass

    async def pump_tls(self) -> None:
        buf = bytearray()
        while True:
            data = await self.reader.read(16384)
            if not data:
                return
            buf += data
            while True:
                # RFC 5626 keep-alive: CRLFCRLF ping -> CRLF pong.
                while buf.startswith(b"\r\n"):
                    if buf.startswith(b"\r\n\r\n"):
                        self.writer.write(b"\r\n")
                        del buf[:4]
                    else:
                        del buf[:2]
                msg = split_message(buf)
                if msg is None:
                    break
                self.to_backend(msg)

    def close(self) -> None:
        if self.udp is not None:
            self.udp.close()
        if self.tcp_writer is not None:
            self.tcp_writer.close()
        self.writer.close()


class TlsFront:
    """Mutual-TLS SIP front on ``listen``; relays to ``backend`` = (host, port, "udp"|"tcp") or answers itself.

    ``backend=None`` makes the front a minimal peer of its own: OPTIONS -> 200, INVITE -> ``answer_code``,
    ACK ignored, BYE -> 200. ``answer_options=True`` answers OPTIONS itself even with a backend (keeps
    a peer "up" without a SIPp OPTIONS scenario). ``require_sni=True`` refuses handshakes without SNI,
    as ACG does (``Connection.error == "NO_SNI"``). ``close_after_response=True`` closes the
    connection after each final response it relays once no other transaction is open on it (an
    INVITE answered 2xx is open until its ACK, RFC 6026), so (nearly) every transaction needs a new
    handshake.
    """

    def __init__(self, listen: tuple[str, int], backend: t.Optional[tuple[str, int, str]], cert: t.Union[str, Path],
                 key: t.Union[str, Path], client_ca: t.Optional[t.Union[str, Path]] = None,
                 require_client_cert: bool = True, ciphers: str = DEFAULT_CIPHERS,
                 answer_options: bool = False, answer_code: int = 200, require_sni: bool = False,
                 close_after_response: bool = False) -> None:
        if backend is not None and backend[2] not in ("udp", "tcp"):
            raise ValueError("backend transport must be udp or tcp")
        if require_client_cert and client_ca is None:
            raise ValueError("mutual TLS needs client_ca")
        self.listen = (listen[0], int(listen[1]))
        self.backend = backend
        self.cert, self.key = str(cert), str(key)
        self.client_ca = str(client_ca) if client_ca else None
        self.require_client_cert = require_client_cert
        self.ciphers = ciphers
        self.answer_options = answer_options
        self.answer_code = answer_code
        # ACG drops TLS handshakes without SNI (acg-facts: "Missing SNI ... handshake dropped").
        self.require_sni = require_sni
        self.close_after_response = close_after_response
        self.connections: list[Connection] = []
        # Responses sent over a connection the front opened (RFC 3261 18.2.2): (time, target, outcome).
        self.responses_back: list[tuple[float, str, str]] = []
        self._tasks: set[asyncio.Future[None]] = set()
        self.request_log: list[tuple[float, int, str]] = []  # (time, connection id, method)
        self._lock = threading.Lock()
        self._loop: t.Optional[asyncio.AbstractEventLoop] = None
        self._thread: t.Optional[threading.Thread] = None
        self._server: t.Optional[asyncio.base_events.Server] = None
        self._relays: set[_Relay] = set()
        self._call_relays: dict[bytes, _Relay] = {}  # Call-ID -> the connection of its newest request
        self._next_id = 1
        self._ready = threading.Event()
        self._start_error: t.Optional[BaseException] = None
        self._local_tag = 0

    # ---- public API ----------------------------------------------------------------------------------------
    def start(self) -> "TlsFront":
        self._make_context()  # fail early (bad cert/key paths) in the caller's thread
        self._thread = threading.Thread(target=self._run, name=f"TlsFront{self.listen}", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("TlsFront did not start")
        if self._start_error:
            raise RuntimeError(f"TlsFront could not listen on {self.listen}: {self._start_error}")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        try:
            fut.result(10)
        except Exception:  # noqa: BLE001 - best effort on teardown
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread:
            self._thread.join(10)
        self._loop = None

    def __enter__(self) -> "TlsFront":
        return self.start()

    def __exit__(self, *exc: t.Any) -> None:
        self.stop()

    def snapshot(self) -> list[Connection]:
        with self._lock:
            return [dataclasses.replace(c, requests=list(c.requests), responses=list(c.responses), heads=list(c.heads))
                    for c in self.connections]

    def handshakes(self, ok: t.Optional[bool] = None) -> list[Connection]:
        """Connections whose handshake finished (``ok`` filters successes/failures)."""
        return [c for c in self.snapshot() if c.ok is not None and (ok is None or c.ok == ok)]

    def requests(self, name: t.Optional[str] = None) -> list[str]:
        with self._lock:
            return [entry[2] for entry in self.request_log if name is None or entry[2] == name]

    def heads_with(self, needle: bytes) -> list[bytes]:
        """Header sections of the requests received over TLS that contain ``needle`` (e.g. a Call-ID)."""
        return [h for c in self.snapshot() for h in c.heads if needle in h]

    def request_times(self, name: str, client: t.Optional[str] = None) -> list[float]:
        """When each ``name`` request arrived over TLS; only those from address ``client`` if given."""
        with self._lock:
            clients = {c.id: c.peer[0] for c in self.connections}
            return [when for when, conn, m in self.request_log
                    if m == name and (client is None or clients.get(conn) == client)]

    def wait_for(self, predicate: t.Callable[["TlsFront"], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.05)
        return predicate(self)

    def clear(self) -> None:
        with self._lock:
            self.connections.clear()
            self.request_log.clear()

    # ---- internals -----------------------------------------------------------------------------------------
    def _make_context(self, conn: t.Optional[Connection] = None) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers(self.ciphers)
        ctx.load_cert_chain(self.cert, self.key)
        if self.client_ca:
            ctx.load_verify_locations(cafile=self.client_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED if self.require_client_cert else ssl.CERT_OPTIONAL
        if conn is not None:
            # One context per connection so the SNI callback knows which connection it belongs to
            # (asyncio reports neither the SSL object nor handshake errors per connection otherwise).
            def sni(_obj: t.Any, server_name: t.Optional[str], _ctx: ssl.SSLContext) -> t.Optional[int]:
                conn.sni = server_name
                if self.require_sni and not server_name:
                    conn.error = "NO_SNI"
                    return ssl.ALERT_DESCRIPTION_HANDSHAKE_FAILURE  # aborts the handshake
                return None
            ctx.sni_callback = sni
        return ctx

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._accept, self.listen[0], self.listen[1], reuse_address=True))
        except OSError as exc:
            self._start_error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for relay in list(self._relays):
            relay.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.sleep(0.05)

    def respond_over_new_connection(self, msg: bytes) -> None:
        """Send a response over a new TLS connection to its top Via's sent-by (``received`` address
        first), presenting the front's certificate; called on the front's loop."""
        via = top_via(msg) or b""
        sent_by = _VIA_SENT_BY_RE.search(via)
        if sent_by is None:
            return
        received = _VIA_RECEIVED_RE.search(via)
        host = (received.group(1) if received else sent_by.group(1)).decode()
        port = int(sent_by.group(2) or 5061)
        task = asyncio.ensure_future(self._respond_back(msg, host, port))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _respond_back(self, msg: bytes, host: str, port: int) -> None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(self.cert, self.key)
        ctx.check_hostname = False
        if self.client_ca:
            ctx.load_verify_locations(cafile=self.client_ca)  # the CA the SBC's certificate chains to
        else:
            ctx.verify_mode = ssl.CERT_NONE
        target = "%s:%d" % (host, port)
        try:
            _reader, writer = await asyncio.wait_for(asyncio.open_connection(
                host, port, ssl=ctx, local_addr=(self.listen[0], 0)), HANDSHAKE_TIMEOUT_S)
        except (OSError, ssl.SSLError, asyncio.TimeoutError) as exc:
            with self._lock:
                self.responses_back.append((time.time(), target, "%s: %s" % (type(exc).__name__, exc)))
            return
        writer.write(msg)
        with self._lock:
            self.responses_back.append((time.time(), target, "sent"))
        try:
            await writer.drain()
            await asyncio.sleep(1.0)  # let the SBC read it before the close
        except (OSError, ssl.SSLError):
            pass
        finally:
            writer.close()

    def _note_request(self, conn: Connection, m: str) -> None:
        with self._lock:
            self.request_log.append((time.time(), conn.id, m))

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        with self._lock:
            # A bound on connections open at once; the log itself keeps every connection.
            if sum(1 for c in self.connections if c.closed_at is None) >= MAX_CONNECTIONS:
                writer.close()
                return
            conn = Connection(id=self._next_id, peer=(peer[0], peer[1]), opened_at=time.time())
            self._next_id += 1
            self.connections.append(conn)
        try:
            await writer.start_tls(self._make_context(conn), ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S)
        except (ssl.SSLError, OSError, asyncio.TimeoutError) as exc:
            conn.ok = False
            conn.error = conn.error or getattr(exc, "reason", None) or type(exc).__name__ + ": " + str(exc)
            conn.closed_at = time.time()
            writer.close()
            return
        sslobj = writer.get_extra_info("ssl_object")
        peercert = writer.get_extra_info("peercert") or {}
        conn.tls_version = sslobj.version() if sslobj else None
        conn.cipher = (sslobj.cipher() or (None,))[0] if sslobj else None
        conn.client_subject = {k: v for rdn in peercert.get("subject", ()) for k, v in rdn} or None
        conn.client_san_dns = tuple(v for k, v in peercert.get("subjectAltName", ()) if k == "DNS")
        conn.ok = True
        relay = _Relay(self, conn, reader, writer)
        self._relays.add(relay)
        try:
            await relay.open_backend()
            await relay.pump_tls()
        except (ConnectionError, ValueError, ssl.SSLError, OSError) as exc:
            conn.relay_error = f"{type(exc).__name__}: {exc}"
        finally:
            conn.closed_at = time.time()
            if "INVITE" in conn.requests:
                # The backend keeps answering this connection's calls on its socket: keep the
                # socket (to_tls moves them to the call's newest connection) until the front stops.
                relay.writer.close()
            else:
                relay.close()
                self._relays.discard(relay)

    def _local_answer(self, msg: bytes) -> t.Optional[bytes]:
        """The front's own reply when it answers (no backend, or OPTIONS with answer_options)."""
        m = method(msg)
        if self.backend is not None and not (self.answer_options and m == "OPTIONS"):
            return None
        if m == "ACK":
            return b""
        code = 200 if m in ("OPTIONS", "BYE", "CANCEL") else self.answer_code if m == "INVITE" else 501
        return build_response(msg, code, to_tag=f"front{id(self) & 0xffff}", contact=self.listen)


_HDR_COPY = re.compile(rb"^(?:via|v|from|f|to|t|call-id|i|cseq)[ \t]*:[^\r\n]*(?:\r\n[ \t][^\r\n]*)*",
                       re.I | re.M)
_REASONS = {200: "OK", 100: "Trying", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
            480: "Temporarily Unavailable", 486: "Busy Here", 500: "Server Internal Error", 501: "Not Implemented",
            502: "Bad Gateway", 503: "Service Unavailable", 504: "Server Time-out", 603: "Decline"}


def build_response(request: bytes, code: int, to_tag: t.Optional[str] = None,
                   contact: t.Optional[tuple[str, int]] = None) -> bytes:
    """A minimal RFC 3261 response to ``request`` (Via/From/To/Call-ID/CSeq copied, To-tag added)."""
    head = request.partition(b"\r\n\r\n")[0]
    lines = [f"SIP/2.0 {code} {_REASONS.get(code, 'Reply')}".encode()]
    for m in _HDR_COPY.finditer(head):
        line = m.group(0)
        if to_tag and re.match(rb"^(?:to|t)[ \t]*:", line, re.I) and b";tag=" not in line.lower():
            line += b";tag=" + to_tag.encode()
        lines.append(line)
    if contact and code < 300 and method(request) == "INVITE":
        lines.append(f"Contact: <sip:peer@{contact[0]}:{contact[1]};transport=tls>".encode())
    lines.append(b"Content-Length: 0")
    return b"\r\n".join(lines) + b"\r\n\r\n"


def sip_options(source: str, request_uri: str, tag: str = "tls") -> bytes:
    """An out-of-dialog SIP OPTIONS sent over TLS from ``source`` (Via port 5061) to ``request_uri``."""
    stamp = time.time_ns()
    return ("OPTIONS %s SIP/2.0\r\nVia: SIP/2.0/TLS %s:5061;branch=z9hG4bK-%s-%d\r\n"
            "From: <sip:acg@%s>;tag=%s\r\nTo: <%s>\r\nCall-ID: %s-%d@%s\r\nCSeq: 1 OPTIONS\r\n"
            "Max-Forwards: 70\r\nContent-Length: 0\r\n\r\n" % (
                request_uri, source, tag, stamp, source, tag, request_uri, tag, stamp, source)).encode()


# ---------------------------------------------------------------------------------------------------------------
# A TLS client for tests that connect *to* the SBC's TLS listener.

@dataclasses.dataclass
class HandshakeResult:
    ok: bool
    error: t.Optional[str] = None
    version: t.Optional[str] = None
    server_subject: t.Optional[dict[str, str]] = None
    reply: t.Optional[bytes] = None  # first SIP message received after sending ``send`` (if any)


def tls_client(addr: tuple[str, int], ca: t.Union[str, Path], cert: t.Optional[t.Union[str, Path]] = None,
               key: t.Optional[t.Union[str, Path]] = None, sni: t.Optional[str] = None,
               send: t.Optional[bytes] = None, timeout: float = 5.0,
               source: t.Optional[str] = None) -> HandshakeResult:
    """Open a TLS connection to ``addr`` (optionally with a client cert), optionally send one SIP message.

    With TLS 1.3 a server that refuses the client certificate only says so after the handshake, so
    the result counts as ok only once the server has answered ``send`` (or, without ``send``, once a
    read does not fail within a short time).
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_verify_locations(cafile=str(ca))
    ctx.check_hostname = bool(sni)
    if cert:
        ctx.load_cert_chain(str(cert), str(key) if key else None)
    raw = socket.create_connection(addr, timeout=timeout,
                                   source_address=(source, 0) if source else None)
    try:
        s = ctx.wrap_socket(raw, server_hostname=sni)
        peercert = s.getpeercert() or {}
        subject = {k: v for rdn in peercert.get("subject", ()) for k, v in rdn} or None
        if send is not None:
            s.sendall(send)
        buf = bytearray()
        deadline = time.monotonic() + timeout
        s.settimeout(0.5 if send is None else timeout)
        while True:
            try:
                data = s.recv(16384)
            except socket.timeout:
                if send is None:
                    return HandshakeResult(ok=True, version=s.version(), server_subject=subject)
                return HandshakeResult(ok=False, error="no SIP reply", version=s.version(), server_subject=subject)
            if not data:
                return HandshakeResult(ok=False, error="closed by server", version=s.version(), server_subject=subject)
            buf += data
            buf[:] = buf.lstrip(b"\r\n")
            msg = split_message(buf)
            if msg is not None:
                if status_code(msg) == 100 and time.monotonic() < deadline:
                    continue
                return HandshakeResult(ok=True, version=s.version(), server_subject=subject, reply=msg)
    except ssl.SSLError as exc:
        return HandshakeResult(ok=False, error=exc.reason or str(exc))
    except (ConnectionError, OSError) as exc:
        return HandshakeResult(ok=False, error=f"{type(exc).__name__}: {exc}")
    finally:
        raw.close()
