# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TLS parts of the rendered Kamailio configuration (R-09, R-24) and the version gate.

Behaviour on a real Kamailio 6.0 is proven by tests/integration/test_kamailio_tls.py; these check
what the renderer writes for each Kamailio version and that every value comes from the plan.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import (
    KamailioRenderError, render_kamailio)

DOMAIN = "tls.example.test"
R1 = "pstn-region1." + DOMAIN
R2 = "pstn-region2." + DOMAIN


def _plan(transport: str = "tls") -> dict[str, t.Any]:
    raw = {"name": "d", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
           "allow_non_public_ranges": True, "allow_plain_transport": transport != "tls", "acg_transport": transport,
           "service_regions": [
               {"name": "region1", "azure_region": "westeurope", "hostname": R1,
                "ip_ranges": ["198.51.100.0/28", "198.51.100.32/28"]},
               {"name": "region2", "azure_region": "northeurope", "hostname": R2, "ip_ranges": ["203.0.113.16/28"]}],
           "sites": [{"name": "ams", "service_region": "region1"}, {"name": "fra", "service_region": "region2"}]}
    deployment, findings = validate_deployment(raw, [Sbc(host="sbc1", site="ams")])
    assert deployment is not None, [f.render() for f in findings.errors]
    resolved = {
        "_sip._tls." + R1: {"ttl": 300, "targets": [
            {"priority": 10, "weight": 60, "port": 5061, "target": "a." + DOMAIN, "addresses": ["198.51.100.1"]},
            {"priority": 10, "weight": 40, "port": 5061, "target": "b." + DOMAIN, "addresses": ["198.51.100.33"]}]},
        "_sip._tls." + R2: {"ttl": 60, "targets": [
            {"priority": 5, "weight": 1, "port": 5063, "target": "d." + DOMAIN, "addresses": ["203.0.113.17"]}]},
    }
    return build_site_plan(deployment, deployment.sites[0], resolved)


SETTINGS: dict[str, t.Any] = {
    "acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
    "core_next_hop": "10.0.0.20:5060", "config_dir": "/etc/kamailio-acg", "run_dir": "/run/kam",
    "tls": {"certificate": "/etc/ssl/sbc.pem", "private_key": "/etc/ssl/sbc.key", "ca_bundle": "/etc/ssl/acg.pem"}}


def _route(cfg: str, name: str) -> str:
    """The body of route[name] in a rendered kamailio.cfg."""
    m = re.search(r"^route\[%s\] \{\n(.*?)^\}" % re.escape(name), cfg, re.S | re.M)
    assert m, "route[%s] missing" % name
    return m.group(1)


def test_tls_on_5_6_is_refused_with_a_clear_message() -> None:
    with pytest.raises(KamailioRenderError) as info:
        render_kamailio(_plan(), SETTINGS, "5.6.3")
    message = str(info.value)
    assert "5.6.3" in message and "5.7.5" in message and "allow_tls_on_unfixed_kamailio" in message


def test_override_renders_tls_on_5_6_without_tls_threads_mode() -> None:
    files = render_kamailio(_plan(), dict(SETTINGS, allow_tls_on_unfixed_kamailio=True), "5.6.3")
    assert "tls.cfg" in files and "enable_tls=yes" in files["kamailio.cfg"]
    # 5.6 rejects the parameter as a config error.
    assert "tls_threads_mode" not in files["kamailio.cfg"]


@pytest.mark.parametrize("version,present", [("5.7.4", False), ("5.7.5", True), ("5.8.0", True), ("6.0.1", True)])
def test_tls_threads_mode_only_where_it_exists(version: str, present: bool) -> None:
    settings = dict(SETTINGS, allow_tls_on_unfixed_kamailio=not present)
    cfg = render_kamailio(_plan(), settings, version)["kamailio.cfg"]
    assert ("tls_threads_mode=2" in cfg) is present
    assert ("tls_threads_mode" in cfg) is present


def test_plain_transport_renders_no_tls_at_all() -> None:
    files = render_kamailio(_plan("udp"), {k: v for k, v in SETTINGS.items() if k != "tls"}, "5.6.3")
    assert "tls.cfg" not in files
    for marker in ("tls.so", "enable_tls", "COMMSGW_TLS", "tls_threads_mode", "server_name"):
        assert marker not in files["kamailio.cfg"], marker


def test_tls_cfg_is_mutual_tls_1_2_plus_with_acg_ciphers() -> None:
    tls_cfg = render_kamailio(_plan(), SETTINGS, "6.0.1")["tls.cfg"]
    profiles = dict(re.findall(r"^\[(\w+:\w+)\]\n(.*?)(?=^\[|\Z)", tls_cfg, re.S | re.M))
    assert set(profiles) == {"server:default", "client:default"}
    for body in profiles.values():
        assert "method = TLSv1.2+" in body
        assert "verify_certificate = yes" in body and "require_certificate = yes" in body
        assert "certificate = /etc/ssl/sbc.pem" in body and "private_key = /etc/ssl/sbc.key" in body
        assert "ca_list = /etc/ssl/acg.pem" in body
        ciphers = re.search(r"cipher_list = (\S+)", body)
        assert ciphers
        suites = ciphers.group(1).split(":")
        # ACG's TLS 1.2 list, ECDHE only, ECDSA first (ECDSA P-256 client keys are the reliable ones).
        assert suites[0].startswith("ECDHE-ECDSA-") and all(s.startswith("ECDHE-") for s in suites)
        assert {"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256"} <= set(suites)


def test_sni_and_expected_host_follow_each_trunk_groups_ranges() -> None:
    cfg = render_kamailio(_plan(), SETTINGS, "6.0.1")["kamailio.cfg"]
    sni = _route(cfg, "COMMSGW_TLS_SNI")
    expected = _route(cfg, "COMMSGW_TLS_EXPECTED")
    for body, var in ((sni, r'\$xavp\(tls=>server_name\)'), (expected, r'\$var\(commsgw_tls_expected\)')):
        branches = {host: set(re.findall(r'is_in_subnet\("[^"]+", "([^"]+)"\)', cond))
                    for cond, host in re.findall(r'if \((.*?)\) \{\n\t\t%s = "([^"]+)";' % var, body)}
        assert branches == {R1: {"198.51.100.0/28", "198.51.100.32/28"}, R2: {"203.0.113.16/28"}}, body
    # SNI is set before every relay towards ACG, including in-dialog requests.
    assert _route(cfg, "TO_ACG").index("route(COMMSGW_TLS_SNI)") < _route(cfg, "TO_ACG").index("t_relay()")


def test_warm_up_covers_every_peer_with_its_regions_sni() -> None:
    plan = _plan()
    cfg = render_kamailio(plan, SETTINGS, "6.0.1")["kamailio.cfg"]
    warm = _route(cfg, "COMMSGW_TLS_WARM")
    sends = re.findall(r'\$uac_req\(ruri\) = "([^"]+)";.*?\$xavp\(tls=>server_name\) = "([^"]+)";\n\tuac_req_send\(\);',
                       warm, re.S)
    want = {("sip:%s:%d;transport=tls" % (a, p["port"]), g["tls"]["sni"])
            for g in plan["trunk_groups"] for p in g["peers"] for a in p["addresses"]}
    assert set(sends) == want and len(sends) == len(want)
    # rtimer interval in microseconds, deliberately not a whole second (out of phase with the pings).
    interval = re.search(r'name=commsgw_tls_warm;interval=(\d+)u;', cfg)
    assert interval and int(interval.group(1)) % 1_000_000 != 0


def test_host_name_check_can_be_switched_off_per_sbc() -> None:
    on = _route(render_kamailio(_plan(), SETTINGS, "6.0.1")["kamailio.cfg"], "COMMSGW_TLS_PEER_OK")
    off_settings = dict(SETTINGS, tls=dict(SETTINGS["tls"], verify_hostname=False))
    off = _route(render_kamailio(_plan(), off_settings, "6.0.1")["kamailio.cfg"], "COMMSGW_TLS_PEER_OK")
    assert "tls_peer_san_hostname" in on and "tls_peer_verified" in on
    assert "tls_peer_san_hostname" not in off


@pytest.mark.skipif(not shutil.which("kamailio"), reason="kamailio not installed")
def test_tls_config_passes_kamailio_check_on_the_machine(tmp_path: Path) -> None:
    """Syntax and module parameters of the TLS parts on the machine's Kamailio (``kamailio -c``; a
    real start on 6.0 is in the integration suite). 5.6 needs the documented override."""
    out = subprocess.run(["kamailio", "-v"], capture_output=True, text=True, timeout=10, check=False).stdout
    version = re.search(r"kamailio (\d+\.\d+\.\d+)", out)
    assert version
    settings = dict(SETTINGS, config_dir=str(tmp_path), run_dir=str(tmp_path), core_listen={"address": "127.0.0.1"},
                    acg_listen={"address": "127.0.0.2"}, core_next_hop="127.0.0.3:5060",
                    allow_tls_on_unfixed_kamailio=True,
                    tls={"certificate": str(tmp_path / "c.pem"), "private_key": str(tmp_path / "k.pem"),
                         "ca_bundle": str(tmp_path / "ca.pem")})
    for name, content in render_kamailio(_plan(), settings, version.group(1)).items():
        (tmp_path / name).write_text(content)
    result = subprocess.run(["kamailio", "-c", "-f", str(tmp_path / "kamailio.cfg")], capture_output=True, text=True,
                            timeout=30, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
