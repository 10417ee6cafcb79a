# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hand-made SIP dialogs for the trust-boundary tests (issue 21): one call whose every header the test
knows, in-dialog requests the test forges from it, and listeners that record whatever reaches them.

* ``CoreUac``: the operator core's side of one call over UDP: INVITE through the SBC, ACK, and then it
  answers every request that reaches it (a BYE from ACG) with 200 and keeps it; it sends in-dialog requests of
  its own with any Route set (``send_in_dialog``).
* ``UdpSink``: a UDP socket that only records (a host no in-dialog request may ever reach).
* ``in_dialog``: an in-dialog request of a dialog, with any Route set, Request-URI and Call-ID, for the
  peer's side (sent over TLS with ``harness.tls_front.tls_client``).

SIPp cannot do this: its scenarios cannot send a request with a forged Route from the other side.
"""

from __future__ import annotations

import dataclasses
import re
import socket
import threading
import time
import typing as t
import uuid

_HEADER_RE = r"^(?:%s)[ \t]*:[ \t]*(.*)$"


def header_values(msg: bytes, *names: str) -> list[str]:
    """Every value of the headers ``names`` (full and compact forms), comma lists split per entry."""
    text = msg.partition(b"\r\n\r\n")[0].decode("utf-8", "replace")
    values = []
    for match in re.finditer(_HEADER_RE % "|".join(re.escape(n) for n in names), text, re.I | re.M):
        values += [v.strip() for v in re.split(r",(?=\s*<)", match.group(1))]
    return values


def status(msg: t.Optional[bytes]) -> t.Optional[int]:
    if not msg or not msg.startswith(b"SIP/2.0 "):
        return None
    return int(msg.split()[1])


@dataclasses.dataclass
class Dialog:
    """What both ends of an established call know: the caller's view plus the peer's route set."""

    call_id: str
    caller_uri: str        # the caller's From URI and Contact (where the peer's requests go)
    caller_tag: str
    callee_uri: str        # the Request-URI of the INVITE (the peer's To)
    callee_tag: str
    callee_contact: str    # the peer's Contact (its TLS front)
    record_route: list[str]  # as the 200 OK carried it: the peer's route set, in order


class UdpSink:
    """Records every datagram reaching ``address:port`` (bounded); answers nothing unless ``answer`` says what."""

    def __init__(self, address: str, port: int = 5060) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((address, port))
        self.sock.settimeout(0.2)
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def answer(self, data: bytes, source: t.Any) -> None:
        """Called for each datagram after it was recorded (a sink answers nothing)."""

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data, source = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            if len(self.received) < 1000:
                self.received.append(data)
            self.answer(data, source)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


class CoreUac(UdpSink):
    """One call from the operator core over UDP, through the SBC's core socket ``sbc``; it answers every
    request that reaches it (a BYE from ACG) with 200 and keeps it."""

    def __init__(self, address: str, sbc: tuple[str, int], user: str = "+4930123456") -> None:
        super().__init__(address, 0)
        self.address = address
        self.port = self.sock.getsockname()[1]
        self.sbc = sbc
        self.user = user

    @property
    def uri(self) -> str:
        return "sip:caller@%s:%d" % (self.address, self.port)

    @property
    def requests(self) -> list[bytes]:
        return [m for m in self.received if status(m) is None]

    @property
    def responses(self) -> list[bytes]:
        return [m for m in self.received if status(m) is not None]

    def answer(self, data: bytes, source: t.Any) -> None:
        if status(data) is None and not data.startswith(b"ACK "):
            self.sock.sendto(_response(data, 200), source)

    def call(self, timeout_s: float = 10.0) -> Dialog:
        """INVITE (no body) until a 200, then the ACK along the dialog's route; the dialog."""
        call_id = "dlg-%s" % uuid.uuid4().hex
        tag = uuid.uuid4().hex[:10]
        ruri = "sip:%s@%s:%d" % (self.user, self.sbc[0], self.sbc[1])
        invite = ("INVITE %s SIP/2.0\r\nVia: SIP/2.0/UDP %s:%d;branch=z9hG4bK%s;rport\r\nMax-Forwards: 70\r\n"
                  "From: <%s>;tag=%s\r\nTo: <%s>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\nContact: <%s>\r\n"
                  "Content-Length: 0\r\n\r\n" % (ruri, self.address, self.port, uuid.uuid4().hex, self.uri, tag,
                                                 ruri, call_id, self.uri))
        self.sock.sendto(invite.encode(), self.sbc)
        ok = self.final_response(call_id, timeout_s)
        if ok is None:
            raise AssertionError("no final answer to the INVITE within %.0f s" % timeout_s)
        if status(ok) != 200:
            raise AssertionError("INVITE answered %s" % ok.split(b"\r\n", 1)[0])
        to = header_values(ok, "To", "t")[0]
        contact = header_values(ok, "Contact", "m")[0]
        dialog = Dialog(call_id=call_id, caller_uri=self.uri, caller_tag=tag, callee_uri=ruri,
                        callee_tag=re.search(r";tag=([^;>\s]+)", to).group(1),  # type: ignore[union-attr]
                        callee_contact=contact.strip("<>").split(">")[0],
                        record_route=header_values(ok, "Record-Route"))
        self.send_in_dialog(dialog, "ACK", 1)
        return dialog

    def send_in_dialog(self, dialog: Dialog, method: str, cseq: int, route: t.Optional[t.Sequence[str]] = None) -> str:
        """A request of ``dialog`` from the core's side to the SBC: by default along the caller's route set (the
        Record-Route reversed); its Via branch, which its responses carry (``final_response``)."""
        route = list(reversed(dialog.record_route)) if route is None else route
        branch = uuid.uuid4().hex
        request = ("%s %s SIP/2.0\r\nVia: SIP/2.0/UDP %s:%d;branch=z9hG4bK%s;rport\r\nMax-Forwards: 70\r\n%s"
                   "From: <%s>;tag=%s\r\nTo: <%s>;tag=%s\r\nCall-ID: %s\r\nCSeq: %d %s\r\nContent-Length: 0\r\n\r\n"
                   % (method, dialog.callee_contact, self.address, self.port, branch,
                      "".join("Route: %s\r\n" % r for r in route), self.uri, dialog.caller_tag, dialog.callee_uri,
                      dialog.callee_tag, dialog.call_id, cseq, method))
        self.sock.sendto(request.encode(), self.sbc)
        return branch

    def final_response(self, needle: str, timeout_s: float) -> t.Optional[bytes]:
        """The first final response received that carries ``needle`` (a Call-ID, a Via branch), waiting at most
        ``timeout_s``; None without one."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            final = [r for r in self.responses if needle.encode() in r and (status(r) or 0) >= 200]
            if final:
                return final[0]
            time.sleep(0.05)
        return None

    def requests_with(self, needle: str) -> list[bytes]:
        return [r for r in self.requests if needle.encode() in r]


def in_dialog(dialog: Dialog, source: str, method: str = "BYE", route: t.Optional[t.Sequence[str]] = None,
              request_uri: t.Optional[str] = None, call_id: t.Optional[str] = None) -> bytes:
    """A request of ``dialog`` from the peer's side (sent from ``source`` over TLS): by default along
    the peer's route set to the caller, as the real peer would send it."""
    route = dialog.record_route if route is None else route
    return ("%s %s SIP/2.0\r\nVia: SIP/2.0/TLS %s:5061;branch=z9hG4bK%s;rport\r\nMax-Forwards: 70\r\n%s"
            "From: <%s>;tag=%s\r\nTo: <%s>;tag=%s\r\nCall-ID: %s\r\nCSeq: 2 %s\r\nContent-Length: 0\r\n\r\n"
            % (method, request_uri or dialog.caller_uri, source, uuid.uuid4().hex,
               "".join("Route: %s\r\n" % r for r in route), dialog.callee_uri, dialog.callee_tag,
               dialog.caller_uri, dialog.caller_tag, call_id or dialog.call_id, method)).encode()


def _response(request: bytes, code: int) -> bytes:
    head = request.partition(b"\r\n\r\n")[0].split(b"\r\n")
    keep = [line for line in head[1:] if re.match(rb"^(?:via|v|from|f|to|t|call-id|i|cseq)[ \t]*:", line, re.I)]
    return b"\r\n".join([b"SIP/2.0 %d OK" % code] + keep + [b"Content-Length: 0"]) + b"\r\n\r\n"
