# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The code shipped to SBC hosts, assembled from module_utils in one place.

A program a platform runs on the SBC host without the collection (an SRV refresher, ``Refresher`` of the
platform contract) is copied there with every module_utils file it imports, directly or not, each keeping
its place in module_utils (``<package>/<module>.py`` with the package's ``__init__.py``).
``shipped_files(entry)`` finds that set by reading the imports themselves (so it cannot go stale as a
hand-kept list can), and refuses a shipped file whose collection import has no plain fallback import
next to it (``from x import`` or ``from package.x import``), which would fail on the host. The platform's
role installs what it returns (lookup ``commsgw.routing.shipped_code``), and so do the tests
(tests/harness/refresher_install.py). ``shipped_tree`` ships under the collection's own layout instead
(the probe exporter).
"""

from __future__ import annotations

import ast
import os
import typing as t

PACKAGE = "ansible_collections.commsgw.routing.plugins.module_utils"


class ShippedCodeError(ValueError):
    """A shipped module cannot work on the SBC host as it stands."""


def module_utils_dir() -> str:
    # This file lives in module_utils/sbc/.
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _imports(tree: ast.AST, directory: t.Optional[str] = None) -> tuple[list[str], set[str]]:
    """(module_utils modules imported by the collection path, names imported by a plain import).

    With ``directory`` (module_utils), ``from PACKAGE.probe import view`` also names the submodule
    ``probe.view`` when that file exists there."""
    collection: list[str] = []
    plain: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith(PACKAGE + "."):
                module = node.module[len(PACKAGE) + 1:]
                collection.append(module)
                if directory is not None:
                    submodules = ("%s.%s" % (module, alias.name) for alias in node.names)
                    collection.extend(m for m in submodules if os.path.isfile(os.path.join(directory, _file_name(m))))
            elif node.module == PACKAGE:
                collection.extend(alias.name for alias in node.names)
            elif not node.module.startswith("ansible_collections."):
                plain.add(node.module)
        elif isinstance(node, ast.Import):
            plain.update(alias.name for alias in node.names if not alias.name.startswith("ansible_collections."))
    return collection, plain


def _file_name(module: str) -> str:
    """``probe.view`` -> ``probe/view.py``: the file's place under module_utils, and on the host."""
    return module.replace(".", "/") + ".py"


def _packages(module: str) -> list[str]:
    """The packages ``module`` lies in, outermost first (``probe.view`` -> ``["probe"]``)."""
    parts = module.split(".")[:-1]
    return [".".join(parts[:i + 1]) for i in range(len(parts))]


def _read(directory: str, name: str, module: str, entry: str) -> str:
    path = os.path.join(directory, name)
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise ShippedCodeError("shipped module %s (needed by %s): cannot read %s: %s"
                               % (module, entry, path, exc)) from exc


def shipped_files(entry: str, directory: t.Optional[str] = None) -> dict[str, str]:
    """``{file name: text}`` of ``entry`` and every module_utils module it needs, ``entry`` first.

    A module in a package (``probe.view``) is named by its path (``probe/view.py``) and brings
    the package's ``__init__.py``, so the plain import ``from probe.view import ...`` works on the host."""
    return _closure(entry, directory or module_utils_dir(), plain_imports=True)


def shipped_tree(entry: str, directory: t.Optional[str] = None) -> dict[str, str]:
    """``{path: text}`` of ``entry`` and every module_utils module it needs, under the collection's own
    layout (``ansible_collections/commsgw/routing/plugins/module_utils/probe/run.py``): a lib directory on
    the host that is put first on ``sys.path`` imports them by their collection path, so they need no
    plain fallback imports (the probe exporter ships this way)."""
    found = _closure(entry, directory or module_utils_dir(), plain_imports=False)
    prefix = PACKAGE.replace(".", "/") + "/"
    return {prefix + name: text for name, text in found.items()}


def _closure(entry: str, directory: str, plain_imports: bool) -> dict[str, str]:
    """The files of ``entry`` and what it imports, directly or not; ``plain_imports``: each collection
    import needs its plain fallback (files installed flat next to a script)."""
    found: dict[str, str] = {}
    todo = [entry]
    while todo:
        module = todo.pop(0)
        name = _file_name(module)
        if not plain_imports and os.path.isdir(os.path.join(directory, *module.split("."))):
            name = _file_name(module + ".__init__")  # ``from PACKAGE.probe import view`` imports the package
        if name in found:
            continue
        text = _read(directory, name, module, entry)
        tree = ast.parse(text, filename=os.path.join(directory, name))
        collection, plain = _imports(tree) if plain_imports else _imports(tree, directory)
        missing = sorted(set(collection) - plain) if plain_imports else []
        if missing:
            raise ShippedCodeError(
                "module_utils/%s is shipped to SBC hosts (it is imported by %s) but imports %s by the collection "
                "path only; add the plain fallback next to it (try: from %s.%s import ... except ImportError: "
                "from %s import ...), since there is no collection on the host"
                % (name, entry, ", ".join(missing), PACKAGE, missing[0], missing[0]))
        found[name] = text
        for package in _packages(module):
            init = _file_name(package + ".__init__")
            if init not in found:
                found[init] = _read(directory, init, package, entry)
        todo.extend(sorted(set(collection)))
    return found
