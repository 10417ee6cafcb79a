# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 25 item 4: sbc_facts renders only the variables that may hold a template, and gives the same facts
as rendering every one through Ansible's HostVars (a real inventory, variable manager and HostVars)."""

from __future__ import annotations

import typing as t
from pathlib import Path

import yaml
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.commsgw.routing.plugins.plugin_utils import sbc_facts as facts_module
from ansible_collections.commsgw.routing.plugins.plugin_utils.sbc_facts import SBC_VARS, sbc_facts

DEPLOYMENT = {"name": "contoso", "type": "lab", "base_domain": "d.commsgw.azure.com",
              "service_regions": [{"name": "region1", "ip_ranges": ["20.1.2.16/28"]}]}


def _hostvars(tmp_path: Path) -> tuple[HostVars, list[str]]:
    inventory = {"all": {"children": {"acg": {
        "vars": {"commsgw_deployment": DEPLOYMENT, "commsgw_sbc_platform": "kamailio", "site_name": "ams"},
        "children": {
            "site_ams": {"vars": {"commsgw_site": "{{ site_name }}"},  # a template: rendered per host
                         "hosts": {"sbc-1": {"commsgw_sbc": {"config_dir": "/etc/kamailio"}},
                                   "sbc-2": {"commsgw_dns_nameservers": ["192.0.2.53"]}}}}},
        "ungrouped": {"hosts": {"monitor": {}}}}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=[str(tmp_path / "hosts.yml")])
    variables = VariableManager(loader=loader, inventory=manager)
    return HostVars(inventory=manager, variable_manager=variables, loader=loader), ["sbc-1", "sbc-2", "monitor"]


def test_the_facts_are_what_rendering_every_variable_gives(tmp_path: Path) -> None:
    hostvars, hosts = _hostvars(tmp_path)
    found = sbc_facts(hostvars, hosts)
    rendered = {host: {name: hostvars[host][name] for name in SBC_VARS if name in hostvars[host]}
                for host in hosts if "commsgw_deployment" in hostvars[host]}
    assert found == rendered
    assert set(found) == {"sbc-1", "sbc-2"} and found["sbc-1"]["commsgw_site"] == "ams"
    assert found["sbc-1"]["commsgw_deployment"] == DEPLOYMENT


def test_only_a_host_with_a_variable_that_may_hold_a_template_is_rendered(tmp_path: Path) -> None:
    hostvars, hosts = _hostvars(tmp_path)

    class Counting:
        """HostVars, counting the hosts whose variables are rendered."""

        def __init__(self) -> None:
            self.rendered: list[str] = []

        def raw_get(self, host: str) -> t.Any:
            return hostvars.raw_get(host)

        def __getitem__(self, host: str) -> t.Any:
            self.rendered.append(host)
            return hostvars[host]

    counting = Counting()
    assert sbc_facts(counting, hosts) == sbc_facts(hostvars, hosts)
    assert counting.rendered == ["sbc-1", "sbc-2"]  # for commsgw_site only (the test above checks the values)
    (tmp_path / "plain.yml").write_text(yaml.safe_dump({"all": {"hosts": {"sbc-3": {
        "commsgw_deployment": DEPLOYMENT, "commsgw_site": "ams"}}}}))
    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=[str(tmp_path / "plain.yml")])
    hostvars = HostVars(inventory=manager, variable_manager=VariableManager(loader=loader, inventory=manager),
                        loader=loader)
    counting = Counting()
    assert sbc_facts(counting, ["sbc-3"]) == {"sbc-3": {"commsgw_deployment": DEPLOYMENT, "commsgw_site": "ams"}}
    assert counting.rendered == []


def test_plain_values_are_told_from_possible_templates() -> None:
    seen: dict[int, t.Any] = {}
    assert facts_module._plain({"a": [1, 2.0, None, True, "x"], "b": ("y",)}, seen)
    assert not facts_module._plain({"a": ["{{ x }}"]}, seen)
    assert not facts_module._plain({"{% if %}": 1}, seen)
    assert not facts_module._plain(["{# c #}"], seen)
    assert not facts_module._plain(object(), seen)  # anything else: rendered, as before
