# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apply rendered Mediant rows safely over REST, and read the running state back.

``apply(plan, artefacts, client, check_mode)``:

1. read back: ``GET /api/v1/files/ini`` -> our rows (``rows.owned_rows``) and the state in plan terms;
2. diff: the change steps (row level) and the drift (``sbc_readback.compare``, plan terms);
   nothing differs -> done, nothing sent (idempotent: one request);
3. check mode stops here and reports what would change;
4. the ini read in 1 is the saved previous state (returned as ``previous_ini``);
5. ``PUT /api/v1/files/cliScript/incremental`` with the change script (no reset);
6. read back and verify that every wanted row is there as rendered and no other row of ours is;
7. on a refused script (400) or a failed verification: roll back. The device applies a script line by
   line, and whether lines before a bad one stay applied is not documented, so the rollback reads the
   device again and writes the script that moves *that* state back to the saved rows (the same diff
   function, saved rows as the target), then verifies them. A full ini upload is never used: it
   resets the device.

Requests per apply: 1 when nothing changes (or check mode), 3 for a change (read, apply, verify),
5 with a rollback (+ read, rollback, verify: 6). The result says which and counts them.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import ini, readback
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.api import DeviceError, ScriptRejected
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.render import Artefacts
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import (
    PARTIAL, Rows, change_script, owned_rows)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import compare


class ApplyFailed(RuntimeError):
    """The change was refused or did not verify; ``result`` says whether the rollback restored the
    previous rows (``rolled_back``) and carries the device's error."""

    def __init__(self, message: str, result: dict[str, t.Any]) -> None:
        super().__init__(message)
        self.result = result


def _partial_params(rows: Rows) -> dict[str, set[str]]:
    return {key: {p for row in rows[key].values() for p in row} for key in PARTIAL}


def _ours(device: Rows, wanted: Rows, index_base: int) -> Rows:
    """Our rows on the device; of partly-owned tables only the rows we render."""
    current = owned_rows(device, index_base)
    for key in PARTIAL:
        current[key] = {i: r for i, r in current[key].items() if i in wanted.get(key, {})}
    return current


def _mismatches(device: Rows, wanted: Rows, index_base: int,
                managed: t.Optional[t.Mapping[str, t.Collection[str]]] = None) -> list[str]:
    script, steps = change_script(_ours(device, wanted, index_base), wanted,
                                  managed if managed is not None else _partial_params(wanted))
    return ["%s %s %s" % (s["action"], s["table"], "/".join(str(i) for i in s["index"])) for s in steps] if script \
        else []


def read_state(client: t.Any, identity: t.Mapping[str, t.Any], index_base: int) -> dict[str, t.Any]:
    """The running Mediant's state in the plan's vocabulary (one request)."""
    return readback.state_from_rows(owned_rows(ini.rows_from_ini(client.get_ini()), index_base), identity)


def apply(plan: t.Mapping[str, t.Any], artefacts: Artefacts, client: t.Any, check_mode: bool = False,
          before_change: t.Optional[t.Callable[[str], t.Any]] = None) -> dict[str, t.Any]:
    """``before_change(previous_ini)``: called once a change is certain, before the script is sent (the caller
    keeps the previous state, e.g. as a backup a later rollback restores); its return value is ``backup``."""
    wanted, base = artefacts.rows, artefacts.index_base
    start = client.round_trips
    before_ini = client.get_ini()
    device = ini.rows_from_ini(before_ini)
    current = _ours(device, wanted, base)
    script, steps = change_script(current, wanted, _partial_params(wanted))
    before_state = readback.state_from_rows(current, artefacts.identity)
    result: dict[str, t.Any] = {
        "changed": bool(script), "check_mode": check_mode, "steps": steps, "script": script,
        "drift": [d["text"] for d in compare(plan, before_state)],
        "diff": {"before": before_state, "after": readback.state_from_rows(wanted, artefacts.identity)},
        "gaps": list(artefacts.gaps), "warnings": list(client.warnings), "previous_ini": before_ini,
        "rolled_back": False}
    if not script or check_mode:
        result["round_trips"] = client.round_trips - start
        return result
    if before_change is not None:
        result["backup"] = before_change(before_ini)
    try:
        result["output"] = client.put_incremental(script)
        problems = _mismatches(ini.rows_from_ini(client.get_ini()), wanted, base)
        if problems:
            raise _Unverified("the device does not hold the rendered rows after the change: " + ", ".join(problems))
    except (ScriptRejected, _Unverified) as exc:
        result["error"] = str(exc)
        _rollback(client, current, wanted, base, result)
        result["round_trips"] = client.round_trips - start
        raise ApplyFailed("%s; %s" % (exc, "previous rows restored" if result["rolled_back"]
                                      else "ROLLBACK FAILED: " + result.get("rollback_error", "")), result) from exc
    result["round_trips"] = client.round_trips - start
    return result


class _Unverified(RuntimeError):
    pass


def _rollback(client: t.Any, saved: Rows, wanted: Rows, base: int, result: dict[str, t.Any]) -> None:
    """Move the device's rows (as they are now) back to ``saved``; any row of ours that ``saved`` does
    not have is removed, partly-owned rows get their saved parameters back."""
    try:
        now = ini.rows_from_ini(client.get_ini())
        current = _ours(now, saved, base)
        for key in PARTIAL:  # the partial rows we touched: back to the saved values of what we set
            current[key] = {i: r for i, r in owned_rows(now, base)[key].items() if i in wanted.get(key, {})}
        managed = _partial_params(wanted)
        script, _steps = change_script(current, saved, managed)
        result["rollback_script"] = script
        if script:
            client.put_incremental(script)
            left = _mismatches(ini.rows_from_ini(client.get_ini()), saved, base, managed)
            if left:
                raise DeviceError("rows differ from the saved ones after the rollback: " + ", ".join(left))
        result["rolled_back"] = True
    except DeviceError as exc:
        result["rollback_error"] = str(exc)


def restore(client: t.Any, saved_ini: str, index_base: int, check_mode: bool = False) -> dict[str, t.Any]:
    """Bring the device's rows of ours back to those of ``saved_ini`` (a backup ``apply`` kept): rows of ours the
    saved state lacks are removed, the Message Policy of the SIP Interfaces set back; then verified. Requests:
    1 when the device already holds them (or check mode), 3 otherwise."""
    start = client.round_trips
    saved = owned_rows(ini.rows_from_ini(saved_ini), index_base)
    managed = _partial_params(saved)
    now = owned_rows(ini.rows_from_ini(client.get_ini()), index_base)
    for key in PARTIAL:
        now[key] = {i: r for i, r in now[key].items() if i in saved.get(key, {})}
    script, steps = change_script(now, saved, managed)
    result: dict[str, t.Any] = {"changed": bool(script), "script": script, "steps": steps}
    if script and not check_mode:
        result["output"] = client.put_incremental(script)
        left = _mismatches(ini.rows_from_ini(client.get_ini()), saved, index_base, managed)
        if left:
            raise DeviceError("rows differ from the backup after the restore: " + ", ".join(left))
    result["round_trips"] = client.round_trips - start
    return result


def peer_states(client: t.Any) -> dict[str, str]:
    """Live peer states are not available: the 7.4 REST reference read documents no proxy-address
    status (docs/platforms/audiocodes.md, "What the API does not expose")."""
    raise NotImplementedError("the Mediant REST API (7.4 reference) documents no proxy or proxy-address status; "
                              "peer states are not read from the device")
