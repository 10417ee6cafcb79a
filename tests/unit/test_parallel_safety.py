# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The integration modules run side by side (scripts/test: pytest-xdist, one module or xdist_group per
worker, tests/conftest.py): modules in different groups must not use the same fixed loopback addresses,
the harness's leased lab blocks must stay off every module's fixed addresses, and two SBC host labs
(systemd-nspawn) in different groups must not share a bridge or a guest name.

Read from the source: every ``127.0.X.Y`` literal of a module, a fixed ``Topology(block=N)`` / ``BLOCK = N``
(third octets 10, 11, 20, 30, 31, 32 plus N), the inventory a module runs, ``Guest("name", ...)`` and
``BRIDGE = "..."``. The DNS pool 127.0.53.x is leased per server (harness.dns) and left out.
"""

from __future__ import annotations

import ast
import itertools
import re
import typing as t
from pathlib import Path

from harness.kamailio import LAB_BLOCKS
from harness.xdist_groups import module_unit

REPO = Path(__file__).resolve().parents[2]
INTEGRATION = REPO / "tests" / "integration"
TOPOLOGY_OCTETS = (10, 11, 20, 30, 31, 32)  # harness.kamailio.Topology's third octets before the block
LEASED = {0, 53}  # 127.0.0.x: every test's own ports; 127.0.53.x: DNS servers, leased one by one

# Inventories a module runs its playbooks or scripts/lab on: their addresses are the module's too.
RUNS_INVENTORY = {"test_lab.py": "demo", "test_probe_playbook.py": "lab"}

# (third octet, what uses it, the module beside it) -> why sharing it is no collision (no address and port
# bound by both, no traffic of one reaching the other). "leased" stands for a LAB_BLOCKS block.
SHARED_ON_PURPOSE = {
    (10, "leased", "test_probe_playbook.py"): "its TLS peers bind TCP 5061; block 0's peers UDP 5060",
    (20, "leased", "test_probe_playbook.py"): "it runs no Kamailio: its SBC address is validated, never bound",
    (30, "leased", "test_probe_playbook.py"): "it runs no Kamailio: its SBC address is validated, never bound",
    (31, "leased", "test_probe_playbook.py"): "it runs no Kamailio: its core next hop is validated, never bound",
    (70, "test_drift.py", "test_lab.py"): "test_drift's peers are DNS data (pinged on UDP 5060); the demo SBCs bind TLS 5061",
    (72, "test_drift.py", "test_probe_playbook.py"): ("the probe runs on the controller: the lab SBC's address "
                                                      "is at most its source address, on port 0"),
    (81, "test_lab.py", "test_probe_playbook.py"): "inventory/lab's core next hop is validated, never bound",
    (99, "test_push.py", "test_refresher.py"): "outsider sources: push binds .9 on port 0, the refresher's .7 is DNS data",
    (199, "test_probe_live.py", "test_probe_playbook.py"): "SIPp of test_probe_live on .1, of test_probe_playbook on .2",
    (201, "test_inventory_playbooks.py", "test_offline_render.py"): "SRV targets written into plans, never bound",
    (234, "test_push.py", "test_refresher.py"): "a core next hop Kamailio sends to and nothing listens on",
}


def _groups(source: str, path: Path) -> set[str]:
    """The module's unit of work as tests/conftest.py schedules it (its own path when it names no group)."""
    return {module_unit(source, str(path.relative_to(REPO)))}


def _leased_octets() -> dict[int, int]:
    """Third octet -> the LAB_BLOCKS block (harness.kamailio.BlockLease) it belongs to."""
    return {block + o: block for block in LAB_BLOCKS for o in TOPOLOGY_OCTETS}


def _fixed_octets(source: str, name: str, leases_a_block: bool) -> set[int]:
    octets = {int(m) for m in re.findall(r"127\.0\.(\d+)\.", source)}
    # Octet 32 is Topology.outsider()'s, taken only by modules that call it.
    used = [o for o in TOPOLOGY_OCTETS if o != 32 or "outsider(" in source]
    for block in re.findall(r"(?:Topology\(block=|^BLOCK = )(\d+)", source, re.MULTILINE):
        octets |= {int(block) + o for o in used}
    if leases_a_block:
        # Its Topology(block=0) placeholder and the addresses its docstring gives for block 0 are the leased
        # block's: whichever block the lease hands out.
        octets -= set(_leased_octets())
    if name in RUNS_INVENTORY:
        for path in (REPO / "inventory" / RUNS_INVENTORY[name]).rglob("*.yml"):
            octets |= {int(m) for m in re.findall(r"127\.0\.(\d+)\.", path.read_text())}
    return octets - LEASED


class Module(t.NamedTuple):
    name: str
    groups: frozenset[str]
    octets: frozenset[int]
    leases_a_block: bool
    guests: frozenset[str]
    bridges: frozenset[str]


def modules() -> list[Module]:
    found = []
    for path in sorted(INTEGRATION.glob("test_*.py")):
        source = path.read_text()
        ast.parse(source)  # a module that does not parse has no say here
        leases_a_block = "BlockLease()" in source
        found.append(Module(path.name, frozenset(_groups(source, path)),
                            frozenset(_fixed_octets(source, path.name, leases_a_block)), leases_a_block,
                            frozenset(re.findall(r"Guest\(\"([^\"]+)\"", source)),
                            frozenset(re.findall(r"^BRIDGE = \"([^\"]+)\"", source, re.MULTILINE))))
    return found


def _apart(a: Module, b: Module) -> bool:
    """May run at the same time: no group in common."""
    return not (a.groups & b.groups)


def test_modules_in_different_groups_use_different_fixed_addresses() -> None:
    clashes = []
    for a, b in itertools.combinations(modules(), 2):
        if _apart(a, b):
            clashes += ["127.0.%d.x: %s and %s" % (o, a.name, b.name)
                        for o in sorted(a.octets & b.octets) if (o, a.name, b.name) not in SHARED_ON_PURPOSE]
    assert not clashes, "modules that may run side by side share fixed addresses:\n" + "\n".join(clashes)


def test_leased_lab_blocks_stay_off_fixed_addresses() -> None:
    """harness.kamailio.BlockLease hands out LAB_BLOCKS to whichever module asks, beside any other module."""
    leased = _leased_octets()
    assert len(leased) == len(LAB_BLOCKS) * len(TOPOLOGY_OCTETS), "LAB_BLOCKS overlap each other: %s" % (LAB_BLOCKS,)
    clashes = ["block %d's 127.0.%d.x: %s" % (leased[o], o, m.name)
               for m in modules() if not m.leases_a_block
               for o in sorted(m.octets & set(leased)) if (o, "leased", m.name) not in SHARED_ON_PURPOSE]
    assert not clashes, "leased lab blocks on fixed addresses of other modules:\n" + "\n".join(clashes)


def test_sbc_host_labs_in_different_groups_share_no_bridge_or_guest_name() -> None:
    """systemd-nspawn names the host side of a guest's veth after the first 12 characters of its name."""
    clashes = []
    for a, b in itertools.combinations(modules(), 2):
        if _apart(a, b):
            clashes += ["guest %s: %s and %s" % (g, a.name, b.name)
                        for g in sorted({g[:12] for g in a.guests} & {g[:12] for g in b.guests})]
            clashes += ["bridge %s: %s and %s" % (n, a.name, b.name) for n in sorted(a.bridges & b.bridges)]
    assert not clashes, "SBC host labs that may run side by side collide:\n" + "\n".join(clashes)


def test_the_reading_finds_what_it_looks_for() -> None:
    """The source reading is no dummy: it sees a module's literals, its fixed block, its inventory, its guests."""
    by_name = {m.name: m for m in modules()}
    assert {240, 246} <= by_name["test_migration.py"].octets
    assert {160, 170, 181} <= by_name["test_probe_kamailio.py"].octets  # Topology(block=150)
    assert {60, 80, 81} <= by_name["test_lab.py"].octets  # inventory/demo
    assert by_name["test_kamailio_conformance.py"].leases_a_block
    assert "sbc-ams-1" in by_name["test_production_hosts.py"].guests and by_name["test_sbc_hosts.py"].bridges
    assert by_name["test_production_hosts.py"].groups == by_name["test_production_tls.py"].groups == {"sbc-hosts"}
