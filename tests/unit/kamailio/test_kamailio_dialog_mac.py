# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dialog-name MAC is HMAC-SHA256 (issue 21 item 1, issue 25 item 1): the secret file's two padded keys
are HMAC's, the rendered route COMMSGW_TLS_MAC computes Python's ``hmac.new(key, message, sha256)`` with
them, and its message splits into (name, Call-ID) one way only. The same MAC from a real Kamailio, and a
forged one refused: tests/integration/test_kamailio_tls.py."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import (
    DIALOG_IPAD, DIALOG_OPAD, PING_TOKEN, dialog_key, hmac_pads, is_secret_text, new_secret_text)
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio
from harness.dialog_mac import dialog_mac_message, expected_dialog_mac, hmac_sha256_with_pads

from tests.unit.kamailio.test_kamailio_tls_render import SETTINGS, _plan

# Fixed pseudo-random keys (pytest-xdist's workers must collect the same parameters), and keys whose bytes make
# NULs in the pads (0x36, 0x5c), the byte values Kamailio strings might mishandle.
KEYS = {"random %d" % n: hashlib.sha256(b"test_kamailio_dialog_mac %d" % n).digest() for n in range(4)}
KEYS.update({"NULs in both pads": bytes([0x36, 0x5c, 0x00, 0xff] * 8), "all zero": b"\x00" * 32})
MESSAGES = [b"", b"14:r1.example.com:abc@host", bytes(range(256)), b"x" * 1000]


@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
def test_the_padded_keys_make_hmac_sha256(key: bytes) -> None:
    ipad_key, opad_key = hmac_pads(key)
    assert len(ipad_key) == len(opad_key) == 64
    for message in MESSAGES:
        assert hmac_sha256_with_pads(ipad_key, opad_key, message) == hmac.new(key, message, hashlib.sha256).digest()


def test_a_secret_file_carries_the_pads_of_one_256_bit_key() -> None:
    text = new_secret_text()
    key = dialog_key(text)
    assert key is not None and len(key) == 32 and is_secret_text(text)
    ipad_key, opad_key = hmac_pads(key)
    assert "!%s!%s!" % (DIALOG_IPAD, ipad_key.hex()) in text and "!%s!%s!" % (DIALOG_OPAD, opad_key.hex()) in text
    assert new_secret_text() != text


def _replace_value(text: str, name: str, value: str) -> str:
    return re.sub(r"!%s![0-9a-f]+!" % name, "!%s!%s!" % (name, value), text)


def test_a_file_whose_pads_are_not_one_keys_is_no_secret() -> None:
    """Pads from two keys, a key longer than 256 bits, or the file before issue 25 (the key itself): the
    module replaces it (kamailio_secret), and kamailio.cfg, which needs the pads, believes no name."""
    text = new_secret_text()
    other_ipad, other_opad = hmac_pads(secrets.token_bytes(32))
    assert not is_secret_text(_replace_value(text, DIALOG_OPAD, other_opad.hex()))
    assert not is_secret_text(_replace_value(text, DIALOG_IPAD, other_ipad.hex()))
    long_ipad, long_opad = hmac_pads(secrets.token_bytes(33))
    assert not is_secret_text(_replace_value(_replace_value(text, DIALOG_IPAD, long_ipad.hex()),
                                             DIALOG_OPAD, long_opad.hex()))
    before = ("# commsgw.routing: x\n#!substdef \"!COMMSGW_DIALOG_KEY!%s!\"\n#!substdef \"!%s!%s!\"\n"
              % (secrets.token_hex(32), PING_TOKEN, secrets.token_hex(16)))
    assert not is_secret_text(before)


def test_the_message_splits_one_way_only() -> None:
    """Name and Call-ID both come from the network when a MAC is checked: no other pair may give the message
    a minted MAC covers (with "<Call-ID>|<name>", Call-ID "a|b" and name "c" was Call-ID "a", name "b|c")."""
    pairs = [("a:b", "c"), ("a", "b:c"), ("1:a", "b"), ("", "1:a:b"), ("r1.example.com", "x"), ("r1.example.co", "mx")]
    messages = [dialog_mac_message(name, call_id) for name, call_id in pairs]
    assert len(set(messages)) == len(pairs)
    for (name, call_id), message in zip(pairs, messages):
        length, rest = message.split(":", 1)
        assert (rest[:int(length)], rest[int(length) + 1:]) == (name, call_id)
    assert dialog_mac_message("é.example", "c") == "10:é.example:c"  # bytes, as Kamailio's {s.len} counts


# -- the rendered route, run -------------------------------------------------------------------------------
# Only what route COMMSGW_TLS_MAC uses: "$var(x) = <term> [+ <term>]...;" where a term is a string literal, $ci,
# an integer, $var(y) or $(var(y){transformation}...) with s.decode.hexa, s.sha256, s.len or s.substr (Kamailio's meaning).
_TERM = re.compile(r'\s*(?:"(?P<lit>[^"]*)"|(?P<int>[0-9]+)|\$ci|\$var\((?P<var>\w+)\)|\$\(var\((?P<tvar>\w+)\)(?P<trs>(?:\{[^}]*\})+)\))\s*')


def _transform(value: t.Union[bytes, int], transformation: str) -> t.Union[bytes, int]:
    name, _comma, args = transformation.partition(",")
    assert isinstance(value, bytes)
    if name == "s.decode.hexa":
        return bytes.fromhex(value.decode("ascii"))
    if name == "s.sha256":
        return hashlib.sha256(value).hexdigest().encode()
    if name == "s.len":
        return len(value)
    if name == "s.substr":
        start, length = (int(a) for a in args.split(","))
        return value[start:start + length]
    raise AssertionError("transformation {%s} is not modelled here" % transformation)


def _term(match: t.Match[str], variables: dict[str, bytes], call_id: bytes) -> t.Union[bytes, int]:
    if match.group("lit") is not None:
        return match.group("lit").encode()
    if match.group("int"):
        return int(match.group("int"))
    if match.group("var"):
        return variables[match.group("var")]
    if match.group("tvar"):
        value: t.Union[bytes, int] = variables[match.group("tvar")]
        for transformation in re.findall(r"\{([^}]*)\}", match.group("trs")):
            value = _transform(value, transformation)
        return value
    return call_id


def _run_mac_route(body: str, variables: dict[str, bytes], call_id: bytes) -> bytes:
    """Run every assignment of the route's body in order (the "once per process" block included)."""
    assignments = re.findall(r"^\t+\$var\((\w+)\) = (.*);$", body, re.M)
    assert assignments, body
    for target, expression in assignments:
        value = b""
        position = 0
        while position < len(expression):
            match = _TERM.match(expression, position)
            assert match, "not modelled: %r" % expression[position:]
            term = _term(match, variables, call_id)
            value += str(term).encode() if isinstance(term, int) else term  # str + int: Kamailio appends digits
            position = match.end()
            if position < len(expression):
                assert expression[position] == "+", expression
                position += 1
        variables[target] = value
    return variables["commsgw_tls_mac_want"]


@pytest.mark.parametrize("attempt", [1, 2])
def test_the_rendered_route_computes_hmac_sha256_of_name_and_call_id(attempt: int) -> None:
    """Route COMMSGW_TLS_MAC as rendered, with the values the secret file substitutes (#!substdef): its cgwmac
    is the first 33 hex digits of hmac.new(key, "<len>:<name>:<Call-ID>", sha256) for each name and Call-ID."""
    del attempt  # two fresh secrets (collected alike by every pytest-xdist worker)
    key_text = new_secret_text()
    cfg = render_kamailio(_plan(), SETTINGS, "6.0.1")["kamailio.cfg"]
    route = re.search(r"^route\[COMMSGW_TLS_MAC\] \{\n(.*?)^\}", cfg, re.S | re.M)
    assert route
    body = route.group(1)
    for name, value in re.findall(r'#!substdef "!(\w+)!([0-9a-f]+)!"', key_text):
        body = body.replace(name, value)
    key = dialog_key(key_text)
    assert key is not None
    for name, call_id in [("r1.example.com", "a84b4c76e66710@pc33.example"), ("x", ""), ("a|b", "c|d"),
                          ("pstn-region1.tls.example.test", secrets.token_hex(20) + "@198.51.100.7")]:
        variables = {"commsgw_tls_claim": name.encode(), "commsgw_tls_pads_ready": b""}
        got = _run_mac_route(body, variables, call_id.encode())
        want = expected_dialog_mac(key, name, call_id)
        assert got.decode() == want, (name, call_id)
