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


def test_tls_names_are_reloadable_data_never_config() -> None:
    """R-24 + R-23: the TLS name of each /28 is in its address.list tag and each peer's in its dispatcher
    row; kamailio.cfg names no range and no hostname, so a region migration changes reloadable files only."""
    plan = _plan()
    files = render_kamailio(plan, SETTINGS, "6.0.1")
    tags = dict(re.findall(r"^1 (\S+ \d+) 0 (\S+)$", files["address.list"], re.M))
    assert tags == {"198.51.100.0 28": "region=region1;tls=" + R1, "198.51.100.32 28": "region=region1;tls=" + R1,
                    "203.0.113.16 28": "region=region2;tls=" + R2}
    rows = re.findall(r"^\d+ sip:([\d.]+):\d+;transport=tls \d+ \d+ (\S+)$", files["dispatcher.list"], re.M)
    names = {address: dict(p.split("=", 1) for p in attrs.split(";"))["tls"] for address, attrs in rows}
    assert names == {"198.51.100.1": R1, "198.51.100.33": R1, "203.0.113.17": R2}
    for text in (files["kamailio.cfg"], files["tls.cfg"]):
        assert R1 not in text and R2 not in text and "198.51.100." not in text and "203.0.113." not in text
    # The names reach Kamailio through the ACL tag (permissions) and the dispatcher attributes.
    cfg = files["kamailio.cfg"]
    assert 'modparam("permissions", "peer_tag_avp", "$avp(commsgw_acl_tag)")' in cfg
    assert "$(avp(commsgw_acl_tag){param.value,tls})" in _route(cfg, "COMMSGW_TLS_NAME_OF")
    assert "$(xavp(_dsdst_=>attrs){param.value,tls})" in _route(cfg, "COMMSGW_TLS_SNI")
    # SNI is set before every relay towards ACG, and each branch records its name for the dialog.
    to_acg = _route(cfg, "TO_ACG")
    assert to_acg.index("route(COMMSGW_TLS_SNI)") < to_acg.index('t_on_branch("COMMSGW_TLS_BRANCH")') \
        < to_acg.index("t_relay()")
    assert 'add_rr_param(";cgwtls=$var(commsgw_tls_name)")' in cfg


def test_a_migrations_old_peers_keep_their_old_name() -> None:
    """In a migration's widened plan the kept old peers and old ranges carry the old regional hostname."""
    plan = _plan()
    old_name = "pstn-region2-old." + DOMAIN
    plan["trunk_groups"][1]["peers"].append({"target": "old." + DOMAIN, "port": 5061, "priority": 5, "weight": 1,
                                             "addresses": ["203.0.113.49"], "hostname": old_name})
    plan["trunk_groups"][1]["ip_ranges"].append("203.0.113.48/28")
    plan["acl"]["ranges"].append({"network": "203.0.113.48/28", "region": "region2", "hostname": old_name})
    files = render_kamailio(plan, SETTINGS, "6.0.1")
    assert "1 203.0.113.48 28 0 region=region2;tls=%s" % old_name in files["address.list"]
    assert re.search(r"sip:203\.0\.113\.49:5061;transport=tls \d+ \d+ \S*;tls=%s;" % re.escape(old_name),
                     files["dispatcher.list"])
    assert re.search(r"sip:203\.0\.113\.17:5063;transport=tls \d+ \d+ \S*;tls=%s;" % re.escape(R2),
                     files["dispatcher.list"])


def test_dispatcher_pings_are_relayed_through_the_sbc_with_sni() -> None:
    """Kamailio's own pings cannot carry SNI: every pinged ACG row sends them to the SBC's UDP relay
    socket on the ACG-facing address (obproxy), where route COMMSGW_TLS_PING relays them with SNI."""
    files = render_kamailio(_plan(), SETTINGS, "6.0.1")
    cfg = files["kamailio.cfg"]
    assert "listen=udp:192.0.2.10:5061" in cfg
    rows = re.findall(r"^\d+ sip:\S+ (\d+) \d+ (\S+)$", files["dispatcher.list"], re.M)
    assert rows and all("obproxy=sip:192.0.2.10:5061" in attrs for flags, attrs in rows if int(flags) & 8)
    ping = _route(cfg, "COMMSGW_TLS_PING")
    assert ping.index("$xavp(tls=>server_name) = $var(commsgw_tls_name)") < ping.index("t_relay()")
    assert "$si != $Ri" in ping  # only the SBC's own pings are relayed
    request = re.search(r"^request_route \{\n(.*?)^\}", cfg, re.S | re.M)
    assert request and 'if ($proto == "udp") {\n\t\t\troute(COMMSGW_TLS_PING);' in request.group(1)
    assert "rtimer" not in cfg and "uac_req_send" not in cfg  # the old warm-up is gone
    # Plain transports keep tm's own pings.
    udp = render_kamailio(_plan("udp"), SETTINGS, "5.6.3")
    assert "obproxy" not in udp["dispatcher.list"] and "COMMSGW_TLS_PING" not in udp["kamailio.cfg"]


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


def test_in_dialog_requests_to_acg_are_sent_once_more_when_lost_on_a_closing_connection() -> None:
    """A BYE written on a connection ACG is closing is lost (send failure 477, or never read: no reply);
    the SBC sends it once more (a new connection, the dialog's SNI), never for a real answer."""
    cfg = render_kamailio(_plan(), SETTINGS, "6.0.1")["kamailio.cfg"]
    common = _route(cfg, "COMMON")
    in_dialog_relay = common[common.index("if (loose_route()) {"):]
    assert in_dialog_relay.index("route(COMMSGW_TLS_IN_DIALOG)") < in_dialog_relay.index("t_relay()")
    in_dialog = _route(cfg, "COMMSGW_TLS_IN_DIALOG")
    assert 't_on_failure("COMMSGW_TLS_IN_DIALOG_RESEND")' in in_dialog
    resend = re.search(r"^failure_route\[COMMSGW_TLS_IN_DIALOG_RESEND\] \{\n(.*?)^\}", cfg, re.S | re.M)
    assert resend, cfg
    body = resend.group(1)
    assert 't_check_status("477")' in body and "t_branch_timeout() && !t_branch_replied()" in body
    assert body.index("$avp(commsgw_dialog_resent) != $null") < body.index("route(COMMSGW_TLS_RESEND)")
    once_more = _route(cfg, "COMMSGW_TLS_RESEND")
    assert once_more.index("$avp(commsgw_dialog_resent) = 1") < once_more.index("t_relay()")
    assert "$xavp(tls=>server_name) = $avp(commsgw_dialog_tls)" in once_more
    # A send that fails at once (t_relay false) is tried once more there and then.
    failed_send = in_dialog_relay[in_dialog_relay.index("if (!t_relay()) {"):]
    assert failed_send.index("route(COMMSGW_TLS_RESEND)") < failed_send.index("sl_reply_error();")
