# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 11 item 6: Ansible conventions of the collection's role and playbooks.

* every commsgw.routing.kamailio_service task of the role takes its shared arguments from one
  module_defaults entry (roles/kamailio/vars/main.yml): the rollback restart of migrate.yml once had its
  own copy that ran the host binary instead of the rootfs wrapper and Kamailio as root (no ``user``);
* meta/runtime.yml action_groups name real modules;
* every entry point the playbooks, the role and the tests use (tasks_from) has a role argument spec.
"""

from __future__ import annotations

import re
import typing as t
from pathlib import Path

import yaml

from tests.harness.tools import module_docs

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "kamailio"
SERVICE = "commsgw.routing.kamailio_service"
# What a single call may still say itself: the wanted state and, for reloads, the methods.
PER_CALL = {"state", "reload"}


def _tasks(items: t.Any, inherited: t.Mapping[str, t.Any]) -> t.Iterator[tuple[dict[str, t.Any], dict[str, t.Any]]]:
    """(task, module_defaults in force) for every task, blocks/rescue/always walked."""
    for item in items or []:
        defaults = dict(inherited)
        defaults.update(item.get("module_defaults") or {})
        if "block" in item:
            for key in ("block", "rescue", "always"):
                yield from _tasks(item.get(key), defaults)
        else:
            yield item, defaults


def _service_tasks() -> list[tuple[str, dict[str, t.Any], dict[str, t.Any]]]:
    found = []
    for path in sorted((ROLE / "tasks").glob("*.yml")):
        for task, defaults in _tasks(yaml.safe_load(path.read_text()), {}):
            if SERVICE in task:
                found.append((path.name, task, defaults))
    return found


def _spec_options() -> set[str]:
    """kamailio_service's option names as ansible-doc shows them (documentation fragments merged)."""
    return set(module_docs("kamailio_service")["kamailio_service"]["options"])


def test_every_kamailio_service_call_takes_the_shared_arguments_from_module_defaults() -> None:
    calls = _service_tasks()
    assert len(calls) >= 6, calls
    for name, task, defaults in calls:
        own = set(task[SERVICE] or {})
        assert own <= PER_CALL, "%s: task %r passes %s itself; shared arguments belong in kamailio_service_defaults" % (
            name, task["name"], sorted(own - PER_CALL))
        assert defaults.get(SERVICE) == "{{ kamailio_service_defaults }}", (name, task["name"])


def test_the_shared_arguments_cover_every_option_the_role_controls() -> None:
    shared = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["kamailio_service_defaults"]
    options = _spec_options()
    assert set(shared) <= options, sorted(set(shared) - options)
    # Only the per-call options, the systemd unit name (the role uses Debian's) and the push state directory
    # (every module derives the same one from the configuration directory) are left to the module.
    assert options - set(shared) - PER_CALL == {"service", "state_dir"}
    assert shared["binary"] == "{{ kamailio_command }}", "the rootfs wrapper, not the host binary"
    assert shared["run_as_user"] == "{{ kamailio_user }}"


def test_action_groups_name_existing_modules() -> None:
    groups = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["action_groups"]
    modules = {p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if p.stem != "__init__"}
    assert {"kamailio", "sbc", "inventory"} <= set(groups)
    for group, members in groups.items():
        names = [m for m in members if isinstance(m, str)]
        assert names and set(names) <= modules, (group, sorted(set(names) - modules))


def _entry_points_used() -> set[str]:
    used = {"main"}
    for path in list(REPO.glob("playbooks/**/*.yml")) + list(REPO.glob("roles/**/*.yml")) + list(
            REPO.glob("extensions/**/*.yml")) + list((REPO / "tests").glob("*/*.py")):
        used |= set(re.findall(r"""tasks_from["']?\s*[:=]\s*["']?([A-Za-z0-9_]+)""", path.read_text()))
    return used


def test_every_entry_point_in_use_has_an_argument_spec() -> None:
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    used = _entry_points_used()
    # The playbooks include the platform role's entry points (docs/platforms.md), the tests the role itself.
    assert {"main", "render", "settle", "rollback", "hold", "release"} <= used
    assert used <= set(specs), "entry points without a spec: %s" % sorted(used - set(specs))
    for name in used:
        assert (ROLE / "tasks" / ("%s.yml" % name)).exists(), name
        assert specs[name].get("options"), name
    assert specs["render"]["options"]["kamailio_plan"]["required"] is True
