# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The grammar and reference tables of docs/platforms/audiocodes.md, generated from the data.

docs/platforms/audiocodes.md holds their output between ``<!-- grammar:begin -->`` /
``<!-- grammar:end -->`` and ``<!-- references:begin -->`` / ``<!-- references:end -->``;
tests/unit/audiocodes/test_grammar.py fails when the document and the data disagree (its message
says to paste ``grammar_markdown()`` / ``references_markdown()`` there).
"""

from __future__ import annotations

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.grammar_tables import TABLES, Param
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.references import REFERENCES

_MODE = {"network": "configure network", "voip": "configure voip"}


def _values(param: Param) -> str:
    if param.kind == "int":
        return "%d..%d" % (param.low, param.high)
    if param.kind == "enum":
        return ", ".join("`%s` (%d)" % pair for pair in param.enum)
    extra = " or empty" if param.may_be_empty else ""
    return "%s%s%s" % (param.kind, ", at most %d" % param.max_len if param.max_len else "", extra)


def grammar_markdown() -> str:
    lines = ["| CLI (mode > command) | ini table / column | values the renderer may emit | basis | reference |",
             "|---|---|---|---|---|"]
    for table in TABLES:
        mode = _MODE.get(table.mode) or "%s row" % next(t.command for t in TABLES if t.key == table.mode)
        index = "<i>/<j>" if table.index_arity == 2 else "<i>"
        limit = ", at most %d rows" % table.max_rows if table.max_rows else ""
        lines.append("| %s > `%s %s` | `%s`%s | row%s | %s | %s |" % (
            mode, table.command, index, table.ini,
            " (index columns %s)" % ", ".join("`%s`" % c for c in table.index_columns) if table.index_columns else "",
            limit, table.basis, table.ref))
        for param in table.params:
            cells = (param.cli, param.ini, _values(param), param.basis, param.ref)
            lines.append("| &nbsp;&nbsp;`%s` | `%s` | %s | %s | %s |" % cells)
    return "\n".join(lines) + "\n"


def references_markdown() -> str:
    lines = ["| key | page | what it documents |", "|---|---|---|"]
    for key, (address, title, what) in REFERENCES.items():
        page = "[%s](%s)" % (title, address) if address else "%s (address not recorded by the search index)" % title
        lines.append("| %s | %s | %s |" % (key, page, what))
    return "\n".join(lines) + "\n"
