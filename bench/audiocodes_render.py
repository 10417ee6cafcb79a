#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the Mediant platform core (prints figures; not a test).

(a) render time of one site plan (rows, CLI script, ini) for deployments of 2 and 20 sites
    (median of --runs renders of every site of the deployment, per site);
(b) REST requests per SBC against the stand-in (tests/harness/mediant_sim.py, loopback HTTPS):
    first apply, second apply (nothing to do), a one-weight change, a script refused at its first
    change (nothing to roll back) and one refused after a change was applied (rolled back).

Run:  .venv/bin/python bench/audiocodes_render.py
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
import typing as t
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / ".collections"), str(ROOT / "tests")]

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import api, push, render  # noqa: E402  (after the path set-up)
from ansible_collections.commsgw.routing.tests.unit.audiocodes import plans as P  # noqa: E402


def _deployment_plans(sites: int) -> list[dict[str, t.Any]]:
    """``sites`` site plans: the production deployment's plan repeated with the site renamed (a site
    plan depends on its site and its local region only, so its size and render cost are the same)."""
    base = P.resolved_plans("production")
    result = []
    for number in range(sites):
        plan = copy.deepcopy(base[number % len(base)])
        plan["site"] = {"name": "site%02d" % number, "local_region": plan["site"]["local_region"]}
        result.append(plan)
    return result


def bench_render(sites: int, runs: int) -> tuple[float, int]:
    plans = _deployment_plans(sites)
    settings = P.settings()
    timings = []
    for _run in range(runs):
        start = time.perf_counter()
        for plan in plans:
            artefacts = render.render(plan, settings)
        timings.append((time.perf_counter() - start) / len(plans))
    return statistics.median(timings) * 1000, len(artefacts.cli.splitlines())


def bench_round_trips() -> dict[str, int]:
    from harness.mediant_sim import MediantServer  # pylint: disable=import-outside-toplevel
    from harness.pki import TestCA  # pylint: disable=import-outside-toplevel
    work = Path(tempfile.mkdtemp(prefix="ac-bench-"))
    ca = TestCA(work / "ca")
    issued = ca.issue_server("mediant", dns=["mediant.test"], ips=["127.0.0.24"])
    server = MediantServer("127.0.0.24", 0, issued.chain, issued.key, "admin", "bench-pw").start()
    figures = {}
    try:
        plan = P.resolved_plans("production")[0]

        def run(name: str, candidate: dict[str, t.Any]) -> None:
            client = api.MediantClient(server.url, "admin", "bench-pw", ca_file=str(ca.cert))
            try:
                push.apply(candidate, render.render(candidate, P.settings()), client)
            except push.ApplyFailed:
                pass
            figures[name] = client.round_trips
        run("first apply", plan)
        run("second apply (no change)", plan)
        changed = copy.deepcopy(plan)
        changed["trunk_groups"][0]["peers"][0]["weight"] = 61
        run("one weight changed", changed)
        server.device.refuse_line("weight 62")
        refused = copy.deepcopy(plan)
        refused["trunk_groups"][0]["peers"][0]["weight"] = 62
        run("refused first line", refused)
        server.device.refuse_line("weight 64")
        refused["trunk_groups"][0]["peers"][0]["weight"] = 63
        refused["trunk_groups"][0]["peers"][1]["weight"] = 64
        run("refused later line, rolled back", refused)
        assert not server.device.resets(), "a device reset was requested"
    finally:
        server.stop()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    for sites in (2, 20):
        per_site_ms, lines = bench_render(sites, args.runs)
        print("(a) render, %2d sites: %.2f ms per site plan (median of %d runs), %d CLI lines per SBC"
              % (sites, per_site_ms, args.runs, lines))
    for name, trips in bench_round_trips().items():
        print("(b) REST requests per SBC, %-33s %d" % (name + ":", trips))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
