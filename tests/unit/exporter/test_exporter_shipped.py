# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the probe_exporter role installs on an SBC host works there alone: the files of
``shipped_code('exporter.main', layout='collection')`` and the entry script, run by a Python that has
neither Ansible nor the collection (the machine's own /usr/bin/python3, isolated with -I)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.lookup.shipped_code import LookupModule
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.shipped import PACKAGE, shipped_tree
from ansible_collections.commsgw.routing.tests.unit.exporter.exporter_fakes import config_dict

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "roles" / "probe_exporter" / "files" / "commsgw-probe-exporter.py"


def install(target: Path) -> Path:
    for item in LookupModule().run(["exporter.main"], layout="collection"):
        path = target / item["name"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item["content"])
    shutil.copy(SCRIPT, target / "commsgw-probe-exporter")
    return target / "commsgw-probe-exporter"


def test_the_tree_holds_every_module_the_exporter_imports() -> None:
    files = shipped_tree("exporter.main")
    prefix = PACKAGE.replace(".", "/") + "/"
    assert all(name.startswith(prefix) for name in files)
    names = {name[len(prefix):] for name in files}
    # ``from ...module_utils.kamailio import readback as kb``: the package import names the submodule too.
    assert {"exporter/main.py", "exporter/__init__.py", "probe/run.py", "kamailio/__init__.py", "kamailio/readback.py",
            "kamailio/probe_view.py", "sbc/registry.py"} <= names
    assert not {n for n in names if n.startswith(("azure", "migration", "validation"))}, names


@pytest.mark.parametrize("python", ["/usr/bin/python3", sys.executable])
def test_installed_exporter_runs_without_ansible(tmp_path: Path, python: str) -> None:
    if not Path(python).exists():
        pytest.skip("no %s" % python)
    script = install(tmp_path / "lib")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(config_dict()))
    proc = subprocess.run([python, "-I", str(script), "check-config", "--config", str(config)], capture_output=True,
                          text=True, timeout=60, check=False, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok: 1 site(s) s, module(s) default, quick, plain HTTP")
    bad = subprocess.run([python, "-I", str(script), "check-config", "--config", str(tmp_path / "missing.json")],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "cannot read the configuration" in bad.stderr


PRELOAD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.commsgw.routing.plugins.module_utils.exporter import config, main
site = config.parse_config(json.loads(sys.argv[2]))
main.preload(*[site][:main.preload.__code__.co_argcount])  # before issue 22 it took no configuration

class Unreadable:  # after the drop the interpreter's own files may be unreadable (a lab's pyenv under /root)
    def find_spec(self, name, path=None, target=None):
        raise ImportError("no module %s after the privileges are dropped" % name)

sys.meta_path.insert(0, Unreadable())
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import get_platform
hooks = get_platform("kamailio").hooks()
print("hooks", hooks.__name__.rsplit(".", 1)[-1])
"""


@pytest.mark.parametrize("python", ["/usr/bin/python3", sys.executable])
def test_the_exporter_loads_its_sites_platform_before_it_drops_privileges(tmp_path: Path, python: str) -> None:
    """Issue 22: platforms load lazily (sbc.registry), so the Kamailio readers were first imported by the first probe
    run, after the exporter dropped to its user: on a host whose interpreter's files that user cannot read, every
    run failed ("No module named 'fcntl'", test_exporter_e2e). The site's platform is now loaded before the drop."""
    if not Path(python).exists():
        pytest.skip("no %s" % python)
    install(tmp_path / "lib")
    raw = config_dict()
    raw["sites"]["s"]["platform"] = "kamailio"
    proc = subprocess.run([python, "-I", "-c", PRELOAD, str(tmp_path / "lib"), json.dumps(raw)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.split() == ["hooks", "hooks"], proc.stdout + proc.stderr


def test_lookup_refuses_an_unknown_layout() -> None:
    from ansible.errors import AnsibleLookupError
    with pytest.raises(AnsibleLookupError, match="layout: 'flat'"):
        LookupModule().run(["exporter.main"], layout="flat")
