# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution environment for AWX / AAP (issue 11 item 2), as ansible-builder sees it.

`ansible-builder create` turns extensions/ee/execution-environment.yml into a build context (no
image is built here); the image build then runs the context's own introspect script over the
installed collections, which is how our requirements.txt and bindep.txt reach the image. Both steps
run for real: create, then that very script over the release tarball installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.integration


def _run(*argv: str, cwd: Path) -> str:
    # Only the copies made here: not this checkout as .collections (ansible-galaxy would call the
    # collection installed already and skip it).
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANSIBLE_CONFIG", "PYTHONPATH") and not k.startswith("ANSIBLE_COLLECTIONS")}
    proc = subprocess.run(list(argv), cwd=str(cwd), env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _requirement_names(lines: t.Iterable[str]) -> list[str]:
    names = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.append(line.split("[")[0].split(";")[0].split("<")[0].split(">")[0].split("=")[0].split("~")[0]
                         .strip().lower())
    return names


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example EE directory as its comment says to prepare it, then `ansible-builder create`."""
    ee = tmp_path_factory.mktemp("ee")
    shutil.copy(ROOT / "extensions" / "ee" / "execution-environment.yml", ee)
    _run(str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(ee), str(ROOT), cwd=ee)
    next(ee.glob("commsgw-routing-*.tar.gz")).rename(ee / "commsgw-routing.tar.gz")
    _run(str(BIN / "ansible-builder"), "create", "-f", "execution-environment.yml", "-c", "context",
         "--output-filename", "Containerfile", cwd=ee)
    return ee / "context"


def test_requirements_txt_is_runtime_only() -> None:
    """requirements.txt: what the plugins import, with ranges; no ansible-core, nothing unused."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    names = _requirement_names(lines)
    assert names == sorted(names, key=str.lower), names
    assert set(names) == {"azure-core", "azure-identity", "dnspython", "jinja2"}, names
    for line in lines:
        if line.split("#", 1)[0].strip():
            assert "==" not in line and ">=" in line and "<" in line, line


def test_create_installs_the_collection_and_no_core_pin_of_ours(context: Path) -> None:
    containerfile = (context / "Containerfile").read_text()
    requirements = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert requirements == {"collections": [{"name": "collections/commsgw-routing.tar.gz", "type": "file"}]}
    assert (context / "_build" / "collections" / "commsgw-routing.tar.gz").is_file()
    assert "ansible-galaxy collection install" in containerfile
    # ansible-core comes from the EE definition's range, never a pin of this collection's.
    assert 'ARG ANSIBLE_INSTALL_REFS="ansible-core>=2.16,<2.22 ansible-runner"' in containerfile, containerfile
    assert "ansible-core==" not in containerfile
    # The image build collects each installed collection's declared dependencies with this script.
    assert "introspect.py introspect --write-bindep=/tmp/src/bindep.txt --write-pip=/tmp/src/requirements.txt" \
        in containerfile


def test_the_image_build_reads_our_requirements_and_bindep(context: Path, tmp_path: Path) -> None:
    """Runs the context's introspect script, as the Containerfile's builder stage does, over the
    collection installed from the same tarball."""
    collections = tmp_path / "collections"
    _run(str(BIN / "ansible-galaxy"), "collection", "install", "-p", str(collections),
         str(context / "_build" / "collections" / "commsgw-routing.tar.gz"), cwd=tmp_path)
    _run(sys.executable, str(context / "_build" / "scripts" / "introspect.py"), "introspect",
         "--write-pip", str(tmp_path / "pip.txt"), "--write-bindep", str(tmp_path / "bindep.txt"),
         str(collections), cwd=tmp_path)
    pip = (tmp_path / "pip.txt").read_text().splitlines()
    ours = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.split("#", 1)[0].strip()]
    assert [line.split("#")[0].strip() for line in pip] == ours, pip
    assert all(line.endswith("# from collection commsgw.routing") for line in pip), pip
    assert "ansible-core" not in _requirement_names(pip)
    bindep = (tmp_path / "bindep.txt").read_text().splitlines()
    assert bindep == ["kamailio [kamailio-version]  # from collection commsgw.routing"], bindep
