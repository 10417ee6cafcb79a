# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's dispatcher.list, parsed in one place (the probe's SBC view and migration's read-back use it).

Standard library only (the probe runs on the SBC host).
"""

from __future__ import annotations

import typing as t


def parse_attrs(text: str) -> dict[str, str]:
    """``key=value;key=value`` attributes of a dispatcher row."""
    attrs = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            attrs[key.strip()] = value.strip()
    return attrs


def dispatcher_rows(text: str, error: type[ValueError] = ValueError) -> t.Iterator[dict[str, t.Any]]:
    """``setid destination [flags [priority [attrs]]]`` rows of a dispatcher.list (comments dropped).

    Each row: ``set_id``, ``uri``, ``flags`` and ``priority`` (the fields as written, None when absent)
    and ``attrs`` (a dict). Raises ``error`` (a ValueError) naming the line when a line is not
    ``setid destination ...``; rows are yielded one line at a time, so a caller's own error on an
    earlier row comes first.
    """
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split(None, 4)
        if len(fields) < 2 or not (fields[0].isascii() and fields[0].isdigit()):
            raise error("dispatcher.list line %r is not 'setid destination ...'" % line[:80])
        yield {"set_id": int(fields[0]), "uri": fields[1], "flags": fields[2] if len(fields) > 2 else None,
               "priority": fields[3] if len(fields) > 3 else None,
               "attrs": parse_attrs(fields[4]) if len(fields) > 4 else {}}
