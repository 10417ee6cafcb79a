#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: onboarding wall time per SBC over SSH with become, first run and re-run (prints figures).

The shape of tests/integration/test_production_hosts.py, reusing its helpers: Debian 13 SBC hosts booted
under systemd-nspawn (tests/harness/sbc_hosts.py), a production deployment with 2 regions and 2 sites over
mutual TLS served by the simulated ACG (tests/harness/acg_sim.py) on bridge addresses, the README defaults,
the live probe on. The hosts are split evenly over the sites amsterdam and dublin.

For each host count a fresh lab is booted per serial mode: ``serial 1`` (the default the README documents,
one SBC at a time) and, unless --no-all-at-once, ``-e commsgw_onboard_serial=N`` (all at once, --forks N;
--only-all-at-once skips serial 1: the fleet figures of issue 25 item 3). In each lab:
  * baseline: a trivial playbook over SSH with become (no facts, one ``command: true``) on the same hosts
    with the same serial, median of --runs: the cost of reaching the hosts at all;
  * first run of playbooks/onboard.yml on the fresh hosts, then --runs re-runs (median; must change nothing).
The table gives wall s, s per SBC, the ratio to the baseline and the controller's CPU per SBC (ansible-playbook,
its forks, their ssh clients and the ssh ControlPersist masters); also boot-to-ready of each lab, and with several
host counts all at once the largest fleet's first run against the smallest's.
Uses its own bridge (cgwbench0) and subnet (10.215.0.0/24), so it runs beside the integration tests.
Run as root:
  ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_COLLECTIONS_PATH=$PWD/.collections \\
  PYTHONPATH=$PWD/.collections:$PWD/tests .venv/bin/python bench/onboard_bench.py --hosts 2 8
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import ipaddress
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import typing as t
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / ".collections"))

from harness.acg_sim import AcgSim  # noqa: E402
from harness.sbc_hosts import Guest, SbcHostLab  # noqa: E402
from integration.test_production_hosts import (  # noqa: E402
    DEPLOYMENT, TLS_DIR, Rig, _install_tls_files, _recap, _sbc, _write_inventory)

BRIDGE = "cgwbench0"
SUBNET = "10.215.0.0/24"
CORE = "10.215.0.2"
CORE_NEXT_HOP = "10.215.0.3:5060"
ACG_DNS = "10.215.0.53"
REGIONS = {"region1": "10.215.0.16/28", "region2": "10.215.0.32/28"}
SITES = ("amsterdam", "dublin")
FIRST_GUEST_ADDRESS = 100  # guests at 10.215.0.100, .101, ...
SUITE = "trixie"
PEERS_PER_REGION = 3
# Bounds: a playbook gets a fixed allowance plus a per-SBC one; the baseline is short.
PLAYBOOK_BASE_TIMEOUT_S = 300
PLAYBOOK_PER_SBC_TIMEOUT_S = 120
BASELINE_TIMEOUT_S = 120

OUTPUT_DIR: Path | None = None

BASELINE_PLAYBOOK = [{
    "name": "Reach the hosts: SSH + become, one command", "hosts": "all", "gather_facts": False,
    "serial": "{{ bench_serial | int }}",
    "tasks": [{"name": "Run true", "ansible.builtin.command": "true", "changed_when": False}]}]


@dataclasses.dataclass
class Row:
    """One line of the table."""

    hosts: int
    serial: str
    mode: str
    wall_s: float
    baseline_s: float
    changed: int
    cpu_s: float  # the controller's CPU (ansible-playbook, its forks, ssh clients and masters: user + system)

    def format(self) -> str:
        return "%5d  %-6s  %-6s  %7.1f  %7.1f  %10.2f  %6.1fx  %7d  %13.2f" % (
            self.hosts, self.serial, self.mode, self.wall_s, self.wall_s / self.hosts, self.baseline_s,
            self.wall_s / self.baseline_s, self.changed, self.cpu_s / self.hosts)


HEADER = "hosts  serial  mode     wall s  s / SBC  baseline s   ratio  changed  ctl CPU s/SBC"


class _TlsInstaller:
    """What _install_tls_files needs of the test's Rig: the lab, the simulator and a root shell."""

    def __init__(self, lab: SbcHostLab, sim: AcgSim) -> None:
        self.lab, self.sim = lab, sim

    def root(self, guest: Guest, command: str, timeout: float = 60) -> str:
        proc = self.lab.ssh(guest.name, command, become=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError("%s: %s failed (%d): %s" % (guest.name, command, proc.returncode, proc.stderr))
        return proc.stdout


def deployment() -> dict[str, t.Any]:
    """The test's production deployment, moved onto this bench's subnet."""
    regions = [dict(region, ip_ranges=[REGIONS[region["name"]]]) for region in DEPLOYMENT["service_regions"]]
    assert [site["name"] for site in DEPLOYMENT["sites"]] == list(SITES)
    return dict(DEPLOYMENT, name="bench", service_regions=regions)


def guests(count: int) -> dict[str, list[Guest]]:
    """count Debian 13 hosts, split evenly over the two sites (site order, then number)."""
    by_site: dict[str, list[Guest]] = {site: [] for site in SITES}
    for index in range(count):
        site = SITES[index % len(SITES)]
        number = len(by_site[site]) + 1
        by_site[site].append(Guest("bench-%s-%d" % (site[:3], number), SUITE,
                                   "10.215.0.%d" % (FIRST_GUEST_ADDRESS + index)))
    return by_site


def _ssh_master_cpu(control_dir: Path) -> dict[int, float]:
    """CPU seconds (user + system) of each running ssh process whose control socket is in control_dir: the
    ControlPersist masters, which detach from the client that started them (so os.times() never counts them) and
    carry every later session to their host, encryption included."""
    marker = str(control_dir).encode()
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
            # A detached master rewrites its argv to "ssh: <control path> [mux]" (setproctitle), so the command
            # line is only searched for the directory; the process name in stat keeps "ssh".
            if stat[stat.index("(") + 1:stat.rindex(")")] != "ssh":
                continue
            if marker not in Path("/proc", entry, "cmdline").read_bytes():
                continue
        except (OSError, ValueError):  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 1:].split()
        found[int(entry)] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime (stat fields 14 and 15)
    return found


@contextlib.contextmanager
def ssh_control_dir() -> t.Iterator[Path]:
    """A directory of its own for the run's ssh ControlPersist masters (ANSIBLE_SSH_CONTROL_PATH_DIR), whose CPU
    run_ansible counts; the masters are stopped when it ends. Short, under /tmp: a socket path has ~100 bytes, and
    Ansible adds a hashed name and ssh a temporary suffix."""
    control_dir = Path(tempfile.mkdtemp(prefix="cgwcp-", dir="/tmp"))
    try:
        yield control_dir
    finally:
        for pid in _ssh_master_cpu(control_dir):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        shutil.rmtree(control_dir, ignore_errors=True)


def run_ansible(cmd: t.Sequence[str], tree: Path, timeout: float,
                control_dir: Path) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """cmd (an Ansible command) in ``tree``, a checkout whose ansible.cfg finds it as commsgw.routing, in a session
    of its own: (completed process, wall s, controller CPU s). The CPU is the command's, its workers' and their ssh
    clients' (os.times() of waited-for children) plus what the ssh masters in control_dir spent meanwhile. On timeout
    the whole session is killed (the workers and ssh clients too, not only ansible-playbook), then
    subprocess.TimeoutExpired is raised."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(tree / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_SSH_CONTROL_PATH_DIR=str(control_dir))
    env.pop("ANSIBLE_COLLECTIONS_PATH", None)  # the tree's own collection, never another checkout's
    masters_before = _ssh_master_cpu(control_dir)
    before = os.times()
    started = time.monotonic()
    with subprocess.Popen(cmd, cwd=str(tree), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    wall = time.monotonic() - started
    after = os.times()
    masters_after = _ssh_master_cpu(control_dir)
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    cpu += sum(seconds - masters_before.get(pid, 0.0) for pid, seconds in masters_after.items())
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr), wall, cpu


def run_playbook(inventory: Path, playbook: Path, forks: int, timeout: float, control_dir: Path,
                 extra: t.Sequence[str] = ()) -> tuple[float, str, float]:
    """ansible-playbook with --forks; (wall seconds, stdout, controller CPU seconds). Raises when it fails."""
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), str(playbook),
           "--forks", str(max(forks, 1)), *extra]
    proc, wall, cpu = run_ansible(cmd, ROOT, timeout, control_dir)
    if OUTPUT_DIR:  # --output-dir: every playbook's output, numbered in run order
        OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
        log = OUTPUT_DIR / ("%03d-%s.log" % (len(list(OUTPUT_DIR.iterdir())), playbook.stem))
        log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d) after %.1f s:\n%s\n%s"
                           % (" ".join(cmd[3:]), proc.returncode, wall, proc.stdout[-6000:], proc.stderr[-2000:]))
    return wall, proc.stdout, cpu


@contextlib.contextmanager
def bench_lab(count: int, work: Path) -> t.Iterator[tuple[SbcHostLab, Path, list[Guest], Path]]:
    """A booted lab of count production-shaped SBC hosts (both sites), the simulated ACG with its TLS files installed
    on every host, the inventory (in work) and a directory for the ssh masters (ssh_control_dir): (lab, inventory,
    hosts in inventory order, control directory)."""
    sites = guests(count)
    members = [guest for site in SITES for guest in sites[site]]
    facts = deployment()
    with ssh_control_dir() as control_dir, SbcHostLab(members, bridge=BRIDGE, subnet=SUBNET,
                                                      nameserver=ACG_DNS) as lab:
        for cidr in REGIONS.values():
            for address in list(ipaddress.IPv4Network(cidr).hosts())[:PEERS_PER_REGION]:
                lab.add_address(str(address))
        for address in (CORE, ACG_DNS):
            lab.add_address(address)
        sim = AcgSim(facts, work / "acg-sim", peers_per_region=PEERS_PER_REGION, dns_address=ACG_DNS).start()
        try:
            installer = _TlsInstaller(lab, sim)
            for guest in members:
                _install_tls_files(t.cast(Rig, installer), guest)
            common = {"commsgw_dns_nameservers": [ACG_DNS], "commsgw_onboard_probe": True,
                      "kamailio_tls_chain_ca": TLS_DIR + "/operator-root.pem"}
            inventory = _write_inventory(
                work / "hosts.json", lab, facts,
                {site: [(g, dict(_sbc(g), core_next_hop=CORE_NEXT_HOP)) for g in sites[site]] for site in SITES},
                common)
            yield lab, inventory, members, control_dir
        finally:
            sim.stop()


def measure(count: int, serial: int, runs: int, tmp: Path, forks: int = 0) -> tuple[float, list[Row]]:
    """Boot a lab of count hosts, measure baseline, first run and re-runs with serial and --forks max(serial,
    forks); (boot-to-ready, rows)."""
    forks = max(serial, forks)
    work = tmp / ("%d-hosts-serial-%d" % (count, serial))
    label = "1" if serial == 1 else "all"
    with bench_lab(count, work) as (lab, inventory, members, control_dir):
        ready_s = max(lab.figures["ready_s"].values())
        baseline_yml = work / "baseline.yml"
        baseline_yml.write_text(json.dumps(BASELINE_PLAYBOOK))
        bare = ["-e", "bench_serial=%d" % serial]
        # One warm-up round so that the first baseline does not pay for cold caches alone.
        run_playbook(inventory, baseline_yml, forks, BASELINE_TIMEOUT_S, control_dir, bare)
        baseline = statistics.median(
            run_playbook(inventory, baseline_yml, forks, BASELINE_TIMEOUT_S, control_dir, bare)[0]
            for dummy in range(runs))
        timeout = PLAYBOOK_BASE_TIMEOUT_S + PLAYBOOK_PER_SBC_TIMEOUT_S * count
        extra = [] if serial == 1 else ["-e", "commsgw_onboard_serial=%d" % serial]
        onboard = ROOT / "playbooks" / "onboard.yml"
        first_s, out, first_cpu = run_playbook(inventory, onboard, forks, timeout, control_dir, extra)
        _check_probe(out, members)
        rows = [Row(count, label, "first", first_s, baseline, _changed(out, members), first_cpu)]
        reruns = [run_playbook(inventory, onboard, forks, timeout, control_dir, extra) for dummy in range(runs)]
        changed = max(_changed(rerun_out, members) for dummy, rerun_out, dummy_cpu in reruns)
        rerun_s = statistics.median(seconds for seconds, dummy, dummy_cpu in reruns)
        rerun_cpu = statistics.median(cpu for dummy, dummy_out, cpu in reruns)
        rows.append(Row(count, label, "re-run", rerun_s, baseline, changed, rerun_cpu))
        return ready_s, rows


def _changed(output: str, members: t.Sequence[Guest]) -> int:
    return sum(_recap(output, guest.name)["changed"] for guest in members)


def _check_probe(output: str, members: t.Sequence[Guest]) -> None:
    """The probe must have passed on every SBC: a bench of a broken onboarding measures nothing."""
    for guest in members:
        if not re.search(r"site \S+ on %s: PASS" % re.escape(guest.name), output):
            raise RuntimeError("no probe PASS for %s:\n%s" % (guest.name, output[-6000:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[2, 8], help="SBC host counts (default 2 8)")
    parser.add_argument("--runs", type=int, default=1, help="baseline rounds and re-runs, median (default 1)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--no-all-at-once", action="store_true",
                       help="only serial 1, skip -e commsgw_onboard_serial=N")
    modes.add_argument("--only-all-at-once", action="store_true",
                       help="only -e commsgw_onboard_serial=N with --forks N (the fleet figures), skip serial 1")
    parser.add_argument("--forks", type=int, default=0,
                        help="--forks of every playbook, at least the serial (default: the serial, so serial 1 runs "
                             "the probe play one SBC at a time too; 5 is Ansible's own default)")
    parser.add_argument("--output-dir", type=Path,
                        help="write every playbook's output there (e.g. with a timing callback enabled)")
    args = parser.parse_args()
    global OUTPUT_DIR  # pylint: disable=global-statement
    OUTPUT_DIR = args.output_dir
    if any(count < 2 or count > 60 for count in args.hosts) or args.runs < 1:
        parser.error("--hosts: 2..60 each; --runs >= 1")

    rows: list[Row] = []
    boots: list[str] = []
    with tempfile.TemporaryDirectory(prefix="onboard-bench-") as tmp:
        for count in args.hosts:
            for serial in [1] if args.no_all_at_once else [count] if args.only_all_at_once else [1, count]:
                ready_s, measured = measure(count, serial, args.runs, Path(tmp), args.forks)
                boots.append("%d hosts (serial %s): boot to ready %.1f s" % (count, measured[0].serial, ready_s))
                for row in measured:
                    print(row.format(), flush=True)
                rows.extend(measured)
    print("\nonboard.yml over SSH + become, Debian 13, production 2 regions / 2 sites, TLS, probe on "
          "(re-run and baseline: median of %d; --forks %s)"
          % (args.runs, "the serial" if args.forks <= 1 else "max(serial, %d)" % args.forks))
    print(HEADER)
    for row in rows:
        print(row.format())
    print("baseline: trivial playbook over SSH + become, no facts, one command: true, same hosts and serial")
    fleet = sorted((row.hosts, row.wall_s) for row in rows if row.serial == "all" and row.mode == "first")
    if len(fleet) > 1:  # issue 25 item 3: the largest fleet's first run against the smallest's, all at once
        (small, small_s), (large, large_s) = fleet[0], fleet[-1]
        print("fleet, all at once: first run of %d SBCs %.1f s, of %d SBCs %.1f s: %.2fx (target <= 1.5x)"
              % (large, large_s, small, small_s, large_s / small_s))
    for line in boots:
        print(line)


if __name__ == "__main__":
    main()
