# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Change records of onboard.yml and migrate.yml: one JSON document per run (docs/change-records.md).

The record is written while the run goes: ``opened`` creates it, ``sbc_started`` marks an SBC in progress,
``sbc_finished`` condenses what the kamailio role registered for it (kamailio_config and kamailio_service
results) into files with sha256 before/after, the service action and the Kamailio PID before/after,
``closed`` adds the probe verdicts and the end. A run that dies half-way leaves ``result: incomplete`` and
the SBC it was on ``in progress``. Pure functions on dicts; the caller reads and writes the file.
"""

from __future__ import annotations

import datetime
import os
import re
import typing as t
import uuid

SCHEMA_VERSION = 1
STATES = ("opened", "sbc_started", "sbc_finished", "sbc_probed", "closed")
_RUN_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")

Record = t.Dict[str, t.Any]


class ChangeRecordError(ValueError):
    """Bad input: the message names the option and what is expected."""


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _seconds(start: str, end: str) -> float:
    def parse(value: str) -> datetime.datetime:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return round((parse(end) - parse(start)).total_seconds(), 3)


def new_run_id(started: str) -> str:
    return "%s-%s" % (re.sub(r"[^0-9T]", "", started.split(".")[0]), uuid.uuid4().hex[:8])


def record_path(directory: str, run_id: str) -> str:
    if not _RUN_ID.match(run_id or ""):
        raise ChangeRecordError("run_id %r is not a file name: expected letters, digits, '.', '_' or '-' "
                                "(up to 128), as returned by state=opened" % (run_id,))
    return os.path.join(directory, "%s.json" % run_id)


def new_record(run_id: str, playbook: str, started: str, ansible_version: str, collection_version: str,
               check_mode: bool) -> Record:
    return {"schema_version": SCHEMA_VERSION, "run_id": run_id, "playbook": playbook, "started": started,
            "finished": None, "duration_s": None, "result": "incomplete", "check_mode": check_mode,
            "ansible_core_version": ansible_version, "collection_version": collection_version, "sbcs": {}}


def sbc_started(record: Record, host: str, when: str) -> Record:
    record["sbcs"][host] = {"status": "in progress", "started": when, "finished": None, "duration_s": None,
                            "message": "", "files": [], "service_action": "none", "pid_before": None,
                            "pid_after": None, "steps": [], "probe": {"verdict": None, "gates": []}}
    return record


_STRENGTH = {"none": 0, "reload": 1, "start": 2, "restart": 3}


def _ran(result: t.Any) -> bool:
    return isinstance(result, dict) and bool(result) and not result.get("skipped")


def push_step(step: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """One push (or rollback) from the role: ``push`` is the kamailio_config result, ``services`` the
    kamailio_service results that followed it (skipped ones ignored)."""
    push = step.get("push") or {}
    hashes = push.get("sha256") or {}
    files = [{"name": name, "sha256_before": (hashes.get(name) or {}).get("before"),
              "sha256_after": (hashes.get(name) or {}).get("after")} for name in push.get("changed_files") or []]
    services = [s for s in step.get("services") or [] if _ran(s)]
    action, reloaded = "none", []
    for service in services:
        if service.get("reloaded"):
            reloaded += list(service["reloaded"])
        if service.get("changed") or service.get("failed"):
            action = max(action, service.get("action") or "none", key=lambda a: _STRENGTH.get(a, 0))
    pids = [(s.get("pid_before"), s.get("pid")) for s in services if "pid" in s]
    return {"kind": step.get("kind") or "push", "files": files, "service_action": action, "reloaded": reloaded,
            "pid_before": pids[0][0] if pids else None, "pid_after": pids[-1][1] if pids else None,
            "backup": push.get("backup") or ""}


def _net_files(steps: t.Sequence[t.Mapping[str, t.Any]]) -> list[dict[str, t.Any]]:
    """Each file once: its hash before the first step that changed it, after the last one."""
    net: dict[str, dict[str, t.Any]] = {}
    for step in steps:
        for entry in step["files"]:
            net.setdefault(entry["name"], {"name": entry["name"], "sha256_before": entry["sha256_before"]})
            net[entry["name"]]["sha256_after"] = entry["sha256_after"]
    return [net[name] for name in sorted(net)]


def sbc_finished(record: Record, host: str, when: str, steps: t.Sequence[t.Mapping[str, t.Any]],
                 failed: bool = False, message: str = "",
                 gates: t.Sequence[t.Mapping[str, t.Any]] = ()) -> Record:
    entry = record["sbcs"].get(host) or sbc_started(record, host, when)["sbcs"][host]
    condensed = [push_step(step) for step in steps]
    pids = [s for s in condensed if s["pid_after"] is not None]
    entry.update({
        "status": "failed" if failed else "ok", "finished": when, "duration_s": _seconds(entry["started"], when),
        "message": message, "steps": condensed, "files": _net_files(condensed),
        "service_action": max((s["service_action"] for s in condensed), key=_STRENGTH.__getitem__, default="none"),
        "pid_before": pids[0]["pid_before"] if pids else None, "pid_after": pids[-1]["pid_after"] if pids else None,
    })
    entry["probe"]["gates"] = [{"step": g.get("step"), "verdict": g.get("verdict")} for g in gates]
    if gates:
        entry["probe"]["verdict"] = gates[-1].get("verdict")
    return record


def closed_verdicts(record: Record, verdicts: t.Mapping[str, t.Optional[str]]) -> Record:
    """The live probe's verdict per SBC (onboard.yml's final probe)."""
    for host, verdict in verdicts.items():
        if host in record["sbcs"] and verdict:
            record["sbcs"][host]["probe"]["verdict"] = verdict
    return record


def closed(record: Record, when: str, verdicts: t.Mapping[str, t.Optional[str]]) -> Record:
    closed_verdicts(record, verdicts)
    statuses = [entry["status"] for entry in record["sbcs"].values()]
    record["result"] = ("failed" if "failed" in statuses else "incomplete" if "in progress" in statuses else "ok")
    if any(entry["probe"]["verdict"] == "fail" for entry in record["sbcs"].values()):
        record["result"] = "failed"
    record["finished"] = when
    record["duration_s"] = _seconds(record["started"], when)
    return record


def apply(record: t.Optional[Record], params: t.Mapping[str, t.Any], context: t.Mapping[str, t.Any]) -> Record:
    """The record after one call of the change_record module/action (``params``: its options; ``context``:
    ``now``, ``ansible_version``, ``collection_version``, ``check_mode``)."""
    state, when = params["state"], context["now"]
    if state == "opened":
        if record is not None:
            raise ChangeRecordError("run_id %r already has a change record; omit run_id to start a new run"
                                    % params["run_id"])
        return new_record(params["run_id"], params.get("playbook") or "", when, context["ansible_version"],
                          context["collection_version"], bool(context["check_mode"]))
    if record is None:
        raise ChangeRecordError("no change record for run_id %r in dir %r: open it first with state=opened"
                                % (params["run_id"], params["dir"]))
    if state.startswith("sbc_") and not params.get("host"):
        raise ChangeRecordError("host is required with state=%s: the inventory name of the SBC" % state)
    if state == "sbc_started":
        return sbc_started(record, params["host"], when)
    if state == "sbc_finished":
        return sbc_finished(record, params["host"], when, params.get("steps") or [], bool(params.get("failed")),
                            params.get("error") or "", params.get("gates") or [])
    if state == "sbc_probed":
        return closed_verdicts(record, {params["host"]: params.get("verdict")})
    return closed(record, when, params.get("verdicts") or {})


def update_file(path: str, change: t.Callable[[t.Optional[Record]], Record],
                write: t.Callable[[str, str], None]) -> Record:
    """Read ``path`` (None when missing), apply ``change``, write it back through ``write`` (an atomic
    writer); under an exclusive lock, since the SBCs of one run may finish at the same time (forks)."""
    import fcntl  # pylint: disable=import-outside-toplevel  # POSIX only, like the rest of the collection
    import json  # pylint: disable=import-outside-toplevel

    lock_path = os.path.join(os.path.dirname(path), ".%s.lock" % os.path.basename(path))
    with open(lock_path, "a", encoding="utf-8") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            with open(path, encoding="utf-8") as handle:
                current: t.Optional[Record] = json.load(handle)
        except FileNotFoundError:
            current = None
        record = change(current)
        write(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record
