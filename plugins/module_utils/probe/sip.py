# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIP OPTIONS requests and a defensive SIP response parser for the live probe.

Everything here is pure (no sockets): the probe feeds whatever bytes a peer sent, and the parser
either returns a ``SipResponse`` or raises ``SipParseError`` with a ``kind``. It never raises anything
else, whatever the input (a property test drives it with arbitrary bytes): a peer that sends garbage,
a truncated or oversized message, non-UTF-8 headers or a reply to another transaction must end up
as a classified probe result, never as a traceback.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe.limits import clip

# RFC 3261 magic cookie: branches starting with it are globally unique transaction ids.
BRANCH_COOKIE = "z9hG4bK"
# A reply to OPTIONS has no business being large; ACG itself refuses SIP above 10 KB. Anything
# beyond this is cut off and classified instead of being buffered without bound.
MAX_MESSAGE_BYTES = 16384
MAX_HEADER_LINES = 200

# SipParseError.kind values.
TRUNCATED = "truncated"          # no end of headers, or a body shorter than Content-Length
OVERSIZED = "oversized"          # more than MAX_MESSAGE_BYTES
NOT_UTF8 = "not_utf8"            # start line or headers are not UTF-8 (RFC 3261 7.3.1: UTF-8 text)
BAD_START_LINE = "bad_start_line"  # not "SIP/2.0 <3 digits> <reason>"
NOT_A_RESPONSE = "not_a_response"  # a request arrived where a response was expected
BAD_HEADER = "bad_header"        # a header line without a colon, or a bad Content-Length / CSeq
MISSING_HEADER = "missing_header"  # Via, Call-ID or CSeq absent: the reply cannot be matched
PARSE_ERROR_KINDS = (TRUNCATED, OVERSIZED, NOT_UTF8, BAD_START_LINE, NOT_A_RESPONSE, BAD_HEADER, MISSING_HEADER)

# RFC 3261 7.3.3 compact header names.
_COMPACT = {"i": "call-id", "v": "via", "l": "content-length", "f": "from", "t": "to", "m": "contact",
            "c": "content-type", "k": "supported", "s": "subject", "e": "content-encoding"}
_STATUS_LINE = re.compile(r"^SIP/2\.0 ([1-6][0-9]{2})(?: (.*))?$")
_REQUEST_LINE = re.compile(r"^[A-Za-z]+ \S+ SIP/2\.0$")
_BRANCH = re.compile(r";\s*branch\s*=\s*([^;,\s]+)", re.IGNORECASE)


class SipParseError(Exception):
    """A peer's bytes are not a usable SIP response; ``kind`` is one of ``PARSE_ERROR_KINDS``."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__("%s: %s" % (kind, detail))


@dataclasses.dataclass(frozen=True)
class OptionsRequest:
    """One OPTIONS request and the identifiers its response must echo (RFC 3261 17.1.3)."""

    data: bytes
    call_id: str
    branch: str
    cseq: int
    from_tag: str


@dataclasses.dataclass(frozen=True)
class SipResponse:
    code: int
    reason: str
    headers: tuple[tuple[str, str], ...]  # (lower-case full name, value), in order
    body: bytes
    size: int

    def header(self, name: str) -> t.Optional[str]:
        """First value of a header (full or compact name, any case)."""
        wanted = _canonical(name)
        for key, value in self.headers:
            if key == wanted:
                return value
        return None

    def first_via_branch(self) -> t.Optional[str]:
        via = self.header("via")
        if via is None:
            return None
        first = via.split(",", 1)[0]
        match = _BRANCH.search(first)
        return match.group(1) if match else None

    def cseq(self) -> tuple[int, str]:
        value = self.header("cseq") or ""
        parts = value.split()
        if len(parts) != 2 or not (parts[0].isascii() and parts[0].isdigit()):
            raise SipParseError(BAD_HEADER, "CSeq %r is not '<number> <method>'" % value[:80])
        return int(parts[0]), parts[1].upper()

    @property
    def server(self) -> t.Optional[str]:
        return self.header("server") or self.header("user-agent")


def _canonical(name: str) -> str:
    name = name.strip().lower()
    return _COMPACT.get(name, name)


def build_options(request_uri: str, to_uri: str, local_host: str, local_port: int, transport: str,
                  user_agent: str = "commsgw-probe", cseq: int = 1) -> OptionsRequest:
    """An RFC 3261 OPTIONS request with fresh Call-ID, branch and tag.

    ``transport`` is the Via transport token (TLS, TCP, UDP). ``rport`` asks the peer to answer to the
    address the request came from, which is what a probe behind NAT needs.
    """
    call_id = secrets.token_hex(12) + "@commsgw-probe"
    branch = BRANCH_COOKIE + secrets.token_hex(10)
    tag = secrets.token_hex(6)
    host = "[%s]" % local_host if ":" in local_host else local_host
    lines = [
        "OPTIONS %s SIP/2.0" % request_uri,
        "Via: SIP/2.0/%s %s:%d;branch=%s;rport" % (transport.upper(), host, local_port, branch),
        "Max-Forwards: 70",
        "From: <sip:probe@%s>;tag=%s" % (host, tag),
        "To: <%s>" % to_uri,
        "Call-ID: %s" % call_id,
        "CSeq: %d OPTIONS" % cseq,
        "Contact: <sip:probe@%s:%d;transport=%s>" % (host, local_port, transport.lower()),
        "Accept: application/sdp",
        "User-Agent: %s" % user_agent,
        "Content-Length: 0",
    ]
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
    return OptionsRequest(data=data, call_id=call_id, branch=branch, cseq=cseq, from_tag=tag)


def _header_end(buffer: bytes) -> int:
    """Index just past the blank line ending the headers, or -1. Accepts bare LF as a courtesy."""
    crlf = buffer.find(b"\r\n\r\n")
    lf = buffer.find(b"\n\n")
    ends = [i + 4 for i in (crlf,) if i >= 0] + [i + 2 for i in (lf,) if i >= 0]
    return min(ends) if ends else -1


def _content_length(header_block: bytes) -> int:
    """Content-Length from raw header bytes (0 when absent; RFC 3261 18.3 requires it on streams)."""
    for raw in re.split(rb"\r?\n", header_block):
        name, sep, value = raw.partition(b":")
        if not sep:
            continue
        if _canonical(name.decode("latin-1")) == "content-length":
            text = value.strip()
            if not (text.isascii() and text.isdigit()) or len(text) > 9:
                raise SipParseError(BAD_HEADER, "Content-Length %r is not a number" % text[:40])
            return int(text)
    return 0


def split_stream(buffer: bytes, max_bytes: int = MAX_MESSAGE_BYTES) -> tuple[list[bytes], bytes]:
    """Cut complete messages off the front of a stream buffer (TLS/TCP framing by Content-Length).

    Returns (complete messages, remaining bytes). Leading CRLF keep-alives are dropped. Raises
    SipParseError: OVERSIZED when a message (or unframed data) exceeds ``max_bytes``, BAD_HEADER for a
    Content-Length that is not a number.
    """
    messages = []
    while True:
        buffer = buffer.lstrip(b"\r\n")  # RFC 5626 keep-alives between messages
        end = _header_end(buffer)
        if end < 0:
            if len(buffer) > max_bytes:
                raise SipParseError(OVERSIZED, "more than %d bytes without an end of headers" % max_bytes)
            return messages, buffer
        length = _content_length(buffer[:end])
        if end + length > max_bytes:
            raise SipParseError(OVERSIZED, "message of %d bytes, limit %d" % (end + length, max_bytes))
        if len(buffer) < end + length:
            return messages, buffer
        messages.append(buffer[:end + length])
        buffer = buffer[end + length:]


def parse_response(data: bytes, max_bytes: int = MAX_MESSAGE_BYTES, stream: bool = True) -> SipResponse:
    """Parse one complete SIP response. Raises only SipParseError.

    ``stream``: the message came over TLS/TCP, where Content-Length is binding; over UDP a datagram
    is one message and a missing Content-Length means "the rest of the datagram".
    """
    try:
        return _parse_response(data, max_bytes, stream)
    except SipParseError:
        raise
    except Exception as exc:  # pragma: no cover - a parser bug must still not crash the probe
        raise SipParseError(BAD_HEADER, "unparseable reply (%s: %s)" % (type(exc).__name__, exc))


def _parse_response(data: bytes, max_bytes: int, stream: bool) -> SipResponse:
    if len(data) > max_bytes:
        raise SipParseError(OVERSIZED, "%d bytes, limit %d" % (len(data), max_bytes))
    data = data.lstrip(b"\r\n")
    if not data:
        raise SipParseError(TRUNCATED, "empty reply")
    end = _header_end(data)
    if end < 0:
        # Still look at the start line first: garbage is more useful to report than "truncated".
        first = data.split(b"\n", 1)[0].rstrip(b"\r")
        _start_line(first)
        raise SipParseError(TRUNCATED, "no end of headers after %d bytes" % len(data))
    head = data[:end]
    body = data[end:]
    lines = re.split(rb"\r?\n", head.rstrip(b"\r\n"))
    if len(lines) > MAX_HEADER_LINES:
        raise SipParseError(OVERSIZED, "%d header lines" % len(lines))
    code, reason = _start_line(lines[0])
    headers: list[tuple[str, str]] = []
    for raw in lines[1:]:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SipParseError(NOT_UTF8, "header line %r is not UTF-8" % raw[:60])
        if line[:1] in (" ", "\t") and headers:  # RFC 3261 7.3.1 line folding
            name, value = headers[-1]
            headers[-1] = (name, value + " " + line.strip())
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(ch.isspace() for ch in name.strip()):
            raise SipParseError(BAD_HEADER, "header line %r has no 'name:'" % line[:60])
        headers.append((_canonical(name), value.strip()))
    response = SipResponse(code=code, reason=reason, headers=tuple(headers), body=b"", size=len(data))
    length_text = response.header("content-length")
    if length_text is not None:
        # isdigit() alone lets '¹' or Arabic-Indic digits through to int(), which then raises.
        if not (length_text.isascii() and length_text.isdigit()) or len(length_text) > 9:
            raise SipParseError(BAD_HEADER, "Content-Length %r is not a number" % length_text[:40])
        length = int(length_text)
        if len(body) < length:
            raise SipParseError(TRUNCATED, "body of %d bytes, Content-Length %d" % (len(body), length))
        body = body[:length]
    elif stream and body:
        raise SipParseError(BAD_HEADER, "a body on a stream without Content-Length")
    for required in ("via", "call-id", "cseq"):
        if response.header(required) is None:
            raise SipParseError(MISSING_HEADER, "no %s header" % required)
    response.cseq()  # validates the CSeq format
    return dataclasses.replace(response, body=body)


def _start_line(raw: bytes) -> tuple[int, str]:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SipParseError(NOT_UTF8, "start line %r is not UTF-8" % raw[:60])
    match = _STATUS_LINE.match(line)
    if match:
        return int(match.group(1)), (match.group(2) or "").strip()
    if _REQUEST_LINE.match(line):
        raise SipParseError(NOT_A_RESPONSE, "a request arrived: %r" % line[:60])
    raise SipParseError(BAD_START_LINE, "start line %r is not 'SIP/2.0 <code> <reason>'" % line[:60])


def mismatch(response: SipResponse, request: OptionsRequest) -> t.Optional[str]:
    """Why ``response`` does not belong to ``request`` (RFC 3261 17.1.3), or None when it does."""
    branch = response.first_via_branch()
    if branch != request.branch:
        return "Via branch %r, sent %r" % (clip(branch, 80), request.branch)
    call_id = response.header("call-id")
    if call_id != request.call_id:
        return "Call-ID %r, sent %r" % (clip(call_id or "", 80), request.call_id)
    number, method = response.cseq()
    if number != request.cseq or method != "OPTIONS":
        return "CSeq '%d %s', sent '%d OPTIONS'" % (number, clip(method, 40), request.cseq)
    return None
