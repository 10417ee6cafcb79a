# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's SIP request builder and its defensive response parser (module_utils/probe_sip.py)."""

from __future__ import annotations

import typing as t

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.commsgw.routing.plugins.module_utils.probe import sip


def options() -> sip.OptionsRequest:
    return sip.build_options("sip:pstn-region1.acg.test:5061;transport=tls", "sip:pstn-region1.acg.test",
                             "192.0.2.10", 40000, "tls")


def reply_to(request: sip.OptionsRequest, code: int = 200, reason: str = "OK", extra: str = "",
             call_id: t.Optional[str] = None, branch: t.Optional[str] = None, cseq: str = "1 OPTIONS",
             body: bytes = b"", length: t.Optional[int] = None) -> bytes:
    head = ("SIP/2.0 %d %s\r\n"
            "Via: SIP/2.0/TLS 192.0.2.10:40000;branch=%s;rport=40000;received=192.0.2.10\r\n"
            "From: <sip:probe@192.0.2.10>;tag=%s\r\nTo: <sip:pstn-region1.acg.test>;tag=peer1\r\n"
            "Call-ID: %s\r\nCSeq: %s\r\n%sContent-Length: %d\r\n\r\n") % (
        code, reason, branch or request.branch, request.from_tag, call_id or request.call_id, cseq, extra,
        len(body) if length is None else length)
    return head.encode() + body


def test_options_request_is_rfc3261_shaped() -> None:
    req = options()
    text = req.data.decode()
    assert text.startswith("OPTIONS sip:pstn-region1.acg.test:5061;transport=tls SIP/2.0\r\n")
    assert text.endswith("Content-Length: 0\r\n\r\n")
    assert req.branch.startswith("z9hG4bK") and "Via: SIP/2.0/TLS 192.0.2.10:40000;branch=%s;rport" % req.branch in text
    assert "Call-ID: %s\r\n" % req.call_id in text and "CSeq: 1 OPTIONS\r\n" in text and "Max-Forwards: 70" in text
    assert options().call_id != req.call_id and options().branch != req.branch  # fresh per request


def test_parse_and_match_a_good_reply() -> None:
    req = options()
    response = sip.parse_response(reply_to(req, 200, "OK", extra="Server: ACG\r\nAllow: INVITE, ACK\r\n"))
    assert (response.code, response.reason, response.server) == (200, "OK", "ACG")
    assert sip.mismatch(response, req) is None


def test_compact_forms_folding_and_case() -> None:
    req = options()
    data = ("SIP/2.0 503 Service Unavailable\r\nv: SIP/2.0/TLS 192.0.2.10:40000;branch=%s\r\n"
            "i: %s\r\ncseq: 1 options\r\nSubject: a\r\n  folded\r\nl: 0\r\n\r\n" % (req.branch, req.call_id)).encode()
    response = sip.parse_response(data)
    assert response.code == 503 and response.header("Call-ID") == req.call_id
    assert response.header("s") == "a folded"
    assert sip.mismatch(response, req) is None


@pytest.mark.parametrize("field, value", [("call_id", "other@x"), ("branch", "z9hG4bKother")])
def test_wrong_transaction_is_named(field: str, value: str) -> None:
    req = options()
    response = sip.parse_response(reply_to(req, **{field: value}))
    why = sip.mismatch(response, req)
    assert why is not None and value in why


def test_wrong_cseq_is_named() -> None:
    req = options()
    assert "CSeq" in (sip.mismatch(sip.parse_response(reply_to(req, cseq="2 OPTIONS")), req) or "")
    assert "INVITE" in (sip.mismatch(sip.parse_response(reply_to(req, cseq="1 INVITE")), req) or "")


@pytest.mark.parametrize("data, kind", [
    (b"", sip.TRUNCATED),
    (b"HTTP/1.1 200 OK\r\n\r\n", sip.BAD_START_LINE),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", sip.NOT_UTF8),  # a TLS ClientHello on a plain socket
    (b"SIP/2.0 200 OK\r\nVia: x\r\n", sip.TRUNCATED),
    (b"SIP/2.0 2000 OK\r\n\r\n", sip.BAD_START_LINE),
    (b"OPTIONS sip:x SIP/2.0\r\nVia: a\r\n\r\n", sip.NOT_A_RESPONSE),
    (b"SIP/2.0 200 OK\r\nVia: a\r\nno colon here\r\n\r\n", sip.BAD_HEADER),
    (b"SIP/2.0 200 OK\r\nVia: a\r\nCall-ID: \xff\xfe\r\nCSeq: 1 OPTIONS\r\n\r\n", sip.NOT_UTF8),
    (b"SIP/2.0 200 OK\r\nVia: a\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n", sip.MISSING_HEADER),
    (b"SIP/2.0 200 OK\r\nVia: a\r\nCall-ID: c\r\nCSeq: one OPTIONS\r\nContent-Length: 0\r\n\r\n", sip.BAD_HEADER),
    (b"SIP/2.0 200 OK\r\nVia: a\r\nCall-ID: c\r\nCSeq: 1 OPTIONS\r\nContent-Length: x\r\n\r\n", sip.BAD_HEADER),
    # "¹".isdigit() is True, but int() refuses it: must be a parse error, not a crash.
    ("SIP/2.0 200 OK\r\nVia: a\r\nCall-ID: c\r\nCSeq: 1 OPTIONS\r\nContent-Length: \u00b9\r\n\r\n".encode(), sip.BAD_HEADER),
    (b"SIP/2.0 200 OK\r\nVia: a\r\nCall-ID: c\r\nCSeq: 1 OPTIONS\r\nContent-Length: 10\r\n\r\nabc", sip.TRUNCATED),
    (b"SIP/2.0 200 OK\r\n" + b"X: y\r\n" * 5000 + b"\r\n", sip.OVERSIZED),
])
def test_bad_replies_are_classified(data: bytes, kind: str) -> None:
    with pytest.raises(sip.SipParseError) as info:
        sip.parse_response(data)
    assert info.value.kind == kind, info.value


def test_stream_framing() -> None:
    req = options()
    one, two = reply_to(req, 100, "Trying"), reply_to(req, 200, "OK", body=b"v=0\r\n")
    messages, rest = sip.split_stream(b"\r\n\r\n" + one + two + two[:20])
    assert messages == [one, two] and rest == two[:20]
    with pytest.raises(sip.SipParseError) as info:
        sip.split_stream(b"A" * (sip.MAX_MESSAGE_BYTES + 1))
    assert info.value.kind == sip.OVERSIZED
    with pytest.raises(sip.SipParseError) as info:
        sip.split_stream(reply_to(req, length=10 ** 6))
    assert info.value.kind == sip.OVERSIZED  # a huge Content-Length is refused before buffering it


# ---- property tests: nothing a peer sends may crash the parser -----------------------------------------
# They call the parser without parse_response's last-resort net (which turns a parser bug into
# BAD_HEADER), so an unexpected exception fails the test instead of hiding.
def parse_raw(data: bytes, stream: bool = True) -> sip.SipResponse:
    return sip._parse_response(data, sip.MAX_MESSAGE_BYTES, stream)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    req = options()
    try:
        response = parse_raw(data)
    except sip.SipParseError as exc:
        assert exc.kind in sip.PARSE_ERROR_KINDS
        return
    assert 100 <= response.code <= 699
    try:
        sip.mismatch(response, req)
    except sip.SipParseError as exc:
        assert exc.kind in sip.PARSE_ERROR_KINDS


_HEADER_LINE = st.tuples(st.sampled_from(["Via", "v", "Call-ID", "i", "CSeq", "Content-Length", "l", "To", "X-Y",
                                          "Server", ":", "", " "]),
                         st.text(max_size=30)).map(lambda kv: "%s: %s" % kv)


@settings(max_examples=300, deadline=None)
@given(st.lists(_HEADER_LINE, max_size=12), st.integers(min_value=0, max_value=999), st.binary(max_size=50),
       st.sampled_from(["\r\n", "\n"]))
def test_structured_garbage_never_crashes(headers: list[str], code: int, body: bytes, eol: str) -> None:
    """Almost-SIP: plausible header names with arbitrary values, bad codes, LF-only lines."""
    data = ("SIP/2.0 %d Reason%s" % (code, eol) + eol.join(headers) + eol + eol).encode("utf-8") + body
    for stream in (True, False):
        try:
            response = parse_raw(data, stream=stream)
        except sip.SipParseError as exc:
            assert exc.kind in sip.PARSE_ERROR_KINDS
            continue
        assert response.header("via") is not None and response.header("call-id") is not None
    try:
        sip.split_stream(data)
    except sip.SipParseError as exc:
        assert exc.kind in sip.PARSE_ERROR_KINDS


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=1, max_value=200))
def test_any_truncation_of_a_good_reply_is_classified(suffix: bytes, cut: int) -> None:
    req = options()
    data = reply_to(req, body=b"v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\n")
    try:
        parse_raw(data[:max(0, len(data) - cut)])
    except sip.SipParseError as exc:
        assert exc.kind in sip.PARSE_ERROR_KINDS
    else:
        raise AssertionError("a reply cut by %d bytes was accepted" % cut)


# ---- cross-check with an independent SIP parser from PyPI (requirements-test: sipmessage) -------------
_TOKEN = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789-."), min_size=1, max_size=20)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=100, max_value=699), st.text(alphabet=st.sampled_from("ABCDEFGHIJ abcdefgh"),
                                                          min_size=1, max_size=20).map(str.strip).filter(bool),
       _TOKEN, _TOKEN, st.integers(min_value=1, max_value=2 ** 31 - 1), st.binary(max_size=40))
def test_agrees_with_sipmessage(code: int, reason: str, call_id: str, branch: str, cseq: int, body: bytes) -> None:
    sipmessage = pytest.importorskip("sipmessage")
    data = ("SIP/2.0 %d %s\r\nVia: SIP/2.0/TLS 192.0.2.1:5061;branch=z9hG4bK%s\r\ni: %s\r\n"
            "CSeq: %d OPTIONS\r\nl: %d\r\n\r\n" % (code, reason, branch, call_id, cseq, len(body))).encode() + body
    ours = sip.parse_response(data)
    theirs = sipmessage.Message.parse(data)
    assert (ours.code, ours.reason) == (theirs.code, theirs.phrase)
    assert ours.header("call-id") == theirs.headers.get("Call-ID")
    assert ours.cseq() == (theirs.cseq.sequence, theirs.cseq.method)
    assert ours.first_via_branch() == theirs.via[0].parameters["branch"]
    assert ours.body == theirs.body
