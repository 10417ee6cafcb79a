# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 23 item 6: the inventory validation names AudioCodes-specific mistakes with their field path, before
anything is rendered or pushed (the common keys are proven in tests/unit/sbc/)."""

from __future__ import annotations

import copy
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import validate_inventory
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import parse_sbc_settings
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars

HOST = "sbc-mediant-1"
BASE = "hosts[%s].commsgw_sbc" % HOST
GOOD: dict[str, t.Any] = {
    "acg_listen": {"address": "192.0.2.31"}, "core_listen": {"address": "10.0.0.31", "transport": "tcp"},
    "core_next_hop": "10.0.0.20:5060", "core_allowed_sources": ["10.0.0.16/28"],
    "api_url": "https://sbc-mediant-1.mgmt.example:443", "api_username": "commsgw-rest",
    "sip_interfaces": {"acg": {"index": 1, "name": "SI-ACG"}, "core": {"index": 0, "name": "SI-CORE"}},
    "tls_context": "ACG-TLS",
}


def _errors(**changes: t.Any) -> list[tuple[str, str]]:
    raw = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    findings = Findings()
    parse_sbc_settings(raw, HOST, "tls", findings, "audiocodes", "production")
    return [(f.path, f.message) for f in findings.errors]


def test_a_complete_mediant_host_is_valid() -> None:
    findings = Findings()
    settings = parse_sbc_settings(copy.deepcopy(GOOD), HOST, "tls", findings, "audiocodes", "production")
    assert not findings.items, [f.render() for f in findings.items]
    assert settings["index_base"] == 100 and settings["api_validate_certs"] is True


@pytest.mark.parametrize("changes, path, words", [
    ({"api_url": "http://sbc-mediant-1.mgmt.example"}, "api_url", "is not an HTTPS URL"),
    ({"api_url": "https://sbc 1/"}, "api_url", "is not an HTTPS URL"),
    ({"api_url": None}, "api_url", "is missing"),
    ({"api_username": "ops\nadmin"}, "api_username", "is not a device user name"),
    ({"tls_context": None}, "tls_context", "is missing"),
    ({"tls_context": "ACG TLS"}, "tls_context", "is not a Mediant object name"),
    ({"tls_context": "x" * 41}, "tls_context", "is not a Mediant object name"),
    ({"sip_interfaces": {"acg": {"index": 1, "name": "SI-ACG"}}}, "sip_interfaces", "is not {acg: ..., core: ...}"),
    ({"sip_interfaces": {"acg": {"index": 1, "name": "SI"}, "core": {"index": 0, "name": "SI"}}}, "sip_interfaces",
     "names one SIP Interface for both sides"),
    ({"sip_interfaces": {"acg": {"index": -1, "name": "SI-ACG"}, "core": {"index": 0, "name": "SI-CORE"}}},
     "sip_interfaces.acg.index", "is not a row index"),
    ({"sip_interfaces": {"acg": {"index": 1, "name": "SI-ACG\";x"}, "core": {"index": 0, "name": "SI-CORE"}}},
     "sip_interfaces.acg.name", "is not a Mediant object name"),
    ({"index_base": 0}, "index_base", "is not a row index"),
    ({"index_base": True}, "index_base", "is not a row index"),
    ({"api_ca_path": "relative/ca.pem"}, "api_ca_path", ""),
    ({"config_dir": "/etc/kamailio"}, "config_dir", ""),  # a Kamailio key on a Mediant host
])
def test_each_mediant_mistake_names_its_field(changes: dict[str, t.Any], path: str, words: str) -> None:
    errors = _errors(**changes)
    assert [p for p, _m in errors] == ["%s.%s" % (BASE, path)], errors
    assert words in errors[0][1]


def test_turning_certificate_checks_off_is_allowed_with_a_warning() -> None:
    findings = Findings()
    parse_sbc_settings(dict(copy.deepcopy(GOOD), api_validate_certs=False), HOST, "tls", findings, "audiocodes")
    assert not findings.errors
    assert [f.path for f in findings.warnings] == [BASE + ".api_validate_certs"]


def test_a_keep_alive_period_the_mediant_cannot_take_is_named_on_the_deployment() -> None:
    """inventory/lab pings every 2 s; a Mediant's proxy-keep-alive-time starts at 5 s (SbcPlatform.routing_limits)."""
    hostvars = load_hostvars(INVENTORIES / "lab")
    [host] = sorted(hostvars)[:1]
    hostvars[host]["commsgw_sbc_platform"] = "audiocodes"
    hostvars[host]["commsgw_sbc"] = copy.deepcopy(GOOD)
    report = validate_inventory(hostvars)[0]
    interval = hostvars[host]["commsgw_deployment"]["routing"]["options_interval_s"]
    assert interval < 5
    [error] = [e for e in report["errors"] if e.path.endswith("options_interval_s")]
    assert error.path == "hosts[%s].commsgw_deployment.routing.options_interval_s" % host
    assert "5..300" in error.expected and "audiocodes" in error.message
