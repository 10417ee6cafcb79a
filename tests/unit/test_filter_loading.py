# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 25 item 2: finding one commsgw.routing filter costs the file loads, not the collection's libraries.

ansible-core's Jinja2Loader imports every filter file of a collection to find any one filter of it, and does so
in the worker it forks for each task and host. When the filter files imported their libraries at load time, each
such worker imported about 80 modules (about 75 ms) before its task started. The filters import what they use when
they run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ansible_collections.commsgw.routing as collection

PROBE = r"""
import json, sys
from ansible.plugins.loader import filter_loader, init_plugin_loader
init_plugin_loader([sys.argv[1]])
import ansible.template  # noqa: F401 - what a worker has loaded before it templates
before = set(sys.modules)
found = filter_loader.get_with_context(sys.argv[2]).object
loaded = sorted(name for name in set(sys.modules) - before if name.startswith("ansible_collections.commsgw."))
print(json.dumps({"found": found is not None, "loaded": loaded}))
"""


def _lookup(name: str) -> dict:
    collections_root = str(Path(collection.__path__[0]).parents[2])  # .../ansible_collections/commsgw/routing
    proc = subprocess.run([sys.executable, "-c", PROBE, collections_root, name], capture_output=True, text=True,
                          timeout=60, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_finding_a_filter_loads_every_filter_file_and_no_library() -> None:
    result = _lookup("commsgw.routing.sbc_platform_role")
    assert result["found"]
    filter_files = {path.stem for path in (Path(collection.__path__[0]) / "plugins" / "filter").glob("*.py")}
    loaded_files = {name.rsplit(".", 1)[1] for name in result["loaded"] if ".plugins.filter." in name}
    # The premise: Ansible loads them all (if a release stops doing so, this test says the cost is gone).
    assert loaded_files == filter_files
    libraries = [name for name in result["loaded"] if ".plugins.filter" not in name
                 and name not in ("ansible_collections.commsgw", "ansible_collections.commsgw.routing",
                                  "ansible_collections.commsgw.routing.plugins")]
    assert libraries == []


def test_a_filter_imports_its_library_when_it_runs() -> None:
    from ansible_collections.commsgw.routing.plugins.filter.sbc_platform_role import (  # pylint: disable=import-outside-toplevel
        sbc_platform_name, sbc_platform_role)

    assert sbc_platform_role("kamailio") == "commsgw.routing.kamailio"
    assert sbc_platform_name("") == "kamailio"
