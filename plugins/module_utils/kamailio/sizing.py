# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's memory sized from the plan and the SBC's settings instead of fixed defaults (issue 25).

Shared memory (``-m``, and ``shm_mem_size`` in kamailio.cfg) holds what every process shares: the
modules' tables, one OpenSSL context per process and TLS profile, the TLS connections and, above all,
tm's transactions. The configuration keeps no dialog state (no dialog module): a call costs memory only
while its transactions live, i.e. from its INVITE until tm's wait timer (5 s) after its final reply, and
again for its BYE. So the figure grows with the rate of calls, not with how many are up at once.
Private memory (``-M``, per process) holds one message being handled and the script's variables; it
does not grow with peers or calls. The figures and how they were measured: docs/kamailio-sizing.md.
"""

from __future__ import annotations

import math
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import DEFAULT_MEMORY_MANAGER

# Expected busiest call rate of one SBC when commsgw_sbc.expected_calls_per_s is not set (calls per second
# set up through it, both directions together).
DEFAULT_EXPECTED_CALLS_PER_S = 500
# Measured on Kamailio 6.0.1 with bench/kamailio_bench.py (core.shmmem, docs/kamailio-sizing.md): the
# rendered configuration just started (tables, timers, modules) and per process with TLS (OpenSSL contexts of
# the two TLS profiles); each call/s sustained (INVITE and BYE transactions alive until tm's wait timer).
SHM_BASE_MB = 8.0
SHM_TLS_PER_PROCESS_MB = 0.5
SHM_PER_CALL_PER_S_MB = 0.2
# TLS connections to and from ACG peers (OpenSSL's buffers): an allowance for this many, not the plan's
# count of peers, so that kamailio.cfg stays the same when a migration or the SRV refresher changes the peers
# (those are reloads, never a restart: R-23).
TLS_CONNECTIONS = 64
SHM_PER_TLS_CONNECTION_MB = 0.25
# Twice the sum: bursts above the expected rate, retransmissions, and the allocator's fragmentation.
SHM_HEADROOM = 2.0
SHM_STEP_MB = 32  # the figure is rounded up to a multiple of this
SHM_MIN_MB = 64
# Kamailio's own default per process; measured use stays far below it (docs/kamailio-sizing.md).
PKG_MB = 8
# Processes besides the SIP workers: main, timers, TCP main, ctl, jsonrpcs, dispatcher's pinger, htable's timer.
EXTRA_PROCESSES = 10


def kamailio_processes(udp_workers: int, udp_sockets: int, tcp_workers: int) -> int:
    """How many processes Kamailio runs: ``children`` per UDP socket, ``tcp_children``, and its own."""
    return udp_workers * udp_sockets + tcp_workers + EXTRA_PROCESSES


def shared_memory_mb(tls: bool, processes: int, calls_per_s: int) -> int:
    """Shared memory in MB for ``processes`` Kamailio processes taking ``calls_per_s``, with or without TLS."""
    need = (SHM_BASE_MB + (SHM_TLS_PER_PROCESS_MB * processes + SHM_PER_TLS_CONNECTION_MB * TLS_CONNECTIONS
                           if tls else 0.0)
            + SHM_PER_CALL_PER_S_MB * calls_per_s)
    return max(SHM_MIN_MB, int(math.ceil(need * SHM_HEADROOM / SHM_STEP_MB)) * SHM_STEP_MB)


def memory_view(tls: bool, processes: int, settings: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The view's ``memory``: the sizes Kamailio is started with (commsgw_sbc's own when set, else sized
    here) and the inputs of the rule, which kamailio.cfg names in a comment."""
    calls_per_s = int(settings.get("expected_calls_per_s") or DEFAULT_EXPECTED_CALLS_PER_S)
    sized = shared_memory_mb(tls, processes, calls_per_s)
    return {
        "shared_mb": int(settings.get("shared_memory_mb") or sized),
        "private_mb": int(settings.get("private_memory_mb") or PKG_MB),
        "manager": str(settings.get("memory_manager") or DEFAULT_MEMORY_MANAGER),
        "sized_shared_mb": sized,
        "rule": "%s, %d processes, expected calls/s %d" % ("TLS" if tls else "plain SIP", processes, calls_per_s),
    }
