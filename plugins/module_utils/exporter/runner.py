# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe runs for scrapes: one run per site and module at a time, at most one per ``min_interval_s``, and a
scrape that never waits past its deadline.

* Coalescing: a scrape of a site and module whose run is in flight waits for that run (no second one).
* Rate cap: a scrape within ``min_interval_s`` of the last run's start gets that run's result, so ACG sees
  at most one probe (one OPTIONS per peer, at most 16 peers per SRV record) per site, module and interval,
  however often and however many Prometheus servers scrape.
* Deadline: the scrape waits at most its budget; a run still going is reported as timed out and goes on
  in its thread (later scrapes get its result). Nothing a client sends can start more than that.
* History: a bounded timeline per site (the status page's last hour) and the last report of each.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.config import (
    ExporterConfig, Module, Site, probe_arguments)
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.metrics import site_verdict
from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import (
    MALFORMED_REPLY, NO_REPLY, NON_2XX, TLS_CLIENT_REJECTED, WRONG_TRANSACTION)

# A SIP peer with one of these outcomes was sent its OPTIONS (TLS 1.3 reports a refused client
# certificate after the request may have gone out, so it counts too: the figure is an upper bound).
OPTIONS_SENT = frozenset((NO_REPLY, MALFORMED_REPLY, WRONG_TRANSACTION, NON_2XX, TLS_CLIENT_REJECTED))
MAX_HISTORY = 4096   # entries per site, whatever history_s / min_interval_s says

Key = t.Tuple[str, str]


def options_sent(report: t.Mapping[str, t.Any]) -> int:
    """OPTIONS transactions the run started (one per SIP peer it reached; MCP never gets one)."""
    return sum(1 for group in report.get("regions") or () for peer in group["peers"]
               if peer["kind"] == "sip" and (peer["healthy"] or peer.get("failure") in OPTIONS_SENT))


@dataclasses.dataclass
class Run:
    """One probe run; ``report`` or ``error`` once finished."""

    site: str
    module: str
    started_at: float                 # Unix time
    started: float                    # monotonic
    finished: t.Optional[float] = None
    report: t.Optional[dict[str, t.Any]] = None
    error: t.Optional[str] = None
    options_sent: int = 0
    done: threading.Event = dataclasses.field(default_factory=threading.Event, repr=False)

    @property
    def duration_s(self) -> t.Optional[float]:
        return None if self.finished is None else self.finished - self.started


@dataclasses.dataclass(frozen=True)
class Scrape:
    """What one scrape got: a finished run (``fresh``, ``coalesced``, ``cached``) or ``timeout``."""

    outcome: str
    run: Run
    waited_s: float


class Stats:
    """The exporter's own counters (``/metrics``); guarded by the runner's lock."""

    def __init__(self) -> None:
        self.scrapes: collections.Counter[tuple[str, str]] = collections.Counter()  # (site, outcome)
        self.runs: collections.Counter[str] = collections.Counter()
        self.options: collections.Counter[str] = collections.Counter()
        self.errors: collections.Counter[str] = collections.Counter()
        self.last_run_at: dict[str, float] = {}


class ProbeRunner:
    def __init__(self, config: ExporterConfig, probe_fn: t.Callable[..., dict[str, t.Any]] = probe.run_probe,
                 clock: t.Callable[[], float] = time.monotonic, wall: t.Callable[[], float] = time.time) -> None:
        self.config = config
        self.probe_fn = probe_fn
        self.clock, self.wall = clock, wall
        self.lock = threading.Lock()
        self.in_flight: dict[Key, Run] = {}
        self.last: dict[Key, Run] = {}
        self.latest: dict[str, Run] = {}  # per site, any module: the status page's table
        size = min(MAX_HISTORY, int(config.history_s / max(config.min_interval_s, 1.0)) + 2)
        self.history: dict[str, collections.deque[dict[str, t.Any]]] = {
            name: collections.deque(maxlen=size) for name in config.sites}
        self.stats = Stats()

    # -- scrapes ------------------------------------------------------------------------------------
    def scrape(self, site: str, module: str, budget_s: float) -> Scrape:
        """The result for one scrape of ``site`` with ``module`` within ``budget_s`` (both already validated)."""
        start = self.clock()
        key = (site, module)
        with self.lock:
            run = self.in_flight.get(key)
            outcome = "coalesced"
            if run is None:
                last = self.last.get(key)
                if last is not None and start - last.started < self.config.min_interval_s:
                    self.stats.scrapes[(site, "cached")] += 1
                    return Scrape("cached", last, 0.0)
                run = self._start(self.config.sites[site], self.config.modules[module], budget_s)
                outcome = "fresh"
        finished = run.done.wait(timeout=max(0.0, budget_s - (self.clock() - start)))
        outcome = outcome if finished else "timeout"
        with self.lock:
            self.stats.scrapes[(site, outcome)] += 1
        return Scrape(outcome, run, self.clock() - start)

    def _start(self, site: Site, module: Module, budget_s: float) -> Run:
        """A new run in its own thread (called with the lock held)."""
        run = Run(site=site.name, module=module.name, started_at=self.wall(), started=self.clock())
        self.in_flight[(site.name, module.name)] = run
        self.stats.runs[site.name] += 1
        thread = threading.Thread(target=self._execute, args=(run, site, module, budget_s),
                                  name="probe-%s-%s" % (site.name, module.name), daemon=True)
        thread.start()
        return run

    def _execute(self, run: Run, site: Site, module: Module, budget_s: float) -> None:
        try:
            run.report = self.probe_fn(**probe_arguments(site, module, budget_s))
            run.options_sent = options_sent(run.report) if site.vantage != "management" else 0
        except Exception as exc:  # noqa: BLE001 - a failed run is a probe failure, never a dead exporter
            run.error = "%s: %s" % (type(exc).__name__, exc)
        run.finished = self.clock()
        with self.lock:
            self.in_flight.pop((site.name, module.name), None)
            self.last[(site.name, module.name)] = run
            self.latest[site.name] = run
            self.stats.options[site.name] += run.options_sent
            self.stats.last_run_at[site.name] = run.started_at
            if run.error:
                self.stats.errors[site.name] += 1
            self.history[site.name].append(self._entry(run, site))
        run.done.set()

    @staticmethod
    def _entry(run: Run, site: Site) -> dict[str, t.Any]:
        """A compact history entry: the timeline shows verdicts, the table the latest full report."""
        report = run.report or {}
        return {"t": run.started_at, "module": run.module, "duration_s": round(run.duration_s or 0.0, 3),
                "verdict": site_verdict(report, site.vantage) if run.report else "fail", "error": run.error,
                "regions": [{"region": g["region"], "role": g.get("role"), "verdict": g["verdict"],
                             "healthy": g["healthy"], "total": g["total"]} for g in report.get("regions") or ()]}

    # -- reading ------------------------------------------------------------------------------------
    def timeline(self, site: str) -> list[dict[str, t.Any]]:
        """The site's history entries of the last ``history_s``, oldest first."""
        since = self.wall() - self.config.history_s
        with self.lock:
            return [dict(e) for e in self.history[site] if e["t"] >= since]

    def snapshot(self) -> dict[str, t.Optional[Run]]:
        with self.lock:
            return {name: self.latest.get(name) for name in self.config.sites}

    def in_flight_count(self) -> int:
        with self.lock:
            return len(self.in_flight)

    # -- background ---------------------------------------------------------------------------------
    def background(self, stop: threading.Event) -> None:
        """Probe every site with the default module every ``background_interval_s`` (0: never) until ``stop``."""
        interval = self.config.background_interval_s
        while interval > 0 and not stop.is_set():
            for site in self.config.sites:
                self.scrape(site, self.config.default_module, self.config.default_scrape_timeout_s)
            stop.wait(interval)
