#!/usr/bin/env python
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: a re-run of onboard.yml that changes nothing, this checkout against another revision, on one lab.

A re-run's cost moves by tenths of a second, and a 2-core machine's speed moves by more from one run to the next
(issue 25 item 2, docs/rerun.md). So both revisions run on the same lab, in alternating order, round after round:
the other revision (a git worktree of --before, made and removed here) drives half of the SBCs and this checkout the
other half (``-l``), so that each half stays converged to its own code's digest. Each round runs, for each side, the
trivial playbook of bench/onboard_bench.py and a re-run of onboard.yml on that side's SBCs (serial 1, --forks; with
--all-at-once, both with serial and --forks the side's SBC count).
Prints the medians of wall time, the controller's CPU (ansible-playbook, its workers, their ssh clients and the ssh
ControlPersist masters) and each side's ratio to its own trivial playbook, asserts nothing. A re-run that changes
something or pushes stops the bench: it would time a push.
Run as root:
  .venv/bin/python bench/rerun_compare.py --before REVISION [--hosts 4 --rounds 6] [--all-at-once]
REVISION is the commit before the change measured (for issue 25's task cuts, 9aab4d5).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import typing as t
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import onboard_bench as ob  # noqa: E402  (after the path set-up)

ROUND_TIMEOUT_S = 300
# The push's TLS check, the push's fourth task: its banner prints whenever push.yml is included, which a
# skipped push never is.
PUSH_TASK = "TASK [commsgw.routing.kamailio : Check the SBC's TLS files as the user Kamailio runs as]"
FIRST_RUN_TIMEOUT_S = 900


def playbook(tree: Path, inventory: Path, limit: str, path: Path, forks: int, rerun: bool,
             control_dir: Path, serial: int = 1) -> tuple[float, float]:
    """ansible-playbook of ``tree`` (its ansible.cfg, so its own collection) limited to ``limit``, ``serial`` SBCs at
    a time: (wall s, CPU s). ``rerun``: onboard.yml must change nothing and skip every push."""
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), "-l", limit,
           "--forks", str(forks), "-e", "bench_serial=%d" % serial, "-e", "commsgw_onboard_serial=%d" % serial,
           str(path)]
    timeout = ROUND_TIMEOUT_S if rerun else FIRST_RUN_TIMEOUT_S
    proc, wall, cpu = ob.run_ansible(cmd, tree, timeout, control_dir)
    if proc.returncode != 0:
        raise RuntimeError("%s in %s failed (%d):\n%s" % (path.name, tree, proc.returncode, proc.stdout[-6000:]))
    if path.name == "onboard.yml" and rerun:
        hosts = [name for name in limit.split(",") if name != "localhost"]
        changed = sum(ob._recap(proc.stdout, name)["changed"] for name in hosts)  # pylint: disable=protected-access
        # A push that finds every file identical changes nothing either, and costs ~40 tasks: a re-run must not
        # push at all. The task's name is the same in every revision this compares.
        if changed or PUSH_TASK in proc.stdout:
            raise RuntimeError("a re-run of %s changed %d things or pushed: it measures a push, not a re-run"
                               % (tree, changed))
    return wall, cpu


@contextlib.contextmanager
def worktree(revision: str, parent: Path) -> t.Iterator[Path]:
    """A detached worktree of ``revision`` whose ansible.cfg finds its own tree as commsgw.routing; removed (and its
    registration pruned) whatever happens."""
    tree = parent / "before"
    git = ["git", "-C", str(ROOT), "worktree"]
    try:
        subprocess.run(git + ["add", "--detach", "-q", str(tree), revision], check=True)
        namespace = tree / ".collections" / "ansible_collections" / "commsgw"
        namespace.mkdir(parents=True)
        (namespace / "routing").symlink_to(tree)
        yield tree
    finally:
        subprocess.run(git + ["remove", "--force", str(tree)], check=False, capture_output=True)
        shutil.rmtree(tree, ignore_errors=True)  # so that prune forgets it even when remove failed
        subprocess.run(git + ["prune"], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--before", required=True, help="the git revision to compare this checkout with")
    parser.add_argument("--hosts", type=int, default=4, help="SBC hosts, even, half for each side (default 4)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds, alternating the order (default 6)")
    parser.add_argument("--forks", type=int, default=1, help="--forks of every playbook (default 1)")
    parser.add_argument("--all-at-once", action="store_true",
                        help="serial and --forks the SBC count of a side (issue 25 item 2 at 8 SBCs: --hosts 16)")
    args = parser.parse_args()
    if args.hosts < 2 or args.hosts % 2 or args.hosts > 16 or not 1 <= args.rounds <= 30:
        parser.error("--hosts: even, 2..16; --rounds: 1..30")

    with tempfile.TemporaryDirectory(prefix="rerun-compare-") as tmp, worktree(args.before, Path(tmp)) as before_tree:
        serial = args.hosts // 2 if args.all_at_once else 1
        forks = serial if args.all_at_once else args.forks
        figures = compare(before_tree, Path(tmp), args.hosts, args.rounds, forks, serial)
    print("\nre-run of onboard.yml, %d SBCs per side, serial %d, --forks %d, %d rounds (medians); before: %s"
          % (args.hosts // 2, serial, forks, args.rounds, args.before))
    print("side     trivial s  re-run s  ratio  re-run ctl CPU s")
    for side in ("before", "after"):
        rows = figures[side]
        print("%-7s  %9.2f  %8.2f  %4.2fx  %16.2f" % (
            side, statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
            statistics.median(r[1] / r[0] for r in rows), statistics.median(r[2] for r in rows)))


def compare(before_tree: Path, tmp: Path, count: int, rounds: int, forks: int,
            serial: int) -> dict[str, list[tuple]]:
    """Boot the lab, first-run each side on its hosts, then the rounds: {side: [(trivial s, re-run s, CPU s)]}."""
    with ob.bench_lab(count, tmp) as (dummy_lab, inventory, members, control_dir):
        trivial = tmp / "trivial.yml"
        trivial.write_text(json.dumps(ob.BASELINE_PLAYBOOK))
        # Each side gets SBCs of both sites, so that both run the same plays.
        sides = {"before": (before_tree, ",".join(["localhost"] + [g.name for g in members[0::2]])),
                 "after": (ROOT, ",".join(["localhost"] + [g.name for g in members[1::2]]))}
        onboard = Path("playbooks") / "onboard.yml"
        for tree, limit in sides.values():
            playbook(tree, inventory, limit, tree / onboard, forks, False, control_dir, serial)
        figures: dict[str, list[tuple]] = {"before": [], "after": []}
        for number in range(rounds):
            for side in ("before", "after") if number % 2 else ("after", "before"):
                tree, limit = sides[side]
                trivial_s, dummy_cpu = playbook(tree, inventory, limit, trivial, forks, True, control_dir, serial)
                rerun_s, rerun_cpu = playbook(tree, inventory, limit, tree / onboard, forks, True, control_dir, serial)
                figures[side].append((trivial_s, rerun_s, rerun_cpu))
                print("round %d %-6s trivial %.2f s re-run %.2f s (%.2fx), CPU %.2f s"
                      % (number + 1, side, trivial_s, rerun_s, rerun_s / trivial_s, rerun_cpu), flush=True)
        return figures


if __name__ == "__main__":
    main()
