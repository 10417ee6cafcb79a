# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The exporter's own health at ``/metrics``: scrapes, probe runs, OPTIONS sent, HTTP answers and the
standard ``process_*`` figures (read from /proc/self, as Prometheus' client libraries do)."""

from __future__ import annotations

import collections
import os
import resource
import threading
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.exporter.metrics import COUNTER, GAUGE, Exposition

FAMILIES: dict[str, tuple[str, str]] = {
    "commsgw_exporter_scrapes_total": (COUNTER, "Scrapes of /probe per site and outcome: fresh (a new probe run), "
                                                "coalesced (joined a run in flight), cached (within "
                                                "min_interval_s of the last run), timeout."),
    "commsgw_exporter_probe_runs_total": (COUNTER, "Probe runs started per site."),
    "commsgw_exporter_probe_errors_total": (COUNTER, "Probe runs that ended in an error instead of a report."),
    "commsgw_exporter_options_sent_total": (COUNTER, "OPTIONS transactions sent to ACG peers per site (one per "
                                                     "SIP peer reached in a run; an upper bound)."),
    "commsgw_exporter_last_run_timestamp_seconds": (GAUGE, "Start of the last finished probe run per site."),
    "commsgw_exporter_probes_in_flight": (GAUGE, "Probe runs going on now."),
    "commsgw_exporter_http_requests_total": (COUNTER, "HTTP requests answered per handler and status code."),
    "commsgw_exporter_rejected_connections_total": (COUNTER, "Connections closed unanswered because "
                                                             "max_connections were being served."),
    "process_cpu_seconds_total": (COUNTER, "User and system CPU time spent in seconds."),
    "process_resident_memory_bytes": (GAUGE, "Resident memory size in bytes."),
    "process_virtual_memory_bytes": (GAUGE, "Virtual memory size in bytes."),
    "process_start_time_seconds": (GAUGE, "Start time of the process since the Unix epoch in seconds."),
    "process_open_fds": (GAUGE, "Number of open file descriptors."),
    "process_max_fds": (GAUGE, "Maximum number of open file descriptors."),
}
HANDLERS = ("/", "/metrics", "/probe", "other")
STARTED_AT = time.time()


class HttpStats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: collections.Counter[tuple[str, int]] = collections.Counter()
        self.rejected = 0

    def count(self, path: str, code: int) -> None:
        with self.lock:
            self.requests[(path if path in HANDLERS else "other", code)] += 1

    def reject(self) -> None:
        with self.lock:
            self.rejected += 1


def _process(out: Exposition) -> None:
    """process_* from /proc/self (Linux); a figure that cannot be read is left out."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        page = os.sysconf("SC_PAGE_SIZE")
        out.add("process_cpu_seconds_total", (int(fields[11]) + int(fields[12])) / ticks)
        out.add("process_virtual_memory_bytes", int(fields[20]))
        out.add("process_resident_memory_bytes", int(fields[21]) * page)
    except (OSError, ValueError, IndexError):
        pass
    # Not from /proc/stat's btime: the unit's ProcSubset=pid hides it. The module loads at start.
    out.add("process_start_time_seconds", STARTED_AT)
    try:
        out.add("process_open_fds", len(os.listdir("/proc/self/fd")))
        out.add("process_max_fds", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    except (OSError, ValueError):
        pass


def exporter_metrics(runner: t.Any, http: HttpStats) -> str:
    out = Exposition(FAMILIES)
    with runner.lock:
        stats = runner.stats
        for (site, outcome), value in sorted(stats.scrapes.items()):
            out.add("commsgw_exporter_scrapes_total", value, site=site, outcome=outcome)
        for site in runner.config.sites:
            out.add("commsgw_exporter_probe_runs_total", stats.runs[site], site=site)
            out.add("commsgw_exporter_probe_errors_total", stats.errors[site], site=site)
            out.add("commsgw_exporter_options_sent_total", stats.options[site], site=site)
            if site in stats.last_run_at:
                out.add("commsgw_exporter_last_run_timestamp_seconds", stats.last_run_at[site], site=site)
        out.add("commsgw_exporter_probes_in_flight", len(runner.in_flight))
    with http.lock:
        for (handler, code), value in sorted(http.requests.items()):
            out.add("commsgw_exporter_http_requests_total", value, handler=handler, code=str(code))
        out.add("commsgw_exporter_rejected_connections_total", http.rejected)
    _process(out)
    return out.render()
