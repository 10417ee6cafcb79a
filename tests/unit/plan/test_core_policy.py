# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw_sbc.core_allowed_sources (core-side source ACL) and number_normalisation (R-26): parsing
and rendering. The behaviour on a real Kamailio: tests/integration/test_kamailio_core_policy.py."""

from __future__ import annotations

import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import render_findings, validate_inventory
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import (
    SettingsError, normalise_sbc_settings, parse_sbc_settings)
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio

from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars
from ansible_collections.commsgw.routing.tests.unit.kamailio.test_kamailio_view import SETTINGS, _plan

BASE = "hosts[sbc1].commsgw_sbc"


def _parse(**extra: t.Any) -> tuple[dict[str, t.Any], Findings]:
    findings = Findings()
    settings = parse_sbc_settings(dict(SETTINGS, **extra), "sbc1", "udp", findings)
    return settings, findings


def _rows(address_list: str) -> list[list[str]]:
    return [line.split() for line in address_list.splitlines() if line and not line.startswith("#")]


def test_absent_core_acl_is_a_warning_naming_the_field() -> None:
    settings, findings = _parse()
    assert not findings.errors
    assert [w.path for w in findings.warnings] == [BASE + ".core_listen.transport", BASE + ".core_allowed_sources"]
    assert "toll fraud" in findings.warnings[1].message
    assert settings["core_allowed_sources"] is None
    files = render_kamailio(_plan(), SETTINGS, "5.6.3")
    assert 'allow_source_address("2")' not in files["kamailio.cfg"]
    assert [r[0] for r in _rows(files["address.list"])] == ["1", "1"]


@pytest.mark.parametrize("value,index,wording", [
    (["10.0.1.0/24", "10.0.1.1/24"], 1, "host bits set"),
    (["10.0.1.0/24", "core.example.net"], 1, "is not an IPv4 network"),
    (["0.0.0.0/0"], 0, "allows every source"),
    ([24], 0, "is not a string"),
])
def test_bad_core_sources_name_the_item(value: list[t.Any], index: int, wording: str) -> None:
    dummy, findings = _parse(core_allowed_sources=value)
    assert [e.path for e in findings.errors] == ["%s.core_allowed_sources[%d]" % (BASE, index)]
    assert wording in findings.errors[0].render()
    with pytest.raises(SettingsError, match=r"core_allowed_sources\[%d\]" % index):
        normalise_sbc_settings(dict(SETTINGS, core_allowed_sources=value), "udp", host="sbc1")


# -- issue 21 item 5: production needs the core ACL, and a real one ------------------------------------
def _production_hosts(**changes: t.Any) -> dict[str, dict[str, t.Any]]:
    """The shipped inventory/production, with ``changes`` applied to sbc-ams-2's commsgw_sbc (None: removed)."""
    hostvars = load_hostvars(INVENTORIES / "production")
    sbc = hostvars["sbc-ams-2"]["commsgw_sbc"]
    for key, value in changes.items():
        if value is None:
            sbc.pop(key)
        else:
            sbc[key] = value
    return hostvars


def test_the_shipped_production_inventory_has_a_core_acl_on_every_host() -> None:
    hostvars = load_hostvars(INVENTORIES / "production")
    reports = validate_inventory(hostvars, require_sbc_settings=True)
    assert render_findings(reports) == [] and render_findings(reports, "warnings") == []
    assert all(v["commsgw_sbc"]["core_allowed_sources"] for v in hostvars.values())


def test_production_without_core_allowed_sources_is_an_error_naming_the_field() -> None:
    reports = validate_inventory(_production_hosts(core_allowed_sources=None))
    assert render_findings(reports) == [
        "deployment contoso-emea: hosts[sbc-ams-2].commsgw_sbc.core_allowed_sources: is missing in a production "
        "deployment: without it any source that reaches core_listen can send calls through ACG (toll fraud) "
        "(got None; expected the operator core's source networks as IPv4 CIDRs, e.g. [192.0.2.0/28])"]
    assert reports[0]["model"] is None


def test_lab_without_core_allowed_sources_is_a_warning_only() -> None:
    settings, findings = _parse()
    assert not findings.errors
    assert BASE + ".core_allowed_sources" in [w.path for w in findings.warnings]
    findings = Findings()
    parse_sbc_settings(dict(SETTINGS), "sbc1", "udp", findings, deployment_type="lab")
    assert not findings.errors


@pytest.mark.parametrize("value,index,wording", [
    (["0.0.0.0/1"], 0, "is wider than a /8 (2147483648 addresses)"),
    # 0.0.0.0/0 in two halves: each half is refused on its own.
    (["10.0.1.0/24", "128.0.0.0/1"], 1, "is wider than a /8 (2147483648 addresses)"),
    (["10.0.0.0/7"], 0, "is wider than a /8 (33554432 addresses)"),
])
def test_a_core_network_wider_than_a_slash_8_is_refused(value: list[str], index: int, wording: str) -> None:
    dummy, findings = _parse(core_allowed_sources=value)
    assert [e.path for e in findings.errors] == ["%s.core_allowed_sources[%d]" % (BASE, index)]
    assert wording in findings.errors[0].render()


def test_both_halves_of_the_address_space_are_each_refused() -> None:
    dummy, findings = _parse(core_allowed_sources=["0.0.0.0/1", "128.0.0.0/1"])
    assert [e.path for e in findings.errors] == [BASE + ".core_allowed_sources[0]", BASE + ".core_allowed_sources[1]"]


@pytest.mark.parametrize("value,total", [
    (["10.0.0.0/8", "11.0.0.0/8"], 2 ** 25),
    # All of RFC 1918: each network is fine, together they are more than one /8.
    (["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"], 2 ** 24 + 2 ** 20 + 2 ** 16),
    (["%d.0.0.0/9" % first for first in range(1, 4)], 3 * 2 ** 23),
])
def test_core_networks_that_together_exceed_a_slash_8_are_refused(value: list[str], total: int) -> None:
    dummy, findings = _parse(core_allowed_sources=value)
    assert [e.path for e in findings.errors] == [BASE + ".core_allowed_sources"]
    assert findings.errors[0].render().startswith(
        "%s.core_allowed_sources: allows %d source addresses in all, more than one /8 holds (16777216)"
        % (BASE, total))


@pytest.mark.parametrize("value", [["10.0.0.0/8"], ["10.0.0.0/8", "10.1.0.0/16", "10.0.0.0/9"],
                                   ["10.0.0.0/9", "11.0.0.0/9"]])
def test_up_to_one_slash_8_in_all_is_accepted(value: list[str]) -> None:
    dummy, findings = _parse(core_allowed_sources=value)
    assert not findings.errors


@pytest.mark.parametrize("core_listen,advised", [
    ({"address": "10.0.0.10"}, True),                      # udp by default
    ({"address": "10.0.0.10", "transport": "udp"}, True),
    ({"address": "10.0.0.10", "transport": "tcp"}, False),
])
def test_udp_on_the_core_leg_is_advised_against(core_listen: dict[str, t.Any], advised: bool) -> None:
    dummy, findings = _parse(core_listen=core_listen, core_allowed_sources=["10.0.1.0/24"])
    assert not findings.errors
    advice = [w.render() for w in findings.warnings if w.path == BASE + ".core_listen.transport"]
    assert advice == ([
        BASE + ".core_listen.transport: is udp%s: the core ACL (core_allowed_sources) trusts a source address, which "
        "a spoofed UDP datagram fakes (got 'udp'; expected tcp, whose handshake proves the source address)"
        % ("" if "transport" in core_listen else " (the default)")] if advised else [])


def test_core_sources_not_a_list() -> None:
    dummy, findings = _parse(core_allowed_sources="10.0.1.0/24")
    assert [e.path for e in findings.errors] == [BASE + ".core_allowed_sources"]


def test_core_acl_group_with_implicit_next_hop() -> None:
    settings = dict(SETTINGS, core_allowed_sources=["10.0.1.0/24", "10.0.9.7"])
    files = render_kamailio(_plan(), settings, "5.6.3")
    rows = _rows(files["address.list"])
    assert [r for r in rows if r[0] == "2"] == [
        ["2", "10.0.1.0", "24", "0", "side=core"], ["2", "10.0.9.7", "32", "0", "side=core"],
        # core_next_hop 10.0.0.20 sends the in-dialog requests of calls from ACG: allowed implicitly.
        ["2", "10.0.0.20", "32", "0", "side=core;implicit=core_next_hop"]]
    cfg = files["kamailio.cfg"]
    core = cfg[cfg.index("route[FROM_CORE]"):]
    # The ACL comes first: before OPTIONS answers and before in-dialog handling (route COMMON).
    assert core.index('allow_source_address("2")') < core.index("route(COMMON)")
    assert core.index('allow_source_address("2")') < core.index('is_method("OPTIONS")')


def test_next_hop_inside_a_listed_network_is_not_repeated_and_names_are_warned() -> None:
    files = render_kamailio(_plan(), dict(SETTINGS, core_allowed_sources=["10.0.0.0/24"]), "5.6.3")
    assert [r for r in _rows(files["address.list"]) if r[0] == "2"] == [["2", "10.0.0.0", "24", "0", "side=core"]]
    dummy, findings = _parse(core_allowed_sources=[], core_next_hop="core.example.net:5060",
                             core_listen=dict(SETTINGS["core_listen"], transport="tcp"))
    assert not findings.errors
    assert [w.path for w in findings.warnings] == [BASE + ".core_allowed_sources"]
    assert "core.example.net is a host name" in findings.warnings[0].message


def test_e164_check_without_normalisation() -> None:
    cfg = render_kamailio(_plan(), SETTINGS, "5.6.3")["kamailio.cfg"]
    core = cfg[cfg.index("route[FROM_CORE]"):cfg.index("route[TO_ACG]")]
    assert 'if (!($rU =~ "^\\+[1-9][0-9]{1,14}$")) {' in core
    assert 'sl_send_reply("484", "Address Incomplete (E.164 Number Required)")' in core
    assert "$rU = " not in core
    # After the emergency refusal (R-25 keeps its own answer) and the size limits, before routing.
    assert core.index("R-25") < core.index("484") and core.index("Contact URI Too Long") < core.index("484")
    assert core.index("484") < core.index("ds_select_routes")


def test_normalisation_rewrites_international_prefix_first() -> None:
    norm = {"country_code": 49, "national_prefix": "0", "international_prefix": "00"}
    settings, findings = _parse(number_normalisation=norm)
    assert not findings.errors
    assert settings["number_normalisation"] == {"country_code": "49", "national_prefix": "0",
                                                "international_prefix": "00"}
    cfg = render_kamailio(_plan(), dict(SETTINGS, number_normalisation=norm), "5.6.3")["kamailio.cfg"]
    first, second = cfg.index('$rU =~ "^00[1-9][0-9]*$"'), cfg.index('$rU =~ "^0[1-9][0-9]*$"')
    assert first < second < cfg.index('sl_send_reply("484"')
    assert '$rU = "+" + $(rU{s.substr,2,0});' in cfg and '$rU = "+49" + $(rU{s.substr,1,0});' in cfg


def test_emergency_strings_are_checked_after_the_normalisation() -> None:
    """R-25 (issue 21 item 10): the emergency check sees the Request-URI user as it would leave, after the
    rewrites (00112 -> +112; 0112 -> +49112, so the country code is part of the pattern)."""
    norm = {"country_code": "49", "national_prefix": "0", "international_prefix": "00"}
    cfg = render_kamailio(_plan(), dict(SETTINGS, number_normalisation=norm), "5.6.3")["kamailio.cfg"]
    core = cfg[cfg.index("route[FROM_CORE]"):cfg.index("route[TO_ACG]")]
    rewrite, emergency = core.index('$rU = "+49" + $(rU{s.substr,1,0});'), core.index("R-25")
    assert rewrite < emergency < core.index("$ml >") < core.index('sl_send_reply("484"')
    assert '$rU =~ "^\\+?(49)?(' in core[emergency:]
    plain = render_kamailio(_plan(), SETTINGS, "5.6.3")["kamailio.cfg"]
    assert '$rU =~ "^\\+?(' in plain and "(49)?" not in plain  # no country code without the rules


@pytest.mark.parametrize("norm,path", [
    ({"country_code": "049", "national_prefix": "0"}, "country_code"),
    ({"country_code": "4921", "national_prefix": "0"}, "country_code"),
    ({"country_code": "49"}, "national_prefix"),
    ({"country_code": "49", "national_prefix": 0}, "national_prefix"),
    ({"country_code": "49", "national_prefix": "0", "international_prefix": "+"}, "international_prefix"),
    ({"country_code": "49", "national_prefix": "0", "international_prefix": "0"}, "international_prefix"),
    ({"country_code": "49", "national_prefix": "0", "trunk": "1"}, "trunk"),
    # Digits and a trailing newline once passed ('$' matches before it) into kamailio.cfg.
    ({"country_code": "49\n", "national_prefix": "0"}, "country_code"),
    ({"country_code": "49", "national_prefix": "0\n"}, "national_prefix"),
    ({"country_code": "49", "national_prefix": "0", "international_prefix": "00\n"}, "international_prefix"),
])
def test_bad_normalisation_names_the_field(norm: dict[str, t.Any], path: str) -> None:
    dummy, findings = _parse(number_normalisation=norm)
    assert [e.path for e in findings.errors] == ["%s.number_normalisation.%s" % (BASE, path)]


@pytest.mark.skipif(not shutil.which("kamailio"), reason="kamailio not installed")
def test_cfg_with_core_acl_and_normalisation_parses(tmp_path: Path) -> None:
    settings = dict(SETTINGS, config_dir=str(tmp_path), run_dir=str(tmp_path), core_listen={"address": "127.0.0.1"},
                    acg_listen={"address": "127.0.0.2"}, core_next_hop="127.0.0.3:5060",
                    core_allowed_sources=["127.0.9.0/24"],
                    number_normalisation={"country_code": "49", "national_prefix": "0", "international_prefix": "00"})
    for name, content in render_kamailio(_plan(), settings, "5.6.3").items():
        (tmp_path / name).write_text(content)
    result = subprocess.run(["kamailio", "-c", "-f", str(tmp_path / "kamailio.cfg")], capture_output=True, text=True,
                            timeout=30, check=False)
    assert result.returncode == 0, result.stderr[-2000:]


def test_mcp_continue_next_hop_is_allowed_implicitly() -> None:
    """MCP's 'continue' policy sends calls to mcp.continue_next_hop: its in-dialog requests come back."""
    from ansible_collections.commsgw.routing.tests.unit.plan import test_mcp
    plan = test_mcp._plan({"policy": "continue", "continue_next_hop": "10.0.3.5:5060"})
    settings = dict(test_mcp.SETTINGS, core_allowed_sources=["10.0.1.0/24"])
    rows = [r for r in _rows(render_kamailio(plan, settings, "5.6.3")["address.list"]) if r[0] == "2"]
    assert ["2", "10.0.3.5", "32", "0", "side=core;implicit=mcp_continue_next_hop"] in rows
    named = test_mcp._plan({"policy": "continue", "continue_next_hop": "core.example.net:5060"})
    rows = [r for r in _rows(render_kamailio(named, settings, "5.6.3")["address.list"]) if r[0] == "2"]
    assert [r[1] for r in rows] == ["10.0.1.0", "10.0.0.20"]
