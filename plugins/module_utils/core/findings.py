# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings: one problem (error) or piece of advice (warning) about an inventory field."""

from __future__ import annotations

import dataclasses
import re
import typing as t

ERROR = "error"
WARNING = "warning"


@dataclasses.dataclass(frozen=True)
class Finding:
    """A single validation result, always tied to the inventory field it is about."""

    severity: str
    path: str
    message: str
    expected: str
    value: t.Any = None
    rule: str = ""

    def render(self) -> str:
        """One readable line: where, what, what we got and what we expected."""
        rule = " [%s]" % self.rule if self.rule else ""
        return "%s: %s (got %s; expected %s)%s" % (
            self.path, self.message, show_value(self.value), self.expected, rule)

    def as_dict(self) -> dict[str, t.Any]:
        return dataclasses.asdict(self)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def show_value(value: t.Any) -> str:
    # A non-ASCII letter (a Cyrillic look-alike) is shown by its code point, never printed as is.
    text = _NON_ASCII.sub(lambda m: "<U+%04X>" % ord(m.group()), repr(value))
    return text if len(text) <= 80 else text[:77] + "..."


class Findings:
    """Collects every finding of a run so that all problems are reported at once."""

    def __init__(self) -> None:
        self.items: list[Finding] = []

    def error(self, path: str, message: str, expected: str, value: t.Any = None, rule: str = "") -> None:
        self.items.append(Finding(ERROR, path, message, expected, value, rule))

    def warn(self, path: str, message: str, expected: str, value: t.Any = None, rule: str = "") -> None:
        self.items.append(Finding(WARNING, path, message, expected, value, rule))

    def extend(self, other: t.Iterable[Finding]) -> None:
        self.items.extend(other)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.items if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.items if f.severity == WARNING]

    def __bool__(self) -> bool:
        return bool(self.items)


def problems_result(summary: str, lines: list[str]) -> dict[str, t.Any]:
    """A failed task result listing ``lines`` once, in ``problems``; ``msg`` only summarises them."""
    return {"changed": False, "msg": "%s, listed once below in problems" % summary,
            "problems": "".join(line + "\n" for line in lines)}


def failing_result(subject: str, errors: list[str], warnings: list[str],
                   fail_on_warnings: bool, warn: bool = False) -> t.Optional[dict[str, t.Any]]:
    """The failed task result of a check whose findings are rendered lines, or None when it passes.

    Each problem shows once, as a line of ``problems``: Ansible prints ``msg`` twice (as the task error
    and in the result) and every other key once, so ``msg`` only counts them (``subject`` + count)
    and nothing else repeats them (a block of lines stays readable where a list would be re-wrapped).
    """
    failing = errors + (warnings if fail_on_warnings else [])
    if not failing:
        return None
    what = "%d problem(s)" % len(failing) + (" (warnings fail the run)" if fail_on_warnings else "")
    result = problems_result("%s %s" % (subject, what), failing)
    if warnings and not fail_on_warnings:
        result["advice"] = "".join(line + "\n" for line in warnings)
        if warn:  # also shown as Ansible warnings, although the task failed
            result["warnings"] = warnings
    return result
