# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Field checks shared by the common ``commsgw_sbc`` settings and each platform's own section."""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings


def is_int(value: t.Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def abs_path(raw: t.Any, path: str, default: t.Optional[str], findings: Findings) -> t.Optional[str]:
    """An absolute path without whitespace or quotes (paths land inside quoted config strings)."""
    if raw is None:
        return default
    unsafe = isinstance(raw, str) and any(ch.isspace() or ch == '"' or ord(ch) < 32 or ord(ch) == 127 for ch in raw)
    if not isinstance(raw, str) or not raw.startswith("/") or unsafe:
        findings.error(path, "is not an absolute path", "an absolute path without spaces or quotes", raw)
        return default
    return raw.rstrip("/") or "/"


def int_fields(raw: t.Mapping[str, t.Any], base: str, ranges: t.Mapping[str, tuple[int, int]],
               settings: dict[str, t.Any], findings: Findings) -> None:
    """Set each integer field of ``ranges`` present in ``raw`` into ``settings`` when in range."""
    for key, (low, high) in ranges.items():
        value = raw.get(key)
        if value is None:
            continue
        if not is_int(value) or not low <= value <= high:
            findings.error("%s.%s" % (base, key), "is out of range", "an integer %d..%d" % (low, high), value)
            continue
        settings[key] = int(value)


def bool_field(raw: t.Mapping[str, t.Any], key: str, base: str, default: bool, findings: Findings) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        findings.error("%s.%s" % (base, key), "is not a boolean", "true or false", value)
        return default
    return value
