# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bounds on what DNS and SIP peers can make the live probe do and write (issue 13, item 3).

The probe talks to whatever DNS names and whatever answers: a hostile or broken peer must not be
able to make it contact addresses outside the deployment's /28s, probe thousands of targets, or
blow up the report with a flood of stray replies or a megabyte of reason phrase. Everything a peer
sends that is reflected in the report goes through ``clip``; the caps below bound the rest.
"""

from __future__ import annotations

import ipaddress
import typing as t

# At most this many targets (address x port) of one SRV record are contacted; ACG publishes a few.
MAX_TARGETS_PER_RECORD = 16
# At most this many stray replies (other transactions, malformed) are kept per peer; all are counted.
MAX_STRAY_KEPT = 10
# Reflected text (reason phrase, Server header, Call-ID, branch, certificate names) is cut here.
MAX_REFLECTED_CHARS = 160
# At most this many DNS subjectAltNames of a peer certificate are written to the report.
MAX_SAN_KEPT = 20
CLIP_MARKER = "...[%d more chars]"

OUT_OF_RANGE = "out_of_range"  # PeerResult.failure: the address is outside every /28, not contacted


def clip(text: t.Optional[str], limit: int = MAX_REFLECTED_CHARS) -> t.Optional[str]:
    """``text`` cut to ``limit`` characters plus a marker saying how much was dropped; None stays None."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + CLIP_MARKER % (len(text) - limit)


def clip_list(values: t.Sequence[str], limit: int = MAX_SAN_KEPT) -> list[str]:
    """At most ``limit`` clipped entries, plus one marker entry naming how many were dropped."""
    kept = [t.cast(str, clip(v)) for v in values[:limit]]
    if len(values) > limit:
        kept.append("...[%d more]" % (len(values) - limit))
    return kept


def out_of_range_detail(address: str, ranges: t.Sequence[str]) -> str:
    """Why an SRV target was not contacted: its address and the ranges it is not in (R-07)."""
    where = ", ".join(ranges) if ranges else "none"
    return ("not contacted: address %s is outside the region's /28 range(s) %s (R-07); the SBC's renderer "
            "refuses it, so the probe does not send it TLS with the SBC's certificate or OPTIONS" % (address, where))


def in_ranges(address: str, ranges: t.Sequence[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for value in ranges:
        try:
            if ip in ipaddress.ip_network(value, strict=False):
                return True
        except ValueError:
            continue
    return False


def cap_targets(targets: t.Sequence[t.Any], limit: int = MAX_TARGETS_PER_RECORD) -> tuple[list[t.Any], t.Optional[str]]:
    """The first ``limit`` targets of one record (in DNS order) and a note when some were dropped."""
    if len(targets) <= limit:
        return list(targets), None
    return list(targets[:limit]), ("%d targets, only the first %d probed (the probe contacts at most %d per "
                                   "record; ACG publishes a few)" % (len(targets), limit, limit))
