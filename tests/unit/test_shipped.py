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
from ansible_collections.commsgw.routing.plugins.module_utils.shipped import (
    PACKAGE, ShippedCodeError, module_utils_dir, shipped_files)
from ansible_collections.commsgw.routing.tests.harness.refresher_install import install_refresher

ROOT = Path(__file__).resolve().parents[2]


def test_the_refresher_ships_with_everything_it_imports() -> None:
    files = shipped_files()
    assert list(files)[0] == "refresher.py"
    # kamailio.py imports core_policy and host_port, core_policy imports findings: found, not listed by hand.
    assert {"refresher.py", "kamailio.py", "kamailio_runtime.py", "srv_lookup.py", "safe_files.py", "core_policy.py",
            "findings.py", "host_port.py"} == set(files)
    for name, text in files.items():
        assert text == (Path(module_utils_dir()) / name).read_text(encoding="utf-8"), name
    assert LookupModule().run(["refresher", "kamailio"]) == [{"name": n, "content": c} for n, c in files.items()]


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
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".py") == sorted(shipped_files())


def test_the_role_does_not_reach_into_module_utils() -> None:
    """Item 5 of issue 10: the role gets the shipped code from the lookup, not by a relative path."""
    for path in (ROOT / "roles").rglob("*"):
        if path.is_file() and path.suffix in (".yml", ".yaml", ".j2", ".py"):
            assert "../plugins" not in path.read_text(encoding="utf-8"), path
