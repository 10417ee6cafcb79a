# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Change records of onboard.yml and migrate.yml: one JSON document per run (docs/change-records.md).

The record is written while the run goes: ``opened`` creates it, ``sbc_started`` marks an SBC in progress,
``sbc_finished`` condenses the neutral change steps the platform's role noted for it (``commsgw_sbc_change_steps``,
``push_step``) into artefacts with sha256 before/after, the service action and the SBC's main PID before/after,
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


# The record's service actions, weakest first, and the neutral step's words for them (docs/change-records.md).
_STRENGTH = {"none": 0, "reload": 1, "apply": 2, "start": 3, "restart": 4}
_RECORDED = {"none": "none", "reloaded": "reload", "applied": "apply", "started": "start", "restarted": "restart"}


def push_step(step: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """One neutral change step of a platform's role (``{kind, changed, artefacts: [{name, before_sha256,
    after_sha256}], service: {action, detail, pid_before, pid_after}, backup}``) as the record's step."""
    if not isinstance(step.get("artefacts"), list) or not isinstance(step.get("service"), dict):
        raise ChangeRecordError("steps: %r is not a change step {kind, changed, artefacts, service, backup}" % (step,))
    service = step.get("service") or {}
    action = service.get("action") or "none"
    if action not in _RECORDED:
        raise ChangeRecordError("steps: service action %r is not one of %s" % (action, ", ".join(_RECORDED)))
    files = [{"name": a["name"], "sha256_before": a.get("before_sha256"), "sha256_after": a.get("after_sha256")}
             for a in step.get("artefacts") or []]
    return {"kind": step.get("kind") or "push", "files": files, "service_action": _RECORDED[action],
            "reloaded": list(service.get("detail") or []), "pid_before": service.get("pid_before"),
            "pid_after": service.get("pid_after"), "backup": step.get("backup") or ""}


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
