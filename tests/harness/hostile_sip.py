# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile SIP for the rendered Kamailio: a corpus of malformed/oversized messages, a raw sender
(UDP or TCP, from a chosen loopback source) and counting SIP sinks that stand in for ACG peers and the
operator core.

Every message carries ``X-H13: <class>`` (when it has headers at all) so that a sink can say which
class reached it; anything else a sink receives (except OPTIONS, the dispatcher's pings) counts as
"unattributed". Every loop is bounded in count and in time.
"""

from __future__ import annotations

import dataclasses
import random
import re
import select
import socket
import threading
import time
import typing as t
import uuid

FINAL = 200


@dataclasses.dataclass
class Ctx:
    """Where a message goes and comes from (the Via must name the real source port)."""
    proto: str
    src: str
    sport: int
    dst: str
    dport: int
    core_hop: str       # the core next hop (address) - a reply's second Via points there
    acg_peer: str       # an ACG peer address


def request(ctx: Ctx, cls: str, method: str = "INVITE", ruri: t.Optional[bytes] = None,
            drop: t.Collection[str] = (), extra: bytes = b"", body: bytes = b"", content_length: t.Optional[bytes] = None,
            max_forwards: bytes = b"70", vias: int = 1, to_tag: bool = False, display: bytes = b"caller") -> bytes:
    cid = "h13-%s-%s" % (cls, uuid.uuid4().hex[:12])
    ruri = ruri if ruri is not None else ("sip:+4930123456@%s:%d" % (ctx.dst, ctx.dport)).encode()
    via_proto = ctx.proto.upper().encode()
    headers: list[tuple[str, bytes]] = []
    for n in range(vias):
        host = ctx.src if n == 0 else "192.0.2.%d" % (n % 250 + 1)
        headers.append(("Via", b"SIP/2.0/%s %s:%d;branch=z9hG4bK%s%d;rport" % (
            via_proto, host.encode(), ctx.sport if n == 0 else 5060, uuid.uuid4().hex[:10].encode(), n)))
    headers += [
        ("Max-Forwards", max_forwards),
        ("From", b'"' + display + b'" <sip:+4969111@' + ctx.src.encode() + b">;tag=" + uuid.uuid4().hex[:8].encode()),
        ("To", b"<sip:+4930123456@" + ctx.dst.encode() + b">" + (b";tag=peer1" if to_tag else b"")),
        ("Call-ID", cid.encode()),
        ("CSeq", b"1 " + method.encode()),
        ("Contact", b"<sip:caller@%s:%d>" % (ctx.src.encode(), ctx.sport)),
        ("X-H13", cls.encode()),
    ]
    lines = [b"%s %s SIP/2.0" % (method.encode(), ruri)]
    lines += [name.encode() + b": " + value for name, value in headers if name not in drop]
    cl = content_length if content_length is not None else str(len(body)).encode()
    if "Content-Length" not in drop:
        lines.append(b"Content-Length: " + cl)
    return b"\r\n".join(lines) + b"\r\n" + extra + b"\r\n" + body


def corpus(ctx: Ctx, seed: int = 13) -> dict[str, list[bytes]]:
    """Class name -> the messages of that class (built for ``ctx``)."""
    rnd = random.Random(seed)
    valid = request(ctx, "truncated")
    mandatory = ["Via", "From", "To", "Call-ID", "CSeq", "Max-Forwards"]
    huge = 70 * 1024 if ctx.proto == "tcp" else 65000      # a UDP datagram holds at most 65507 bytes
    hop = ctx.core_hop.encode()
    no_trans = (b"SIP/2.0 200 OK\r\nVia: SIP/2.0/%s %s:%d;branch=z9hG4bKnotx%s\r\n"
                b"Via: SIP/2.0/%s %s:5060;branch=z9hG4bKnext\r\n"
                b"From: <sip:a@%s>;tag=1\r\nTo: <sip:b@%s>;tag=2\r\nCall-ID: h13-reply-%s\r\nCSeq: 1 INVITE\r\n"
                b"X-H13: reply-no-transaction\r\nContent-Length: 0\r\n\r\n")
    replies = [no_trans % (ctx.proto.upper().encode(), ctx.dst.encode(), ctx.dport, uuid.uuid4().hex[:8].encode(),
                           ctx.proto.upper().encode(), target.encode(), ctx.src.encode(), ctx.dst.encode(),
                           uuid.uuid4().hex[:8].encode())
               for target in (ctx.core_hop, ctx.acg_peer) for dummy in range(2)]
    return {
        "garbage": [bytes(rnd.getrandbits(8) for dummy in range(rnd.choice((1, 16, 200, 1400)))) for dummy in range(8)]
        + [b"\r\n\r\n" * 3, b"SIP/2.0\r\n\r\n", b"INVITE\r\n\r\n", b"INVITE sip: SIP/2.0\r\n\r\n"],
        "truncated": [valid[:n] for n in (10, 40, 90, 150, 200)],
        "missing-header": [request(ctx, "missing-header", drop=[h]) for h in mandatory if h != "Max-Forwards"],
        "missing-max-forwards": [request(ctx, "missing-max-forwards", drop=["Max-Forwards"])],
        "max-forwards-0": [request(ctx, "max-forwards-0", max_forwards=b"0"),
                           request(ctx, "max-forwards-0", method="OPTIONS", max_forwards=b"0")],
        "huge-header": [request(ctx, "huge-header", extra=b"X-Pad: " + b"x" * huge + b"\r\n")],
        "content-length-bigger": [request(ctx, "content-length-bigger", body=b"v=0\r\n", content_length=b"5000")],
        "content-length-smaller": [request(ctx, "content-length-smaller", body=b"v=0\r\no=- 1 1 IN IP4 x\r\n",
                                           content_length=b"3")],
        "content-length-negative": [request(ctx, "content-length-negative", body=b"v=0\r\n", content_length=b"-5"),
                                    request(ctx, "content-length-negative", content_length=b"99999999999999999999")],
        "bad-ruri-scheme": [request(ctx, "bad-ruri-scheme", ruri=r) for r in (
            b"http://evil.example/x", b"mailto:a@b", b"javascript:alert(1)", b"xyz:+4930123456@" + ctx.dst.encode(),
            b"sip:", b"<sip:+4930123456@" + ctx.dst.encode() + b">")],
        "crlf-injection": [request(ctx, "crlf-injection", ruri=b"sip:+49301%0d%0aRoute:%20x@" + ctx.dst.encode()),
                           request(ctx, "crlf-injection", display=b"a\rRoute: <sip:evil.example;lr>"),
                           request(ctx, "crlf-injection", display=b"a\nRoute: <sip:evil.example;lr>")],
        "bad-bytes-in-ruri": [request(ctx, "bad-bytes-in-ruri", ruri=b"sip:+4930" + bad + b"123456@" + ctx.dst.encode())
                              for bad in (b"\x00", b"\x01", b"\x7f", b"\xff\xfe", b"\xc3\xa4")],
        "nul-bytes": [request(ctx, "nul-bytes", display=b"a\x00b"),
                      request(ctx, "nul-bytes", body=b"v=0\r\n\x00\x00\x00\r\n"),
                      request(ctx, "nul-bytes", method="INV\x00ITE")],
        "many-via": [request(ctx, "many-via", vias=n) for n in (70, 400)],
        "non-utf8": [request(ctx, "non-utf8", display=b"\xff\xfe\xc3\x28\xa0\xa1"),
                     request(ctx, "non-utf8", body=b"v=0\r\ns=\xff\xfe\xc3\x28\r\n")],
        # In-dialog (To-tag) with a Route to the core next hop, and to the SBC then the core.
        "fake-in-dialog": [request(ctx, "fake-in-dialog", method=m, to_tag=True,
                                   extra=b"Route: <sip:" + route + b";lr>\r\n")
                           for m in ("BYE", "INVITE") for route in (hop + b":5060", ctx.dst.encode() + b":%d" % ctx.dport)],
        "reply-no-transaction": replies,
    }


# Classes the SBC may pass on: legal SIP (escaped CR LF in a URI, many Vias, non-UTF-8 display names),
# repaired by the SBC (a missing Max-Forwards is added) or opaque to Kamailio's parser (NUL bytes in
# a quoted display name, in the body or in an unknown method token; the framing is intact). Every
# other class must never reach the far side.
MAY_PASS = {"missing-max-forwards", "content-length-smaller", "crlf-injection", "many-via", "non-utf8", "nul-bytes"}


@dataclasses.dataclass
class Outcome:
    sent: int = 0
    answers: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, answer: t.Optional[int]) -> None:
        self.sent += 1
        key = "dropped" if answer is None else str(answer)
        self.answers[key] = self.answers.get(key, 0) + 1


_STATUS = re.compile(rb"^SIP/2\.0 (\d{3})", re.M)


def _codes(data: bytes) -> list[int]:
    return [int(m.group(1)) for m in _STATUS.finditer(data)]


def send(proto: str, src: str, dst: str, dport: int, build: t.Callable[[Ctx], t.Sequence[bytes]],
         ctx_args: dict[str, str], wait_s: float = 0.4) -> list[t.Optional[int]]:
    """Open one socket from ``src``, send each message built for it, return per message the final
    code answered (None: nothing within ``wait_s``). TCP: one connection per message."""
    results: list[t.Optional[int]] = []
    probe = Ctx(proto, src, 0, dst, dport, **ctx_args)
    count = len(build(probe))
    for index in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM)
        try:
            sock.bind((src, 0))
            ctx = Ctx(proto, src, sock.getsockname()[1], dst, dport, **ctx_args)
            message = build(ctx)[index]
            if proto == "udp":
                sock.sendto(message, (dst, dport))
            else:
                sock.settimeout(2.0)
                sock.connect((dst, dport))
                sock.sendall(message)
            results.append(_final(sock, wait_s))
        except OSError:
            results.append(None)
        finally:
            sock.close()
    return results


def _final(sock: socket.socket, wait_s: float) -> t.Optional[int]:
    deadline = time.monotonic() + wait_s
    last: t.Optional[int] = None
    buf = b""
    while time.monotonic() < deadline:
        ready = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))[0]
        if not ready:
            break
        data = sock.recv(65535)
        if not data:
            break
        buf += data
        codes = _codes(buf)
        if codes:
            last = codes[-1]
            if last >= FINAL:
                return last
    return last


def flood(proto: str, src: str, dst: str, dport: int, messages: t.Sequence[bytes], drain_s: float = 1.5) -> list[int]:
    """Send every message as fast as possible on one socket/connection; the status codes received
    within ``drain_s`` after the last one (bounded)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM)
    buf = b""
    try:
        sock.bind((src, 0))
        if proto == "tcp":
            sock.settimeout(2.0)
            sock.connect((dst, dport))
        for message in messages:
            if proto == "udp":
                sock.sendto(message, (dst, dport))
            else:
                sock.sendall(message)
        deadline = time.monotonic() + drain_s
        while time.monotonic() < deadline:
            if not select.select([sock], [], [], max(0.0, deadline - time.monotonic()))[0]:
                break
            data = sock.recv(65535)
            if not data:
                break
            buf += data
    except OSError:
        pass
    finally:
        sock.close()
    return [c for c in _codes(buf) if c >= FINAL]


# -- sinks --------------------------------------------------------------------------------------------
_HEADER = re.compile(rb"^([A-Za-z-]+)[ \t]*:[ \t]*(.*?)\r?$", re.M)


def _reply(request_head: bytes, code: int, reason: bytes) -> bytes:
    keep = []
    for match in _HEADER.finditer(request_head):
        name = match.group(1).lower()
        if name in (b"via", b"v", b"from", b"f", b"call-id", b"i", b"cseq"):
            keep.append(match.group(0).rstrip(b"\r"))
        elif name in (b"to", b"t"):
            value = match.group(0).rstrip(b"\r")
            keep.append(value if b"tag=" in value else value + b";tag=sink")
    return b"SIP/2.0 %d %s\r\n" % (code, reason) + b"\r\n".join(keep) + b"\r\nContent-Length: 0\r\n\r\n"


class SipSink:
    """UDP and TCP on address:port: answers OPTIONS 200, other requests (not ACK) ``code``; counts
    every non-OPTIONS message per X-H13 class ("unattributed" without one)."""

    def __init__(self, address: str, port: int = 5060, code: int = 486) -> None:
        self.address, self.port, self.code = address, port, code
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: t.Optional[threading.Thread] = None
        self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)

    def start(self) -> "SipSink":
        self._udp.bind((self.address, self.port))
        self._tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._tcp.bind((self.address, self.port))
        self._tcp.listen(64)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self._udp.close()
        self._tcp.close()

    def total(self, classes: t.Optional[t.Collection[str]] = None) -> int:
        with self.lock:
            return sum(n for cls, n in self.counts.items() if classes is None or cls in classes)

    def _handle(self, message: bytes, send: t.Callable[[bytes], None]) -> None:
        head = message.split(b"\r\n\r\n", 1)[0]
        first = head.split(b"\r\n", 1)[0]
        if first.startswith(b"OPTIONS ") and b"X-H13" not in head:
            send(_reply(head, 200, b"OK"))
            return
        if first.startswith(b"ACK "):
            return      # Kamailio's own hop-by-hop ACK of the sink's 486 (a relayed ACK has no transaction here)
        match = re.search(rb"^X-H13:\s*([\w-]+)", head, re.M)
        cls = match.group(1).decode() if match else "unattributed"
        with self.lock:
            self.counts[cls] = self.counts.get(cls, 0) + 1
        if not first.startswith(b"SIP/2.0") and not first.startswith(b"ACK "):
            send(_reply(head, self.code, b"Busy Here"))

    def _run(self) -> None:
        conns: dict[socket.socket, bytes] = {}
        while not self._stop.is_set():
            ready = select.select([self._udp, self._tcp] + list(conns), [], [], 0.1)[0]
            for sock in ready:
                try:
                    if sock is self._udp:
                        data, peer = sock.recvfrom(65535)
                        self._handle(data, lambda out, p=peer: self._udp.sendto(out, p))
                    elif sock is self._tcp:
                        conn = sock.accept()[0]
                        conns[conn] = b""
                    else:
                        data = sock.recv(65535)
                        if not data:
                            conns.pop(sock).close()
                            continue
                        conns[sock] = self._split(conns[sock] + data, sock)
                except OSError:
                    if sock in conns:
                        conns.pop(sock).close()
        for conn in conns:
            conn.close()

    def _split(self, buf: bytes, conn: socket.socket) -> bytes:
        while b"\r\n\r\n" in buf:
            head, rest = buf.split(b"\r\n\r\n", 1)
            buf = buf.lstrip(b"\r\n") if not head.strip() else buf
            if not head.strip():
                buf = rest
                continue
            match = re.search(rb"^(?:Content-Length|l)[ \t]*:[ \t]*(\d+)", head, re.M | re.I)
            length = int(match.group(1)) if match else 0
            if len(rest) < length:
                break
            self._handle(head + b"\r\n\r\n" + rest[:length], conn.sendall)
            buf = rest[length:]
        return buf
