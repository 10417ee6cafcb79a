# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Mediant ini file: parsing (the documented syntax, a real device's extra columns and sections),
the read-back of rendered rows into the neutral state (equal to the plan's), and the docs' plan-field
table covering every key of a plan."""

from __future__ import annotations

import re
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import ini, readback, render
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import compare, plan_state
from ansible_collections.commsgw.routing.tests.unit.audiocodes import plans as P
from ansible_collections.commsgw.routing.tests.unit.inventory_files import REPO

DEVICE_INI = (
    ";**************\r\n;** Ini File **\r\n;**************\r\n\r\n;Board: Mediant SW\r\n[SYSTEM Params]\r\n\r\n"
    "NTPServerIP = '0.0.0.0'\r\n\r\n[SIP Params]\r\n\r\nGWDEBUGLEVEL = 5\r\n\r\n"
    "[ ProxySet ]\r\n\r\nFORMAT ProxySet_Index = ProxySet_ProxyName, ProxySet_EnableProxyKeepAlive, "
    "ProxySet_ProxyKeepAliveTime, ProxySet_SRDName, ProxySet_TLSContextName, ProxySet_ProxyRedundancyMode;\r\n"
    "ProxySet 0 = \"ProxySet_0\", 0, 60, \"DefaultSRD\", \"\", -1;\r\n"
    "ProxySet 100 = \"CGW-ACG-1-local-region1\", 1, 5, \"DefaultSRD\", \"ACG-TLS\", -1;\r\n\r\n[ \\ProxySet ]\r\n\r\n"
    "[ ProxyIp ]\r\n\r\nFORMAT ProxyIp_Index = ProxyIp_ProxySetId, ProxyIp_ProxyIpIndex, ProxyIp_IpAddress, "
    "ProxyIp_TransportType, ProxyIp_Priority, ProxyIp_Weight;\r\n"
    "ProxyIp 0 = \"100\", 0, \"20.61.48.17:5061\", 2, 10, 60;\r\n\r\n[ \\ProxyIp ]\r\n\r\n"
    "[ DspTemplates ]\r\n\r\n;\r\n;  *** TABLE DspTemplates *** \r\n\r\n[\\DspTemplates ]\r\n")


def test_a_device_ini_with_extra_columns_and_sections_reads_as_rows() -> None:
    rows = ini.rows_from_ini(DEVICE_INI)
    assert rows["proxy_set"][(100,)] == {"proxy-name": "CGW-ACG-1-local-region1",
                                         "proxy-enable-keep-alive": "using-options", "proxy-keep-alive-time": 5,
                                         "tls-context-name": "ACG-TLS"}
    assert rows["proxy_set"][(0,)]["proxy-name"] == "ProxySet_0"
    assert rows["proxy_ip"] == {(100, 0): {"proxy-address": "20.61.48.17:5061", "transport-type": "tls",
                                           "priority": 10, "weight": 60}}
    tables, params = ini.parse_ini(DEVICE_INI)
    assert params["GWDEBUGLEVEL"] == "5" and "dsptemplates" in tables


@pytest.mark.parametrize("broken,reason", [
    ('ProxySet 100 = "CGW-A, 1, 5, "x", "", -1;', "unterminated"),
    ("ProxySet 100 = 1, 2;", "2 values for 6 columns"),
    ("Proxyset_x = 3", "not a row of table ProxySet"),
])
def test_malformed_ini_is_an_error_with_the_line(broken: str, reason: str) -> None:
    text = DEVICE_INI.replace('ProxySet 0 = "ProxySet_0", 0, 60, "DefaultSRD", "", -1;', broken)
    with pytest.raises(ini.IniError, match=reason):
        ini.parse_ini(text)


@pytest.mark.parametrize("mcp", [False, True])
def test_rendered_rows_survive_the_ini_and_read_back_as_the_plan(mcp: bool) -> None:
    extra = {"policy": "continue", "continue_next_hop": "10.1.0.30:5060", "match": ["request_uri_host"]} if mcp else {}
    for plan in P.resolved_plans("production", mcp=mcp, **extra):
        art = render.render(plan, P.settings())
        rows = ini.rows_from_ini(art.ini)
        assert rows == art.rows
        state = readback.state_from_rows(rows, art.identity)
        assert compare(plan, state, readback.WEIGHT_SCALE) == []
        want = plan_state(plan)
        for key in want:
            if key != "tls":
                assert state[key] == want[key], key
        assert state["tls"]["context"] == "ACG-TLS"


def test_read_back_sees_a_changed_weight_and_a_foreign_peer_as_drift() -> None:
    plan = P.resolved_plans("production")[0]
    art = render.render(plan, P.settings())
    rows = ini.rows_from_ini(art.ini)
    rows["proxy_ip"][(100, 0)]["weight"] = 1
    rows["proxy_ip"][(100, 9)] = {"proxy-address": "20.61.48.30:5061", "transport-type": "tls", "priority": 0,
                                  "weight": 0}
    texts = [d["text"] for d in compare(plan, readback.state_from_rows(rows, art.identity))]
    assert any("weight: 1, plan: 60" in text for text in texts), texts
    assert any("20.61.48.30:5061 (not in the plan)" in text for text in texts), texts


def _plan_paths(value: t.Any, prefix: str = "") -> set[str]:
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            path = "%s.%s" % (prefix, key) if prefix else key
            children = _plan_paths(item, path)
            found |= children or {path}
        return found
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return set().union(*(_plan_paths(item, prefix + "[]") for item in value))
    return set()


def test_the_docs_map_every_plan_field() -> None:
    plan = P.resolved_plans("production", mcp=True, continue_next_hop="10.1.0.30:5060")[0]
    text = (REPO / "docs" / "platforms" / "audiocodes.md").read_text(encoding="utf-8")
    section = text.split("## Plan fields and the device objects they become")[1].split("\n## ")[0]
    documented = {m for line in section.splitlines() if line.startswith("| `")
                  for m in re.findall(r"`([a-z0-9_.\[\]]+)`", line.split(" | ")[0])}
    missing = sorted(p for p in _plan_paths(plan)
                     if p not in documented and p.rsplit(".", 1)[0] not in documented)
    assert not missing, "docs/platforms/audiocodes.md does not map: %s" % missing
