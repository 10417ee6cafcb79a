# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks a Mediant CLI script against the documented grammar (``grammar_tables``) and parses it.

``validate_script(text)`` lists every problem as (line number, reason); ``parse_script(text)`` gives
the operations (enter a row, set a parameter, commit, delete) or raises ``ScriptError`` naming the
first bad line, which is what the stand-in device answers with 400. ``check_value`` is the one value
check the renderer (hostile input refused before emitting) and the validator share. ``format_value``
writes a value the way the grammar expects it (strings quoted, numbers and keywords bare).

Standard library only.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import patterns
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.grammar_tables import (
    BY_KEY, CONFIGURE, TABLES, Param, Table)

QUOTED_KINDS = frozenset({"name", "fqdn", "ip_pattern", "dial", "prefix", "codes", "action", "host_port"})
_NAME = re.compile(r"^[A-Za-z0-9_.-]+\Z")
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\Z")
_PREFIX = re.compile(r"^(?:\+[0-9]{0,15}|[0-9]{1,15})\Z")
_ACTION = re.compile(r"^reply\(response='[1-6][0-9][0-9]'\)\Z")
_INT = re.compile(r"^-?[0-9]{1,10}\Z")
_INDEX = re.compile(r"^[0-9]{1,5}\Z")
_QUOTED = re.compile(r'^"([^"\\\x00-\x1f\x7f]*)"\Z')
# A space, quote, backslash, control or non-ASCII character: never inside a value we emit.
_UNSAFE = re.compile(r"[^\x21-\x7e]|[\"'\\]")
_BARE = re.compile(r"^[A-Za-z0-9_.:+*/-]+\Z")


class ScriptError(ValueError):
    """A script line outside the grammar: ``line`` (1-based) and ``reason``."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__("line %d: %s" % (line, reason))
        self.line = line
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Op:
    line: int
    action: str                      # enter, set, commit, delete
    table: str
    index: tuple[int, ...]
    param: str = ""
    value: t.Any = None


def value_problem(param: Param, value: t.Any) -> t.Optional[str]:
    """Why ``value`` is not a valid value of ``param`` (None when it is). Values are Python values:
    int for int kinds, str otherwise (enum: the CLI keyword)."""
    kind = param.kind
    if kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            return "%s needs an integer, got %r" % (param.cli, value)
        if not param.low <= value <= param.high:
            return "%s %d is outside %d..%d" % (param.cli, value, param.low, param.high)
        return None
    if not isinstance(value, str):
        return "%s needs a string, got %r" % (param.cli, value)
    if value == "" and param.may_be_empty:
        return None  # "none" for a reference the operator's row had unset before we set it
    if kind != "action" and _UNSAFE.search(value):
        return "%s %r holds a space, quote, backslash, control or non-ASCII character" % (param.cli, value)
    if param.max_len and kind not in ("codes",) and len(value) > param.max_len:
        return "%s %r is longer than %d characters" % (param.cli, value, param.max_len)
    checks: dict[str, t.Callable[[str], bool]] = {
        "name": lambda v: bool(_NAME.match(v)),
        "fqdn": _is_fqdn,
        "ipv4": _is_ipv4,
        "host_port": _is_host_port,
        "ip_pattern": patterns.is_ip_pattern,
        "dial": patterns.is_dial_pattern,
        "prefix": lambda v: bool(_PREFIX.match(v)),
        "enum": lambda v: v in dict(param.enum),
        "codes": lambda v: _is_codes(v, param.max_len),
        "action": lambda v: bool(_ACTION.match(v)),
    }
    if not checks[kind](value):
        keywords = ", ".join(keyword for keyword, _number in param.enum)
        expected = "one of " + keywords if kind == "enum" else "a %s value" % kind
        return "%s %r is not %s" % (param.cli, value, expected)
    return None


def _is_fqdn(value: str) -> bool:
    labels = value.split(".")
    return len(value) <= 253 and len(labels) >= 2 and all(_LABEL.match(label) for label in labels)


def _is_ipv4(value: str) -> bool:
    try:
        return str(ipaddress.IPv4Address(value)) == value
    except ValueError:
        return False


def _is_host_port(value: str) -> bool:
    address, _sep, port = value.rpartition(":")
    if not (port.isdigit() and 1 <= int(port) <= 65535 and str(int(port)) == port):
        return False
    return _is_ipv4(address) or (_is_fqdn(address) and not address.replace(".", "").isdigit())


def _is_codes(value: str, most: int) -> bool:
    codes = value.split(",")
    return 0 < len(codes) <= most and all(c.isdigit() and len(c) == 3 and 100 <= int(c) <= 699 and c != "200"
                                          for c in codes) and len(set(codes)) == len(codes)


def format_value(param: Param, value: t.Any) -> str:
    """The CLI text of a checked value."""
    return '"%s"' % value if param.kind in QUOTED_KINDS else str(value)


def format_index(index: t.Sequence[int]) -> str:
    return "/".join(str(i) for i in index)


def _table_in_mode(mode: str, words: t.Sequence[str]) -> t.Optional[tuple[Table, list[str]]]:
    """The table whose row command starts ``words`` in ``mode``, and the words after the command."""
    for table in TABLES:
        command = table.command.split()
        if table.mode == mode and list(words[:len(command)]) == command:
            return table, list(words[len(command):])
    return None


def _parse_index(table: Table, text: str, parent: t.Optional[tuple[int, ...]], line: int) -> tuple[int, ...]:
    parts = text.split("/")
    if not all(_INDEX.match(p) for p in parts):
        raise ScriptError(line, "%s index %r is not a row number" % (table.command, text))
    numbers = tuple(int(p) for p in parts)
    if parent is not None:  # child typed inside its parent's row: one number, the parent's index first
        if len(numbers) != 1:
            raise ScriptError(line, "%s takes one row number inside its parent row" % table.command)
        return parent + numbers
    if len(numbers) != table.index_arity:
        raise ScriptError(line, "%s index %r needs %d part(s)" % (table.command, text, table.index_arity))
    return numbers


def _parse_value(param: Param, text: str, line: int) -> t.Any:
    if param.kind in QUOTED_KINDS:
        match = _QUOTED.match(text)
        if not match:
            raise ScriptError(line, "%s needs a double-quoted value, got %s" % (param.cli, text))
        value: t.Any = match.group(1)
    elif param.kind == "int":
        if not _INT.match(text):
            raise ScriptError(line, "%s needs an integer, got %s" % (param.cli, text))
        value = int(text)
    else:
        if not _BARE.match(text):
            raise ScriptError(line, "%s value %s is not a bare keyword" % (param.cli, text))
        value = text
    problem = value_problem(param, value)
    if problem:
        raise ScriptError(line, problem)
    return value


def parse_script(text: str) -> list[Op]:
    """The operations of a script, or ScriptError at the first line outside the grammar."""
    ops, error = parse_prefix(text)
    if error is not None:
        raise error
    return ops


def parse_prefix(text: str) -> tuple[list[Op], t.Optional[ScriptError]]:
    """The operations of the lines before the first bad one, and the error of that line (None when
    the whole script is in the grammar): what a device applying line by line has done when it stops."""
    ops: list[Op] = []
    try:
        _parse(text, ops)
    except ScriptError as exc:
        return ops, exc
    return ops, None


def _parse(text: str, ops: list[Op]) -> None:
    stack: list[tuple[str, t.Optional[Table], t.Optional[tuple[int, ...]]]] = [("root", None, None)]
    for number, raw in enumerate(text.split("\n"), start=1):
        if "\r" in raw or "\t" in raw:
            raise ScriptError(number, "carriage return or tab in the line")
        line = raw.strip(" ")
        if not line:
            continue
        mode, table, index = stack[-1]
        words = line.split(" ")
        if "" in words:
            raise ScriptError(number, "more than one space between words")
        if line == "exit":
            if len(stack) == 1:
                raise ScriptError(number, "exit at the top level")
            if table is not None and index is not None:
                ops.append(Op(number, "commit", table.key, index))
            stack.pop()
            continue
        if mode == "root":
            if line not in CONFIGURE:
                raise ScriptError(number, "unknown command at the top level: %s" % line)
            stack.append((CONFIGURE[line], None, None))
            continue
        if line == "activate" and table is not None and index is not None:
            ops.append(Op(number, "commit", table.key, index))
            continue
        row_mode = table.key if table is not None else mode
        delete = words[0] == "no"
        found = _table_in_mode(row_mode, words[1:] if delete else words)
        if found is not None:
            child, rest = found
            if len(rest) != 1:
                raise ScriptError(number, "%s needs exactly one row index" % child.command)
            row_index = _parse_index(child, rest[0], index if table is not None else None, number)
            if delete:
                ops.append(Op(number, "delete", child.key, row_index))
            else:
                ops.append(Op(number, "enter", child.key, row_index))
                stack.append((child.key, child, row_index))
            continue
        if table is None or index is None:
            raise ScriptError(number, "unknown command in configure %s: %s" % (mode, line))
        param = table.param(words[0])
        if param is None:
            raise ScriptError(number, "%s has no parameter %s" % (table.command, words[0]))
        if len(words) != 2:
            raise ScriptError(number, "%s takes exactly one value" % param.cli)
        ops.append(Op(number, "set", table.key, index, param.cli, _parse_value(param, words[1], number)))
    if len(stack) != 1:
        raise ScriptError(len(text.split("\n")), "script ends inside configure %s (missing exit)" % stack[-1][0])


def validate_script(text: str) -> list[tuple[int, str]]:
    """Every problem of a script as (line, reason); empty when the whole script is in the grammar.

    Lines are checked one by one (a bad line is reported and skipped, so one run lists all of them)."""
    problems: list[tuple[int, str]] = []
    lines = text.split("\n")
    skip: set[int] = set()
    while True:
        masked = "\n".join("" if i + 1 in skip else line for i, line in enumerate(lines))
        try:
            parse_script(masked)
            return problems
        except ScriptError as exc:
            problems.append((exc.line, exc.reason))
            if exc.line in skip or len(problems) > len(lines):
                return problems
            skip.add(exc.line)


def table(key: str) -> Table:
    return BY_KEY[key]
