# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The code shipped to SBC hosts, assembled from module_utils in one place.

The SRV refresher runs on the SBC host, where there is no collection: ``refresher.py`` and every
module_utils file it imports, directly or not, are copied next to its script. ``shipped_files``
finds that set by reading the imports themselves (so it cannot go stale as a hand-kept list can),
and refuses a shipped file whose collection import has no plain fallback import (``from x import``)
next to it, which would fail on the host. The kamailio role installs what it returns (lookup
``commsgw.routing.shipped_code``), and so do the tests (tests/harness/refresher_install.py).
"""

from __future__ import annotations

import ast
import os
import typing as t

PACKAGE = "ansible_collections.commsgw.routing.plugins.module_utils"
REFRESHER = "refresher"


class ShippedCodeError(ValueError):
    """A shipped module cannot work on the SBC host as it stands."""


def module_utils_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def _imports(tree: ast.AST) -> tuple[list[str], set[str]]:
    """(module_utils modules imported by the collection path, names imported by a plain import)."""
    collection: list[str] = []
    plain: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith(PACKAGE + "."):
                collection.append(node.module[len(PACKAGE) + 1:])
            elif node.module == PACKAGE:
                collection.extend(alias.name for alias in node.names)
            elif "." not in node.module:
                plain.add(node.module)
        elif isinstance(node, ast.Import):
            plain.update(alias.name for alias in node.names if "." not in alias.name)
    return collection, plain


def shipped_files(entry: str = REFRESHER, directory: t.Optional[str] = None) -> dict[str, str]:
    """``{file name: text}`` of ``entry`` and every module_utils module it needs, ``entry`` first."""
    directory = directory or module_utils_dir()
    found: dict[str, str] = {}
    todo = [entry]
    while todo:
        name = todo.pop(0)
        if name + ".py" in found:
            continue
        path = os.path.join(directory, name + ".py")
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise ShippedCodeError("shipped module %s: cannot read %s: %s" % (name, path, exc)) from exc
        collection, plain = _imports(ast.parse(text, filename=path))
        missing = sorted(set(collection) - plain)
        if missing:
            raise ShippedCodeError(
                "module_utils/%s.py is shipped to SBC hosts (it is imported by %s) but imports %s by the collection "
                "path only; add the plain fallback next to it (try: from %s.%s import ... except ImportError: "
                "from %s import ...), since there is no collection on the host"
                % (name, entry, ", ".join(missing), PACKAGE, missing[0], missing[0]))
        found[name + ".py"] = text
        todo.extend(sorted(set(collection)))
    return found
