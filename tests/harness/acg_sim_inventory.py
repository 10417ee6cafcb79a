# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The simulated ACG's input: an inventory's deployment, DNS and SBC settings, templated the way
ansible-playbook reads them (``harness.acg_sim``)."""

from __future__ import annotations

import json
import sys
import typing as t
from pathlib import Path

from harness.acg_sim_model import SimError


def read_inventory(inventory: t.Union[str, Path], extra_vars: t.Optional[t.Mapping[str, t.Any]] = None,
                   deployment_name: t.Optional[str] = None) -> dict[str, t.Any]:
    """The deployment, DNS settings and SBC settings of an inventory, templated as ansible-playbook would.

    Returns {"deployment": {...}, "nameservers": [...], "hosts": {host: {"sbc": {...}, "site": ...}}}.
    """
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    inv = InventoryManager(loader=loader, sources=[str(inventory)])
    manager = VariableManager(loader=loader, inventory=inv)
    deployments: dict[str, dict[str, t.Any]] = {}
    hosts: dict[str, dict[str, t.Any]] = {}
    nameservers: list[str] = []
    for host in inv.get_hosts():
        variables = dict(manager.get_vars(host=host))
        variables.update(extra_vars or {})
        templar = Templar(loader=loader, variables=variables)
        if "commsgw_deployment" not in variables:
            continue
        deployment = _plain(templar.template(variables["commsgw_deployment"]))
        if deployment_name and deployment.get("name") != deployment_name:
            continue
        deployments[str(deployment.get("name"))] = deployment
        if not nameservers and variables.get("commsgw_dns_nameservers"):
            nameservers = [str(n) for n in _plain(templar.template(variables["commsgw_dns_nameservers"]))]
        hosts[host.name] = {
            "deployment": deployment.get("name"),
            "site": _plain(templar.template(variables.get("commsgw_site"))),
            "sbc": _plain(templar.template(variables["commsgw_sbc"])) if "commsgw_sbc" in variables else None,
        }
    if not deployments:
        raise SimError("no commsgw_deployment%s in inventory %s" % (
            " named %s" % deployment_name if deployment_name else "", inventory))
    if len(deployments) > 1:
        raise SimError("inventory %s holds several deployments (%s): choose one with --deployment" % (
            inventory, ", ".join(sorted(deployments))))
    deployment = next(iter(deployments.values()))
    return {"deployment": deployment, "nameservers": nameservers, "hosts": hosts}


def _plain(value: t.Any) -> t.Any:
    """Ansible's tagged/lazy containers -> plain JSON data."""
    return json.loads(json.dumps(value, default=str))


def _check_inventory_paths(facts: t.Mapping[str, t.Any], state_dir: Path) -> None:
    """Warn when the inventory's SBC certificate paths are not the ones this simulator writes."""
    pki = (state_dir / "pki").resolve()
    for host, info in facts["hosts"].items():
        tls = (info.get("sbc") or {}).get("tls") or {}
        for key, value in tls.items():
            if isinstance(value, str) and not Path(value).resolve().is_relative_to(pki):
                print("acg-sim: warning: %s commsgw_sbc.tls.%s = %s is not under %s" % (host, key, value, pki),
                      file=sys.stderr)
