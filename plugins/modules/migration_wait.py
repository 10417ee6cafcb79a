#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: migration_wait
short_description: Wait until a running SBC sees the given ACG peers active and the dropped ones gone
version_added: 0.1.0
description:
  - Polls the live peer states of the running SBC through its platform (O(platform)) until every peer in O(required) is in the running peer list and C(active)
    (answers its OPTIONS pings; the platform's C(probing), C(inactive) and C(disabled) are not), and no peer of
    O(absent) is still there.
  - A peer an SBC has just loaded may start out active before it was ever pinged, so the check only counts
    once O(min_observe_s) seconds have passed since the call; set it to at least the health window of the plan
    (OPTIONS interval times failure threshold) plus one interval, so an unreachable peer has been marked
    inactive by then.
  - Bounded; fails after O(timeout_s) seconds, naming the peers that are missing, unhealthy or lingering.
  - For a platform reached through an API (C(connection=api)) the action plugin runs this on the controller;
    otherwise the module runs on the SBC host.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.sbc_platform
options:
  required:
    description: C(address:port) of the peers that must be active.
    type: list
    elements: str
    default: []
  absent:
    description: C(address:port) of the peers that must no longer be in the running list.
    type: list
    elements: str
    default: []
  min_observe_s:
    description: Seconds to watch before a healthy reading counts.
    type: float
    default: 6
  timeout_s:
    description: Seconds to wait in total.
    type: float
    default: 60
  poll_s:
    description: Seconds between two readings.
    type: float
    default: 0.5
  slice_s:
    description:
      - Return after at most this many seconds with RV(done=false) and a RV(progress) line instead of waiting the
        whole O(timeout_s); the next call passes RV(started_at) back as O(started_at).
      - The action plugin of this module calls it in slices of 5 s and prints each progress line while the wait
        goes on (what it waits for, elapsed, limit); V(0) waits in one call.
    type: float
    default: 0
  started_at:
    description: When the wait began (seconds since the epoch, the clock of where it runs, RV(started_at) of an earlier slice).
    type: float
attributes:
  action:
    description: Runs on the controller for an API platform, on the SBC host otherwise; waits in slices.
    support: full
  check_mode:
    description: Only reads; in check mode nothing is waited for (the peers of a change not made are not loaded).
    support: full
  diff_mode:
    description: Makes no change.
    support: none
"""

EXAMPLES = r"""
- name: Wait until the new region 2 peers answer their pings
  commsgw.routing.migration_wait:
    platform: "{{ commsgw_sbc_platform | default(omit) }}"
    platform_options: "{{ commsgw_sbc_platform_options }}"
    required: ["20.82.160.37:5061", "20.82.160.38:5061"]
    min_observe_s: 12
    timeout_s: 60
"""

RETURN = r"""
done:
  description: False when a slice (O(slice_s)) ended before the peers were proven and before O(timeout_s).
  returned: always
  type: bool
started_at:
  description: When the wait began (seconds since the epoch, the clock of where it runs).
  returned: always
  type: float
progress:
  description: The progress line of each slice (what it waits for, elapsed, limit, what is still missing).
  returned: always
  type: list
  elements: str
seconds:
  description: Seconds waited.
  returned: always
  type: float
health:
  description: The last reading (C(active), C(missing), C(unhealthy), C(lingering), C(ok), C(peer_count)).
  returned: always
  type: dict
states:
  description: C(address:port) to its neutral state (C(active), C(inactive), C(probing), C(disabled)) at the last reading.
  returned: always
  type: dict
"""

import time

from ansible_collections.commsgw.routing.plugins.module_utils.core.progress import progress_line
from ansible_collections.commsgw.routing.plugins.module_utils.migration import transition as migration
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import PeerStateError
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import (
    PLATFORM_SPEC, PlatformProblem, main as generic_main, platform_and_options)

ARGUMENT_SPEC = dict(
    PLATFORM_SPEC,
    required={"type": "list", "elements": "str", "default": []},
    absent={"type": "list", "elements": "str", "default": []},
    min_observe_s={"type": "float", "default": 6.0},
    timeout_s={"type": "float", "default": 60.0},
    poll_s={"type": "float", "default": 0.5},
    slice_s={"type": "float", "default": 0.0},
    started_at={"type": "float"},
)


def outcome(params, run):
    """(failed, result): one slice of the wait (or all of it); shared with the action plugin."""
    result = {"changed": False, "seconds": 0.0, "health": {}, "states": {}, "done": True, "progress": [],
              "started_at": params["started_at"] or time.time()}
    if run.check_mode:
        return False, dict(result, msg="check mode: nothing loaded, nothing to wait for")
    if params["timeout_s"] < params["min_observe_s"]:
        return True, dict(result, msg="timeout_s must be at least min_observe_s")
    try:
        platform, options = platform_and_options(params, run)
        poll = platform.peer_states(options)
    except (PlatformProblem, OSError) as exc:
        return True, dict(result, msg=str(exc))
    # Wall clock: a wait in slices (the action plugin) spans several module runs.
    started = params["started_at"] or time.time()
    slice_end = time.monotonic() + params["slice_s"] if params["slice_s"] > 0 else None
    result.update(started_at=started, done=False, progress=[])
    last_error = ""
    # Bounded: at most timeout_s / poll_s readings.
    while True:
        elapsed = time.time() - started
        try:
            states = poll()
            health = migration.peer_health(states, params["required"], params["absent"])
            result.update(states=states, health=health)
            last_error = ""
            if health["ok"] and elapsed >= params["min_observe_s"]:
                break
        except (PeerStateError, migration.MigrationError, OSError) as exc:
            last_error = str(exc)
        result["seconds"] = round(elapsed, 2)
        if elapsed >= params["timeout_s"]:
            health = result["health"]
            return True, dict(result, msg="peers not healthy after %.0f s: missing %s, unhealthy %s, still present %s%s" % (
                elapsed, health.get("missing", params["required"]), health.get("unhealthy", []),
                health.get("lingering", []), ("; last error: " + last_error) if last_error else ""))
        if slice_end is not None and time.monotonic() >= slice_end:
            result["progress"].append(progress_line(_what(params), elapsed, params["timeout_s"],
                                                    _still(result["health"], params, last_error)))
            return False, dict(result, msg=result["progress"][-1])
        time.sleep(params["poll_s"])
    result["seconds"] = round(time.time() - started, 2)
    result["done"] = True
    return False, dict(result, msg="%d peer(s) active after %.1f s" % (len(params["required"]), result["seconds"]))


def main():
    generic_main(ARGUMENT_SPEC, outcome)


def _what(params):
    what = "%d new peer(s) active" % len(params["required"])
    if params["absent"]:
        what += " and %d dropped peer(s) gone" % len(params["absent"])
    return what + " (watched at least %.0f s)" % params["min_observe_s"]


def _still(health, params, last_error):
    if last_error:
        return "last error: %s" % last_error
    parts = ["%s %s" % (key, ", ".join(health[key])) for key in ("missing", "unhealthy", "lingering") if health.get(key)]
    return "; ".join(parts) or "all seen, observing"


if __name__ == "__main__":
    main()
