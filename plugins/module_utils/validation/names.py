# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names in a deployment: the safe-name and FQDN checks and how messages call a deployment.

Owns the alphabets that inventory names and host names must keep to (they end up inside generated configs
and file names), ``fqdn_problem`` (RFC 1123) and ``deployment_label``. Plain functions, no rules: the
rule modules (``validation_*``) and other module_utils use them.
"""

from __future__ import annotations

import re
import typing as t
import unicodedata

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import show_value

# Names end up inside generated configs and file names: keep them to a safe alphabet.
# Every pattern ends in \Z, not $: '$' also matches before a trailing newline, which would let a value
# such as "112\n" through into a rendered config.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}\Z")
NAME_EXPECTED = "1-63 letters, digits, '-' or '_', starting with a letter or digit"
HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}\Z")
LABEL_RE = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
FQDN_EXPECTED = "a fully qualified domain name (RFC 1123: dot-separated labels of letters, digits and '-')"


def fqdn_problem(value: str, min_labels: int = 2) -> t.Optional[str]:
    """Why ``value`` is not an RFC 1123 host name of at least ``min_labels`` labels (2: an FQDN),
    or None when it is one."""
    if not value or len(value) > 253:
        return "is empty or longer than 253 characters"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return "contains whitespace or control characters"
    foreign = next(((pos, ch) for pos, ch in enumerate(value) if ord(ch) > 127), None)
    if foreign is not None:
        # A look-alike letter (Cyrillic 'а' for 'a') prints like the real one: show code points, never the letter.
        pos, ch = foreign
        label = next(label for label in value.split(".") if ch in label)
        return ("has an invalid label %s: the non-ASCII character U+%04X (%s) at position %d (host names are ASCII "
                "letters, digits and '-'; a look-alike letter?)"
                % (show_value(label), ord(ch), unicodedata.name(ch, "unnamed"), pos))
    # One trailing dot (an absolute name) is fine; 'a.b..' is an empty label, not a root.
    labels = (value[:-1] if value.endswith(".") else value).split(".")
    if len(labels) < min_labels:
        return "is not fully qualified (needs at least two labels)"
    bad = [label for label in labels if not LABEL_RE.match(label)]
    if bad:
        return "has an invalid label %r" % bad[0]
    if labels[-1].isdigit():
        return "has an all-numeric top-level label"
    return None


def deployment_label(name: t.Any, host: t.Optional[str] = None) -> str:
    """How messages call a deployment: its name, or (missing or unsafe) what it is and who sees it."""
    if isinstance(name, str) and NAME_RE.match(name):
        return name
    what = "without a name" if name is None else "with the invalid name %s" % show_value(name)
    return "(%s%s)" % (what, ", as host %s sees it" % host if host else "")
