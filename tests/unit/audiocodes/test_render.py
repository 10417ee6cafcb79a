# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Mediant renderer, requirement by requirement, on the rows it builds (the documented meaning of
each table is in docs/platforms/audiocodes.md); grammar conformance for every shipped inventory;
hostile values refused before anything is emitted; determinism."""

from __future__ import annotations

import copy
import ipaddress
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import grammar, patterns, render
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import RenderError
from ansible_collections.commsgw.routing.tests.unit.audiocodes import plans as P


@pytest.fixture(scope="module")
def plan() -> dict[str, t.Any]:
    return P.resolved_plans("production")[0]


@pytest.fixture(scope="module")
def art(plan: dict[str, t.Any]) -> render.Artefacts:
    return render.render(plan, P.settings())


def _named(rows: dict[tuple[int, ...], dict[str, t.Any]], param: str, value: str) -> tuple[tuple[int, ...], dict]:
    return next((i, r) for i, r in rows.items() if r.get(param) == value)


def _classify(art: render.Artefacts, interface: str, address: str) -> t.Optional[str]:
    """What the Classification table does with a new dialog from ``address`` on ``interface``: the
    first matching rule in table order (the IP Group it classifies to, or None for deny)."""
    for _index, rule in sorted(art.rows["classification"].items()):
        if rule["src-sip-interface-name"] != interface:
            continue
        low, high = patterns.pattern_ranges(rule["src-ip-address"])[0]
        if low <= ipaddress.IPv4Address(address) <= high:
            return rule.get("src-ip-group-name") if rule["action-type"] == "allow" else None
    return "unclassified"


def _route(art: render.Artefacts, source: str, user: str) -> list[dict[str, t.Any]]:
    """The IP-to-IP rules a request from ``source`` to ``user`` uses: the first matching main rule and
    the alternative rules directly below it."""
    rules = [r for _i, r in sorted(art.rows["ip2ip"].items())]
    for position, rule in enumerate(rules):
        if rule["alt-route-options"] != "route-row" or rule["src-ip-group-name"] != source:
            continue
        if "dst-host" in rule or not patterns.dial_matches(rule.get("dst-user-name-prefix", "*"), user):
            continue
        chain = [rule]
        for alt in rules[position + 1:]:
            if alt["alt-route-options"] == "route-row":
                break
            chain.append(alt)
        return chain
    return []


def test_r08_every_address_of_every_28_is_admitted_to_its_region_and_nothing_else(art, plan) -> None:
    for entry in plan["acl"]["ranges"]:
        for address in ipaddress.ip_network(entry["network"]):
            group = _classify(art, "SI-ACG", str(address))
            assert group is not None and group.endswith("-" + entry["region"]), (address, group)
    for outside in ("20.61.48.15", "20.61.48.32", "20.82.160.31", "20.82.160.48", "10.1.0.20", "8.8.8.8"):
        assert _classify(art, "SI-ACG", outside) is None, outside


def test_core_side_acl_admits_listed_sources_and_the_next_hop_only(art) -> None:
    assert _classify(art, "SI-CORE", "10.1.0.17") == "CGW-CORE"
    assert _classify(art, "SI-CORE", "10.1.2.7") == "CGW-CORE"
    assert _classify(art, "SI-CORE", "10.1.0.20") == "CGW-CORE"   # core_next_hop, implicitly
    assert _classify(art, "SI-CORE", "10.1.2.8") is None
    assert _classify(art, "SI-CORE", "20.61.48.17") is None


def test_r11_peers_carry_srv_priority_and_weight(art, plan) -> None:
    group = plan["trunk_groups"][0]
    index, _set = _named(art.rows["proxy_set"], "proxy-name", render.group_name("ACG", group))
    rows = [r for i, r in sorted(art.rows["proxy_ip"].items()) if i[:1] == index]
    assert [(r["proxy-address"], r["priority"], r["weight"]) for r in rows] == [
        ("%s:%d" % (p["addresses"][0], p["port"]), p["priority"], p["weight"]) for p in group["peers"]]
    assert _set["proxy-load-balancing-method"] == "random-weights"


def test_r12_r15_local_group_first_other_region_only_as_its_alternative(art, plan) -> None:
    local, remote = (render.group_name("ACG", g) for g in plan["trunk_groups"])
    chain = _route(art, "CGW-CORE", "+4930123456")
    assert [r["dst-ip-group-name"] for r in chain] == [local, remote]
    assert [r["alt-route-options"] for r in chain] == ["route-row", "alt-route-consider-inputs"]


def test_r13_acg_peers_get_options_keepalive_from_the_plan_timers(art, plan) -> None:
    for group in plan["trunk_groups"]:
        _i, row = _named(art.rows["proxy_set"], "proxy-name", render.group_name("ACG", group))
        assert row["proxy-enable-keep-alive"] == "using-options"
        assert row["proxy-keep-alive-time"] == plan["health"]["interval_s"]
        assert row["success-detect-retries"] == plan["health"]["recovery_threshold"]
        assert row["is-proxy-hot-swap"] == "enable"


def test_r14_r16_exactly_408_503_504_reroute(art) -> None:
    index, _set = _named(art.rows["alt_set"], "name", render.ACG_RETRY_SET)
    causes = sorted(r["rel-cause-code"] for i, r in art.rows["alt_rule"].items() if i[:1] == index)
    assert causes == ["408-req-timeout", "503-service-unavail", "504-server-timeout"]
    for _i, group in art.rows["ip_group"].items():
        if group["name"].startswith("CGW-ACG-"):
            assert group["sbc-alt-route-reasons-set"] == render.ACG_RETRY_SET


def test_r25_emergency_numbers_are_answered_by_the_device(art, plan) -> None:
    for dial in plan["emergency"]["dial_strings"]:
        for user in (dial, "+" + dial):
            chain = _route(art, "CGW-CORE", user)
            assert [r["dst-type"] for r in chain] == ["internal"], user
            assert chain[0]["internal-action"] == "reply(response='403')"


@pytest.mark.parametrize("user,routed", [("+44201234567", True), ("+1", False), ("+12", True),
                                         ("+123456789012345", True), ("+1234567890123456", False),
                                         ("+0441234", False), ("4930123456", False), ("+49-30-1", False)])
def test_r26_only_e164_reaches_acg(art, user: str, routed: bool) -> None:
    chain = _route(art, "CGW-CORE", user)
    assert (chain[0]["dst-type"] == "ip-group") is routed, (user, chain[:1])
    if not routed:
        assert chain[0]["internal-action"] == "reply(response='484')"


def test_r26_normalisation_longer_prefix_first(art) -> None:
    rules = [r for _i, r in sorted(art.rows["inbound_manipulation"].items())]
    assert [(r["dst-user-name-prefix"], r["remove-from-left"], r["prefix-to-add"]) for r in rules] == [
        ("00[1-9]", 2, "+"), ("0[1-9]", 1, "+49")]


def test_r27_message_limit_minus_headroom_on_the_core_interface(art, plan) -> None:
    _i, policy = _named(art.rows["message_policy"], "name", render.LIMITS_POLICY)
    assert policy["max-message-length"] == plan["limits"]["max_message_bytes"] - 256
    assert art.rows["sip_interface"] == {(0,): {"message-policy-name": render.LIMITS_POLICY}}


def test_r18_r20_mcp_without_options_and_its_policy() -> None:
    plan = P.resolved_plans("production", mcp=True, policy="retry", match=["request_uri_host"],
                            continue_next_hop="10.1.0.30:5060")[0]
    art = render.render(plan, P.settings())
    mcp_sets = [r for r in art.rows["proxy_set"].values() if r["proxy-name"].startswith("CGW-MCP-")]
    assert mcp_sets and all(r["proxy-enable-keep-alive"] == "disable" for r in mcp_sets)
    routes = [r for r in art.rows["ip2ip"].values() if r.get("dst-host")]
    assert {r["dst-host"] for r in routes} == {r["hostname"] for r in plan["mcp"]["records"]}
    assert any(r.get("dst-ip-group-name") == "CGW-MCP-CONT" for r in routes)  # on_all_failed: continue
    assert not [g for g in art.gaps if g["requirement"] == "R-18"]


def test_every_inventory_renders_inside_the_grammar_or_is_refused_naming_a_field() -> None:
    outcomes = {}
    for directory in P.inventory_dirs():
        for plan in P.resolved_plans(directory):
            for candidate in (plan, dict(plan, health=dict(plan["health"], interval_s=5))):
                try:
                    art = render.render(candidate, P.settings())
                except RenderError as exc:
                    assert exc.field and exc.field in str(exc)
                    outcomes.setdefault(directory.name, []).append("refused " + exc.field)
                    continue
                assert grammar.validate_script(art.cli) == []
                outcomes.setdefault(directory.name, []).append("rendered")
    assert outcomes["production"] == ["rendered"] * 4
    assert outcomes["lab"] == ["refused health.interval_s", "rendered"]   # lab pings every 2 s: below 5 s


def test_render_is_deterministic(plan) -> None:
    first = render.render(plan, P.settings())
    second = render.render(copy.deepcopy(plan), P.settings())
    assert first.cli == second.cli and first.ini == second.ini


HOSTILE = ['ACG"\nconfigure network', "ACG IF", "ACG'x", "ACG\\", "SI-\u00e4", "", "x" * 41]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_settings_are_refused_naming_the_field(plan, value: str) -> None:
    hostile = P.settings(tls_context=value)
    with pytest.raises(RenderError, match=r"^commsgw_sbc\.tls_context: "):
        render.render(plan, hostile)
    hostile = P.settings(sip_interfaces={"acg": {"index": 1, "name": value}, "core": {"index": 0, "name": "C"}})
    with pytest.raises(RenderError, match=r"^commsgw_sbc\.sip_interfaces"):
        render.render(plan, hostile)


@pytest.mark.parametrize("path,value,field", [
    (("trunk_groups", 0, "hostname"), 'pstn.example"\nexit', "trunk_groups[0].hostname"),
    (("trunk_groups", 0, "region"), "region 1", "trunk_groups[0].region"),
    (("trunk_groups", 0, "peers", 0, "target"), "t0.example\nconfigure voip", "trunk_groups[0].peers[0].target"),
    (("trunk_groups", 0, "peers", 0, "addresses", 0), "20.61.48.17 x", "trunk_groups[0].peers[0].addresses"),
    (("emergency", "dial_strings", 0), '112"', "emergency.dial_strings[0]"),
    (("acl", "ranges", 0, "network"), "20.61.48.16/28\n", "acl.ranges[0].network"),
])
def test_hostile_plan_values_are_refused_naming_the_field(plan, path: tuple[t.Any, ...], value: str,
                                                          field: str) -> None:
    hostile = copy.deepcopy(plan)
    node: t.Any = hostile
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    if path[-1] == "region":
        hostile["acl"]["ranges"] = [dict(e, region=value) if e["region"] == plan["trunk_groups"][0]["region"]
                                    else e for e in hostile["acl"]["ranges"]]
    with pytest.raises(RenderError) as caught:
        render.render(hostile, P.settings())
    assert str(caught.value).startswith(field + ":"), caught.value


def test_unresolved_peers_are_refused(plan) -> None:
    unresolved = copy.deepcopy(plan)
    unresolved["trunk_groups"][1]["peers"] = None
    with pytest.raises(RenderError, match=r"^trunk_groups\[1\]\.peers: "):
        render.render(unresolved, P.settings())
