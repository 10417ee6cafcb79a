#!/usr/bin/env python
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: a re-run of onboard.yml that changes nothing, this checkout against another revision, on one lab.

A re-run's cost moves by tenths of a second, and a 2-core machine's speed moves by more from one run to the next
(issue 25 item 2, docs/rerun.md). So both revisions run on the same lab, in alternating order, round after round:
the other revision (a git worktree of --before, made and removed here) drives half of the SBCs and this checkout the
other half (``-l``), so that each half stays converged to its own code's digest. Each round runs, for each side, the
trivial playbook of bench/onboard_bench.py and a re-run of onboard.yml on that side's SBCs (serial 1, --forks).
Prints the medians of wall time, the controller's CPU (ansible-playbook, its workers and their ssh clients) and each
side's ratio to its own trivial playbook, asserts nothing.
Run as root:
  .venv/bin/python bench/rerun_compare.py --before HEAD~3 [--hosts 4 --rounds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import onboard_bench as ob  # noqa: E402  (after the path set-up)

ROUND_TIMEOUT_S = 300
FIRST_RUN_TIMEOUT_S = 900


def playbook(tree: Path, inventory: Path, limit: str, path: Path, forks: int, rerun: bool) -> tuple[float, float]:
    """ansible-playbook of ``tree`` (its ansible.cfg, so its own collection) limited to ``limit``: (wall s, CPU s).
    ``rerun``: onboard.yml must change nothing."""
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), "-l", limit,
           "--forks", str(forks), "-e", "bench_serial=1", str(path)]
    timeout = ROUND_TIMEOUT_S if rerun else FIRST_RUN_TIMEOUT_S
    env = dict(os.environ, ANSIBLE_CONFIG=str(tree / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_HOST_KEY_CHECKING="False")
    env.pop("ANSIBLE_COLLECTIONS_PATH", None)
    before = os.times()
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=str(tree), env=env, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.monotonic() - started
    after = os.times()
    if proc.returncode != 0:
        raise RuntimeError("%s in %s failed (%d):\n%s" % (path.name, tree, proc.returncode, proc.stdout[-6000:]))
    if path.name == "onboard.yml" and rerun:
        hosts = [name for name in limit.split(",") if name != "localhost"]
        changed = sum(ob._recap(proc.stdout, name)["changed"] for name in hosts)  # pylint: disable=protected-access
        if changed:
            raise RuntimeError("a re-run of %s changed %d things: it measures a push, not a re-run" % (tree, changed))
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu


def worktree(revision: str, parent: Path) -> Path:
    """A detached worktree of ``revision`` whose ansible.cfg finds its own tree as commsgw.routing."""
    tree = parent / "before"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), revision], check=True)
    namespace = tree / ".collections" / "ansible_collections" / "commsgw"
    namespace.mkdir(parents=True)
    (namespace / "routing").symlink_to(tree)
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--before", required=True, help="the git revision to compare this checkout with")
    parser.add_argument("--hosts", type=int, default=4, help="SBC hosts, even, half for each side (default 4)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds, alternating the order (default 6)")
    parser.add_argument("--forks", type=int, default=1, help="--forks of every playbook (default 1)")
    args = parser.parse_args()
    if args.hosts < 2 or args.hosts % 2 or args.hosts > 16 or not 1 <= args.rounds <= 30:
        parser.error("--hosts: even, 2..16; --rounds: 1..30")

    with tempfile.TemporaryDirectory(prefix="rerun-compare-") as tmp:
        before_tree = worktree(args.before, Path(tmp))
        try:
            figures = compare(before_tree, Path(tmp), args.hosts, args.rounds, args.forks)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before_tree)], check=False)
    print("\nre-run of onboard.yml, %d SBCs per side, serial 1, --forks %d, %d rounds (medians); before: %s"
          % (args.hosts // 2, args.forks, args.rounds, args.before))
    print("side     trivial s  re-run s  ratio  re-run ctl CPU s")
    for side in ("before", "after"):
        rows = figures[side]
        print("%-7s  %9.2f  %8.2f  %4.2fx  %16.2f" % (
            side, statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
            statistics.median(r[1] / r[0] for r in rows), statistics.median(r[2] for r in rows)))


def compare(before_tree: Path, tmp: Path, count: int, rounds: int, forks: int) -> dict[str, list[tuple]]:
    """Boot the lab, first-run each side on its hosts, then the rounds: {side: [(trivial s, re-run s, CPU s)]}."""
    with ob.bench_lab(count, tmp) as (dummy_lab, inventory, members):
        trivial = tmp / "trivial.yml"
        trivial.write_text(json.dumps(ob.BASELINE_PLAYBOOK))
        # Each side gets SBCs of both sites, so that both run the same plays.
        sides = {"before": (before_tree, ",".join(["localhost"] + [g.name for g in members[0::2]])),
                 "after": (ROOT, ",".join(["localhost"] + [g.name for g in members[1::2]]))}
        onboard = Path("playbooks") / "onboard.yml"
        for tree, limit in sides.values():
            playbook(tree, inventory, limit, tree / onboard, forks, rerun=False)
        figures: dict[str, list[tuple]] = {"before": [], "after": []}
        for number in range(rounds):
            for side in ("before", "after") if number % 2 else ("after", "before"):
                tree, limit = sides[side]
                trivial_s, dummy_cpu = playbook(tree, inventory, limit, trivial, forks, rerun=True)
                rerun_s, rerun_cpu = playbook(tree, inventory, limit, tree / onboard, forks, rerun=True)
                figures[side].append((trivial_s, rerun_s, rerun_cpu))
                print("round %d %-6s trivial %.2f s re-run %.2f s (%.2fx), CPU %.2f s"
                      % (number + 1, side, trivial_s, rerun_s, rerun_s / trivial_s, rerun_cpu), flush=True)
        return figures


if __name__ == "__main__":
    main()
