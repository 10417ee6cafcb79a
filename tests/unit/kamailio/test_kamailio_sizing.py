# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's memory sized from the plan (issue 25 item 5, kamailio/sizing.py): the rule, the figure the
rendered kamailio.cfg carries (shm_mem_size) and the role starts Kamailio with, an operator's override, and
the table in docs/kamailio-sizing.md, which must say what the code does."""

from __future__ import annotations

import re
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.sizing import (
    DEFAULT_EXPECTED_CALLS_PER_S, PKG_MB, SHM_MIN_MB, SHM_STEP_MB, kamailio_processes, shared_memory_mb)
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio
from tests.unit.kamailio.test_kamailio_tls_render import SETTINGS, _plan

DOC = Path(__file__).resolve().parents[3] / "docs" / "kamailio-sizing.md"
PLAIN_SETTINGS = {k: v for k, v in SETTINGS.items() if k != "tls"}
RATES = (100, 500, 1000, 2000)


def _shm_line(cfg: str) -> int:
    sized = re.findall(r"^shm_mem_size=([0-9]+)$", cfg, re.M)
    assert len(sized) == 1, sized
    return int(sized[0])


def test_the_rule_grows_with_calls_processes_and_tls_in_whole_steps() -> None:
    for tls in (True, False):
        figures = [shared_memory_mb(tls, 20, rate) for rate in (1, 100, 500, 1000, 2000, 10000)]
        assert figures == sorted(figures) and figures[-1] > figures[0]
        assert all(f % SHM_STEP_MB == 0 and f >= SHM_MIN_MB for f in figures)
        assert shared_memory_mb(tls, 40, 500) >= shared_memory_mb(tls, 20, 500)
    assert shared_memory_mb(True, 20, 500) > shared_memory_mb(False, 20, 500)
    assert shared_memory_mb(False, 1, 1) == SHM_MIN_MB
    # Processes: children per UDP socket, tcp_children and Kamailio's own (main, timers, TCP main, ctl...).
    assert kamailio_processes(udp_workers=4, udp_sockets=2, tcp_workers=2) == 20


@pytest.mark.parametrize("transport", ["tls", "udp"])
def test_kamailio_cfg_carries_the_figure_of_its_plan(transport: str) -> None:
    settings = SETTINGS if transport == "tls" else PLAIN_SETTINGS
    cfg = render_kamailio(_plan(transport), settings, "6.0.1")["kamailio.cfg"]
    # Default workers: 4 per UDP socket (the core's and, with TLS, the ping relay's; over UDP the ACG side's), 2 TCP.
    want = shared_memory_mb(transport == "tls", 20, DEFAULT_EXPECTED_CALLS_PER_S)
    assert _shm_line(cfg) == want
    assert "expected calls/s %d: %d MB, docs/kamailio-sizing.md" % (DEFAULT_EXPECTED_CALLS_PER_S, want) in cfg
    busier = render_kamailio(_plan(transport), dict(settings, expected_calls_per_s=2000), "6.0.1")["kamailio.cfg"]
    assert _shm_line(busier) == shared_memory_mb(transport == "tls", 20, 2000) > want
    more_workers = render_kamailio(_plan(transport), dict(settings, udp_workers=8), "6.0.1")["kamailio.cfg"]
    assert _shm_line(more_workers) == shared_memory_mb(transport == "tls", 28, DEFAULT_EXPECTED_CALLS_PER_S)


def test_an_operators_figure_wins_and_the_cfg_says_so() -> None:
    cfg = render_kamailio(_plan(), dict(SETTINGS, shared_memory_mb=700), "6.0.1")["kamailio.cfg"]
    assert _shm_line(cfg) == 700 and "commsgw_sbc.shared_memory_mb sets it" in cfg


def _doc_rows(title: str) -> dict[int, int]:
    text = DOC.read_text()
    table = text[text.index(title):]
    rows = re.findall(r"^\| *([0-9]+) *\| *([0-9]+) MB *\|", table.split("\n\n")[1], re.M)
    assert rows, "no table after %r in %s" % (title, DOC)
    return {int(rate): int(mb) for rate, mb in rows}


def test_the_doc_states_the_rule_the_code_applies() -> None:
    """docs/kamailio-sizing.md: its tables of default SBCs are the code's figures, its constants the code's."""
    assert _doc_rows("Default TLS SBC") == {rate: shared_memory_mb(True, 20, rate) for rate in RATES}
    assert _doc_rows("Default plain-SIP SBC") == {rate: shared_memory_mb(False, 20, rate) for rate in RATES}
    text = DOC.read_text()
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import sizing
    constants: dict[str, t.Any] = {name: getattr(sizing, name) for name in (
        "SHM_BASE_MB", "SHM_TLS_PER_PROCESS_MB", "SHM_PER_CALL_PER_S_MB", "TLS_CONNECTIONS",
        "SHM_PER_TLS_CONNECTION_MB", "SHM_HEADROOM", "SHM_STEP_MB", "SHM_MIN_MB", "EXTRA_PROCESSES")}
    for name, value in constants.items():
        assert re.search(r"`%s` *= *%s\b" % (name, re.escape(str(value))), text), (name, value)
    assert "-M %d" % PKG_MB in text


_TEMPLATE = r"""
import json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
expression, variables = json.loads(sys.stdin.read())
templar = Templar(loader=DataLoader(), variables={k: trust_as_template(v) if isinstance(v, str) else v
                                                  for k, v in variables.items()})
print(json.dumps(templar.template(trust_as_template(expression))))
"""


def _template_with_the_collection(expression: str, variables: dict[str, t.Any]) -> str:
    """``expression`` templated by Ansible with this collection's filters (in a process of its own: installing the
    collection loader in the test process would change how every other test imports the collection)."""
    import json
    import subprocess
    import sys
    import ansible_collections.commsgw.routing as collection
    root = str(Path(collection.__path__[0]).parents[2])
    proc = subprocess.run([sys.executable, "-c", _TEMPLATE, root], input=json.dumps([expression, variables]),
                          capture_output=True, text=True, timeout=60, check=True)
    return str(json.loads(proc.stdout.strip().splitlines()[-1])).strip()


@pytest.mark.parametrize("manager", ["tlsf", "qm"])
def test_the_memory_manager_is_named_by_kamailio_cfg_and_started_from_it(manager: str) -> None:
    """commsgw_sbc.memory_manager (default tlsf) is the role's kamailio_memory_manager, which the render writes into
    kamailio.cfg (so that changing it restarts Kamailio); the drop-in, kamailio_service and the candidate start take
    it from that line (kamailio_files_memory_manager, memory_manager_of)."""
    import yaml
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import memory_manager_of
    from tests.unit.test_role_conventions import ROLE, _templar, trusted
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    role_vars = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())

    def template(expression: str, **variables: t.Any) -> str:
        if "commsgw.routing." not in expression:
            return str(_templar(dict(defaults, **variables)).template(trusted(expression))).strip()
        return _template_with_the_collection(expression, dict(defaults, **variables))
    commsgw_sbc = {} if manager == "tlsf" else {"memory_manager": manager}
    role_manager = template(defaults["kamailio_memory_manager"], commsgw_sbc=commsgw_sbc)
    assert role_manager == manager
    # What render.yml passes the renderer: the role's variable, so that setting it directly reaches kamailio.cfg too.
    cfg = render_kamailio(_plan(), dict(SETTINGS, memory_manager=role_manager), "6.0.1")["kamailio.cfg"]
    assert re.findall(r"^#memory_manager=(.*)$", cfg, re.M) == [manager]
    assert memory_manager_of(cfg) == manager
    assert template(role_vars["kamailio_files_memory_manager"], kamailio_files={"kamailio.cfg": cfg}) == manager
    # A kamailio.cfg rendered before issue 25 names none: started under Kamailio's default, as it ran.
    older = cfg.replace("#memory_manager=%s\n" % manager, "")
    assert memory_manager_of(older) is None
    assert template(role_vars["kamailio_files_memory_manager"], kamailio_files={"kamailio.cfg": older}) == ""
    # Two lines: neither is believed, by the modules (memory_manager_of) nor by the drop-in (the same function).
    assert memory_manager_of(cfg + "#memory_manager=fm\n") is None
    assert template(role_vars["kamailio_files_memory_manager"],
                    kamailio_files={"kamailio.cfg": cfg + "#memory_manager=fm\n"}) == ""


def test_memory_manager_arguments_name_both_memories_and_refuse_the_unknown() -> None:
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import memory_manager_args
    assert memory_manager_args("tlsf") == ["-x", "tlsf", "-X", "tlsf"]
    with pytest.raises(ValueError, match="unknown Kamailio memory manager 'tlsf -d'"):
        memory_manager_args("tlsf -d")
