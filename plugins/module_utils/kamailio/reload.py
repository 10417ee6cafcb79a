# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run-time reloads (``dispatcher.reload``, ``permissions.addressReload``) that wait out ``reload_delta``.

Kamailio's dispatcher and permissions modules refuse a reload closer than ``reload_delta`` (5 s by default)
to the previous one with the RPC fault ``ongoing reload`` (permissions) or ``Ongoing reload`` (dispatcher); the SRV refresher or an earlier push may have
reloaded just before. ``reload`` tries again until ``timeout_s`` and says so in its progress lines, so
every caller (push, rollback) behaves the same instead of each task carrying its own retry loop.
"""

from __future__ import annotations

import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.progress import progress_line

REFUSED_TOO_SOON = "ongoing reload"


class ReloadFailed(Exception):
    """The reload failed for another reason than ``reload_delta``, or it was still refused at the limit."""


def reload(call: t.Callable[[str], t.Any], method: str, timeout_s: float, pause_s: float = 0.5,
           clock: t.Callable[[], float] = time.monotonic, sleep: t.Callable[[float], None] = time.sleep) -> list[str]:
    """Call ``method`` through ``call`` until it is accepted; returns the progress lines (empty when it
    was accepted at once). Raises ReloadFailed naming the method, the elapsed time and the limit."""
    started = clock()
    progress: list[str] = []
    while True:
        try:
            call(method)
            return progress
        except Exception as exc:  # pylint: disable=broad-except  # the caller's RPC error type
            elapsed = clock() - started
            if REFUSED_TOO_SOON not in str(exc).lower():
                raise ReloadFailed("%s failed: %s" % (method, exc)) from exc
            if elapsed + pause_s > timeout_s:
                raise ReloadFailed("%s still refused after %.1f s (limit %.1f s): %s (Kamailio's reload_delta)"
                                   % (method, elapsed, timeout_s, exc)) from exc
            if len(progress) < int(elapsed) + 1:  # about one line a second
                progress.append(progress_line("%s (refused as too soon after the previous reload)" % method,
                                              elapsed, timeout_s))
            sleep(pause_s)
