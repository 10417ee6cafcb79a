# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The work of ``commsgw.routing.audiocodes_config`` (the Mediant role's entry points), on the controller:

``present``   apply the rendered artefacts (``push.apply``: one read, the change script, a verifying read; a refused
              or unverified change is rolled back at once); the device's previous ini is kept as a backup first
``restored``  bring the device back to a backup (``push.restore``), the migration's rollback
``held``      take the device's hold for a migration (``backups.hold``): other runs do not push meanwhile
``released``  give the hold back
``settled``   wait (bounded) until the device holds the required peers and none of the absent ones, then observe
              ``min_observe_s``: the device's keep-alive runs; its result is not readable (``hooks.NO_STATUS``)

Each returns ``(failed, values)``; ``values['step']`` is the contract's neutral change step where one was made.
"""

from __future__ import annotations

import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import api, artefacts, backups, hooks, push
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.platform import AUDIOCODES
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.options import PlatformOptionsError, validate_options
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import sha256_text

STATES = ("present", "restored", "held", "released", "settled")
SETTLE_POLL_S = 1.0
ARGUMENT_SPEC: dict[str, t.Any] = {
    "state": {"type": "str", "default": "present", "choices": list(STATES)},
    "platform_options": {"type": "dict", "no_log": False},
    "artefacts": {"type": "dict"},
    "plan": {"type": "dict"},
    "hold_token": {"type": "str", "no_log": False},
    "backup": {"type": "str"},
    "required": {"type": "list", "elements": "str", "default": []},
    "absent": {"type": "list", "elements": "str", "default": []},
    "min_observe_s": {"type": "float", "default": 1.0},
    "timeout_s": {"type": "float", "default": 60.0},
}


def _step(kind: str, changed: bool, before: t.Optional[str], after: t.Optional[str], detail: list[str],
          backup: str) -> dict[str, t.Any]:
    return {"kind": kind, "changed": changed,
            "artefacts": [{"name": artefacts.INI, "before_sha256": sha256_text(before),
                           "after_sha256": sha256_text(after)}] if changed else [],
            "service": {"action": "applied" if changed else "none", "detail": detail, "pid_before": None,
                        "pid_after": None},
            "backup": backup}


def _present(params: t.Mapping[str, t.Any], options: dict[str, t.Any], check_mode: bool
             ) -> tuple[bool, dict[str, t.Any]]:
    wanted = artefacts.from_texts(params.get("artefacts") or {})
    if wanted is None or not isinstance(params.get("plan"), dict):
        return True, {"msg": "artefacts must hold %s from the render entry point, and plan the site plan"
                      % artefacts.INI}
    backups.check(options, params.get("hold_token"))
    client = hooks.client(options)
    try:
        result = push.apply(params["plan"], wanted, client, check_mode,
                            before_change=lambda ini: backups.save(options, ini))
        failed = False
    except push.ApplyFailed as exc:
        result, failed = exc.result, True
        result["msg"] = "%s: the change was not applied: %s" % (options["url"], exc)
    before_ini = result.pop("previous_ini", "")
    before = artefacts.deployed_texts(before_ini, hooks.identity(options), wanted.index_base)[artefacts.INI]
    after = artefacts.header(hooks.identity(options), wanted.index_base) + wanted.ini
    changed = bool(result["changed"]) and not failed
    detail = ["PUT /api/v1/files/cliScript/incremental (%d lines)" % len(result["script"].splitlines())] \
        if changed and not check_mode else []
    result["step"] = _step("push", changed, before, after, detail, str(result.get("backup") or ""))
    result["changed"] = bool(result["changed"]) if not failed else result.get("rolled_back") is False
    return failed, result


def _restored(params: t.Mapping[str, t.Any], options: dict[str, t.Any], check_mode: bool
              ) -> tuple[bool, dict[str, t.Any]]:
    path = str(params.get("backup") or "")
    saved = backups.read(options, path)
    result = push.restore(hooks.client(options), saved, int(options["index_base"]), check_mode)
    result["step"] = _step("rollback", bool(result["changed"]), None, None,
                           ["PUT /api/v1/files/cliScript/incremental (restore)"] if result["changed"] else [], path)
    return False, result


def _settled(params: t.Mapping[str, t.Any], options: dict[str, t.Any]) -> tuple[bool, dict[str, t.Any]]:
    """The device holds the required peers and none of the absent ones (its ACG Proxy Sets), then
    ``min_observe_s`` pass; bounded by ``timeout_s``."""
    required, absent = set(params["required"]), set(params["absent"])
    deadline = time.monotonic() + float(params["timeout_s"])
    client = hooks.client(options)
    while True:
        rows = hooks.device_rows(client.get_ini(), int(options["index_base"]))
        held = {"%s:%d" % (p["host"], p["port"]) for p in hooks.configured_peers(rows)}
        missing, left = sorted(required - held), sorted(absent & held)
        if not missing and not left:
            break
        if time.monotonic() >= deadline:
            return True, {"msg": "%s after %.0f s: required peers not configured: %s; dropped peers still "
                                 "configured: %s" % (options["url"], float(params["timeout_s"]),
                                                     ", ".join(missing) or "none", ", ".join(left) or "none"),
                          "missing": missing, "left": left}
        time.sleep(SETTLE_POLL_S)
    observe = max(0.0, min(float(params["min_observe_s"]), deadline - time.monotonic()))
    time.sleep(observe)
    return False, {"held": sorted(held), "observed_s": observe, "peer_states": None,
                   "warnings": ["peer states are not read from the Mediant (%s)" % hooks.NO_STATUS]}


def run(params: t.Mapping[str, t.Any], check_mode: bool) -> tuple[bool, dict[str, t.Any]]:
    try:
        options, _masked = validate_options(AUDIOCODES, params.get("platform_options") or {})
    except PlatformOptionsError as exc:
        return True, {"msg": str(exc)}
    options = AUDIOCODES.with_defaults(options)
    state = params["state"]
    try:
        if state == "present":
            return _present(params, options, check_mode)
        if state == "restored":
            return _restored(params, options, check_mode)
        if state == "held":
            return False, ({"changed": True, "hold_token": ""} if check_mode else
                           {"changed": True, "hold_token": backups.hold(options)})
        if state == "released":
            released = not check_mode and backups.release(options, str(params.get("hold_token") or ""))
            return False, {"changed": released}
        return _settled(params, options)
    except (api.DeviceError, backups.HoldError, OSError, ValueError) as exc:
        return True, {"msg": "%s (%s): %s" % (options.get("url"), state, exc)}
