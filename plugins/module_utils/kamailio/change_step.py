# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One push (or rollback) of the kamailio role as the contract's neutral change step (``sbc.change_record``).

The role registers the ``kamailio_config`` result of the push (or restore) and the ``kamailio_service`` results
that followed it; this condenses them: the files with their sha256 before and after, the strongest service
action (a restart over a start over a reload), the jsonrpc reloads in ``detail`` and Kamailio's main PID
before the first and after the last service action.
"""

from __future__ import annotations

import typing as t

# kamailio_service's states -> the neutral service actions, weakest first.
_ACTIONS = {"none": "none", "reload": "reloaded", "start": "started", "restart": "restarted"}
_STRENGTH = ("none", "reloaded", "started", "restarted")


def _ran(result: t.Any) -> bool:
    return isinstance(result, dict) and bool(result) and not result.get("skipped")


def change_step(kind: str, push: t.Optional[t.Mapping[str, t.Any]],
                services: t.Sequence[t.Any]) -> dict[str, t.Any]:
    """The neutral step of ``push`` (kamailio_config's result) and ``services`` (kamailio_service's results, skipped
    ones ignored)."""
    push = push or {}
    hashes = push.get("sha256") or {}
    artefacts = [{"name": name, "before_sha256": (hashes.get(name) or {}).get("before"),
                  "after_sha256": (hashes.get(name) or {}).get("after")} for name in push.get("changed_files") or []]
    ran = [s for s in services if _ran(s)]
    action, reloaded = "none", []
    for service in ran:
        reloaded += list(service.get("reloaded") or [])
        if service.get("changed") or service.get("failed"):
            action = max(action, _ACTIONS.get(service.get("action") or "none", "none"), key=_STRENGTH.index)
    pids = [(s.get("pid_before"), s.get("pid")) for s in ran if "pid" in s]
    return {"kind": kind, "changed": bool(artefacts) or action != "none", "artefacts": artefacts,
            "service": {"action": action, "detail": reloaded, "pid_before": pids[0][0] if pids else None,
                        "pid_after": pids[-1][1] if pids else None},
            "backup": push.get("backup") or ""}
