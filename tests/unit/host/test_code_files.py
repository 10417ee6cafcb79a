# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 25: a program's files installed in one step (host.code_files, module sbc_program_files): written only
when they differ, removed names gone, check mode changes nothing, and no directory another user may change is
written into. tests/integration/test_refresher.py and the production-host suites run the refresher it installs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import UnsafePathError
from ansible_collections.commsgw.routing.plugins.module_utils.host.code_files import install

FILES = {"prog": (b"#!/usr/bin/python3\n", 0o755), "kamailio/__init__.py": (b"", 0o644),
         "kamailio/refresher.py": (b"print(1)\n", 0o644)}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_written_once_then_only_what_differs_and_old_names_removed(tmp_path: Path) -> None:
    target = tmp_path / "lib"
    assert install(str(target), FILES, [], check=True) == {"changed": sorted(FILES), "removed": []}
    assert not target.exists()
    assert install(str(target), FILES, [], check=False) == {"changed": sorted(FILES), "removed": []}
    assert (target / "kamailio" / "refresher.py").read_bytes() == b"print(1)\n"
    assert (_mode(target), _mode(target / "kamailio"), _mode(target / "prog")) == (0o755, 0o755, 0o755)
    assert _mode(target / "kamailio" / "refresher.py") == 0o644
    assert install(str(target), FILES, ["refresher.py"], check=False) == {"changed": [], "removed": []}
    (target / "refresher.py").write_text("old flat library")
    os.chmod(target / "prog", 0o777)
    (target / "kamailio" / "refresher.py").write_text("hand edit")
    expected = {"changed": ["kamailio/refresher.py", "prog"], "removed": ["refresher.py"]}
    assert install(str(target), FILES, ["refresher.py"], check=True) == expected
    assert (target / "refresher.py").exists() and _mode(target / "prog") == 0o777  # check mode changed nothing
    assert install(str(target), FILES, ["refresher.py"], check=False) == expected
    assert not (target / "refresher.py").exists() and _mode(target / "prog") == 0o755
    assert (target / "kamailio" / "refresher.py").read_bytes() == b"print(1)\n"
    assert sorted(p.name for p in (target / "kamailio").iterdir()) == ["__init__.py", "refresher.py"]  # no temp left


def test_a_directory_another_user_may_change_or_a_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "lib"
    install(str(target), FILES, [], check=False)
    os.chmod(target / "kamailio", 0o777)
    with pytest.raises(UnsafePathError, match="writable by group or others"):
        install(str(target), FILES, [], check=False)
    os.chmod(target / "kamailio", 0o755)
    os.chown(target / "kamailio", 65534, 65534)
    with pytest.raises(UnsafePathError, match="belongs to uid 65534"):
        install(str(target), FILES, [], check=False)
    os.chown(target / "kamailio", 0, 0)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (target / "kamailio" / "refresher.py").unlink()
    os.rename(target / "kamailio", tmp_path / "moved")
    (target / "kamailio").symlink_to(elsewhere)
    with pytest.raises(UnsafePathError, match="symlink"):
        install(str(target), FILES, [], check=False)
    assert list(elsewhere.iterdir()) == []


def test_names_must_be_plain_relative_paths(tmp_path: Path) -> None:
    for bad in ("../etc/passwd", "/abs", "a//b", ".hidden", "a/../b"):
        with pytest.raises(UnsafePathError, match="plain names"):
            install(str(tmp_path / "lib"), {bad: (b"", 0o644)}, [], check=False)
    assert not (tmp_path / "lib").exists()


def test_prune_removes_only_the_libraries_no_longer_shipped(tmp_path: Path) -> None:
    """The exporter's shape: collection-laid-out libraries; a release that drops one must not leave it importable."""
    target = tmp_path / "lib"
    shipped = {"pkg/a.py": (b"A\n", 0o644), "pkg/sub/b.py": (b"B\n", 0o644), "entry": (b"E\n", 0o644)}
    install(str(target), shipped, [], check=False)
    (target / "pkg" / "sub" / "gone.py").write_text("an older release's library")
    (target / "pkg" / "notes.txt").write_text("not a library")
    (target / "pkg" / "__pycache__").mkdir()
    (target / "pkg" / "__pycache__" / "a.cpython-311.py").write_text("never entered")
    (target / "pkg" / "old").mkdir()
    (target / "pkg" / "old" / "x.py").write_text("")
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("not under the program")
    (target / "pkg" / "link.py").symlink_to(elsewhere)
    expected = {"changed": [], "removed": ["pkg/link.py", "pkg/old/x.py", "pkg/sub/gone.py"]}
    assert install(str(target), shipped, [], check=True, prune=["pkg"]) == expected
    assert (target / "pkg" / "sub" / "gone.py").exists()  # check mode changed nothing
    assert install(str(target), shipped, [], check=False, prune=["pkg"]) == expected
    assert not (target / "pkg" / "sub" / "gone.py").exists() and not (target / "pkg" / "link.py").is_symlink()
    assert elsewhere.read_text() == "not under the program"  # the link went, not what it named
    assert (target / "pkg" / "notes.txt").exists() and (target / "pkg" / "__pycache__" / "a.cpython-311.py").exists()
    assert (target / "pkg" / "a.py").read_bytes() == b"A\n" and (target / "pkg" / "sub" / "b.py").exists()
    assert install(str(target), shipped, [], check=False, prune=["pkg", "absent"]) == {"changed": [], "removed": []}


def test_prune_does_not_enter_a_directory_another_user_may_change(tmp_path: Path) -> None:
    target = tmp_path / "lib"
    shipped = {"pkg/a.py": (b"A\n", 0o644)}
    install(str(target), shipped, [], check=False)
    (target / "pkg" / "theirs").mkdir()
    (target / "pkg" / "theirs" / "x.py").write_text("")
    os.chown(target / "pkg" / "theirs", 65534, 65534)
    with pytest.raises(UnsafePathError, match="belongs to uid 65534"):
        install(str(target), shipped, [], check=False, prune=["pkg"])
    assert (target / "pkg" / "theirs" / "x.py").exists()
    os.chown(target / "pkg" / "theirs", 0, 0)
    os.rename(target / "pkg" / "theirs", tmp_path / "theirs")
    (target / "pkg" / "theirs").symlink_to(tmp_path / "theirs")  # a link to a directory is not walked
    assert install(str(target), shipped, [], check=False, prune=["pkg"])["removed"] == []
    assert (tmp_path / "theirs" / "x.py").exists()
