# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 11 item 6: the same option name for the same thing across modules, old names kept as aliases,
and the shared options documented once (plugins/doc_fragments)."""

from __future__ import annotations

import functools
import json
import sys
import typing as t
from pathlib import Path

import pytest

from tests.harness.tools import module_docs, play, run_module

DOCUMENTED = ("srv_audit", "probe", "kamailio_config", "kamailio_service", "tls_preflight", "migration_wait")


@functools.lru_cache(maxsize=None)
def _docs() -> dict[str, t.Any]:
    return module_docs(*DOCUMENTED)


def _options(module: str) -> dict[str, t.Any]:
    return _docs()[module]["options"]


@pytest.mark.parametrize("module", ["srv_audit", "probe"])
def test_dns_resolver_options_have_one_name(module: str) -> None:
    options = _options(module)
    assert {"nameservers", "dns_port", "dns_timeout"} <= set(options)
    assert "port" not in options and "timeout" not in options.get("dns_port", {}).get("aliases", [])
    assert options["dns_port"]["default"] == 53 and options["dns_timeout"]["default"] == 2.0


@pytest.mark.parametrize("module, old_user", [("kamailio_config", "run_as"), ("kamailio_service", "user")])
def test_kamailio_options_have_one_name(module: str, old_user: str) -> None:
    options = _options(module)
    assert options["private_memory_mb"]["aliases"] == ["pkg_memory_mb"]
    assert options["run_as_user"]["aliases"] == [old_user]
    assert {"run_dir", "binary", "shared_memory_mb"} <= set(options)
    assert "pkg_memory_mb" not in options and old_user not in options


def test_tls_preflight_names_the_user_like_the_kamailio_modules() -> None:
    assert "run_as_user" in _options("tls_preflight")


def test_the_old_srv_audit_names_still_work_and_are_deprecated(tmp_path: Path) -> None:
    rc, result = run_module("srv_audit", {"deployment": {}, "port": 0, "timeout": 1.0}, tmp_path)
    assert rc != 0 and result["msg"] == "dns_port must be 1-65535, got 0"
    deprecations = str(result.get("deprecations"))  # the entry's shape differs between ansible-core versions
    assert "Alias 'port' is deprecated" in deprecations and "Alias 'timeout' is deprecated" in deprecations


def test_the_srv_audit_action_warns_of_the_old_names_like_the_module(tmp_path: Path) -> None:
    """In a play the audit runs in the controller's process (its action plugin, no AnsiballZ): same words, and the
    deprecated aliases still warn."""
    playbook = tmp_path / "audit.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"commsgw.routing.srv_audit": {"deployment": {}, "port": 0, "timeout": 1.0}}]}]))
    (tmp_path / "hosts").write_text("localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    proc = play(tmp_path / "hosts", [str(playbook), "-vvv"], tmp_path, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "dns_port must be 1-65535, got 0" in out, out[-3000:]
    assert "Alias 'port' is deprecated" in out and "Alias 'timeout' is deprecated" in out, out[-3000:]
    assert "AnsiballZ_srv_audit" not in out, out[-3000:]


def test_the_old_memory_name_still_works(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    rc, result = run_module("kamailio_config", {"files": {"address.list": "x\n"}, "config_dir": str(tmp_path / "etc"),
                                                "test_start": False, "pkg_memory_mb": 16, "run_as": "",
                                                "state_dir": str(tmp_path / "state")}, tmp_path)
    assert rc == 0 and result["changed_files"] == ["address.list"], result
