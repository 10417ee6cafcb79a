# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan -> Kamailio view and rendered files (pure; the behaviour itself is proven by
tests/integration/test_kamailio_conformance.py on a real Kamailio)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import scale_rweights
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.view import build_view, has_tls_threads_mode
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import parse_sbc_settings
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import (
    KamailioRenderError, render_kamailio)
from tests.harness.kamailio import parse_kamailio_version

DOMAIN = "acg.example.test"


def _plan(transport: str = "udp", resolved: t.Optional[dict[str, t.Any]] = None) -> dict[str, t.Any]:
    raw = {"name": "d", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
           "allow_non_public_ranges": True, "allow_plain_transport": True,
           "acg_transport": transport,
           "service_regions": [
               {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1." + DOMAIN,
                "ip_ranges": ["198.51.100.0/28"]},
               {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2." + DOMAIN,
                "ip_ranges": ["203.0.113.16/28"]}],
           "sites": [{"name": "ams", "service_region": "region1"}, {"name": "fra", "service_region": "region2"}],
           "emergency_dial_strings": ["112", "999"]}
    deployment, dummy = validate_deployment(raw, [Sbc(host="sbc1", site="ams")])
    if resolved is None:
        resolved = {
            "_sip._tls.pstn-region1." + DOMAIN: {"ttl": 300, "targets": [
                {"priority": 10, "weight": 60, "port": 5061, "target": "a." + DOMAIN, "addresses": ["198.51.100.1"]},
                {"priority": 10, "weight": 0, "port": 5061, "target": "b." + DOMAIN, "addresses": ["198.51.100.2"]},
                {"priority": 20, "weight": 10, "port": 5062, "target": "c." + DOMAIN, "addresses": ["198.51.100.9"]}]},
            "_sip._tls.pstn-region2." + DOMAIN: {"ttl": 60, "targets": [
                {"priority": 5, "weight": 1, "port": 5061, "target": "d." + DOMAIN, "addresses": ["203.0.113.17"]}]},
        }
    return build_site_plan(deployment, deployment.sites[0], resolved)


SETTINGS = {"acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
            "core_next_hop": "10.0.0.20:5060", "config_dir": "/etc/kamailio-acg", "run_dir": "/run/kam"}
TLS_SETTINGS = dict(SETTINGS, tls={"certificate": "/etc/ssl/sbc.pem", "private_key": "/etc/ssl/sbc.key",
                                   "ca_bundle": "/etc/ssl/acg-ca.pem"})


def _settings(raw: dict[str, t.Any], transport: str = "udp") -> dict[str, t.Any]:
    findings = Findings()
    settings = parse_sbc_settings(raw, "sbc1", transport, findings)
    assert not findings.errors, [f.render() for f in findings.errors]
    return settings


def test_sets_follow_plan_order_and_srv_tiers() -> None:
    view = build_view(_plan(), _settings(SETTINGS), "5.6.3")
    sets = view["dispatcher"]["sets"]
    assert [(s["id"], s["role"], s["srv_priority"]) for s in sets] == [
        (101, "local", 10), (102, "local", 20), (201, "remote", 5)]
    assert view["dispatcher"]["rules"] == "101=11;102=11;201=11"
    first = sets[0]["destinations"]
    assert [(d["address"], d["rweight"]) for d in first] == [("198.51.100.1", 100), ("198.51.100.2", 1)]
    # Dispatcher priority runs the other way from SRV priority.
    assert first[0]["priority"] > sets[1]["destinations"][0]["priority"]
    assert sets[1]["destinations"][0]["uri"] == "sip:198.51.100.9:5062;transport=udp"
    assert all("socket=udp:192.0.2.10:5060" in d["attrs"] and d["flags"] == 8 for s in sets for d in s["destinations"])


@pytest.mark.parametrize("weights,expected", [([60, 40], [100, 67]), ([0, 0], [1, 1]), ([1000, 1], [100, 1]),
                                              ([5], [100])])
def test_rweight_scaling(weights: list[int], expected: list[int]) -> None:
    assert scale_rweights(weights) == expected


def test_acl_rows_cover_every_range_of_both_regions() -> None:
    files = render_kamailio(_plan(), SETTINGS, "5.6.3")
    rows = [line.split() for line in files["address.list"].splitlines() if line and not line.startswith("#")]
    # The tag carries the region and its TLS name, read by kamailio.cfg over TLS.
    assert rows == [["1", "198.51.100.0", "28", "0", "region=region1;tls=pstn-region1." + DOMAIN],
                    ["1", "203.0.113.16", "28", "0", "region=region2;tls=pstn-region2." + DOMAIN]]


def test_unresolved_or_foreign_targets_are_refused() -> None:
    plan = _plan()
    unresolved = copy.deepcopy(plan)
    unresolved["trunk_groups"][1]["peers"] = None
    with pytest.raises(KamailioRenderError, match="not resolved"):
        render_kamailio(unresolved, SETTINGS, "5.6.3")
    foreign = copy.deepcopy(plan)
    foreign["trunk_groups"][0]["peers"][0]["addresses"] = ["192.0.2.99"]
    with pytest.raises(KamailioRenderError, match="outside"):
        render_kamailio(foreign, SETTINGS, "5.6.3")


def test_header_and_errors_name_the_inventory_host() -> None:
    files = render_kamailio(_plan(), SETTINGS, "5.6.3", "sbc-ams-1")
    assert "# ACG SBC configuration for sbc-ams-1 (deployment" in files["kamailio.cfg"]
    assert "configuration for sbc " not in files["kamailio.cfg"]
    assert render_kamailio(_plan(), SETTINGS, "5.6.3", "sbc-ams-1") == files  # same host, same bytes
    tls = render_kamailio(_plan(transport="tls"), TLS_SETTINGS, "6.0.1", "sbc-ams-1")
    assert "# TLS profiles of sbc-ams-1 towards ACG" in tls["tls.cfg"]
    unresolved = _plan()
    unresolved["trunk_groups"][1]["peers"] = None
    with pytest.raises(KamailioRenderError, match="^host sbc-ams-1: .*not resolved"):
        render_kamailio(unresolved, SETTINGS, "5.6.3", "sbc-ams-1")
    with pytest.raises(KamailioRenderError, match=r"hosts\[sbc-ams-1\]\.commsgw_sbc"):
        render_kamailio(_plan(), dict(SETTINGS, shared_memory_mb="lots"), "5.6.3", "sbc-ams-1")


def test_rendered_cfg_carries_the_plan_values() -> None:
    files = render_kamailio(_plan(), SETTINGS, "5.6.3")
    cfg = files["kamailio.cfg"]
    assert set(files) == {"kamailio.cfg", "dispatcher.list", "address.list", "commsgw-srv.json"}
    assert 'ds_select_routes("101=11;102=11;201=11", "0")' in cfg
    assert "t_set_fr(120000, 2000);" in cfg  # the plan's default ACG-leg INVITE timer
    # 477: tm's own reply for a branch it could not send (no connection): "no response".
    assert 't_check_status("408|503|504|477")' in cfg
    assert 'modparam("dispatcher", "ds_ping_interval", 5)' in cfg
    assert 'modparam("dispatcher", "ds_probing_threshold", 2)' in cfg
    assert '$rU =~ "^\\+?(112|999)$"' in cfg
    assert "$ml > 9984" in cfg and "$(ru{s.len}) > 256" in cfg
    assert 'modparam("dispatcher", "list_file", "/etc/kamailio-acg/peers/dispatcher.list")' in cfg
    assert "listen=udp:192.0.2.10:5060" in cfg and "listen=udp:10.0.0.10:5070" in cfg
    # (TLSF, the memory manager, is no TLS.)
    assert "tls" not in cfg.split("####### Routing logic")[0].lower().replace("tls_threads", "").replace("=tlsf", "")
    assert "\n#memory_manager=tlsf\n" in cfg
    srv = json.loads(files["commsgw-srv.json"])
    assert [s["id"] for s in srv["sets"]] == [101, 102, 201] and srv["min_ttl"] == 60


def test_tls_refused_on_unfixed_kamailio_unless_overridden() -> None:
    plan = _plan("tls")
    with pytest.raises(KamailioRenderError, match="5.7.5"):
        render_kamailio(plan, TLS_SETTINGS, "5.6.3")
    files = render_kamailio(plan, dict(TLS_SETTINGS, allow_tls_on_unfixed_kamailio=True), "5.6.3")
    assert "tls_threads_mode" not in files["kamailio.cfg"] and "tls.cfg" in files
    files = render_kamailio(plan, TLS_SETTINGS, "6.0.1")
    assert "tls_threads_mode=2" in files["kamailio.cfg"]
    assert "listen=tls:192.0.2.10:5061" in files["kamailio.cfg"]


@pytest.mark.parametrize("text,version", [
    ("version: kamailio 5.6.3 (x86_64/linux) \nflags: USE_TCP", "5.6.3"),
    ("version: kamailio 6.0.1 (x86_64/linux) 4e8ae5\n", "6.0.1"),
])
def test_version_parsing(text: str, version: str) -> None:
    assert parse_kamailio_version(text) == version


def test_version_thresholds() -> None:
    assert not has_tls_threads_mode("5.6.3") and not has_tls_threads_mode("5.7.4")
    assert has_tls_threads_mode("5.7.5") and has_tls_threads_mode("6.0.1")
    with pytest.raises(ValueError):
        parse_kamailio_version("kamailio: command not found")


@pytest.mark.parametrize("version", [
    "6.0.1\nloadmodule \"evil.so\"", "6.0.1\n", "6.0", "6.0.1-dev", " 6.0.1", "6.0.1;", "", "None", "6.0.1.2",
])
def test_a_version_that_is_not_n_n_n_is_refused_naming_kamailio_version(version: str) -> None:
    """kamailio_version is written into a comment of kamailio.cfg: a newline there starts a live line
    (issue 13), so only N.N.N renders."""
    with pytest.raises(KamailioRenderError, match=r"^kamailio_version: .* expected N\.N\.N, e\.g\. 6\.0\.1"):
        render_kamailio(_plan(), SETTINGS, version)


def test_an_exact_version_renders_into_the_comment_only() -> None:
    cfg = render_kamailio(_plan(), SETTINGS, "5.6.3")["kamailio.cfg"]
    assert [line for line in cfg.splitlines() if "5.6.3" in line] == [
        line for line in cfg.splitlines() if line.startswith("# Kamailio 5.6.3.")]


@pytest.mark.parametrize("raw,path", [
    ({"core_listen": {"address": "10.0.0.1"}, "core_next_hop": "10.0.0.2:5060"}, "acg_listen.address"),
    (dict(SETTINGS, acg_listen={"address": "0.0.0.0"}), "acg_listen.address"),
    (dict(SETTINGS, core_listen={"address": "192.0.2.10", "port": 5060}), "core_listen"),
    (dict(SETTINGS, core_next_hop="10.0.0.20"), "core_next_hop"),
    # The host ends up inside kamailio.cfg: nothing that could break out of the string.
    (dict(SETTINGS, core_next_hop="core\n:5060"), "core_next_hop"),
    (dict(SETTINGS, core_next_hop='co"re:5060'), "core_next_hop"),
    (dict(SETTINGS, core_listen={"address": "10.0.0.10", "transport": "sctp"}), "core_listen.transport"),
    (dict(SETTINGS, config_dir="etc/kamailio"), "config_dir"),
    (dict(SETTINGS, config_dir="/etc/kam\x01ailio"), "config_dir"),
    (dict(SETTINGS, tcp_workers=0), "tcp_workers"),
    (dict(SETTINGS, acl_action="ignore"), "acl_action"),
    (dict(SETTINGS, colour="blue"), "colour"),
])
def test_settings_errors_name_the_field(raw: dict[str, t.Any], path: str) -> None:
    findings = Findings()
    parse_sbc_settings(raw, "sbc-ams-1", "udp", findings)
    assert "hosts[sbc-ams-1].commsgw_sbc." + path in [f.path for f in findings.errors]


def test_tls_settings_required_for_tls() -> None:
    findings = Findings()
    parse_sbc_settings(SETTINGS, "sbc1", "tls", findings)
    assert {f.path for f in findings.errors} == {"hosts[sbc1].commsgw_sbc.tls.%s" % k
                                                 for k in ("certificate", "private_key", "ca_bundle")}


@pytest.mark.skipif(not shutil.which("kamailio"), reason="kamailio not installed")
def test_rendered_cfg_parses_with_the_machine_kamailio(tmp_path: Path) -> None:
    """kamailio -c is not proof that it starts (the conformance suite starts it), but it catches syntax."""
    settings = dict(SETTINGS, config_dir=str(tmp_path), run_dir=str(tmp_path), core_listen={"address": "127.0.0.1"},
                    acg_listen={"address": "127.0.0.2"}, core_next_hop="127.0.0.3:5060")
    for name, content in render_kamailio(_plan(), settings, "5.6.3").items():
        (tmp_path / name).write_text(content)
    result = subprocess.run(["kamailio", "-c", "-f", str(tmp_path / "kamailio.cfg")], capture_output=True, text=True,
                            timeout=30, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
