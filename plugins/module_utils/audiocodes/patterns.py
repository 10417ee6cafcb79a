# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two match notations the Mediant offers where the plan has a CIDR or a number rule.

* IPv4 source patterns (Classification table, ``src-ip-address``): the documented wildcards are ``x``
  (one digit: ``10.8.8.xx`` is 10.8.8.10 to 10.8.8.99) and ``*`` (a whole octet, 0..255); there is no
  CIDR and no range (docs/platforms/audiocodes.md, "Classification"). ``network_patterns`` turns a CIDR
  into the fewest such patterns that cover exactly its addresses, ``pattern_ranges`` reads a pattern
  back into address ranges, and ``patterns_networks`` collapses read-back patterns into CIDRs.
* Dial-plan prefixes (IP-to-IP Routing and Manipulation tables): ``[n-m]`` is a range of numbers and
  ``#`` ends the number. ``e164_prefixes`` gives one exact pattern per length of an E.164 number.

Standard library only.
"""

from __future__ import annotations

import ipaddress
import re
import typing as t

# (digits, first value, last value) of the three octet lengths: 0-9, 10-99, 100-255.
_OCTET_LENGTHS = ((1, 0, 9), (2, 10, 99), (3, 100, 255))
_OCTET_PATTERN = re.compile(r"^(\*|[0-9x]{1,3})\Z")
E164_MIN_DIGITS = 2   # "+" and 2..15 digits, the first one 1-9 (R-26, core_policy.E164_REGEX)
E164_MAX_DIGITS = 15


def _octet_patterns(low: int, high: int) -> list[str]:
    """Fewest single-octet patterns covering exactly the values low..high."""
    if (low, high) == (0, 255):
        return ["*"]
    patterns: list[str] = []
    for length, first, last in _OCTET_LENGTHS:
        start, end = max(low, first), min(high, last)
        while start <= end:
            if start == first and end >= last and length > 1 and last < 255:
                patterns.append("x" * length)  # every value of this length (e.g. xx = 10..99)
                start = last + 1
                continue
            block = 0
            while (block + 1 < length or (length == 1 and block == 0)) \
                    and start % 10 ** (block + 1) == 0 and start + 10 ** (block + 1) - 1 <= end:
                block += 1
            if length == 1 and block == 1:
                patterns.append("x")  # 0..9
            else:
                patterns.append(("%d" % (start // 10 ** block)) + "x" * block)
            start += 10 ** block
    return patterns


def _octet_range(pattern: str) -> tuple[int, int]:
    """The values one octet pattern matches (contiguous by construction of the notation)."""
    if pattern == "*":
        return 0, 255
    if "x" not in pattern:
        return int(pattern), int(pattern)
    fixed = pattern.rstrip("x")
    if "x" in fixed or (fixed.startswith("0") and len(pattern) > 1):
        raise ValueError("not an octet pattern: %r" % pattern)
    width = len(pattern) - len(fixed)
    if not fixed:
        low, high = (0, 9) if width == 1 else (10 ** (width - 1), 10 ** width - 1)
    else:
        low, high = int(fixed) * 10 ** width, int(fixed) * 10 ** width + 10 ** width - 1
    if high > 255:
        high = 255
    if low > high:
        raise ValueError("octet pattern %r matches nothing" % pattern)
    return low, high


def network_patterns(cidr: str) -> list[str]:
    """Source-address patterns covering exactly the addresses of ``cidr`` (an IPv4 network)."""
    network = ipaddress.IPv4Network(cidr, strict=True)
    first = [int(o) for o in str(network.network_address).split(".")]
    last = [int(o) for o in str(network.broadcast_address).split(".")]
    # The first octet where the network varies; the ones after it span 0..255 (CIDR property).
    split = next((i for i in range(4) if first[i] != last[i]), 4)
    if split == 4:
        return [str(network.network_address)]
    fixed = ".".join(str(o) for o in first[:split])
    tail = ["*"] * (3 - split)
    return [".".join(([fixed] if fixed else []) + [octet] + tail)
            for octet in _octet_patterns(first[split], last[split])]


def is_ip_pattern(value: str) -> bool:
    parts = value.split(".")
    if len(parts) != 4 or not all(_OCTET_PATTERN.match(p) for p in parts):
        return False
    try:
        for part in parts:
            _octet_range(part)
    except ValueError:
        return False
    return True


def pattern_ranges(pattern: str) -> list[tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]]:
    """Address ranges a source pattern matches: the first varying octet gives the range, every octet
    after it must be ``*`` (the only shape ``network_patterns`` writes); anything else is refused."""
    if not is_ip_pattern(pattern):
        raise ValueError("not a source-address pattern: %r" % pattern)
    ranges = [_octet_range(p) for p in pattern.split(".")]
    varying = [i for i, (low, high) in enumerate(ranges) if low != high]
    if varying and any(ranges[i] != (0, 255) for i in range(varying[0] + 1, 4)):
        raise ValueError("source-address pattern %r is not a contiguous range" % pattern)
    low = ipaddress.IPv4Address(".".join(str(r[0]) for r in ranges))
    high = ipaddress.IPv4Address(".".join(str(r[1]) for r in ranges))
    return [(low, high)]


def patterns_networks(patterns: t.Iterable[str]) -> list[str]:
    """The CIDRs that a set of source patterns covers together, sorted."""
    networks: list[ipaddress.IPv4Network] = []
    for pattern in patterns:
        for low, high in pattern_ranges(pattern):
            networks.extend(ipaddress.summarize_address_range(low, high))
    return [str(n) for n in sorted(ipaddress.collapse_addresses(networks))]


def e164_prefixes() -> list[str]:
    """One dial-plan pattern per E.164 length: ``+[10-99]#`` (2 digits) .. ``+[100..0-999..9]#`` (15):
    "+", then exactly n digits, the first one 1-9, then the end of the number."""
    return ["+[1%s-%s]#" % ("0" * (n - 1), "9" * n) for n in range(E164_MIN_DIGITS, E164_MAX_DIGITS + 1)]


_DIAL = re.compile(r"^\+?(?:[0-9]|\[[0-9]{1,15}-[0-9]{1,15}\])*#?\Z")


def is_dial_pattern(value: str) -> bool:
    """The dial-plan subset the renderer writes: digits, ``[n-m]`` ranges (n <= m, same width), a
    leading ``+``, a final ``#``; or ``*`` (any number)."""
    if value == "*":
        return True
    if not value or not _DIAL.match(value) or value in ("+", "#", "+#"):
        return False
    for low, high in re.findall(r"\[([0-9]+)-([0-9]+)\]", value):
        if len(low) != len(high) or int(low) > int(high):
            return False
    return True


def dial_matches(pattern: str, number: str) -> bool:
    """Whether ``number`` (a Request-URI user) matches ``pattern`` as a prefix (``#``: whole number)."""
    if pattern == "*":
        return True
    regex = "".join(
        "(?:%s)" % "|".join(str(v).zfill(len(m.group(1))) for v in range(int(m.group(1)), int(m.group(2)) + 1))
        if m.group(1) and int(m.group(2)) - int(m.group(1)) < 1000 else
        (_range_regex(m.group(1), m.group(2)) if m.group(1) else re.escape(m.group(0)))
        for m in re.finditer(r"\[([0-9]+)-([0-9]+)\]|[^\[]", pattern.rstrip("#")))
    return re.match("^" + regex + ("\\Z" if pattern.endswith("#") else ""), number) is not None


def _range_regex(low: str, high: str) -> str:
    """A regex for the equal-width numbers low..high (wide ranges: checked numerically afterwards is not
    possible inside one regex, so only the E.164 form 10..0-99..9 is accepted here)."""
    if low == "1" + "0" * (len(low) - 1) and high == "9" * len(high):
        return "[1-9][0-9]{%d}" % (len(low) - 1)
    raise ValueError("range [%s-%s] is not a whole-width range" % (low, high))
