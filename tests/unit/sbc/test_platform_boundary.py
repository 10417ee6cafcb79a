# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issues 10 and 22: the boundary between generic code and the SBC platforms, checked in Python and in YAML.

* Python: no generic file imports a platform's code, and no platform imports another's. Every file under
  plugins/ is parsed with ``ast``. A platform's code is its package (``plugins/module_utils/<name>/``) and the
  plugins named ``<name>_*`` (its modules, filters, renderer). The registry (``sbc.registry``) is the one
  generic file that names a platform's registration.
* YAML: the playbooks (``playbooks/``, ``playbooks/tasks/``, ``playbooks/vars/``), the generic roles (every role
  not named after a platform, their templates included) and ``meta/runtime.yml``'s generic action groups name no
  platform and no platform variable (``<name>_...``): they hand a role ``commsgw_sbc_plan`` and read back
  neutral results, whatever the platform.

The platform names come from the registry (``SHIPPED``), so a platform is covered the moment it is registered.
Each check is a function of the repository root, and the tests at the end plant a leak in a copy of the
repository to show that the check fails on it (docs/platforms.md, "The boundary check").
"""

from __future__ import annotations

import ast
import re
import shutil
import typing as t
from pathlib import Path

import pytest
import yaml

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import platform_names

ROOT = Path(__file__).resolve().parents[3]
# The one generic importer of platform code: one line per shipped platform.
REGISTRY = "plugins/module_utils/sbc/registry.py"
NAMES = platform_names()
PLAYBOOK_DIRS = ("playbooks", "playbooks/tasks", "playbooks/vars")


def _owner_of_part(part: str, names: t.Sequence[str]) -> t.Optional[str]:
    for name in names:
        if part == name or part.startswith(name + "_"):
            return name
    return None


def module_owner(module: str, names: t.Sequence[str] = NAMES) -> t.Optional[str]:
    """The platform a dotted module name belongs to (inside its package, or named ``<name>_*``); None: generic."""
    for part in module.split("."):
        owner = _owner_of_part(part, names)
        if owner:
            return owner
    return None


def file_owner(rel: str, names: t.Sequence[str] = NAMES) -> t.Optional[str]:
    """The platform of ``plugins/<type>/<name>/...``, ``plugins/<type>/<name>_*.py`` or ``roles/<name>/...``."""
    parts = Path(rel).with_suffix("").parts
    for part in parts[2:] if parts[0] == "plugins" else parts[1:2]:
        owner = _owner_of_part(part, names)
        if owner:
            return owner
    return None


def imported_modules(source: str) -> list[str]:
    """Every module an ``import``/``from ... import`` names, including ``from package import module``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
            found.extend("%s.%s" % (node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):  # from . import x
            found.extend(alias.name for alias in node.names)
    return found


def forbidden_imports(rel: str, source: str, names: t.Sequence[str] = NAMES) -> list[str]:
    """The imports of another platform's code in file ``rel`` (the registry may import every platform)."""
    if rel == REGISTRY:
        return []
    owner = file_owner(rel, names)
    return sorted({m for m in imported_modules(source) if module_owner(m, names) not in (None, owner)})


def python_leaks(root: Path = ROOT, names: t.Sequence[str] = NAMES) -> dict[str, list[str]]:
    """plugins/ file -> the platform code it imports without being that platform's."""
    leaks = {}
    for path in sorted((root / "plugins").rglob("*.py")):
        rel = str(path.relative_to(root))
        bad = forbidden_imports(rel, path.read_text(encoding="utf-8"), names)
        if bad:
            leaks[rel] = bad
    return leaks


def _name_pattern(names: t.Sequence[str]) -> re.Pattern[str]:
    """A platform's name as a word or a word's start (``kamailio``, ``Kamailio``, ``kamailio_user``)."""
    return re.compile(r"(?<![A-Za-z0-9])(%s)" % "|".join(re.escape(n) for n in names), re.IGNORECASE)


def generic_yaml_files(root: Path = ROOT, names: t.Sequence[str] = NAMES) -> list[Path]:
    """The playbooks and every file of the generic roles (tasks, defaults, vars, meta, templates)."""
    found = [p for d in PLAYBOOK_DIRS for p in sorted((root / d).glob("*.yml"))]
    for role in sorted(p for p in (root / "roles").iterdir() if p.is_dir()):
        if file_owner("roles/%s" % role.name, names) is None:
            found.extend(p for p in sorted(role.rglob("*")) if p.is_file() and p.suffix in (".yml", ".j2"))
    return found


def yaml_leaks(root: Path = ROOT, names: t.Sequence[str] = NAMES) -> list[str]:
    """``file:line: text`` of every platform name or platform variable in the generic YAML."""
    pattern = _name_pattern(names)
    leaks = []
    for path in generic_yaml_files(root, names):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                leaks.append("%s:%d: %s" % (path.relative_to(root), number, line.strip()))
    return leaks


def runtime_group_leaks(root: Path = ROOT, names: t.Sequence[str] = NAMES) -> list[str]:
    """meta/runtime.yml: a generic action group (not named after a platform) that holds a platform's module or
    extends a platform's group."""
    groups = yaml.safe_load((root / "meta" / "runtime.yml").read_text(encoding="utf-8"))["action_groups"]
    leaks = []
    for group, members in groups.items():
        if _owner_of_part(group, names):
            continue  # the platform's own group
        for member in members:
            if isinstance(member, str) and module_owner(member.split(".")[-1], names):
                leaks.append("action group %s: module %s is a platform's" % (group, member))
            elif isinstance(member, dict):
                for extended in (member.get("metadata") or {}).get("extend_group") or []:
                    if _owner_of_part(str(extended).rsplit(".", maxsplit=1)[-1], names):
                        leaks.append("action group %s: extends the platform group %s" % (group, extended))
    return leaks


# --------------------------------------------------------------------------------------------------------------
# The checks on this repository


def test_no_generic_python_imports_platform_code() -> None:
    assert not python_leaks(), "generic files importing a platform's code (go through sbc.registry): %s" % python_leaks()


def test_the_playbooks_and_generic_roles_name_no_platform() -> None:
    leaks = yaml_leaks()
    assert not leaks, "platform names or variables in generic YAML (hand the role commsgw_sbc_plan, read back " \
                      "commsgw_sbc_* results; docs/platforms.md):\n" + "\n".join(leaks)


def test_generic_action_groups_hold_no_platform_module() -> None:
    assert not runtime_group_leaks(), runtime_group_leaks()


def test_the_checks_cover_the_files_named_in_the_issues() -> None:
    generic = {str(p.relative_to(ROOT)) for p in generic_yaml_files()}
    for name in ("playbooks/render.yml", "playbooks/migrate.yml", "playbooks/drift.yml", "playbooks/onboard.yml",
                 "playbooks/probe.yml", "playbooks/tasks/change_record_sbc.yml", "playbooks/tasks/migrate_sbc.yml",
                 "playbooks/vars/sbc.yml", "roles/probe_exporter/defaults/main.yml",
                 "roles/probe_exporter/templates/commsgw-probe-exporter.service.j2"):
        assert name in generic, name
    assert not any(name.startswith("roles/kamailio/") for name in generic)
    plugins = [str(p.relative_to(ROOT)) for p in (ROOT / "plugins").rglob("*.py")]
    python_generic = [rel for rel in plugins if file_owner(rel) is None and rel != REGISTRY]
    for name in ("validation/validate", "plan/site_plan", "plan/core_policy", "srv/deployment", "probe/run",
                 "probe/view", "migration/transition", "migration/semantic", "sbc/readback", "sbc/settings",
                 "sbc/change_record", "inventory/hosts", "inventory/model", "core/findings", "azure/arm", "tls/preflight"):
        assert "plugins/module_utils/%s.py" % name in python_generic, name
    for name in ("probe", "sbc_state_info", "migration_diff", "migration_wait", "routing_plan", "tls_preflight"):
        assert "plugins/modules/%s.py" % name in python_generic


@pytest.mark.parametrize("source", [
    "from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.readback import read_state\n",
    "from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import readback, runtime\n",
    "import ansible_collections.commsgw.routing.plugins.module_utils.kamailio.probe_view as view\n",
    "try:\n    from x.kamailio import build_view\nexcept ImportError:\n    from kamailio import build_view\n",
    "def f():\n    from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render\n",
])
def test_the_check_sees_each_form_of_import(source: str) -> None:
    assert forbidden_imports("plugins/module_utils/probe/run.py", source)
    assert not forbidden_imports(REGISTRY, source)
    assert not forbidden_imports("plugins/module_utils/kamailio/platform.py", source)
    assert not forbidden_imports("plugins/modules/kamailio_service.py", source)


def test_platform_files_are_told_apart_from_generic_ones() -> None:
    assert "kamailio" in NAMES
    assert file_owner("plugins/module_utils/kamailio/refresher.py") == "kamailio"
    assert file_owner("plugins/plugin_utils/kamailio_render.py") == "kamailio"
    assert file_owner("plugins/filter/kamailio_change_step.py") == "kamailio"
    assert file_owner("roles/kamailio/tasks/main.yml") == "kamailio"
    assert file_owner("roles/probe_exporter/tasks/main.yml") is None
    assert file_owner("plugins/module_utils/sbc/shipped.py") is None
    assert file_owner("plugins/modules/probe.py") is None
    assert module_owner("ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract") is None


def test_a_second_platform_is_checked_the_moment_it_is_registered() -> None:
    names = ("acme", "kamailio")
    mine = "from ansible_collections.commsgw.routing.plugins.module_utils.acme.readback import read_state\n"
    theirs = "from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import dispatcher_sets\n"
    assert forbidden_imports("plugins/module_utils/probe/run.py", mine, names)
    assert not forbidden_imports("plugins/module_utils/acme/platform.py", mine, names)
    assert not forbidden_imports("plugins/modules/acme_config.py", mine, names)
    assert forbidden_imports("plugins/module_utils/acme/readback.py", theirs, names)  # no platform uses another's
    assert not forbidden_imports(REGISTRY, mine + theirs, names)
    assert _name_pattern(names).search("    acme_user: x") and not _name_pattern(names).search("    pacme: x")


def test_generic_imports_pass() -> None:
    assert not forbidden_imports("plugins/module_utils/probe/run.py",
                                 "from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry "
                                 "import get_platform\nimport os\n")


# --------------------------------------------------------------------------------------------------------------
# Planted leaks: each check fails on a copy of this repository with one leak planted


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for part in ("playbooks", "roles", "meta", "plugins"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    assert not python_leaks(tmp_path) and not yaml_leaks(tmp_path) and not runtime_group_leaks(tmp_path)
    return tmp_path


def _plant(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("rel, old, new", [
    # The leaks issue 22 found: a platform variable in a playbook, a platform default, platform steps and gates.
    ("playbooks/drift.yml", "        platform_options: \"{{ commsgw_sbc_platform_options }}\"",
     "        platform_options: {run_as_user: \"{{ kamailio_user | default(omit) }}\"}"),
    ("playbooks/drift.yml", "platform: \"{{ commsgw_sbc_platform_name }}\"",
     "platform: \"{{ commsgw_sbc_platform | default('kamailio') }}\""),
    ("playbooks/tasks/change_record_sbc.yml", "commsgw_sbc_change_steps | default([])",
     "kamailio_change_steps | default([])"),
    ("playbooks/vars/sbc.yml", "commsgw_sbc_role:", "# Kamailio first\ncommsgw_sbc_role:"),
    ("roles/probe_exporter/defaults/main.yml", "probe_exporter_port: 9473", "probe_exporter_port: 9473\n"
     "probe_exporter_sbc_group: kamailio"),
    ("roles/probe_exporter/templates/commsgw-probe-exporter.service.j2", "UMask=0077", "UMask=0077\n"
     "ReadWritePaths=/run/kamailio"),
])
def test_the_yaml_check_fails_on_a_planted_leak(copy: Path, rel: str, old: str, new: str) -> None:
    _plant(copy / rel, old, new)
    leaks = yaml_leaks(copy)
    assert leaks and all(leak.startswith(rel + ":") for leak in leaks), leaks


def test_the_action_group_check_fails_on_a_planted_leak(copy: Path) -> None:
    _plant(copy / "meta" / "runtime.yml", "    - sbc_state_info\n", "    - sbc_state_info\n    - kamailio_config\n")
    assert runtime_group_leaks(copy) == ["action group sbc: module kamailio_config is a platform's"]
    _plant(copy / "meta" / "runtime.yml", "  migration:\n", "  migration:\n    - metadata:\n        extend_group:\n"
           "          - commsgw.routing.kamailio\n")
    assert "action group migration: extends the platform group commsgw.routing.kamailio" in runtime_group_leaks(copy)


def test_the_python_check_fails_on_a_planted_leak(copy: Path) -> None:
    _plant(copy / "plugins" / "module_utils" / "migration" / "transition.py", "import json\n",
           "import json\n\nfrom ansible_collections.commsgw.routing.plugins.module_utils.kamailio import rows\n")
    assert python_leaks(copy) == {"plugins/module_utils/migration/transition.py": [
        "ansible_collections.commsgw.routing.plugins.module_utils.kamailio",
        "ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows"]}
