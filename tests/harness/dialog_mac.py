# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dialog-name MAC as docs/kamailio-tls.md defines it, computed with Python's hmac: the reference every test
compares Kamailio's route COMMSGW_TLS_MAC (and its model) against, written once. Only tests need it: the SBC
computes the MAC in kamailio.cfg, and kamailio/secret.py only writes the keys."""

from __future__ import annotations

import hashlib
import hmac

# The cgwmac's length in hex digits (132 bits), as the docs state it; a literal on purpose, so that a change of
# the rendered length fails the tests rather than following them.
MAC_HEX_DIGITS = 33


def dialog_mac_message(name: str, call_id: str) -> str:
    """The message of a dialog name's MAC: ``<length of name>:<name>:<Call-ID>``. The decimal length ends at the
    first colon, so the name ends where it says and the rest is the Call-ID: no two (name, Call-ID) pairs
    give one message, whatever either contains (both come from the network when a MAC is checked)."""
    return "%d:%s:%s" % (len(name.encode()), name, call_id)


def expected_dialog_mac(key: bytes, name: str, call_id: str) -> str:
    """The first 33 hex digits of HMAC-SHA256(key, "<len(name)>:<name>:<Call-ID>")."""
    return hmac.new(key, dialog_mac_message(name, call_id).encode(), hashlib.sha256).hexdigest()[:MAC_HEX_DIGITS]


def hmac_sha256_with_pads(ipad_key: bytes, opad_key: bytes, message: bytes) -> bytes:
    """What the route computes with {s.sha256} from the secret file's two padded keys (RFC 2104):
    SHA-256(opad-key + SHA-256(ipad-key + message))."""
    return hashlib.sha256(opad_key + hashlib.sha256(ipad_key + message).digest()).digest()
