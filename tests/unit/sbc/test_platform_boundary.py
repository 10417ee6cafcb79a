# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 10: generic code imports nothing of a platform, and no platform imports another's. Every file under
plugins/ is parsed with ``ast``. A platform's code is its package (``plugins/module_utils/<name>/``) and the
plugins named ``<name>_*`` (its modules and renderer), for every name in the registry, so a platform is
covered the moment it is registered. The registry (``sbc.registry``) is the one generic file allowed to
import a platform's registration (docs/platforms.md)."""

from __future__ import annotations

import ast
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import platform_names

PLUGINS = Path(__file__).resolve().parents[3] / "plugins"
# The one generic importer of platform code: one import line per registered platform.
REGISTRY = "plugins/module_utils/sbc/registry.py"
NAMES = platform_names()


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
    """The platform of ``plugins/<type>/<name>/...`` or ``plugins/<type>/<name>_*.py``; None: generic."""
    for part in Path(rel).with_suffix("").parts[2:]:
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


def _plugin_files() -> list[str]:
    return sorted(str(p.relative_to(PLUGINS.parent)) for p in PLUGINS.rglob("*.py"))


def test_no_generic_file_imports_kamailio_code() -> None:
    offenders = {}
    for rel in _plugin_files():
        bad = forbidden_imports(rel, (PLUGINS.parent / rel).read_text(encoding="utf-8"))
        if bad:
            offenders[rel] = bad
    assert not offenders, "generic files importing Kamailio code (go through sbc_platforms): %s" % offenders


def test_the_generic_files_named_in_the_issue_are_checked() -> None:
    generic = [rel for rel in _plugin_files() if file_owner(rel) is None and rel != REGISTRY]
    for name in ("validation/validate", "plan/site_plan", "srv/deployment", "srv/lookup", "probe/run", "probe/view",
                 "migration/transition", "migration/semantic", "sbc/readback", "sbc/settings", "inventory/hosts",
                 "core/findings", "inventory/model", "azure/arm"):
        assert "plugins/module_utils/%s.py" % name in generic
    for name in ("probe", "sbc_state_info", "migration_diff", "migration_wait", "routing_plan"):
        assert "plugins/modules/%s.py" % name in generic


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


def test_kamailio_files_are_told_apart_from_generic_ones() -> None:
    assert "kamailio" in NAMES
    assert file_owner("plugins/module_utils/kamailio/refresher.py") == "kamailio"
    assert file_owner("plugins/plugin_utils/kamailio_render.py") == "kamailio"
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


def test_generic_imports_pass() -> None:
    assert not forbidden_imports("plugins/module_utils/probe/run.py",
                                 "from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry "
                                 "import PLATFORMS\nimport os\n")
