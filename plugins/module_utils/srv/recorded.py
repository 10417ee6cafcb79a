# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Recorded SRV answers: render and plan from answers resolved earlier, touching no DNS.

Two sources, given as a file or a directory of them (``docs/routing-plan.md``, "Recorded SRV answers"):

* an answers file (JSON or YAML), as ``plan.yml -e commsgw_resolve=true -e commsgw_plan_dir=DIR``
  writes to ``DIR/answers.json``::

      format: commsgw.routing.srv_answers
      version: 1
      recorded_at: "2026-11-30T22:10:00Z"     # UTC or with an offset; an answer may carry its own
      answers:
        _sip._tls.pstn-region1.example.com:
          ttl: 60
          targets:
            - {priority: 10, weight: 50, port: 5061, target: sbc1.example.com, addresses: [203.0.113.1]}

* a routing plan JSON written by that same run (``DIR/<deployment>__<site>.json``): the peers of its
  trunk groups and MCP records, recorded when the file was last modified.

This module only reads and checks the shape of the files; what an answer may contain (RFC 2782, the
deployment's srv_limits, R-07 ranges) is checked by ``srv.answer_checks`` exactly as for live answers.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import json
import os
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import show_value
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import (
    canonical_targets, normalise_fqdn, target_from_dict)

ANSWERS_FORMAT = "commsgw.routing.srv_answers"
ANSWERS_VERSION = 1
ANSWERS_FILE = "answers.json"
DEFAULT_MAX_AGE_S = 86400
# A recording stamped a little in the future is clock skew between two machines; more is a wrong stamp.
FUTURE_TOLERANCE_S = 300
FROM_FILE = "recorded_at"
FROM_MTIME = "file modification time"
_EXTENSIONS = (".json", ".yml", ".yaml")
_TOP_KEYS = {"format", "version", "recorded_at", "answers"}
_ANSWER_KEYS = {"name", "ttl", "targets", "recorded_at"}
_TARGET_KEYS = {"priority", "weight", "port", "target", "addresses"}


class RecordedAnswersError(ValueError):
    """The recorded answers cannot be used; ``problems`` lists each one (file: path: what)."""

    def __init__(self, problems: t.Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


@dataclasses.dataclass(frozen=True)
class Recording:
    """One recorded SRV answer and where it came from."""

    answer: dict[str, t.Any]   # SrvAnswer.as_dict() shape: name, ttl, targets
    source: str                # the file
    where: str                 # its path inside the file
    recorded_at: datetime.datetime
    recorded_at_from: str      # FROM_FILE or FROM_MTIME

    def describe(self, now: datetime.datetime) -> dict[str, t.Any]:
        age = max(0, int((now - self.recorded_at).total_seconds()))
        return {"srv_name": self.answer["name"], "source": self.source, "where": self.where,
                "recorded_at": format_time(self.recorded_at), "recorded_at_from": self.recorded_at_from,
                "age_s": age, "age": format_age(age)}


def format_time(value: datetime.datetime) -> str:
    return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_age(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return "%d d %d h" % (days, hours)
    if hours:
        return "%d h %d min" % (hours, minutes)
    return "%d min %d s" % (minutes, secs) if minutes else "%d s" % secs


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


class _Reader:
    """Collects every problem of every file, each naming the file and the path inside it."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now
        self.problems: list[str] = []
        self.found: dict[str, Recording] = {}

    def bad(self, source: str, where: str, message: str, value: t.Any, expected: str) -> None:
        self.problems.append("%s: %s: %s (got %s; expected %s)" % (source, where, message, show_value(value),
                                                                   expected))

    def time(self, source: str, where: str, value: t.Any) -> t.Optional[datetime.datetime]:
        expected = "an ISO 8601 time with a time zone, e.g. 2026-11-30T22:10:00Z"
        parsed = value
        if isinstance(value, str):
            try:
                parsed = datetime.datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
            except ValueError:
                self.bad(source, where, "is not a time", value, expected)
                return None
        if not isinstance(parsed, datetime.datetime):
            self.bad(source, where, "is not a time", value, expected)
            return None
        if parsed.tzinfo is None:
            self.bad(source, where, "has no time zone", value, expected)
            return None
        if (parsed - self.now).total_seconds() > FUTURE_TOLERANCE_S:
            self.bad(source, where, "lies in the future", value,
                     "the time the answers were resolved, before now (%s)" % format_time(self.now))
            return None
        return parsed

    def targets(self, source: str, where: str, value: t.Any) -> t.Optional[list[dict[str, t.Any]]]:
        if not isinstance(value, list) or not value:
            self.bad(source, where, "is not a list of SRV targets", value,
                     "a non-empty list of {priority, weight, port, target, addresses}")
            return None
        before = len(self.problems)
        for index, target in enumerate(value):
            path = "%s[%d]" % (where, index)
            if not isinstance(target, dict):
                self.bad(source, path, "is not a mapping", target, "{priority, weight, port, target, addresses}")
                continue
            for key in sorted(set(target) ^ _TARGET_KEYS):
                self.bad(source, "%s.%s" % (path, key), "is unknown" if key in target else "is missing",
                         target.get(key), "exactly the keys " + ", ".join(sorted(_TARGET_KEYS)))
            for key in ("priority", "weight", "port"):
                number = target.get(key)
                if key in target and (not isinstance(number, int) or isinstance(number, bool)
                                      or not 0 <= number <= 65535):
                    self.bad(source, "%s.%s" % (path, key), "is not a 16-bit number", number,
                             "an integer from 0 to 65535")
            name = target.get("target")
            if "target" in target and (not isinstance(name, str) or not name):
                self.bad(source, path + ".target", "is not a host name", name, "the target's host name")
            addresses = target.get("addresses")
            if "addresses" not in target:
                continue
            if not isinstance(addresses, list):
                self.bad(source, path + ".addresses", "is not a list", addresses, "a list of IPv4 addresses")
                continue
            for number, address in enumerate(addresses):
                try:
                    ipaddress.IPv4Address(address)
                except (ipaddress.AddressValueError, ValueError, TypeError):
                    self.bad(source, "%s.addresses[%d]" % (path, number), "is not an IPv4 address", address,
                             "an IPv4 address such as 203.0.113.1 (ACG is IPv4 only, R-07)")
        return value if len(self.problems) == before else None

    def ttl(self, source: str, where: str, value: t.Any) -> bool:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 2 ** 31 - 1:
            self.bad(source, where, "is not a TTL", value, "an integer number of seconds from 0 to 2147483647")
            return False
        return True

    def add(self, name: str, answer: dict[str, t.Any], source: str, where: str, recorded_at: datetime.datetime,
            recorded_from: str) -> None:
        new = Recording(answer, source, where, recorded_at, recorded_from)
        old = self.found.get(name)
        if old is None:
            self.found[name] = new
            return
        if _same(old.answer, answer):
            # The same answer seen twice: a recorded time beats a file's modification time, then the later one.
            if (recorded_from == FROM_FILE, recorded_at) > (old.recorded_at_from == FROM_FILE, old.recorded_at):
                self.found[name] = new
            return
        self.problems.append("%s: %s: differs from the answer for %s in %s: %s (one recording per SRV name, or "
                             "files of one run)" % (source, where, name, old.source, old.where))

    def answers_file(self, source: str, data: dict[str, t.Any]) -> None:
        if data.get("version") != ANSWERS_VERSION:
            self.bad(source, "version", "is not a version this collection reads", data.get("version"),
                     str(ANSWERS_VERSION))
            return
        for key in sorted(set(data) - _TOP_KEYS):
            self.bad(source, key, "is unknown", data[key], "only the keys " + ", ".join(sorted(_TOP_KEYS)))
        default = self.time(source, "recorded_at", data["recorded_at"]) if "recorded_at" in data else None
        answers = data.get("answers")
        if not isinstance(answers, dict) or not answers:
            self.bad(source, "answers", "is not a mapping of SRV answers", answers,
                     "SRV name -> {ttl, targets[, recorded_at]}")
            return
        for raw_name, raw in answers.items():
            where = "answers[%s]" % show_value(raw_name).strip("'")
            if not isinstance(raw_name, str) or not raw_name.startswith("_sip._tls."):
                self.bad(source, where, "is not an SRV record name", raw_name, "_sip._tls.<regional FQDN>")
                continue
            if not isinstance(raw, dict):
                self.bad(source, where, "is not a mapping", raw, "{ttl, targets[, recorded_at]}")
                continue
            name = normalise_fqdn(raw_name)
            for key in sorted(set(raw) - _ANSWER_KEYS):
                self.bad(source, "%s.%s" % (where, key), "is unknown", raw[key],
                         "only the keys " + ", ".join(sorted(_ANSWER_KEYS)))
            if "name" in raw and (not isinstance(raw["name"], str) or normalise_fqdn(raw["name"]) != name):
                self.bad(source, where + ".name", "is not the record's own name", raw["name"], name)
            when = self.time(source, where + ".recorded_at", raw["recorded_at"]) if "recorded_at" in raw else default
            if when is None and "recorded_at" not in raw and "recorded_at" not in data:
                self.bad(source, where + ".recorded_at", "is missing (and the file has no recorded_at)", None,
                         "when the answer was resolved, e.g. 2026-11-30T22:10:00Z")
            ttl_ok = self.ttl(source, where + ".ttl", raw.get("ttl"))
            targets = self.targets(source, where + ".targets", raw.get("targets"))
            if when is not None and ttl_ok and targets is not None:
                self.add(name, {"name": name, "ttl": raw["ttl"], "targets": targets}, source, where, when, FROM_FILE)

    def plan_file(self, source: str, data: dict[str, t.Any]) -> None:
        when = datetime.datetime.fromtimestamp(os.stat(source).st_mtime, datetime.timezone.utc)
        groups = data.get("trunk_groups")
        mcp = data.get("mcp")
        records = mcp.get("records") if isinstance(mcp, dict) else None
        if not isinstance(groups, list):
            self.bad(source, "trunk_groups", "is not a list", groups, "the trunk groups of a routing plan")
            return
        entries = [("trunk_groups[%d]" % i, g) for i, g in enumerate(groups)]
        entries += [("mcp.records[%d]" % i, r) for i, r in enumerate(records if isinstance(records, list) else [])]
        for where, entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("srv_name"), str):
                self.bad(source, where, "has no srv_name", entry, "a trunk group or MCP record of a routing plan")
                continue
            if entry.get("peers") is None:  # planned without resolving: nothing recorded for this record
                continue
            ttl_ok = self.ttl(source, where + ".srv_ttl", entry.get("srv_ttl"))
            targets = self.targets(source, where + ".peers", entry.get("peers"))
            if ttl_ok and targets is not None:
                name = normalise_fqdn(entry["srv_name"])
                self.add(name, {"name": name, "ttl": entry["srv_ttl"], "targets": targets}, source, where, when,
                         FROM_MTIME)

    def read(self, source: str) -> None:
        try:
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append("%s: cannot be read: %s" % (source, exc))
            return
        data = _parse(source, text, self.problems)
        if data is _UNPARSED:
            return
        if isinstance(data, dict) and data.get("format") == ANSWERS_FORMAT:
            self.answers_file(source, data)
        elif isinstance(data, dict) and "trunk_groups" in data and "schema_version" in data:
            self.plan_file(source, data)
        else:
            self.bad(source, "format", "is neither an SRV answers file nor a routing plan",
                     data.get("format") if isinstance(data, dict) else data,
                     "format: %s (an answers file) or a plan JSON written by plan.yml" % ANSWERS_FORMAT)


_UNPARSED = object()


def _parse(source: str, text: str, problems: list[str]) -> t.Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        json_error = exc
    if source.endswith(".json"):
        problems.append("%s: is not JSON: %s" % (source, json_error))
        return _UNPARSED
    try:
        import yaml  # the controller has PyYAML (ansible-core needs it)
    except ImportError:
        problems.append("%s: is not JSON (%s), and PyYAML is not installed to read YAML" % (source, json_error))
        return _UNPARSED
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problems.append("%s: is not YAML: %s" % (source, " ".join(str(exc).split())))
        return _UNPARSED


def _same(one: t.Mapping[str, t.Any], other: t.Mapping[str, t.Any]) -> bool:
    def canonical(answer: t.Mapping[str, t.Any]) -> t.Any:
        try:
            return int(answer["ttl"]), canonical_targets(target_from_dict(x) for x in answer["targets"])
        except (KeyError, TypeError, ValueError):
            return answer
    return bool(canonical(one) == canonical(other))


def load_recorded(path: str, now: t.Optional[datetime.datetime] = None) -> dict[str, Recording]:
    """SRV name -> Recording from ``path``: an answers file, a plan JSON, or a directory of them.

    Raises RecordedAnswersError listing every problem, each naming the file and the path inside it."""
    reader = _Reader(now or utc_now())
    if os.path.isdir(path):
        files = sorted(os.path.join(path, name) for name in os.listdir(path) if name.endswith(_EXTENSIONS))
        if not files:
            raise RecordedAnswersError(["%s: is a directory without a .json/.yml file (an answers file or plans "
                                        "written by plan.yml -e commsgw_plan_dir=...)" % path])
    elif os.path.exists(path):
        files = [path]
    else:
        raise RecordedAnswersError(["%s: does not exist (expected an SRV answers file, a plan JSON or a directory "
                                    "of them)" % path])
    for source in files:
        reader.read(source)
    if reader.problems:
        raise RecordedAnswersError(reader.problems)
    if not reader.found:
        raise RecordedAnswersError(["%s: records no SRV answer (plans written without commsgw_resolve=true "
                                    "have no peers)" % path])
    return reader.found


def answers_document(answers: t.Mapping[str, t.Any], recorded_at: str) -> dict[str, t.Any]:
    """The answers file for ``answers`` (srv_audit's ``answers``, combined) resolved at ``recorded_at``."""
    return {"format": ANSWERS_FORMAT, "version": ANSWERS_VERSION, "recorded_at": recorded_at,
            "answers": {name: {"ttl": a["ttl"], "targets": a["targets"]} for name, a in sorted(answers.items())}}
