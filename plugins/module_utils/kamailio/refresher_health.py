# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SRV refresher's run history (issue 21 item 14): a refresher failing for days must not look healthy.

Each run records, in the ``health`` part of its state file (``<config_dir>/peers/.commsgw-srv-state.json``,
readable by Kamailio's group): when it ran, its last good run (nothing failed or was refused), how many runs
in a row failed, the last error and the age after which it counts as stale. The refresher's exit status
turns stale into a failed unit; the probe's SBC view (and a later exporter) read the same record.
Standard library only: shipped to the SBC host with the refresher.
"""

from __future__ import annotations

import typing as t

STATE_NAME = ".commsgw-srv-state.json"
DEFAULT_MAX_AGE_S = 3600.0


def note_run(state: dict[str, t.Any], outcome: t.Any, now: float, max_age_s: float) -> dict[str, t.Any]:
    """Record this run in ``state["health"]``: when it ran, the last good run (nothing failed or refused), how
    many runs in a row failed and the age after which the refresher counts as stale (read by the probe)."""
    health = state.setdefault("health", {})
    good = not (outcome.failed or outcome.refused or outcome.errors or outcome.unsafe)
    health.update(last_run=now, max_age_s=max_age_s)
    health.setdefault("first_run", now)
    if good:
        health.update(last_success=now, consecutive_failures=0, last_error="")
    else:
        health["consecutive_failures"] = int(health.get("consecutive_failures") or 0) + 1
        health["last_error"] = (outcome.errors[-1] if outcome.errors else "")[:500]
    return health


def stale(health: t.Mapping[str, t.Any], now: float) -> t.Optional[str]:
    """Why the refresher is stale (its last good run, or its first run when none was good, is older than its
    ``max_age_s`` and the last run failed), or None."""
    if not health or not health.get("consecutive_failures"):
        return None
    since = health.get("last_success") or health.get("first_run")
    max_age = float(health.get("max_age_s") or DEFAULT_MAX_AGE_S)
    if since is None or now - float(since) <= max_age:
        return None
    return "no good run for %d s (limit %d s), %d failed run(s) in a row; last error: %s" % (
        now - float(since), max_age, int(health["consecutive_failures"]), health.get("last_error") or "none")
