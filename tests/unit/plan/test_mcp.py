# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MCP settings, plan section, Kamailio view and rendered text (pure). The behaviour on a real
Kamailio is proven by tests/integration/test_mcp.py; docs/mcp.md explains the settings."""

from __future__ import annotations

import copy
import json
import re
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import refresher
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import DS_FLAG_PROBING, KamailioViewError
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.view import build_view, srv_refresh_input
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import normalise_sbc_settings
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import SrvAnswer, target_from_dict
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import (
    KamailioRenderError, render_kamailio)

DOMAIN = "acg.example.test"
MCP1_ADDR, MCP2_ADDR = "198.51.100.9", "203.0.113.25"


def _raw(mcp: t.Optional[dict[str, t.Any]] = None, with_mcp: bool = True) -> dict[str, t.Any]:
    raw: dict[str, t.Any] = {
        "name": "d", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True, "acg_transport": "udp",
        "service_regions": [
            {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1." + DOMAIN,
             "ip_ranges": ["198.51.100.0/28"]},
            {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2." + DOMAIN,
             "ip_ranges": ["203.0.113.16/28"]}],
        "sites": [{"name": "ams", "service_region": "region1"}, {"name": "fra", "service_region": "region2"}]}
    if with_mcp:
        raw["service_regions"][0]["mcp_hostname"] = "mcp-region1." + DOMAIN
        raw["service_regions"][1]["mcp_hostname"] = "MCP-Region2." + DOMAIN  # case is not significant
    if mcp is not None:
        raw["mcp"] = mcp
    return raw


def _errors(raw: dict[str, t.Any]) -> dict[str, str]:
    dummy, findings = validate_deployment(raw, [Sbc(host="sbc1", site="ams"), Sbc(host="sbc2", site="fra")])
    return {f.path: f.message for f in findings.errors}


def _resolved() -> dict[str, t.Any]:
    def answer(ttl: int, *targets: tuple[int, int, str, str]) -> dict[str, t.Any]:
        return {"ttl": ttl, "targets": [{"priority": p, "weight": w, "port": 5060, "target": name, "addresses": [a]}
                                        for p, w, name, a in targets]}
    return {
        "_sip._tls.pstn-region1." + DOMAIN: answer(300, (10, 50, "a." + DOMAIN, "198.51.100.1")),
        "_sip._tls.pstn-region2." + DOMAIN: answer(300, (10, 50, "d." + DOMAIN, "203.0.113.17")),
        # each region's MCP record lists its own MCP first, the other region's lower.
        "_sip._tls.mcp-region1." + DOMAIN: answer(30, (10, 1, "mcp1." + DOMAIN, MCP1_ADDR),
                                                  (20, 1, "mcp2." + DOMAIN, MCP2_ADDR)),
        "_sip._tls.mcp-region2." + DOMAIN: answer(30, (10, 1, "mcp2." + DOMAIN, MCP2_ADDR),
                                                  (20, 1, "mcp1." + DOMAIN, MCP1_ADDR)),
    }


def _plan(mcp: t.Optional[dict[str, t.Any]] = None, with_mcp: bool = True) -> dict[str, t.Any]:
    sbcs = [Sbc(host="sbc1", site="ams"), Sbc(host="sbc2", site="fra")]
    deployment, findings = validate_deployment(_raw(mcp, with_mcp), sbcs)
    assert not findings.errors, [f.render() for f in findings.errors]
    return build_site_plan(deployment, deployment.sites[0], _resolved())


SETTINGS = {"acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
            "core_next_hop": "10.0.0.20:5060", "config_dir": "/etc/kamailio-acg", "run_dir": "/run/kam"}


def _view(plan: dict[str, t.Any]) -> dict[str, t.Any]:
    return build_view(plan, normalise_sbc_settings(SETTINGS, "udp"), "5.6.3")


def _rows(dispatcher_list: str) -> list[tuple[int, str, int]]:
    return [(int(f[0]), f[1], int(f[2])) for f in (line.split() for line in dispatcher_list.splitlines())
            if f and not f[0].startswith("#")]


# -- settings: model and validation ----------------------------------------------------------------
def test_defaults_match_the_ifc_route_and_reject_without_a_next_hop() -> None:
    """R-18/R-19: default classification is the iFC's Route (hostname or service=mcp); with no
    continue_next_hop, 'no MCP target left' is a clear error (503)."""
    mcp = _plan()["mcp"]
    assert mcp["match"] == ["route_host", "route_service"]
    assert mcp["record_selection"] == "named_hostname_else_local"
    assert (mcp["on_all_failed"], mcp["reject_code"], mcp["policy_on_5xx"]) == ("reject", 503, "retry")


def test_on_all_failed_defaults_to_continue_with_a_next_hop() -> None:
    assert _plan({"continue_next_hop": "core.example.net:5060"})["mcp"]["on_all_failed"] == "continue"
    assert _plan({"continue_next_hop": "core.example.net", "on_all_failed": "reject"})["mcp"]["on_all_failed"] \
        == "reject"


def test_match_is_kept_in_order_without_repeats_and_plans_share_no_list() -> None:
    plan = _plan({"match": ["request_uri_host", "route_host"]})
    assert plan["mcp"]["match"] == ["request_uri_host", "route_host"]
    first, second = _plan(), _plan()
    first["mcp"]["match"].append("request_uri_host")
    assert second["mcp"]["match"] == ["route_host", "route_service"]


@pytest.mark.parametrize("mcp,path,message", [
    ({"match": []}, "mcp.match", "is empty: no request would ever reach MCP"),
    ({"match": ["route_host", "via_host"]}, "mcp.match[1]", "is not an MCP match criterion"),
    ({"match": ["route_host", "route_host"]}, "mcp.match[1]", "repeats the criterion of mcp.match[0]"),
    ({"match": "route_host"}, "mcp.match", "has the wrong type"),
    ({"on_all_failed": "drop"}, "mcp.on_all_failed", "is not an MCP all-failed action"),
    ({"on_all_failed": "continue"}, "mcp.continue_next_hop", "is missing for on_all_failed: continue"),
    ({"policy": "continue"}, "mcp.continue_next_hop", "is missing for the 'continue' policy"),
])
def test_invalid_mcp_settings(mcp: dict[str, t.Any], path: str, message: str) -> None:
    errors = _errors(_raw(mcp))
    assert errors.get(path) == message, errors


def test_policy_continue_without_hop_is_reported_once() -> None:
    errors = _errors(_raw({"policy": "continue", "on_all_failed": "continue"}))
    assert list(errors) == ["mcp.continue_next_hop"], errors


def test_valid_mcp_settings_have_no_errors() -> None:
    assert _errors(_raw({"policy": "continue", "continue_next_hop": "10.0.0.30:5060", "hold_down_s": 10,
                         "match": ["route_service", "request_uri_host"], "on_all_failed": "reject"})) == {}


# -- view and rendered files -----------------------------------------------------------------------
def test_mcp_rows_are_unprobed_sets_after_the_acg_sets() -> None:
    """R-19: MCP targets are dispatcher rows without the probing flag (never sent OPTIONS); the ACG
    peers keep theirs; set ids 1000 + record order * 100 + SRV tier."""
    files = render_kamailio(_plan(), SETTINGS, "5.6.3")
    rows = _rows(files["dispatcher.list"])
    acg = [r for r in rows if r[0] < 1000]
    mcp = [r for r in rows if r[0] >= 1000]
    assert [r[0] for r in acg] == [101, 201] and all(r[2] == DS_FLAG_PROBING for r in acg), rows
    assert [(r[0], r[1].split(":")[1], r[2]) for r in mcp] == [
        (1101, MCP1_ADDR, 0), (1102, MCP2_ADDR, 0), (1201, MCP2_ADDR, 0), (1202, MCP1_ADDR, 0)], rows
    assert rows.index(acg[-1]) < rows.index(mcp[0])


def test_view_records_rules_and_no_second_cross_region_hop() -> None:
    """R-18: a request uses one record only: record 1 walks MCP1 then MCP2 (its two tiers), record 2
    the other way round; nothing appends the other record's sets."""
    view = _view(_plan({"continue_next_hop": "core.example.net:5080"}))
    mcp = view["mcp"]
    assert [(r["order"], r["hostname"], r["rules"]) for r in mcp["records"]] == [
        (1, "mcp-region1." + DOMAIN, "1101=11;1102=11"), (2, "mcp-region2." + DOMAIN, "1201=11;1202=11")]
    assert mcp["default_record"] == 1
    assert mcp["continue"] == {"uri": "sip:core.example.net:5080;transport=udp", "socket": "udp:10.0.0.10:5070"}
    assert (mcp["hold_down_s"], mcp["invite_fr_ms"], mcp["max_targets"]) == (30, 2000, 2)
    # The ACG trunk-group sets (which the TLS warm-up and the SBC routing walk) hold no MCP row.
    assert [s["id"] for s in view["dispatcher"]["sets"]] == [101, 201]


def test_without_mcp_nothing_mcp_is_rendered() -> None:
    """A deployment without MCP renders no MCP logic at all: no module, table, route or row."""
    plan = _plan(with_mcp=False)
    assert plan["mcp"] is None
    files = render_kamailio(plan, SETTINGS, "5.6.3")
    text = files["kamailio.cfg"] + files["dispatcher.list"] + files["commsgw-srv.json"]
    # (route_uri itself is no MCP marker: every in-dialog request checks its top Route is the SBC, issue 21.)
    for needle in ("MCP", "mcp", "htable", "textopsx", "$(route_uri{uri", "1101"):
        assert needle not in text, needle


def test_with_mcp_the_hooks_are_rendered() -> None:
    cfg = render_kamailio(_plan({"continue_next_hop": "10.0.0.30"}), SETTINGS, "5.6.3")["kamailio.cfg"]
    assert 'loadmodule "htable.so"' in cfg
    assert 'modparam("htable", "htable", "commsgw_mcp_hold=>size=4;autoexpire=30;")' in cfg
    # The MCP route runs on the core side before the ACG trunks are selected.
    assert cfg.index("route(COMMSGW_MCP);") < cfg.index('ds_select_routes("101=11;201=11"')
    assert 'ds_select_routes("1101=11;1102=11", "0")' in cfg and 'ds_select_routes("1201=11;1202=11", "0")' in cfg
    assert '$du = "sip:10.0.0.30:5060;transport=udp";' in cfg
    # No MCP row is ever marked (marking with "p" would start OPTIONS to MCP).
    mcp_part = cfg[cfg.index("# ---- Mobile Control Point"):]
    assert "ds_mark_dst" not in mcp_part


def _route(cfg: str, name: str) -> str:
    match = re.search(r"^(?:failure_)?route\[%s\] \{\n(.*?)^\}" % re.escape(name), cfg, re.MULTILINE | re.DOTALL)
    assert match, name
    return match.group(1)


@pytest.mark.parametrize("match,present,absent", [
    (["route_host"], ['$var(commsgw_mcp_host) == "mcp-region2.' + DOMAIN + '"'], ["service", "$(rd"]),
    (["route_service"], ['{uri.param,service}'], ['== "mcp-region1.', "$(rd"]),
    (["request_uri_host"], ['$(rd{s.tolower}) == "mcp-region1.' + DOMAIN + '"'], ["route_uri"]),
])
def test_classification_follows_the_match_setting(match: list[str], present: list[str], absent: list[str]) -> None:
    cfg = render_kamailio(_plan({"match": match}), SETTINGS, "5.6.3")["kamailio.cfg"]
    body = _route(cfg, "COMMSGW_MCP_CLASSIFY")
    for needle in present:
        assert needle in body, (needle, body)
    for needle in absent:
        assert needle not in body, (needle, body)


@pytest.mark.parametrize("policy,on_all_failed", [("retry", "reject"), ("retry", "continue"),
                                                  ("continue", "reject"), ("continue", "continue")])
def test_policy_and_all_failed_shape_the_failure_handling(policy: str, on_all_failed: str) -> None:
    """R-20: retry walks the record's next target; continue goes to the next hop. R-19: no target left
    -> continue or a 503."""
    cfg = render_kamailio(_plan({"policy": policy, "on_all_failed": on_all_failed,
                                 "continue_next_hop": "10.0.0.30:5060"}), SETTINGS, "5.6.3")["kamailio.cfg"]
    failure = _route(cfg, "COMMSGW_MCP_FAILURE")
    five_xx = failure[failure.index('t_check_status("5[0-9][0-9]")'):]
    if policy == "retry":
        assert "route(COMMSGW_MCP_NEXT)" in five_xx and "COMMSGW_MCP_CONTINUE" not in five_xx
    else:
        assert "route(COMMSGW_MCP_CONTINUE)" in five_xx and "COMMSGW_MCP_NEXT" not in five_xx
    all_failed = _route(cfg, "COMMSGW_MCP_ALL_FAILED")
    if on_all_failed == "continue":
        assert "route(COMMSGW_MCP_CONTINUE)" in all_failed and "send_reply" not in all_failed
    else:
        assert 'send_reply("503", "MCP Unavailable")' in all_failed and "CONTINUE" not in all_failed


def test_reject_without_next_hop_renders_no_continue_route() -> None:
    cfg = render_kamailio(_plan(), SETTINGS, "5.6.3")["kamailio.cfg"]
    assert "route[COMMSGW_MCP_CONTINUE]" not in cfg and "route(COMMSGW_MCP_CONTINUE)" not in cfg


def test_unresolved_or_foreign_mcp_targets_refuse_to_render() -> None:
    plan = _plan()
    unresolved = copy.deepcopy(plan)
    unresolved["mcp"]["records"][1]["peers"] = None
    with pytest.raises(KamailioRenderError, match="MCP record 2 .* was not resolved"):
        render_kamailio(unresolved, SETTINGS, "5.6.3")
    foreign = copy.deepcopy(plan)
    foreign["mcp"]["records"][0]["peers"][0]["addresses"] = ["192.0.2.99"]
    with pytest.raises(KamailioRenderError, match="outside"):
        render_kamailio(foreign, SETTINGS, "5.6.3")


def test_view_refuses_continue_without_next_hop() -> None:
    plan = _plan({"continue_next_hop": "10.0.0.30"})
    plan["mcp"]["continue_next_hop"] = None  # only reachable by skipping validation
    with pytest.raises(KamailioViewError, match="continue_next_hop"):
        _view(plan)


# -- SRV refresher: MCP rows survive a refresh -----------------------------------------------------
def test_refresher_rebuilds_the_mcp_rows_identically() -> None:
    """The on-host refresher rebuilds dispatcher.list from commsgw-srv.json: with unchanged answers it
    must give the rendered file byte for byte, MCP rows included (or a refresh would drop MCP)."""
    plan = _plan()
    files = render_kamailio(plan, SETTINGS, "5.6.3")
    spec = json.loads(files["commsgw-srv.json"])
    assert [r["srv_name"] for r in spec["mcp_records"]] == ["_sip._tls.mcp-region1." + DOMAIN,
                                                            "_sip._tls.mcp-region2." + DOMAIN]
    assert [s["id"] for s in spec["mcp_sets"]] == [1101, 1102, 1201, 1202]
    answers = {}
    for name, answer in _resolved().items():
        answers[name] = SrvAnswer(name, answer["ttl"], tuple(target_from_dict(p) for p in answer["targets"]))
    sets, text = refresher.build(spec, answers)
    assert text == files["dispatcher.list"]
    assert sorted(s["id"] for s in sets) == sorted(s["id"] for s in spec["sets"] + spec["mcp_sets"])


def test_refresh_input_without_mcp_has_no_mcp_keys() -> None:
    plan = _plan(with_mcp=False)
    view = _view(plan)
    assert "mcp_records" not in srv_refresh_input(plan, view)


# -- the plan decides (issue 10): transport, TLS names, /28s and the fallback record are plan fields ---
def test_plan_gives_mcp_transport_tls_names_ranges_and_fallback() -> None:
    mcp = _plan()["mcp"]
    assert mcp["transport"] == "udp" and [r["tls"] for r in mcp["records"]] == [None, None]
    # an MCP record lists the other region's MCP too, so its targets may use every /28.
    assert [r["ip_ranges"] for r in mcp["records"]] == [["198.51.100.0/28", "203.0.113.16/28"]] * 2
    assert mcp["fallback_record"] == 1
    raw = _raw()
    raw.update(acg_transport="tls")
    deployment, findings = validate_deployment(raw, [Sbc(host="sbc1", site="ams"), Sbc(host="sbc2", site="fra")])
    assert not findings.errors
    resolved = _resolved()
    resolved["_sip._tls.mcp-region1." + DOMAIN]["targets"] = []  # the local record resolved to nothing
    tls_mcp = build_site_plan(deployment, deployment.sites[0], resolved)["mcp"]
    assert tls_mcp["transport"] == "tls"
    assert [r["tls"]["sni"] for r in tls_mcp["records"]] == ["mcp-region1." + DOMAIN, "mcp-region2." + DOMAIN]
    assert [r["tls"]["verify_hostname"] for r in tls_mcp["records"]] == [r["hostname"] for r in tls_mcp["records"]]
    assert tls_mcp["fallback_record"] == 2
    resolved["_sip._tls.mcp-region2." + DOMAIN]["targets"] = []
    assert build_site_plan(deployment, deployment.sites[0], resolved)["mcp"]["fallback_record"] is None


def test_renderer_takes_fallback_and_ranges_from_the_plan() -> None:
    """The renderer decides neither the fallback record nor the /28s an MCP target may use."""
    plan = _plan()
    plan["mcp"]["fallback_record"] = 2
    assert _view(plan)["mcp"]["default_record"] == 2
    plan["mcp"]["fallback_record"] = None
    with pytest.raises(KamailioViewError, match="no MCP record has any target"):
        _view(plan)
    narrow = _plan()
    for record in narrow["mcp"]["records"]:
        record["ip_ranges"] = ["198.51.100.0/28"]
    with pytest.raises(KamailioViewError, match="mcp2.* outside 198.51.100.0/28"):
        _view(narrow)
    spec = json.loads(render_kamailio(_plan(), SETTINGS, "5.6.3")["commsgw-srv.json"])
    assert [r["ip_ranges"] for r in spec["mcp_records"]] == [r["ip_ranges"] for r in _plan()["mcp"]["records"]]


def test_probe_takes_mcp_transport_names_and_ranges_from_the_plan() -> None:
    from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe  # pylint: disable=import-outside-toplevel
    plan = _plan()
    plan["mcp"]["transport"] = "tcp"
    plan["mcp"]["records"][0]["ip_ranges"] = ["198.51.100.0/28"]
    plan["mcp"]["records"][0]["tls"] = {"sni": "named.example", "verify_hostname": "checked.example"}
    mcp = [(rec["region"], ranges, transport, rec["tls"]) for kind, rec, ranges, transport, _p in probe._records(plan)
           if kind == "mcp"]
    assert mcp == [("region1", ["198.51.100.0/28"], "tcp", {"sni": "named.example", "verify_hostname": "checked.example"}),
                   ("region2", ["198.51.100.0/28", "203.0.113.16/28"], "tcp", None)]
