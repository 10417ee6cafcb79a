# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test helper: the host variables Ansible would give each host of a YAML inventory directory.

Only what the shipped inventories use: hosts.yml groups (``children``/``hosts``/``vars``) and
``group_vars/<group>.yml`` files, merged parent group first and host variables last, as Ansible does.
Reading the files ourselves keeps these unit tests free of an Ansible inventory manager.
"""

from __future__ import annotations

import copy
import pathlib
import typing as t

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
INVENTORIES = REPO / "inventory"


def _walk(name: str, group: t.Mapping[str, t.Any], depth: int, parents: tuple[tuple[int, str], ...],
          hosts: dict[str, dict[str, t.Any]], memberships: dict[str, set[tuple[int, str]]],
          group_vars: dict[str, dict[str, t.Any]]) -> None:
    group = group or {}
    chain = parents + ((depth, name),)
    group_vars.setdefault(name, {}).update(group.get("vars") or {})
    for host, variables in (group.get("hosts") or {}).items():
        hosts.setdefault(host, {}).update(variables or {})
        memberships.setdefault(host, set()).update(chain)
    for child, body in (group.get("children") or {}).items():
        _walk(child, body, depth + 1, chain, hosts, memberships, group_vars)


def load_hostvars(directory: pathlib.Path) -> dict[str, dict[str, t.Any]]:
    """Map each host of ``directory/hosts.yml`` to its merged variables."""
    inventory = yaml.safe_load((directory / "hosts.yml").read_text(encoding="utf-8"))
    hosts: dict[str, dict[str, t.Any]] = {}
    memberships: dict[str, set[tuple[int, str]]] = {}
    group_vars: dict[str, dict[str, t.Any]] = {}
    for name, body in inventory.items():
        _walk(name, body, 0, (), hosts, memberships, group_vars)
    for path in sorted((directory / "group_vars").glob("*.yml")):
        group_vars.setdefault(path.stem, {}).update(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    result = {}
    for host, own in hosts.items():
        merged: dict[str, t.Any] = {}
        # Ansible: shallower groups first, then by name; host variables win over every group.
        for _depth, group in sorted(memberships[host]):
            merged.update(group_vars.get(group, {}))
        merged.update(own)
        # Each host gets its own copy, as from Ansible's hostvars: tests may edit one host's facts.
        result[host] = copy.deepcopy(merged)
    return result


def inventory_names() -> list[str]:
    return sorted(p.name for p in INVENTORIES.iterdir() if (p / "hosts.yml").is_file())
