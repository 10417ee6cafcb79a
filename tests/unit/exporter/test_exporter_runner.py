# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe runs for scrapes (exporter/runner.py) and the probe arguments a scrape gets (exporter/config.py):
coalescing, the rate cap, the deadline, failures, the bounded history, the configuration's checks."""

from __future__ import annotations

import threading
import time
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.exporter import config as cfg
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.runner import ProbeRunner
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.server import probe_metrics
from ansible_collections.commsgw.routing.tests.unit.exporter.exporter_fakes import (
    PLAN, CountingProbe, config_dict, exporter_config)


class Clock:
    """A monotonic clock the test moves; the runner's rate cap reads it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def scrape_in_threads(runner: ProbeRunner, count: int, budget: float = 5.0) -> list[str]:
    outcomes: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        outcome = runner.scrape("s", "default", budget).outcome
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=one) for _thread in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcomes


def test_concurrent_scrapes_of_one_target_share_one_run() -> None:
    probe = CountingProbe(delay_s=0.5)
    runner = ProbeRunner(exporter_config(), probe_fn=probe)
    outcomes = scrape_in_threads(runner, 20)
    assert probe.calls == 1
    assert sorted(outcomes) == ["coalesced"] * 19 + ["fresh"]


def test_rate_cap_one_run_per_min_interval_however_often_scraped() -> None:
    """200 scrapes within min_interval_s (5 s) start one probe run: ACG sees one OPTIONS per peer."""
    probe = CountingProbe()
    clock = Clock()
    runner = ProbeRunner(exporter_config(min_interval_s=5), probe_fn=probe, clock=clock)
    sent = []
    for step in range(200):
        clock.now = 1000.0 + step * 0.024  # 200 scrapes in 4.8 s
        scrape = runner.scrape("s", "default", 5.0)
        sent.append(scrape.run.options_sent if scrape.outcome == "fresh" else 0)
    assert probe.calls == 1
    assert sum(sent) == 6  # one per SIP peer (3 + 3); the MCP target never gets OPTIONS
    clock.now = 1005.0
    assert runner.scrape("s", "default", 5.0).outcome == "fresh"
    assert probe.calls == 2
    # Another module of the same site is another probe (its own options), capped the same way.
    assert runner.scrape("s", "quick", 5.0).outcome == "fresh"
    assert runner.scrape("s", "quick", 5.0).outcome == "cached"
    assert probe.calls == 3
    with runner.lock:
        assert runner.stats.options["s"] == 18
        assert runner.stats.scrapes[("s", "cached")] == 200 - 1 + 1


def test_a_scrape_never_outlives_its_budget() -> None:
    probe = CountingProbe(delay_s=2.0)
    runner = ProbeRunner(exporter_config(), probe_fn=probe)
    started = time.monotonic()
    scrape = runner.scrape("s", "default", 0.3)
    assert time.monotonic() - started < 0.8
    assert scrape.outcome == "timeout"
    text = probe_metrics(scrape, "sbc_host")
    assert "probe_success 0" in text and "commsgw_probe_timed_out 1" in text
    # The run goes on; a scrape meanwhile joins it instead of starting another one.
    assert runner.scrape("s", "default", 0.2).outcome == "timeout"
    assert probe.calls == 1 and runner.in_flight_count() == 1
    finished = runner.scrape("s", "default", 5.0)
    assert finished.outcome == "coalesced" and finished.run.report is not None
    assert probe.calls == 1


def test_a_failing_probe_is_a_failed_scrape_not_a_dead_exporter() -> None:
    probe = CountingProbe()
    probe.fail = RuntimeError("boom")
    runner = ProbeRunner(exporter_config(), probe_fn=probe)
    scrape = runner.scrape("s", "default", 5.0)
    assert scrape.run.error == "RuntimeError: boom"
    assert "probe_success 0" in probe_metrics(scrape, "sbc_host")
    assert runner.stats.errors["s"] == 1
    assert runner.timeline("s")[-1]["verdict"] == "fail"


def test_history_is_bounded() -> None:
    probe = CountingProbe()
    clock = Clock()
    wall = Clock()
    runner = ProbeRunner(exporter_config(min_interval_s=5, history_s=60), probe_fn=probe, clock=clock, wall=wall)
    for step in range(50):
        clock.now = wall.now = 1000.0 + step * 5
        runner.scrape("s", "default", 5.0)
    assert probe.calls == 50
    assert len(runner.history["s"]) == 14  # 60 s / 5 s + 2
    timeline = runner.timeline("s")
    assert len(timeline) == 13 and all(entry["t"] >= wall.now - 60 for entry in timeline)
    assert timeline[-1]["regions"][0] == {"region": "region1", "role": "local", "verdict": "pass",
                                          "healthy": 3, "total": 3}


def test_probe_arguments_fit_the_budget() -> None:
    config = exporter_config()
    site, module = config.sites["s"], config.modules["default"]
    args = cfg.probe_arguments(site, module, 9.5)
    assert args["settings"].timeout_s == 3.0 and args["settings"].resolver.timeout_s == 2.0
    assert args["settings"].allowed_transports == ("tls",)
    short = cfg.probe_arguments(site, module, 2.0)
    settings = short["settings"]
    # The platform's read timeout (Kamailio: rpc_timeout_s, its registration's read_timeout) is shortened too.
    kamailio = cfg.parse_config(config_dict(sites={"s": {"plan": PLAN, "platform": "kamailio"}})).sites["s"]
    options = cfg.probe_arguments(kamailio, module, 2.0)["platform_options"]
    assert settings.resolver.timeout_s + settings.timeout_s + options["rpc_timeout_s"] <= 2.0
    assert short["platform_options"] == {}  # a platform the registry does not know: nothing to shorten
    assert short["sbc_settle_s"] == 0.0
    assert cfg.probe_arguments(site, config.modules["quick"], 9.5)["settings"].timeout_s == 1.0
    management = cfg.parse_config(config_dict(sites={"s": {"plan": PLAN, "vantage": "management"}}))
    assert cfg.probe_arguments(management.sites["s"], module, 9.5)["settings"].allowed_transports == ()


@pytest.mark.parametrize("change, message", [
    ({"schema_version": 2}, "schema_version: 2; this exporter reads 1"),
    ({"sites": {}}, "sites: empty"),
    ({"sites": {"bad name": {"plan": PLAN}}}, "sites.bad name: 'bad name' is not a usable name"),
    ({"sites": {"s": {"plan": {"x": 1}}}}, "sites.s.plan: not a routing plan"),
    ({"sites": {"s": {"plan": PLAN, "vantage": "cloud"}}}, "sites.s.vantage: 'cloud'"),
    ({"sites": {"s": {"plan": PLAN, "thresholds": {"max_rtt": 5}}}}, "sites.s.thresholds: unknown threshold(s) max_rtt"),
    ({"sites": {"s": {"plan": PLAN, "thresholds": {"fail_on_drift": "no"}}}},
     "sites.s.thresholds.fail_on_drift: 'no' is a str; expected true or false"),
    ({"sites": {"s": {"plan": PLAN, "allowed_transports": ["sctp"]}}}, "sites.s.allowed_transports[0]: 'sctp'"),
    ({"modules": {"m": {"timeout_s": 0}}}, "modules.m.timeout_s: 0.0 is out of range"),
    ({"modules": {"m": {"timeout_s": True}}}, "modules.m.timeout_s: True is a boolean"),
    ({"modules": {"m": {"retries": 3}}}, "modules.m: unknown option(s) retries"),
    ({"default_module": "nope"}, "default_module: 'nope' is not a configured module"),
    ({"min_interval_s": 0.1}, "min_interval_s: 0.1 is out of range"),
    ({"listen": {"port": 80}}, "listen.address: missing"),
])
def test_configuration_errors_name_the_field(change: dict[str, t.Any], message: str) -> None:
    with pytest.raises(cfg.ConfigError) as error:
        cfg.parse_config(config_dict(**change))
    assert message in str(error.value)
