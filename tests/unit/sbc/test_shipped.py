# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The code shipped to SBC hosts (module_utils/shipped.py, lookup shipped_code, the kamailio role)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ansible.errors import AnsibleLookupError

from ansible_collections.commsgw.routing.plugins.lookup.shipped_code import LookupModule
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.shipped import (
    PACKAGE, ShippedCodeError, module_utils_dir, shipped_files)
from ansible_collections.commsgw.routing.tests.harness.refresher_install import install_refresher, refresher_libraries

ROOT = Path(__file__).resolve().parents[3]


def test_the_refresher_ships_with_everything_it_imports() -> None:
    files = shipped_files("kamailio.refresher")
    assert list(files)[0] == "kamailio/refresher.py"
    # kamailio/rows.py imports srv_lookup: found, not listed by hand; a module in the kamailio package brings the
    # package's __init__.py. The renderer's view (kamailio/view.py) is not needed on the host and is not shipped.
    assert {"kamailio/refresher.py", "kamailio/__init__.py", "kamailio/rows.py", "kamailio/runtime.py", "srv/lookup.py",
            "core/safe_files.py", "host/lease.py", "kamailio/refresher_health.py", "kamailio/defaults.py", "srv/__init__.py",
            "core/__init__.py", "host/__init__.py"} == set(files)
    for name, text in files.items():
        assert text == (Path(module_utils_dir()) / name).read_text(encoding="utf-8"), name
    assert LookupModule().run(["kamailio.refresher", "kamailio.rows"]) == [{"name": n, "content": c} for n, c in files.items()]


def _write(directory: Path, name: str, *imports: str) -> None:
    (directory / (name + ".py")).write_text("\n".join(imports) + "\n", encoding="utf-8")


def test_a_collection_import_without_plain_fallback_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, "entry", "try:", "    from %s.ok import x" % PACKAGE, "except ImportError:", "    from ok import x")
    _write(tmp_path, "ok", "try:", "    from %s.bad import y" % PACKAGE, "except ImportError:", "    from bad import y")
    _write(tmp_path, "bad", "from %s.findings import Findings" % PACKAGE)
    with pytest.raises(ShippedCodeError, match=r"module_utils/bad.py is shipped to SBC hosts .* imports findings by "
                                               r"the collection path only; add the plain fallback"):
        shipped_files("entry", str(tmp_path))
    _write(tmp_path, "bad", "import json")
    assert list(shipped_files("entry", str(tmp_path))) == ["entry.py", "ok.py", "bad.py"]
    with pytest.raises(ShippedCodeError, match="cannot read"):
        shipped_files("absent", str(tmp_path))


def test_lookup_reports_unshippable_code() -> None:
    with pytest.raises(AnsibleLookupError, match="shipped module no_such_module"):
        LookupModule().run(["no_such_module"])


def test_the_installed_refresher_runs_without_the_collection(tmp_path: Path) -> None:
    script = install_refresher(tmp_path)
    # -I: isolated (no PYTHONPATH, no user site): only the installed files and the interpreter's own packages.
    run = subprocess.run([sys.executable, "-I", str(script), "--help"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.py")) == sorted(refresher_libraries())


def test_the_role_does_not_reach_into_module_utils() -> None:
    """Item 5 of issue 10: the role gets the shipped code from the lookup, not by a relative path."""
    for path in (ROOT / "roles").rglob("*"):
        if path.is_file() and path.suffix in (".yml", ".yaml", ".j2", ".py"):
            assert "../plugins" not in path.read_text(encoding="utf-8"), path


def test_a_module_in_a_package_ships_with_the_package_init(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    _write(tmp_path, "pkg/entry", "try:", "    from %s.pkg.rows import r" % PACKAGE, "except ImportError:",
           "    from pkg.rows import r")
    _write(tmp_path, "pkg/rows", "try:", "    from %s.flat import f" % PACKAGE, "except ImportError:",
           "    from flat import f")
    _write(tmp_path, "flat", "import json")
    assert list(shipped_files("pkg.entry", str(tmp_path))) == ["pkg/entry.py", "pkg/__init__.py", "pkg/rows.py",
                                                               "flat.py"]
    # the plain fallback must name the same module: 'from rows import' would not find pkg/rows.py on the host
    _write(tmp_path, "pkg/entry", "try:", "    from %s.pkg.rows import r" % PACKAGE, "except ImportError:",
           "    from rows import r")
    with pytest.raises(ShippedCodeError, match=r"module_utils/pkg/entry.py is shipped .* imports pkg.rows"):
        shipped_files("pkg.entry", str(tmp_path))
