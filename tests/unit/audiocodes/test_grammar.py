# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The documented Mediant grammar: the validator refuses everything outside it (line and reason), the
docs' grammar and reference tables are the data's, and the match notations are exact."""

from __future__ import annotations

import ipaddress
import random
import re

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import docs_tables, grammar, patterns
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.grammar_tables import TABLES
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.references import REFERENCES
from ansible_collections.commsgw.routing.tests.unit.inventory_files import REPO

DOC = REPO / "docs" / "platforms" / "audiocodes.md"
GOOD = """configure voip
 proxy-set 100
  proxy-name "CGW-ACG-1-local-r1"
  proxy-keep-alive-time 5
  proxy-enable-keep-alive using-options
  activate
 exit
 proxy-ip 100/0
  proxy-address "20.61.48.17:5061"
  priority 10
  weight 60
  activate
 exit
 sbc routing alt-route-reasons-set 100
  alt-route-reasons-rules 0
   rel-cause-code 503-service-unavail
   activate
  exit
 exit
 no proxy-ip 100/3
exit
"""


def _block(name: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- %s:begin -->\n(.*?)<!-- %s:end -->" % (name, name), text, re.S)
    assert match, "docs/platforms/audiocodes.md has no %s block" % name
    return match.group(1)


def test_docs_grammar_table_is_the_grammar_data() -> None:
    assert _block("grammar") == docs_tables.grammar_markdown(), (
        "docs/platforms/audiocodes.md grammar table is stale; print docs_tables.grammar_markdown()")


def test_docs_reference_table_is_the_reference_data() -> None:
    assert _block("references") == docs_tables.references_markdown()


def test_every_grammar_entry_has_a_known_reference() -> None:
    for table in TABLES:
        assert table.ref in REFERENCES and table.basis in ("documented", "derived")
        for param in table.params:
            assert param.ref in REFERENCES and param.basis in ("documented", "derived"), param


def test_the_good_script_parses() -> None:
    assert grammar.validate_script(GOOD) == []
    ops = grammar.parse_script(GOOD)
    assert ("delete", "proxy_ip", (100, 3)) in [(o.action, o.table, o.index) for o in ops]
    assert ("set", "alt_rule", (100, 0)) in [(o.action, o.table, o.index) for o in ops]


@pytest.mark.parametrize("old,new,line,reason", [
    ("  proxy-keep-alive-time 5", "  proxy-keep-alive-time 4", 4, "outside 5..2000000"),
    ("  proxy-keep-alive-time 5", "  proxy-keep-alive-time five", 4, "needs an integer"),
    ("  priority 10", "  priority 65536", 10, "outside 0..65535"),
    ("  proxy-name \"CGW-ACG-1-local-r1\"", "  proxy-name CGW-ACG-1-local-r1", 3, "double-quoted"),
    ("  proxy-name \"CGW-ACG-1-local-r1\"", "  proxy-name \"CGW ACG\"", 3, "exactly one value"),
    ("  proxy-name \"CGW-ACG-1-local-r1\"", "  proxy-name \"CGW-'x\"", 3, "quote"),
    ("  proxy-enable-keep-alive using-options", "  proxy-enable-keep-alive using-register", 5, "one of"),
    ("  weight 60", "  debug-level 7", 11, "has no parameter debug-level"),
    (" proxy-ip 100/0", " proxy-ip 100", 8, "needs 2 part"),
    (" no proxy-ip 100/3", " copy cli-script from http://x", 20, "unknown command"),
    ("   rel-cause-code 503-service-unavail", "   rel-cause-code 486-busy", 16, "one of"),
    ("  proxy-address \"20.61.48.17:5061\"", "  proxy-address \"20.61.48.17:5061\nexit\"", 9, "double-quoted"),
    ("configure voip", "configure system", 1, "unknown command at the top level"),
])
def test_lines_outside_the_grammar_are_named_with_the_reason(old: str, new: str, line: int, reason: str) -> None:
    script = GOOD.replace(old, new, 1)
    problems = grammar.validate_script(script)
    assert problems and problems[0][0] == line and reason in problems[0][1], problems


def test_a_missing_exit_and_tabs_are_refused() -> None:
    assert grammar.validate_script(GOOD.rsplit("exit", 1)[0])[-1][1].startswith("script ends inside")
    assert "tab" in grammar.validate_script(GOOD.replace("  priority 10", "\tpriority 10"))[0][1]


def test_every_bad_line_is_listed_in_one_run() -> None:
    script = GOOD.replace("  priority 10", "  priority -1").replace("  weight 60", "  weight 70000")
    assert [p[0] for p in grammar.validate_script(script)] == [10, 11]


def test_network_patterns_cover_exactly_their_network() -> None:
    rng = random.Random(23)
    for _draw in range(2000):
        network = ipaddress.IPv4Network((rng.randrange(2 ** 32), rng.randrange(1, 33)), strict=False)
        found = patterns.network_patterns(str(network))
        assert patterns.patterns_networks(found) == [str(network)]
        assert all(patterns.is_ip_pattern(p) for p in found)
    assert patterns.network_patterns("20.61.48.16/28") == [
        "20.61.48.16", "20.61.48.17", "20.61.48.18", "20.61.48.19", "20.61.48.2x", "20.61.48.30", "20.61.48.31"]


def test_octet_patterns_are_exact_for_every_range() -> None:
    for low in range(0, 256, 7):
        for high in range(low, 256, 5):
            values: set[int] = set()
            for pattern in patterns._octet_patterns(low, high):  # pylint: disable=protected-access
                first, last = patterns._octet_range(pattern)  # pylint: disable=protected-access
                values |= set(range(first, last + 1))
            assert values == set(range(low, high + 1)), (low, high)


def test_e164_prefixes_match_exactly_e164() -> None:
    prefixes = patterns.e164_prefixes()
    for number in ("+12", "+441234567890", "+999999999999999"):
        assert sum(patterns.dial_matches(p, number) for p in prefixes) == 1, number
    for number in ("+1", "+0123", "+1234567890123456", "12345", "+12a", "+"):
        assert not any(patterns.dial_matches(p, number) for p in prefixes), number
