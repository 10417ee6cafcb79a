# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Region migration logic (module_utils.migration) on files rendered by the real renderer from real plans.

Both sides of every diff are rendered configurations, exactly what the SBC holds and what the
playbook would push: region 2 migrated to a new hostname and /28, a site re-paired to the other
region, a lab deployment that becomes production, a changed certificate; plus the in-flight plan
(old and new peers, old and new ranges, never an empty peer list) and the gate's peer-health reading.
"""

from __future__ import annotations

import copy
import json
import re
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.migration import transition as migration
from ansible_collections.commsgw.routing.plugins.module_utils.sbc import readback as sbc_readback
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import live as kamailio_live
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import readback as kamailio_readback
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio

DOMAIN = "a1b2c3d4e5f6g7h8.commsgw.azure.com"
R1, R2, R2_NEW = "20.61.48.16/28", "20.82.160.32/28", "20.82.170.48/28"
# SRV name -> [(priority, weight, target, address)]
PEERS = {
    "pstn-region1": [(10, 50, "r1a", "20.61.48.17"), (10, 50, "r1b", "20.61.48.18")],
    "pstn-region2": [(10, 50, "r2a", "20.82.160.33"), (10, 50, "r2b", "20.82.160.34")],
    "pstn-region2-new": [(10, 50, "r2na", "20.82.170.49"), (10, 50, "r2nb", "20.82.170.50")],
}
SETTINGS = {"acg_listen": {"address": "198.51.100.10"}, "core_listen": {"address": "10.0.0.10"},
            "core_next_hop": "10.0.0.1:5060", "config_dir": "/etc/kamailio", "run_dir": "/run/kamailio"}
TLS = {"certificate": "/etc/kamailio/tls/sbc.crt", "private_key": "/etc/kamailio/tls/sbc.key",
       "ca_bundle": "/etc/kamailio/tls/acg-ca.pem"}


def _region(name: str, azure: str, host: str, ranges: list[str]) -> dict[str, t.Any]:
    return {"name": name, "azure_region": azure, "hostname": "%s.%s" % (host, DOMAIN), "ip_ranges": ranges}


def _production(region2_host: str = "pstn-region2", region2_ranges: t.Optional[list[str]] = None,
                pairing: tuple[str, str] = ("region1", "region2")) -> dict[str, t.Any]:
    return {"name": "contoso", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
            "service_regions": [_region("region1", "westeurope", "pstn-region1", [R1]),
                                _region("region2", "northeurope", region2_host, region2_ranges or [R2])],
            "sites": [{"name": "amsterdam", "service_region": pairing[0]},
                      {"name": "dublin", "service_region": pairing[1]}]}


def _lab() -> dict[str, t.Any]:
    return {"name": "contoso", "type": "lab", "base_domain": DOMAIN, "management_region": "West Europe",
            "service_regions": [_region("region1", "westeurope", "pstn-region1", [R1])],
            "sites": [{"name": "amsterdam", "service_region": "region1"}]}


def _resolved() -> dict[str, t.Any]:
    answers = {}
    for host, peers in PEERS.items():
        name = "_sip._tls.%s.%s" % (host, DOMAIN)
        answers[name] = {"name": name, "ttl": 60, "targets": [
            {"priority": p, "weight": w, "port": 5061, "target": "%s.%s" % (tgt, DOMAIN), "addresses": [a]}
            for p, w, tgt, a in peers]}
    return answers


def _plan(raw: dict[str, t.Any], site: str = "amsterdam", resolved: t.Optional[dict[str, t.Any]] = None
          ) -> dict[str, t.Any]:
    sbcs = [Sbc("sbc-ams-1", "amsterdam")] + ([Sbc("sbc-dub-1", "dublin")] if raw["type"] == "production" else [])
    deployment, findings = validate_deployment(raw, sbcs)
    assert not findings.errors, [f.render() for f in findings.errors]
    return build_site_plan(deployment, next(s for s in deployment.sites if s.name == site),
                           _resolved() if resolved is None else resolved)


def _files(plan: dict[str, t.Any], tls: t.Optional[dict[str, str]] = None) -> dict[str, str]:
    settings = dict(SETTINGS, tls=dict(tls or TLS))
    return render_kamailio(plan, settings, "6.0.1")


def _state(plan: dict[str, t.Any], tls: t.Optional[dict[str, str]] = None) -> dict[str, t.Any]:
    state = kamailio_readback.state_from_files(_files(plan, tls))
    assert state is not None
    return state


def _plan_weights(peers: list[dict[str, t.Any]]) -> list[dict[str, t.Any]]:
    """Read-back peers with the plan's SRV weight as ``weight`` (instead of Kamailio's scaled rweight)."""
    return [dict({k: v for k, v in p.items() if k != "plan_weight"}, weight=p["plan_weight"]) for p in peers]


def test_files_read_back_give_the_plan_facts() -> None:
    plan = _plan(_production())
    state = _state(plan)
    expected = migration.plan_state(plan)
    # Everything is read back exactly, the plan's SRV weights included (plan_weight, beside the scaled rweight
    # Kamailio routes by).
    for region in state["regions"].values():
        region["peers"] = _plan_weights(region["peers"])
    assert {k: state[k] for k in ("deployment", "site", "type", "transport", "local_region", "regions", "acl")} == \
        {k: expected[k] for k in ("deployment", "site", "type", "transport", "local_region", "regions", "acl")}
    assert state["tls"]["certificate"] == TLS["certificate"]


def test_nothing_deployed_and_nothing_changed() -> None:
    plan = _plan(_production())
    assert kamailio_readback.state_from_files({"kamailio.cfg": "x"}) is None
    first = migration.semantic_diff(None, _state(plan))
    assert not first["onboarded"] and first["regions_added"] == ["region1", "region2"]
    same = migration.semantic_diff(_state(plan), _state(plan))
    assert not same["changes"]
    assert migration.summary_lines(same, "sbc-ams-1") == ["sbc-ams-1: no routing change"]
    assert migration.artefact_diffs(_files(plan), _files(plan), lambda name: "/etc/kamailio/" + name) == {}
    assert not migration.needs_transition(plan, _state(plan))


def test_region2_migrated_to_a_new_hostname_and_range() -> None:
    old, new = _plan(_production()), _plan(_production("pstn-region2-new", [R2_NEW]))
    diff = migration.semantic_diff(_state(old), _state(new))
    assert diff["changes"] and diff["type"] is None and diff["pairing"] is None
    assert diff["acl"] == {"added": [R2_NEW], "removed": [R2]}
    [region] = diff["regions"]
    assert region["region"] == "region2"
    assert region["hostname"] == {"before": "pstn-region2." + DOMAIN, "after": "pstn-region2-new." + DOMAIN}
    assert region["srv_name"]["after"] == "_sip._tls.pstn-region2-new." + DOMAIN
    assert region["ranges_added"] == [R2_NEW] and region["ranges_removed"] == [R2]
    assert region["targets_gained"] == ["r2na.%s (20.82.170.49:5061)" % DOMAIN, "r2nb.%s (20.82.170.50:5061)" % DOMAIN]
    assert region["targets_lost"] == ["r2a.%s (20.82.160.33:5061)" % DOMAIN, "r2b.%s (20.82.160.34:5061)" % DOMAIN]
    lines = migration.summary_lines(diff, "sbc-ams-1")
    assert "sbc-ams-1: region region2 hostname pstn-region2.%s -> pstn-region2-new.%s" % (DOMAIN, DOMAIN) in lines
    assert "sbc-ams-1: ACL admits %s" % R2_NEW in lines and "sbc-ams-1: ACL no longer admits %s" % R2 in lines
    diffs = migration.artefact_diffs(_files(old), _files(new), lambda name: "/etc/kamailio/" + name)
    assert {"address.list", "dispatcher.list", "commsgw-srv.json"} <= set(diffs)
    assert "-1 20.82.160.32 28 0 region=region2;tls=pstn-region2.%s\n" % DOMAIN in diffs["address.list"]
    assert "+1 20.82.170.48 28 0 region=region2;tls=pstn-region2-new.%s\n" % DOMAIN in diffs["address.list"]


def test_transition_keeps_old_and_new_peers_and_ranges() -> None:
    old, new = _plan(_production()), _plan(_production("pstn-region2-new", [R2_NEW]))
    current = _state(old)
    assert migration.needs_transition(new, current)
    flight = migration.transition_plan(new, current)
    state = _state(flight)
    region2 = state["regions"]["region2"]
    assert {p["address"] for p in region2["peers"]} == {"20.82.160.33", "20.82.160.34", "20.82.170.49", "20.82.170.50"}
    assert region2["hostname"] == "pstn-region2-new." + DOMAIN  # SNI / SRV name are the new plan's
    assert region2["ip_ranges"] == [R2, R2_NEW]
    assert [e["network"] for e in state["acl"]] == [R1, R2, R2_NEW]
    # Widening only adds: every peer and every range in use now is still there.
    widen = migration.semantic_diff(current, state)
    assert widen["acl"]["removed"] == [] and all(r["targets_lost"] == [] for r in widen["regions"])
    # Narrowing to the new plan drops exactly the old region-2 peers and range.
    narrow = migration.semantic_diff(state, _state(new))
    assert narrow["acl"] == {"added": [], "removed": [R2]}
    assert migration.new_peer_addresses(new, current) == ["20.82.170.49:5061", "20.82.170.50:5061"]
    assert migration.dropped_peer_addresses(new, current) == ["20.82.160.33:5061", "20.82.160.34:5061"]
    # The plan given in is not modified.
    assert new["trunk_groups"][1]["ip_ranges"] == [R2_NEW]


def _rweights(files: dict[str, str], set_id: int) -> dict[str, int]:
    """target host -> rweight of dispatcher set ``set_id`` in a rendered dispatcher.list."""
    rows = [line.split() for line in files["dispatcher.list"].splitlines() if line and not line.startswith("#")]
    return {dict(p.split("=", 1) for p in row[4].split(";"))["target"].split(".")[0]:
            int(dict(p.split("=", 1) for p in row[4].split(";"))["rweight"]) for row in rows if row[0] == str(set_id)}


def test_widening_keeps_the_plans_weights() -> None:
    """Issue 10: the widen step takes each peer's weight from a plan (the new plan's for its peers, the
    running plan's for the outgoing ones), never the tier-scaled rweight read back from dispatcher.list,
    which made the outgoing peer (rweight 100 read back as weight 100 next to weight-50 peers) take half
    of new calls."""
    old_peers = [(10, 50, "r1a", "20.61.48.17"), (10, 50, "r1b", "20.61.48.18")]
    new_peers = [(10, 50, "r1a", "20.61.48.17"), (10, 50, "r1c", "20.61.48.19")]

    def resolved(peers: list[tuple[int, int, str, str]]) -> dict[str, t.Any]:
        answers = _resolved()
        name = "_sip._tls.pstn-region1.%s" % DOMAIN
        answers[name]["targets"] = [{"priority": p, "weight": w, "port": 5061, "target": "%s.%s" % (tgt, DOMAIN),
                                     "addresses": [a]} for p, w, tgt, a in peers]
        return answers

    old, new = _plan(_production(), resolved=resolved(old_peers)), _plan(_production(), resolved=resolved(new_peers))
    flight = migration.transition_plan(new, _state(old))
    weights = {p["target"].split(".")[0]: p["weight"] for p in flight["trunk_groups"][0]["peers"]}
    assert weights == {"r1a": 50, "r1b": 50, "r1c": 50}
    rweights = _rweights(_files(flight), 101)
    assert rweights == {"r1a": 100, "r1b": 100, "r1c": 100}  # the outgoing r1b takes a third, not half
    # Read back, a file gives the plan's weights too (plan_state is the plan's own reading).
    assert _plan_weights(_state(flight)["regions"]["region1"]["peers"]) == \
        migration.plan_state(flight)["regions"]["region1"]["peers"]


def test_transition_over_udp_needs_no_restart() -> None:
    """Without TLS, kamailio.cfg names no peer, range or hostname: widening and narrowing are reloads."""
    raw_old, raw_new = _production(), _production("pstn-region2-new", [R2_NEW])
    for raw in (raw_old, raw_new):
        raw.update(acg_transport="udp", allow_plain_transport=True)
    old, new = _plan(raw_old), _plan(raw_new)
    settings = dict(SETTINGS)
    before = render_kamailio(old, settings, "5.6.3")
    current = kamailio_readback.state_from_files(before)
    flight = render_kamailio(migration.transition_plan(new, current), settings, "5.6.3")
    after = render_kamailio(new, settings, "5.6.3")
    assert before["kamailio.cfg"] == flight["kamailio.cfg"] == after["kamailio.cfg"]
    assert before["dispatcher.list"] != flight["dispatcher.list"] != after["dispatcher.list"]


def test_tls_migration_changes_reloadable_files_only_and_old_peers_keep_their_name() -> None:
    """R-23 over TLS (issue 15): the TLS names live in address.list and dispatcher.list, so widening and
    narrowing leave kamailio.cfg and tls.cfg as they are (reloads, same process); during the flight the
    old region-2 peers and range keep the old regional hostname, the new ones get the new one."""
    old, new = _plan(_production()), _plan(_production("pstn-region2-new", [R2_NEW]))
    before = _files(old)
    current = kamailio_readback.state_from_files(before)
    flight_plan = migration.transition_plan(new, current)
    flight, after = _files(flight_plan), _files(new)
    for name in ("kamailio.cfg", "tls.cfg"):
        assert before[name] == flight[name] == after[name], name
    old_name, new_name = "pstn-region2." + DOMAIN, "pstn-region2-new." + DOMAIN
    assert "1 20.82.160.32 28 0 region=region2;tls=%s" % old_name in flight["address.list"]
    assert "1 20.82.170.48 28 0 region=region2;tls=%s" % new_name in flight["address.list"]
    names = {line.split()[1]: dict(p.split("=", 1) for p in line.split()[4].split(";"))["tls"]
             for line in flight["dispatcher.list"].splitlines() if line and not line.startswith("#")}
    assert names["sip:20.82.160.33:5061;transport=tls"] == old_name
    assert names["sip:20.82.170.49:5061;transport=tls"] == new_name
    # Read back, the flight's ranges keep their names; files older than names in tags fall back to the
    # region's hostname.
    assert {e["network"]: e["hostname"] for e in kamailio_readback.state_from_files(flight)["acl"]}[R2] == old_name
    legacy = dict(before, **{"address.list": re.sub(r"region=(region\d);tls=\S+", r"\1", before["address.list"])})
    assert kamailio_readback.state_from_files(legacy)["acl"] == current["acl"]


def test_site_re_paired_to_the_other_region() -> None:
    old = _plan(_production(), site="amsterdam")
    new = _plan(_production(pairing=("region2", "region1")), site="amsterdam")
    diff = migration.semantic_diff(_state(old), _state(new))
    assert diff["pairing"] == {"before": "region1", "after": "region2"}
    roles = {r["region"]: r["role"] for r in diff["regions"]}
    assert roles == {"region1": {"before": "local", "after": "remote"}, "region2": {"before": "remote", "after": "local"}}
    assert diff["acl"] == {"added": [], "removed": []}
    assert all(r["targets_gained"] == [] and r["targets_lost"] == [] for r in diff["regions"])
    assert "site re-paired: local region region1 -> region2" in " ".join(migration.summary_lines(diff))
    # Same peers and ranges: going straight to the new plan drops nothing.
    assert not migration.needs_transition(new, _state(old))


def test_lab_deployment_becomes_production() -> None:
    old = _plan(_lab())
    new = _plan(_production())
    diff = migration.semantic_diff(_state(old), _state(new))
    assert diff["type"] == {"before": "lab", "after": "production"}
    assert diff["regions_added"] == ["region2"] and diff["regions_removed"] == []
    assert diff["acl"] == {"added": [R2], "removed": []}
    [region2] = [r for r in diff["regions"] if r["region"] == "region2"]
    assert region2["status"] == "added" and len(region2["targets_gained"]) == 2
    lines = migration.summary_lines(diff)
    assert "deployment type lab -> production" in lines and "region region2 added" in lines
    assert not migration.needs_transition(new, _state(old))


def test_deployment_type_is_the_plans_not_the_region_count() -> None:
    """Issue 10: the type comes from the plan (commsgw-srv.json); only files written before it carried
    the type fall back to the region count."""
    files = _files(_plan(_lab()))
    spec = json.loads(files["commsgw-srv.json"])
    assert spec["deployment_type"] == "lab"
    spec["deployment_type"] = "production"
    assert kamailio_readback.state_from_files(dict(files, **{"commsgw-srv.json": json.dumps(spec)}))["type"] == "production"
    del spec["deployment_type"]
    assert kamailio_readback.state_from_files(dict(files, **{"commsgw-srv.json": json.dumps(spec)}))["type"] == "lab"


def test_changed_certificate_path_and_content() -> None:
    plan = _plan(_production())
    moved = dict(TLS, certificate="/etc/kamailio/tls/sbc-2027.crt")
    diff = migration.semantic_diff(_state(plan), _state(plan, moved))
    assert diff["tls"]["certificate"] == {"before": TLS["certificate"], "after": moved["certificate"]}
    assert diff["changes"] and diff["regions"] == []
    # Same path, new content: seen through the fingerprint of the file the host holds.
    pem_a = "-----BEGIN CERTIFICATE-----\nTUlJQmFzZTY0QQ==\n-----END CERTIFICATE-----\n"
    pem_b = "-----BEGIN CERTIFICATE-----\nTUlJQmFzZTY0Qg==\n-----END CERTIFICATE-----\n"
    files = _files(plan)
    old_state = kamailio_readback.state_from_files(files, {TLS["certificate"]: pem_a})
    new_state = kamailio_readback.state_from_files(files, {TLS["certificate"]: pem_b})
    content = migration.semantic_diff(old_state, new_state)["tls"]
    assert set(content) == {"certificate_sha256"}
    assert kamailio_readback.certificate_fingerprint(pem_a) != kamailio_readback.certificate_fingerprint(pem_b)
    assert kamailio_readback.certificate_fingerprint("no pem here") is None


def test_preflight_refuses_an_empty_peer_list() -> None:
    resolved = _resolved()
    name = "_sip._tls.pstn-region2-new." + DOMAIN
    resolved[name] = dict(resolved[name], targets=[dict(t, addresses=[]) for t in resolved[name]["targets"]])
    plan = _plan(_production("pstn-region2-new", [R2_NEW]), resolved=resolved)
    problems = migration.preflight(plan)
    assert len(problems) == 1 and "empty peer list" in problems[0]
    unresolved = copy.deepcopy(plan)
    unresolved["trunk_groups"][0]["peers"] = None
    assert any("was not resolved" in p for p in migration.preflight(unresolved))
    assert migration.preflight(_plan(_production())) == []


RPC = {"RECORDS": [
    {"SET": {"ID": 101, "TARGETS": [
        {"DEST": {"URI": "sip:20.82.170.49:5061;transport=tls", "FLAGS": "AP"}},
        {"DEST": {"URI": "sip:20.82.170.50:5061;transport=tls", "FLAGS": "TP"}}]}},
    {"SET": {"ID": 201, "TARGETS": {"DEST": {"URI": "sip:20.82.160.33:5061;transport=tls", "FLAGS": "IP"}}}},
]}


def test_peer_health_counts_only_active_peers() -> None:
    # Kamailio's flags in the contract's neutral states (AP active, TP probing, IP inactive).
    states = kamailio_live.peer_states(RPC)
    assert states == {"20.82.170.49:5061": "active", "20.82.170.50:5061": "probing", "20.82.160.33:5061": "inactive"}
    health = migration.peer_health(states, ["20.82.170.49:5061", "20.82.170.50:5061", "20.82.170.51:5061"],
                                   absent=["20.82.160.33:5061"])
    assert not health["ok"]
    assert health["active"] == ["20.82.170.49:5061"]
    assert health["unhealthy"] == ["20.82.170.50:5061 probing"]
    assert health["missing"] == ["20.82.170.51:5061"]
    assert health["lingering"] == ["20.82.160.33:5061"]
    assert migration.peer_health(states, ["20.82.170.49:5061"])["ok"]
    with pytest.raises(migration.MigrationError):
        kamailio_live.peer_states(["not", "a", "dict"])


def test_unreadable_files_are_refused() -> None:
    with pytest.raises(migration.MigrationError):
        kamailio_readback.state_from_files({"commsgw-srv.json": "{not json"})
    plan = _plan(_production())
    files = _files(plan)
    files["dispatcher.list"] += "999 sip:192.0.2.1:5061 8 65525 rweight=1\n"
    with pytest.raises(migration.MigrationError, match="set 999"):
        kamailio_readback.state_from_files(files)


def test_mcp_records_are_read_and_diffed() -> None:
    def raw(mcp2: str) -> dict[str, t.Any]:
        dep = _production()
        dep["service_regions"][0]["mcp_hostname"] = "mcp-region1." + DOMAIN
        dep["service_regions"][1]["mcp_hostname"] = "%s.%s" % (mcp2, DOMAIN)
        dep["mcp"] = {"policy": "retry"}
        return dep

    resolved = _resolved()
    for host, address in (("mcp-region1", "20.61.48.20"), ("mcp-region2", "20.82.160.40"),
                          ("mcp-region2-new", "20.82.160.41")):
        name = "_sip._tls.%s.%s" % (host, DOMAIN)
        resolved[name] = {"name": name, "ttl": 60, "targets": [
            {"priority": 10, "weight": 50, "port": 5061, "target": "%s-a.%s" % (host, DOMAIN), "addresses": [address]}]}
    old = _state(_plan(raw("mcp-region2"), resolved=resolved))
    new = _state(_plan(raw("mcp-region2-new"), resolved=resolved))
    assert old["mcp"]["region2"]["peers"][0]["address"] == "20.82.160.40"
    diff = migration.semantic_diff(old, new)
    assert diff["changes"] and diff["regions"] == []
    [entry] = diff["mcp"]
    assert entry["hostname"] == {"before": "mcp-region2." + DOMAIN, "after": "mcp-region2-new." + DOMAIN}
    assert "MCP region region2 target gained: mcp-region2-new-a.%s (20.82.160.41:5061)" % DOMAIN in \
        migration.summary_lines(diff)


def test_core_acl_rows_are_not_read_back_as_acg_ranges() -> None:
    """address.list also carries the core side's allowed sources (group 2): never an ACG range."""
    plan = _plan(_production())
    settings = dict(SETTINGS, tls=dict(TLS), core_allowed_sources=["10.0.5.0/24"])
    files = render_kamailio(plan, settings, "6.0.1")
    assert "2 10.0.5.0 24 0" in files["address.list"]
    state = kamailio_readback.state_from_files(files)
    assert state is not None
    assert sorted(e["network"] for e in state["acl"]) == sorted([R1, R2])


# ---- issue 21: the /28s a narrowing removes are retired (acl.retired), not forgotten -----------------------
NOW = 1_800_000_000
RETENTION_S = 43200
OLD_R2_NAME = "pstn-region2." + DOMAIN


def _retire(plan: dict[str, t.Any], deployed: dict[str, str], now: float = NOW) -> dict[str, t.Any]:
    """What the kamailio role renders: the plan through the kamailio_retired filter with the deployed files."""
    from ansible_collections.commsgw.routing.plugins.filter.kamailio_retired import kamailio_retired
    return kamailio_retired(plan, deployed.get("address.list", ""), RETENTION_S, now)


def test_narrowing_retires_the_removed_ranges_under_their_old_name() -> None:
    """The narrow step's files keep region 2's old /28 as a retired row (address.list group 3, its old TLS
    name, until now + retention): the old peers may still end their calls, for a while; the ACL no longer
    admits the range, and nothing else changes (kamailio.cfg and tls.cfg stay, a reload)."""
    old, new = _plan(_production()), _plan(_production("pstn-region2-new", [R2_NEW]))
    before = _files(old)
    narrowed_plan = _retire(new, before)
    assert narrowed_plan["acl"]["retired"] == [
        {"network": R2, "region": "region2", "hostname": OLD_R2_NAME, "until": NOW + RETENTION_S}]
    narrowed = _files(narrowed_plan)
    assert "3 20.82.160.32 28 0 region=region2;tls=%s;until=%d" % (OLD_R2_NAME, NOW + RETENTION_S) \
        in narrowed["address.list"]
    assert not re.search(r"^1 20\.82\.160\.32 ", narrowed["address.list"], re.M)
    assert {n for n in narrowed if narrowed[n] != _files(new)[n]} == {"address.list"}
    for name in ("kamailio.cfg", "tls.cfg"):
        assert narrowed[name] == before[name], name
    # Read back, the retired row is no ACG range: the SBC is in sync with the plan (drift reports nothing).
    state = kamailio_readback.state_from_files(narrowed)
    assert state is not None and sorted(e["network"] for e in state["acl"]) == sorted([R1, R2_NEW])
    assert sbc_readback.compare(new, state, kamailio_readback.WEIGHT_SCALE) == []
    assert not migration.semantic_diff(state, _state(new))["changes"]


def test_a_later_render_keeps_what_is_retired_until_its_time_is_up() -> None:
    """A plain re-run of onboard.yml (same plan, the narrowed files deployed) changes nothing while the
    retention lasts; afterwards the row goes. A range the plan admits again is no longer retired."""
    old, new = _plan(_production()), _plan(_production("pstn-region2-new", [R2_NEW]))
    narrowed = _files(_retire(new, _files(old)))
    hours_later = _files(_retire(new, narrowed, now=NOW + 3600))
    assert hours_later == narrowed
    expired = _files(_retire(new, narrowed, now=NOW + RETENTION_S))
    assert "\n3 " not in expired["address.list"] and expired == _files(new)
    back = _retire(old, narrowed, now=NOW + 60)  # region 2 moved back: its old /28 is admitted again
    assert back["acl"]["retired"] == [{"network": R2_NEW, "region": "region2", "hostname": "pstn-region2-new." + DOMAIN,
                                       "until": NOW + 60 + RETENTION_S}]


def test_the_in_flight_step_retires_nothing_and_keeps_what_is_retired() -> None:
    """Widening admits old and new ranges: nothing is retired by it, earlier retirements are carried."""
    old, new = _plan(_production()), _plan(_production("pstn-region2-new", [R2_NEW]))
    deployed = _files(old)
    flight = migration.transition_plan(new, kamailio_readback.state_from_files(deployed))
    assert _retire(flight, deployed)["acl"]["retired"] == []
    earlier = {"network": "20.82.150.0/28", "region": "region2", "hostname": "pstn-region2-older." + DOMAIN,
               "until": NOW + 10}
    deployed_with = _files(dict(old, acl=dict(old["acl"], retired=[earlier])))
    assert _retire(flight, deployed_with)["acl"]["retired"] == [earlier]


def test_ranges_without_a_tls_name_and_udp_sbcs_retire_nothing() -> None:
    """Only a name can be admitted: legacy rows without one are not retired; over UDP no dialog carries a
    name, so address.list gets no retired rows at all."""
    old, new = _plan(_production()), _plan(_production("pstn-region2-new", [R2_NEW]))
    legacy = {"address.list": re.sub(r"region=(region\d);tls=\S+", r"\1", _files(old)["address.list"])}
    assert _retire(new, legacy)["acl"]["retired"] == []
    raw_old, raw_new = _production(), _production("pstn-region2-new", [R2_NEW])
    for raw in (raw_old, raw_new):
        raw.update(acg_transport="udp", allow_plain_transport=True)
    deployed = render_kamailio(_plan(raw_old), dict(SETTINGS), "5.6.3")
    narrowed_plan = _retire(_plan(raw_new), deployed)
    assert narrowed_plan["acl"]["retired"]  # the plan says so (the UDP rows carry region names)...
    assert "\n3 " not in render_kamailio(narrowed_plan, dict(SETTINGS), "5.6.3")["address.list"]  # ...unused
