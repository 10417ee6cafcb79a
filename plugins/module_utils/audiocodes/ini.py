# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device's ini file (``GET /api/v1/files/ini``) <-> rows in CLI terms.

The documented ini syntax (references.py "ini-format"): ``[ Table ]``, a ``FORMAT Table_Index = col,
...;`` line, rows ``Table <n> = value, ...;``, the end marker ``[ \\Table ]``; ``;`` starts a comment;
names are case-insensitive; string values are quoted. ``parse_ini`` reads every table (and the
``Name = value`` parameters of the plain sections); ``rows_from_ini`` keeps the tables and columns the
grammar knows, converting ini values (enum numbers) to CLI values; ``ini_from_rows`` writes rows as
ini tables (the equivalent of a rendered script, and the stand-in device's download). Columns the
grammar does not know are kept by the parser and ignored by the conversion, so a real device's ini,
which has many more columns, reads the same.

Standard library only.
"""

from __future__ import annotations

import dataclasses
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.grammar import value_problem
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.grammar_tables import BY_INI, TABLES
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import Rows, empty_rows

_SECTION = re.compile(r"^\[\s*(\\?)\s*\\?\s*([A-Za-z0-9_ ]+?)\s*\]\s*$")
_FORMAT = re.compile(r"^FORMAT\s+([A-Za-z0-9]+)_Index\s*=\s*(.*?);?\s*$", re.IGNORECASE)
_ROW = re.compile(r"^([A-Za-z0-9]+)\s+([0-9]+)\s*=\s*(.*?);?\s*$")
_PARAM = re.compile(r"^([A-Za-z0-9_]+)\s*=\s*(.*?)\s*$")


class IniError(ValueError):
    """An ini file that does not read as the documented syntax: the line number and why."""


@dataclasses.dataclass
class IniTable:
    name: str
    columns: list[str]
    rows: dict[int, list[str]]


def _split_values(text: str, line: int) -> list[str]:
    values: list[str] = []
    current, quoted = "", False
    for char in text:
        if char == '"':
            quoted = not quoted
            current += char
        elif char == "," and not quoted:
            values.append(current.strip())
            current = ""
        else:
            current += char
    if quoted:
        raise IniError("line %d: unterminated quoted value" % line)
    values.append(current.strip())
    return values


def parse_ini(text: str) -> tuple[dict[str, IniTable], dict[str, str]]:
    """(tables by lower-case name, plain parameters by upper-case name) of an ini file."""
    tables: dict[str, IniTable] = {}
    params: dict[str, str] = {}
    current: t.Optional[IniTable] = None
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        section = _SECTION.match(line)
        if section:
            closing, name = bool(section.group(1)) or "\\" in line, section.group(2).strip()
            if closing:
                current = None
            elif name.lower().endswith(" params") or " " in name:
                current = None
            else:
                current = tables.setdefault(name.lower(), IniTable(name, [], {}))
            continue
        if current is not None:
            fmt = _FORMAT.match(line)
            if fmt:
                current.columns = [c.strip() for c in fmt.group(2).split(",")]
                continue
            row = _ROW.match(line)
            if not row or row.group(1).lower() != current.name.lower():
                raise IniError("line %d: not a row of table %s: %s" % (number, current.name, line))
            values = _split_values(row.group(3), number)
            if len(values) != len(current.columns):
                raise IniError("line %d: %d values for %d columns of %s" % (number, len(values),
                                                                            len(current.columns), current.name))
            current.rows[int(row.group(2))] = values
            continue
        param = _PARAM.match(line)
        if param:
            params[param.group(1).upper()] = param.group(2)
    return tables, params


def _from_ini(kind: str, enum: t.Sequence[tuple[str, int]], text: str) -> t.Any:
    """A CLI value from an ini value; None when the column is empty (parameter not set)."""
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        text = text[1:-1]
    elif text.startswith("'") and text.endswith("'") and len(text) >= 2:
        text = text[1:-1]
    if text == "":
        return None
    if kind == "int":
        return int(text)
    if kind == "enum":
        number = int(text)
        return next((k for k, v in enum if v == number), "unknown-%d" % number)
    return text


def rows_from_ini(text: str) -> Rows:
    """The rows of every table the grammar knows, in CLI terms, keyed by table key and index."""
    tables, _params = parse_ini(text)
    rows = empty_rows()
    for name, found in tables.items():
        spec = BY_INI.get(name)
        if spec is None:
            continue
        position = {column.lower(): i for i, column in enumerate(found.columns)}
        for number, values in found.rows.items():
            if spec.index_columns:
                try:
                    index = tuple(int(values[position[c.lower()]].strip('"')) for c in spec.index_columns)
                except (KeyError, ValueError) as exc:
                    raise IniError("table %s row %d: index columns %s unreadable" % (found.name, number,
                                                                                     spec.index_columns)) from exc
            else:
                index = (number,)
            row = {}
            for param in spec.params:
                column = position.get(param.ini.lower())
                if column is None:
                    continue
                value = _from_ini(param.kind, param.enum, values[column])
                if value is not None:
                    row[param.cli] = value
            rows[spec.key][index] = row
    return rows


def _to_ini(kind: str, enum: t.Sequence[tuple[str, int]], value: t.Any) -> str:
    if value is None:
        return ""
    if kind == "int":
        return str(value)
    if kind == "enum":
        return str(dict(enum)[value])
    return '"%s"' % value


def ini_from_rows(rows: Rows) -> str:
    """Rows as ini tables (every grammar column of a table, in grammar order; empty when unset)."""
    out: list[str] = []
    for spec in TABLES:
        found = rows.get(spec.key) or {}
        if not found:
            continue
        columns = list(spec.index_columns) + [p.ini for p in spec.params]
        out += ["[ %s ]" % spec.ini, "", "FORMAT %s_Index = %s;" % (spec.ini, ", ".join(columns))]
        for number, index in enumerate(sorted(found)):
            row = found[index]
            for name, value in row.items():
                param = spec.param(name)
                if param is None or value_problem(param, value):
                    raise IniError("%s %s: %s=%r is outside the grammar" % (spec.ini, index, name, value))
            values = [str(i) for i in index] if spec.index_columns else []
            values += [_to_ini(p.kind, p.enum, row.get(p.cli)) for p in spec.params]
            out.append("%s %d = %s;" % (spec.ini, number if spec.index_columns else index[0], ", ".join(values)))
        out += ["", "[ \\%s ]" % spec.ini, ""]
    return "\n".join(out) + ("\n" if out else "")
