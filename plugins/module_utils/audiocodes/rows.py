# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Table rows in CLI terms, and the incremental CLI script that turns one set of rows into another.

A configuration here is ``{table key: {index: {CLI parameter: value}}}`` (``Rows``): the renderer
builds the wanted one, the read-back gets the device's from its ini file (``ini.rows_from_ini``), and
``change_script(current, wanted, owned)`` writes the script that moves the device from one to the
other: changed and new rows in dependency order (a row is written after every row it names), then
the rows to remove in reverse order. The same function writes the rollback (wanted = the saved rows).
Only rows that ``owned`` says are ours are touched; partly-owned rows (an operator's SIP Interface)
only get the parameters we render.

Standard library only.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.grammar import (
    format_index, format_value, table, value_problem)
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.grammar_tables import TABLES

Index = t.Tuple[int, ...]
Row = t.Dict[str, t.Any]
Rows = t.Dict[str, t.Dict[Index, Row]]
# Write order: a row comes after the rows it names (IP Group -> Proxy Set, routing -> IP Group ...).
ORDER = ("dns", "message_policy", "proxy_set", "proxy_ip", "alt_set", "alt_rule", "ip_group", "classification",
         "inbound_manipulation", "ip2ip", "sip_interface")
# Tables whose rows we only partly own (the operator's rows; we set some parameters, never delete).
PARTIAL = frozenset({"sip_interface"})
# Row names of our rows start with this; a read-back takes only such rows (and their children).
PREFIX = "CGW-"
NAME_PARAMS = {"message_policy": "name", "proxy_set": "proxy-name", "alt_set": "name", "ip_group": "name",
               "classification": "classification-name", "inbound_manipulation": "manipulation-name",
               "ip2ip": "route-name"}
PARENTS = {"proxy_ip": "proxy_set", "alt_rule": "alt_set"}
# The table whose changed rows are removed and written again rather than changed in place (change_script).
REPLACED = "dns"


class RenderError(ValueError):
    """A plan or settings value the Mediant cannot take: ``field`` names it, the message says why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__("%s: %s" % (field, problem))
        self.field = field


def checked(table_key: str, values: t.Mapping[str, t.Any], fields: t.Mapping[str, str]) -> Row:
    """``values`` as a row of ``table_key``, each value checked against the grammar; a bad one is a
    RenderError naming its source field (``fields[param]``, the plan or settings path)."""
    spec = table(table_key)
    row: Row = {}
    for param_name, value in values.items():
        param = spec.param(param_name)
        if param is None:
            raise AssertionError("%s has no parameter %s in the grammar" % (table_key, param_name))
        problem = value_problem(param, value)
        if problem:
            raise RenderError(fields.get(param_name, "%s.%s" % (table_key, param_name)), problem)
        row[param_name] = value
    return row


def owned_rows(rows: Rows, index_base: int) -> Rows:
    """Our rows in a device configuration: named rows from ``index_base`` on whose name starts with
    PREFIX, their child rows, Dns2Ip rows from ``index_base`` on, and every partly-owned row."""
    result: Rows = {key: {} for key in ORDER}
    for key in ORDER:
        for index, row in (rows.get(key) or {}).items():
            if key in PARTIAL:
                result[key][index] = dict(row)
            elif key in PARENTS:
                parent = result[PARENTS[key]] if PARENTS[key] in result else {}
                if index[:1] in parent:
                    result[key][index] = dict(row)
            elif index[0] >= index_base and (key == "dns" or str(row.get(NAME_PARAMS[key], "")).startswith(PREFIX)):
                result[key][index] = dict(row)
    return result


def _row_lines(key: str, index: Index, params: t.Sequence[tuple[str, t.Any]], depth: int) -> list[str]:
    spec = table(key)
    pad = " " * depth
    shown = index[-1:] if key in PARENTS and spec.mode == PARENTS[key] else index
    lines = [pad + "%s %s" % (spec.command, format_index(shown))]
    lines += [pad + " %s %s" % (name, format_value(spec.param(name), value))  # type: ignore[arg-type]
              for name, value in params]
    return lines + [pad + " activate"]


def _removal_lines(key: str, index: Index) -> list[str]:
    """The script lines removing row ``index`` of ``key`` (a child row of a table entered from its parent row is
    removed from there)."""
    spec = table(key)
    if key in PARENTS and spec.mode == PARENTS[key]:
        return [" %s %s" % (table(PARENTS[key]).command, format_index(index[:1])),
                "  no %s %s" % (spec.command, format_index(index[-1:])), " exit"]
    return [" no %s %s" % (spec.command, format_index(index))]


def change_script(current: Rows, wanted: Rows, partial_params: t.Optional[t.Mapping[str, t.Collection[str]]] = None
                  ) -> tuple[str, list[dict[str, t.Any]]]:
    """(incremental CLI script, change steps) moving ``current`` (our rows on the device) to ``wanted``.

    Empty script when nothing differs. ``partial_params``: for partly-owned tables, the parameters we
    manage (others are left as they are)."""
    partial_params = partial_params or {}
    steps: list[dict[str, t.Any]] = []
    blocks: dict[str, list[str]] = {"network": [], "voip": []}
    # Internal DNS rows are unique by name and named by nothing: a row that changes or goes is removed first, so
    # that a name moving to another index (the rows are in name order) never meets itself (the device refuses a
    # second row of one name). Nothing resolves through them meanwhile: the Proxy Sets hold addresses.
    replaced = sorted(i for i, row in (current.get(REPLACED) or {}).items() if (wanted.get(REPLACED) or {}).get(i) != row)
    for index in reversed(replaced):
        steps.append({"action": "remove", "table": table(REPLACED).ini, "index": list(index), "set": None,
                      "was": dict(current[REPLACED][index])})
        blocks["network"] += _removal_lines(REPLACED, index)
    for key in ORDER:
        spec = table(key)
        for index in sorted(wanted.get(key) or {}):
            want = wanted[key][index]
            have = None if key == REPLACED and index in replaced else (current.get(key) or {}).get(index)
            managed = partial_params.get(key)
            if managed is not None:  # a managed parameter the target row lacks is set to "" (none)
                want = dict({n: "" for n in sorted(managed)}, **want)
                if have is not None:
                    have = dict({n: "" for n in sorted(managed)}, **have)
            mode = "network" if spec.mode == "network" else "voip"
            if managed is None and have is not None and set(have) - set(want):
                # A parameter the wanted row no longer has cannot be unset in place (the grammar has no empty value
                # for it): the row is removed and written anew. Only rows nothing names are ours to rewrite so;
                # for a named one the device refuses the removal while it is in use, and the push rolls back.
                steps.append({"action": "remove", "table": spec.ini, "index": list(index), "set": None,
                              "was": dict(have)})
                blocks[mode] += _removal_lines(key, index)
                have = None
            params = [(n, v) for n, v in want.items() if (have is None or have.get(n) != v)
                      and (managed is None or n in managed)]
            if not params and have is not None:
                continue
            steps.append({"action": "add" if have is None else "change", "table": spec.ini, "index": list(index),
                          "set": dict(params),
                          "was": None if have is None else {n: have.get(n) for n, _value in params}})
            if key in PARENTS:  # child rows of a table entered from the parent row (alt rules)
                if table(key).mode == PARENTS[key]:
                    parent = table(PARENTS[key])
                    blocks[mode] += [" %s %s" % (parent.command, format_index(index[:1]))]
                    blocks[mode] += _row_lines(key, index, params, 2) + ["  exit", " exit"]
                    continue
            blocks[mode] += _row_lines(key, index, params, 1) + [" exit"]
    for key in reversed(ORDER):
        if key in PARTIAL or key == REPLACED:
            continue
        spec = table(key)
        for index in sorted(current.get(key) or {}, reverse=True):
            if index in (wanted.get(key) or {}):
                continue
            if key in PARENTS and index[:1] not in (current.get(PARENTS[key]) or {}):
                continue
            if key in PARENTS and index[:1] not in (wanted.get(PARENTS[key]) or {}):
                continue  # removed with its parent
            steps.append({"action": "remove", "table": spec.ini, "index": list(index), "set": None,
                          "was": dict(current[key][index])})
            blocks["network" if spec.mode == "network" else "voip"] += _removal_lines(key, index)
    lines: list[str] = []
    for mode in ("network", "voip"):
        if blocks[mode]:
            lines += ["configure %s" % mode] + blocks[mode] + ["exit"]
    return ("\n".join(lines) + "\n" if lines else ""), steps


def target_of(names: t.Collection[str], hostname: t.Optional[str]) -> t.Optional[str]:
    """The SRV target an address stands for in a record of ``hostname``: its only name, else the one name under
    ``hostname`` (None: ambiguous)."""
    if len(names) == 1:
        return next(iter(names))
    under = [name for name in names if hostname and name.lower().endswith("." + hostname.lower())]
    return under[0] if len(under) == 1 else None


def empty_rows() -> Rows:
    return {spec.key: {} for spec in TABLES}
