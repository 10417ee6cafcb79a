# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 10: generic code imports nothing of a platform. Every file under plugins/ is parsed with ``ast``;
a generic file that imports Kamailio code fails here. Kamailio's code is its package
(``plugins/module_utils/kamailio/``) and the plugins named ``kamailio_*`` (its modules and renderer). The
registry (``sbc_platforms``) is the one generic file allowed to import a platform's registration
(docs/platforms.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
# The one generic importer of platform code: one import line per registered platform.
REGISTRY = "plugins/module_utils/sbc_platforms.py"


def _is_kamailio_part(part: str) -> bool:
    return part == "kamailio" or part.startswith("kamailio_")


def _is_kamailio(module: str) -> bool:
    """A dotted module name inside Kamailio's package, or a module named ``kamailio_*``."""
    return any(_is_kamailio_part(part) for part in module.split("."))


def kamailio_file(rel: str) -> bool:
    """``plugins/<type>/kamailio/...`` or ``plugins/<type>/kamailio_*.py``."""
    parts = Path(rel).with_suffix("").parts[2:]
    return any(_is_kamailio_part(part) for part in parts)


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


def forbidden_imports(rel: str, source: str) -> list[str]:
    if kamailio_file(rel) or rel == REGISTRY:
        return []
    return sorted({m for m in imported_modules(source) if _is_kamailio(m)})


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
    generic = [rel for rel in _plugin_files() if not kamailio_file(rel) and rel != REGISTRY]
    for name in ("validation", "plan", "srv", "srv_lookup", "probe", "probe_view", "migration", "migration_semantic",
                 "sbc_readback", "sbc_settings", "inventory", "findings", "model", "azure_arm"):
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
    assert forbidden_imports("plugins/module_utils/probe.py", source)
    assert not forbidden_imports(REGISTRY, source)
    assert not forbidden_imports("plugins/module_utils/kamailio/platform.py", source)
    assert not forbidden_imports("plugins/modules/kamailio_service.py", source)


def test_kamailio_files_are_told_apart_from_generic_ones() -> None:
    assert kamailio_file("plugins/module_utils/kamailio/refresher.py")
    assert kamailio_file("plugins/plugin_utils/kamailio_render.py")
    assert not kamailio_file("plugins/module_utils/shipped.py")
    assert not kamailio_file("plugins/modules/probe.py")
    assert not _is_kamailio("ansible_collections.commsgw.routing.plugins.module_utils.sbc_platform")


def test_generic_imports_pass() -> None:
    assert not forbidden_imports("plugins/module_utils/probe.py",
                                 "from ansible_collections.commsgw.routing.plugins.module_utils.sbc_platforms "
                                 "import PLATFORMS\nimport os\n")
