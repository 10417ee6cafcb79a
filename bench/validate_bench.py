#!/usr/bin/env python
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: validate + plan inventories, against an empty playbook on the same inventory.

Prints figures, asserts nothing:
  * pure-Python time of validate_inventory + every site plan on a generated inventory (20 deployments x 2 sites
    x 8 SBCs by default; median of several runs; target < 1 s);
  * wall time of `ansible-playbook playbooks/validate.yml` as a ratio to an empty playbook on the same inventory,
    both measured in this run, on inventory/production, on the generated inventory and on a generated
    1,000-SBC one (25 deployments x 2 sites x 20 SBCs); target <= 1.3x (issue 25 item 4).
Run: .venv/bin/python bench/validate_bench.py [--deployments 20 --sbcs 8 --runs 5]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".collections"))

import yaml  # noqa: E402  (after the path set-up)

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import site_plans, validate_inventory  # noqa: E402

REGION_PAIRS = [("westeurope", "northeurope"), ("eastus", "westus"), ("uksouth", "ukwest"),
                ("australiaeast", "australiasoutheast"), ("centralindia", "southindia")]
MANAGEMENT = {"westeurope": "West Europe", "eastus": "East US", "uksouth": "UK South",
              "australiaeast": "Australia East", "centralindia": "India Central"}


def deployment(index: int) -> dict:
    first, second = REGION_PAIRS[index % len(REGION_PAIRS)]
    base = "d%015d.commsgw.azure.com" % index
    return {
        "name": "deployment-%02d" % index, "type": "production", "base_domain": base,
        "management_region": MANAGEMENT[first],
        "service_regions": [
            {"name": "region1", "azure_region": first, "hostname": "pstn-region1." + base,
             "ip_ranges": ["20.%d.%d.16/28" % (40 + index // 200, index % 200)]},
            {"name": "region2", "azure_region": second, "hostname": "pstn-region2." + base,
             "ip_ranges": ["20.%d.%d.32/28" % (40 + index // 200, index % 200)]},
        ],
        "sites": [{"name": "site-a", "service_region": "region1"}, {"name": "site-b", "service_region": "region2"}],
    }


def hostvars(deployments: int, sbcs: int) -> dict:
    hosts = {}
    for index in range(deployments):
        facts = deployment(index)
        for site in ("site-a", "site-b"):
            for number in range(sbcs):
                hosts["sbc-%02d-%s-%d" % (index, site, number)] = {
                    "commsgw_deployment": facts, "commsgw_site": site, "commsgw_sbc_platform": "kamailio"}
    return hosts


def write_inventory(directory: pathlib.Path, deployments: int, sbcs: int) -> pathlib.Path:
    children = {}
    (directory / "group_vars").mkdir(parents=True)
    for index in range(deployments):
        group = "acg_%02d" % index
        (directory / "group_vars" / (group + ".yml")).write_text(
            yaml.safe_dump({"commsgw_deployment": deployment(index)}))
        sites = {}
        for site in ("site-a", "site-b"):
            site_group = "%s_%s" % (group, site.replace("-", "_"))
            sites[site_group] = {
                "hosts": {"sbc-%02d-%s-%d" % (index, site, n): {"ansible_connection": "local"} for n in range(sbcs)},
                "vars": {"commsgw_site": site, "commsgw_sbc_platform": "kamailio"}}
        children[group] = {"children": sites}
    (directory / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": children}}))
    return directory


def time_python(variables: dict, runs: int) -> tuple[float, int]:
    times, plans = [], 0
    for dummy in range(runs):
        start = time.perf_counter()
        reports = validate_inventory(variables)
        assert all(not r["errors"] for r in reports), [r["errors"][:2] for r in reports if r["errors"]][:1]
        plans = sum(len(site_plans(r["model"])) for r in reports)
        times.append(time.perf_counter() - start)
    return statistics.median(times), plans


def time_playbook(playbook: pathlib.Path, inventory: pathlib.Path, runs: int) -> float:
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    binary = pathlib.Path(sys.executable).parent / "ansible-playbook"
    times = []
    for dummy in range(runs):
        start = time.perf_counter()
        subprocess.run([str(binary), str(playbook), "-i", str(inventory)], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, timeout=300)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--deployments", type=int, default=20)
    parser.add_argument("--sbcs", type=int, default=8, help="SBCs per site")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    variables = hostvars(args.deployments, args.sbcs)
    seconds, plans = time_python(variables, args.runs)
    print("inventory: %d deployments x 2 sites x %d SBCs = %d hosts, %d site plans"
          % (args.deployments, args.sbcs, len(variables), plans))
    print("pure Python validate + plan: %.3f s (median of %d; target < 1 s)" % (seconds, args.runs))

    with tempfile.TemporaryDirectory() as tmp:
        empty = pathlib.Path(tmp) / "empty.yml"
        empty.write_text("- name: Empty\n  hosts: localhost\n  gather_facts: false\n  tasks: []\n")
        runs = max(1, args.runs // 2 + 1)
        inventories = [
            ("inventory/production (4 SBCs)", ROOT / "inventory" / "production"),
            ("generated, %d SBCs" % (args.deployments * 2 * args.sbcs),
             write_inventory(pathlib.Path(tmp) / "generated", args.deployments, args.sbcs)),
            ("generated, 1000 SBCs", write_inventory(pathlib.Path(tmp) / "thousand", 25, 20)),
        ]
        for label, inventory in inventories:
            baseline = time_playbook(empty, inventory, runs)
            validate = time_playbook(ROOT / "playbooks" / "validate.yml", inventory, runs)
            print("%-32s empty playbook %.2f s, validate.yml %.2f s: ratio %.2fx (median of %d; target <= 1.3x)"
                  % (label + ":", baseline, validate, validate / baseline, runs))


if __name__ == "__main__":
    main()
