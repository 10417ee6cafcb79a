# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TLS parts of the rendered Kamailio configuration (R-09, R-24) and the version gate.

Behaviour on a real Kamailio 6.0 is proven by tests/integration/test_kamailio_tls.py; these check
what the renderer writes for each Kamailio version and that every value comes from the plan.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import ensure_secret
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
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
    assert 'add_rr_param(";cgwtls=$var(commsgw_tls_name);cgwmac=$var(commsgw_tls_mac_want)")' in cfg


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
    assert "$si != $Ri" in ping  # only pings from the SBC's address...
    # ...and only the SBC's own (issue 21): its secret token in their From, replaced before they leave.
    assert ping.index('if ($fU != "cgwping-COMMSGW_PING_TOKEN") {') < ping.index('$fU = "options";') \
        < ping.index("t_relay()")
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
@pytest.mark.parametrize("secret", [True, False], ids=["with-secret", "rendered-offline-without-secret"])
def test_tls_config_passes_kamailio_check_on_the_machine(tmp_path: Path, secret: bool) -> None:
    """Syntax and module parameters of the TLS parts on the machine's Kamailio (``kamailio -c``; a
    real start on 6.0 is in the integration suite). 5.6 needs the documented override. Without the
    SBC's secret file (a config rendered offline) the configuration is valid too."""
    out = subprocess.run(["kamailio", "-v"], capture_output=True, text=True, timeout=10, check=False).stdout
    version = re.search(r"kamailio (\d+\.\d+\.\d+)", out)
    assert version
    secret_file = tmp_path / "secret" / "secret.cfg"
    if secret and os.geteuid() == 0:
        ensure_secret(str(secret_file), 0)
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    settings = dict(SETTINGS, config_dir=str(config_dir), run_dir=str(tmp_path), core_listen={"address": "127.0.0.1"},
                    acg_listen={"address": "127.0.0.2"}, core_next_hop="127.0.0.3:5060",
                    allow_tls_on_unfixed_kamailio=True, secret_file=str(secret_file),
                    tls={"certificate": str(tmp_path / "c.pem"), "private_key": str(tmp_path / "k.pem"),
                         "ca_bundle": str(tmp_path / "ca.pem")})
    for name, content in render_kamailio(_plan(), settings, version.group(1)).items():
        (config_dir / name).write_text(content)
    result = subprocess.run(["kamailio", "-c", "-f", str(config_dir / "kamailio.cfg")], capture_output=True,
                            text=True, timeout=30, check=False)
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


# ---- issue 21: the SBC's secret, dialog names only it can mint, the core side only, retired ranges ----------
def _cfg(settings: t.Optional[dict[str, t.Any]] = None, plan: t.Optional[dict[str, t.Any]] = None) -> str:
    return render_kamailio(plan or _plan(), dict(SETTINGS, **(settings or {})), "6.0.1")["kamailio.cfg"]


def test_the_secret_is_imported_never_rendered() -> None:
    """kamailio.cfg imports the host's secret file (import_file: a config rendered offline still starts)
    and uses its two values only by name, each use under #!ifdef: without the file no dialog name is
    believed or minted and no ping relayed."""
    files = render_kamailio(_plan(), SETTINGS, "6.0.1")
    cfg = files["kamailio.cfg"]
    assert 'import_file "/var/lib/kamailio-commsgw/secret.cfg"' in cfg and not re.search(r"^include_file", cfg, re.M)
    assert 'loadmodule "crypto.so"' not in cfg  # Kamailio's own SHA-256, not OpenSSL's HMAC() (issue 25)
    assert cfg.index('import_file "/var/lib/kamailio-commsgw/secret.cfg"') < cfg.index("COMMSGW_TLS_MAC")
    assert not any(re.search(r"[0-9a-f]{32}", text) for text in files.values())  # no key material anywhere
    mac = re.search(r"^#!ifdef COMMSGW_DIALOG_HMAC_IPAD\n\n.*?^route\[COMMSGW_TLS_MAC\] \{\n(.*?)^\}\n#!endif", cfg,
                    re.S | re.M)
    assert mac, "route COMMSGW_TLS_MAC exists only with the key"
    # What it computes is HMAC-SHA256: tests/unit/kamailio/test_kamailio_dialog_mac.py runs it.
    assert "COMMSGW_DIALOG_HMAC_IPAD" in mac.group(1) and "COMMSGW_DIALOG_HMAC_OPAD" in mac.group(1)
    for reader in ("COMMSGW_TLS_NAME_IN_URI", "COMMSGW_TLS_NAME_IN_ROUTE"):
        name = _route(cfg, reader)
        assert name.index("#!ifdef COMMSGW_DIALOG_HMAC_IPAD") < name.index("if (!route(COMMSGW_TLS_BELIEVE)) {") \
            < name.index("#!else\n\treturn(-1);"), reader
    believe = re.search(r"^#!ifdef COMMSGW_DIALOG_HMAC_IPAD\n\n.*?^route\[COMMSGW_TLS_BELIEVE\] \{\n(.*?)^\}\n", cfg,
                        re.S | re.M)
    assert believe, "route COMMSGW_TLS_BELIEVE exists only with the key"
    assert believe.group(1).index("route(COMMSGW_TLS_MAC)") \
        < believe.group(1).index("if ($var(commsgw_tls_mac) != $var(commsgw_tls_mac_want)) {") \
        < believe.group(1).index("$var(commsgw_tls_name) = $var(commsgw_tls_claim);")
    # A Route URI's name and MAC are read by the URI parser, not a regex.
    uri = _route(cfg, "COMMSGW_TLS_NAME_IN_URI")
    assert "{uri.param,cgwtls}" in uri and "{uri.param,cgwmac}" in uri and "re.subst" not in uri
    branch = re.search(r"^branch_route\[COMMSGW_TLS_BRANCH\] \{\n(.*?)^\}", cfg, re.S | re.M)
    assert branch and branch.group(1).index("#!ifdef COMMSGW_DIALOG_HMAC_IPAD") < branch.group(1).index("add_rr_param")
    assert re.search(r'#!ifdef COMMSGW_PING_TOKEN\nmodparam\("dispatcher", "ds_ping_from", '
                     r'"sip:cgwping-COMMSGW_PING_TOKEN@192\.0\.2\.10"\)\n#!else\n'
                     r'modparam\("dispatcher", "ds_ping_from", "sip:options@192\.0\.2\.10"\)\n#!endif', cfg)
    own = _cfg({"secret_file": "/srv/sbc-secret/k.cfg"})
    assert 'import_file "/srv/sbc-secret/k.cfg"' in own


def test_a_secret_inside_the_config_dir_is_refused() -> None:
    with pytest.raises(KamailioRenderError, match=r"commsgw_sbc\.secret_file: lies inside config_dir /etc/kamailio-acg"):
        render_kamailio(_plan(), dict(SETTINGS, secret_file="/etc/kamailio-acg/secret.cfg"), "6.0.1")
    with pytest.raises(KamailioRenderError, match=r"commsgw_sbc\.secret_file: is not an absolute path"):
        render_kamailio(_plan(), dict(SETTINGS, secret_file="secret.cfg"), "6.0.1")


def test_a_dialog_name_is_believed_only_from_a_top_route_that_is_the_sbc() -> None:
    cfg = _cfg()
    dialog = _route(cfg, "COMMSGW_TLS_DIALOG_NAME")
    assert dialog.index('if (!is_present_hf("Route") || !is_myself("$route_uri")) {') \
        < dialog.index("$var(commsgw_tls_route) = $route_uri;") < dialog.index("route(COMMSGW_TLS_NAME_IN_URI)")
    # Every in-dialog request: a top Route that is not the SBC is refused before loose_route follows it.
    common = _route(cfg, "COMMON")
    assert common.index('if (is_present_hf("Route") && !is_myself("$route_uri")) {') < common.index("if (loose_route())")
    # The name an in-dialog request from the core takes to ACG: read from that Route (so after its check), before
    # loose_route; never for a request from ACG, which goes to the core side only and whose name
    # COMMSGW_TLS_CHECK_REQUEST has checked.
    refusal = common.index('if (is_present_hf("Route") && !is_myself("$route_uri")) {')
    assert "exit;" in common[refusal:common.index("\n\t\t}\n", refusal)]
    read = common.index('if ($var(commsgw_from_acg) == 0 && is_present_hf("Route")) {')
    # Reset for every in-dialog request, from either side: $var keeps its value from the process's last message.
    assert refusal < common.index('$var(commsgw_dialog_tls) = "";') < read \
        < common.index("$var(commsgw_tls_route) = $route_uri;") < common.index("route(COMMSGW_TLS_NAME_IN_URI)") \
        < common.index("if (loose_route())")
    assert "COMMSGW_TLS_DIALOG_NAME" not in common
    # The dialog's TLS name is used towards ACG only: never for a request from ACG (which goes to the core side).
    assert re.search(r"if \(\$var\(commsgw_from_acg\) == 1\) \{\n\t+route\(TO_CORE_IN_DIALOG\);\n\t+\} else \{\n"
                     r"(\t+#[^\n]*\n)*\t+route\(COMMSGW_TLS_IN_DIALOG\);\n\t+\}\n", common), common
    assert common.count("route(COMMSGW_TLS_IN_DIALOG);") == 1


def test_out_of_range_in_dialog_requests_need_a_retired_range_of_their_name() -> None:
    cfg = _cfg()
    acg = _route(cfg, "FROM_ACG")
    assert '!allow_source_address("1") && !(has_totag() && route(COMMSGW_TLS_RETIRED_PEER))' in acg
    retired = _route(cfg, "COMMSGW_TLS_RETIRED_PEER")
    for step in ('$proto != "tls" || !route(COMMSGW_TLS_DIALOG_NAME)', 'allow_address("3", "$si", "0")',
                 "$(avp(commsgw_acl_tag){param.value,tls}) != $var(commsgw_tls_name)",
                 "$(avp(commsgw_acl_tag){param.value,until}{s.int}) <= $Ts"):
        assert step in retired, step
    plan = _plan()
    plan["acl"]["retired"] = [{"network": "203.0.113.48/28", "region": "region2", "hostname": "old." + DOMAIN,
                               "until": 1800000000}]
    files = render_kamailio(plan, SETTINGS, "6.0.1")
    assert "\n3 203.0.113.48 28 0 region=region2;tls=old.%s;until=1800000000\n" % DOMAIN in files["address.list"]
    assert files["kamailio.cfg"] == render_kamailio(_plan(), SETTINGS, "6.0.1")["kamailio.cfg"]  # data, not config


@pytest.mark.parametrize("settings,hop_check", [
    ({"core_allowed_sources": ["10.0.5.0/24"]},
     '|| (is_ipv4("$var(commsgw_hop)") && allow_address("2", "$var(commsgw_hop)", "0"))'),
    ({"core_next_hop": "core.operator.test:5060"},
     '|| (is_ipv4("$var(commsgw_hop)") && dns_sys_match_ip("core.operator.test", "$var(commsgw_hop)"))'),
    ({}, None),
], ids=["core-acl", "next-hop-name", "next-hop-address"])
def test_in_dialog_requests_from_acg_go_to_the_core_side_only(settings: dict[str, t.Any],
                                                              hop_check: t.Optional[str]) -> None:
    """After loose_route, an in-dialog request from ACG must have the core next hop (or, with a core ACL, a
    core source) as its next hop, and leaves from the core socket; anything else is refused."""
    cfg = _cfg(settings)
    common = _route(cfg, "COMMON")
    relay = common[common.index("if (loose_route()) {"):]
    assert relay.index("if ($var(commsgw_from_acg) == 1) {\n\t\t\t\troute(TO_CORE_IN_DIALOG);") < relay.index("t_relay()")
    hop = _route(cfg, "TO_CORE_IN_DIALOG")
    host = settings.get("core_next_hop", SETTINGS["core_next_hop"]).split(":")[0]
    assert 'if ($var(commsgw_hop) == "%s"' % host in hop
    assert (hop_check in hop) if hop_check else ("allow_address" not in hop and "dns_sys_match_ip" not in hop)
    assert hop.index('$fs = "udp:10.0.0.10:5070";') < hop.index("return(1);") < hop.index(
        'sl_send_reply("403", "Next Hop Not In The Core");')
    request = re.search(r"^request_route \{\n(.*?)^\}", cfg, re.S | re.M)
    assert request and "$var(commsgw_from_acg) = 1;" in request.group(1) and "$var(commsgw_from_acg) = 0;" in request.group(1)
