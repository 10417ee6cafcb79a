# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-back: a Kamailio SBC's files and RPC answers as a state in the plan's vocabulary, and
``sbc_readback.compare`` naming each difference from the plan (the real Kamailio: tests/integration/test_drift.py)."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import live as kl
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import readback as kb
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path
from ansible_collections.commsgw.routing.plugins.module_utils.sbc import readback as sbc_readback
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.dispatcher import dispatcher_rows
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio
from harness.tools import run_module

DOMAIN = "acg.example.test"
SETTINGS = {"acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
            "core_next_hop": "10.0.0.20:5060", "config_dir": "/etc/kamailio", "run_dir": "/run/kamailio"}


def _plan() -> dict[str, t.Any]:
    raw = {"name": "d", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
           "allow_non_public_ranges": True, "allow_plain_transport": True, "acg_transport": "udp",
           "service_regions": [
               {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1." + DOMAIN,
                "ip_ranges": ["198.51.100.0/28"], "mcp_hostname": "mcp-region1." + DOMAIN},
               {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2." + DOMAIN,
                "ip_ranges": ["203.0.113.16/28"], "mcp_hostname": "mcp-region2." + DOMAIN}],
           "sites": [{"name": "ams", "service_region": "region1"}, {"name": "fra", "service_region": "region2"}]}

    def answer(*targets: tuple[int, int, str, str]) -> dict[str, t.Any]:
        return {"ttl": 60, "targets": [{"priority": p, "weight": w, "port": 5060, "target": n + "." + DOMAIN,
                                        "addresses": [a]} for p, w, n, a in targets]}
    resolved = {
        # Weights 60 and 20 in one tier: Kamailio keeps rweight 100 and 33.
        "_sip._tls.pstn-region1." + DOMAIN: answer((10, 60, "a", "198.51.100.1"), (10, 20, "b", "198.51.100.2")),
        "_sip._tls.pstn-region2." + DOMAIN: answer((10, 50, "d", "203.0.113.17")),
        "_sip._tls.mcp-region1." + DOMAIN: answer((10, 1, "mcp1", "198.51.100.9")),
        "_sip._tls.mcp-region2." + DOMAIN: answer((10, 1, "mcp2", "203.0.113.25")),
    }
    deployment, findings = validate_deployment(raw, [Sbc(host="sbc1", site="ams"), Sbc(host="sbc2", site="fra")])
    assert not findings.errors, [f.render() for f in findings.errors]
    return build_site_plan(deployment, deployment.sites[0], resolved)


def _files(plan: dict[str, t.Any]) -> dict[str, str]:
    return render_kamailio(plan, SETTINGS, "6.0.1")


def _texts(plan: dict[str, t.Any], files: dict[str, str], runtime: t.Optional[dict[str, t.Any]] = None) -> list[str]:
    state = kb.state_from_files(files)
    assert state is not None
    state["runtime"] = runtime
    return [d["text"] for d in sbc_readback.compare(plan, state, kb.WEIGHT_SCALE)]


def _rpc(dispatcher_list: str, flags: str = "AP") -> dict[str, t.Any]:
    """The dispatcher.list RPC answer of a Kamailio that loaded ``dispatcher_list``."""
    sets: dict[int, list[dict[str, t.Any]]] = {}
    for row in dispatcher_rows(dispatcher_list):
        body = ";".join("%s=%s" % kv for kv in row["attrs"].items())
        sets.setdefault(row["set_id"], []).append({"DEST": {"URI": row["uri"], "FLAGS": flags,
                                                            "PRIORITY": int(row["priority"]), "ATTRS": {"BODY": body}}})
    return {"NRSETS": len(sets), "RECORDS": [{"SET": {"ID": i, "TARGETS": d}} for i, d in sets.items()]}


def _subnets(address_list: str) -> list[dict[str, t.Any]]:
    """The permissions.subnetDump RPC answer of a Kamailio that loaded ``address_list`` (Kamailio 5.6's shape)."""
    rows = [line.split() for line in address_list.splitlines() if line.strip() and not line.startswith("#")]
    return [{"id": n, "group": int(f[0]), "item": {"ip": f[1], "mask": int(f[2]), "port": int(f[3]),
                                                   "tag": f[4] if len(f) > 4 else None}} for n, f in enumerate(rows)]


def test_rendered_files_and_their_running_state_are_in_sync() -> None:
    plan = _plan()
    files = _files(plan)
    runtime = kl.runtime_state(kb.load_spec(files["commsgw-srv.json"]) or {}, _rpc(files["dispatcher.list"]),
                               _subnets(files["address.list"]))
    assert _texts(plan, files, runtime) == []
    assert [p["weight"] for p in runtime["regions"]["region1"]["peers"]] == [100, 33]
    assert runtime["mcp"]["region1"]["peers"] == [{"target": "mcp1." + DOMAIN, "address": "198.51.100.9",
                                                   "port": 5060}]
    assert [p["state"] for p in runtime["peers"]] == ["active"] * 5


def test_each_file_edit_is_named_in_plan_terms() -> None:
    plan = _plan()
    files = _files(plan)
    files["dispatcher.list"] = files["dispatcher.list"].replace("rweight=33;", "rweight=80;").replace(
        "sip:203.0.113.17:5060", "sip:203.0.113.18:5060")
    files["address.list"] = files["address.list"].replace("1 203.0.113.16 28", "1 203.0.113.32 28")
    assert _texts(plan, files) == [
        "deployed configuration: region region1 peer 198.51.100.2:5060 weight: 80, plan: 33 "
        "(regions.region1.peers[198.51.100.2:5060].weight <> trunk_groups[0].peers[b.%s].weight)" % DOMAIN,
        "deployed configuration: region region2 peer 203.0.113.17:5060: absent, plan: 203.0.113.17:5060 "
        "(regions.region2.peers <> trunk_groups[1].peers[d.%s].addresses)" % DOMAIN,
        "deployed configuration: region region2 peer 203.0.113.18:5060 (not in the plan): 203.0.113.18:5060, plan: absent "
        "(regions.region2.peers[203.0.113.18:5060] <> trunk_groups[1].peers)",
        "deployed configuration: ACL does not admit 203.0.113.16/28: absent, plan: 203.0.113.16/28 (acl <> acl.ranges[1])",
        "deployed configuration: ACL admits 203.0.113.32/28 (not in the plan): 203.0.113.32/28, plan: absent "
        "(acl[203.0.113.32/28] <> acl.ranges)"]


def test_a_file_edit_not_reloaded_differs_from_the_running_state() -> None:
    plan = _plan()
    files = _files(plan)
    spec = kb.load_spec(files["commsgw-srv.json"]) or {}
    running = kl.runtime_state(spec, _rpc(files["dispatcher.list"], "TP"), _subnets(files["address.list"]))
    files["dispatcher.list"] = "\n".join(line for line in files["dispatcher.list"].splitlines()
                                         if "mcp2." not in line) + "\n"
    assert _texts(plan, files, running) == [
        "deployed configuration: MCP region region2 peer 203.0.113.25:5060: absent, plan: 203.0.113.25:5060 "
        "(mcp.region2.peers <> mcp.records[1].peers[mcp2.%s].addresses)" % DOMAIN]
    # The other way round: the files are the plan, the running SBC was never reloaded with them.
    edited = "\n".join(line.replace("rweight=100;", "rweight=50;") if "sip:198.51.100.1:" in line else line
                       for line in _files(plan)["dispatcher.list"].splitlines())
    running = kl.runtime_state(spec, _rpc(edited),
                               _subnets(files["address.list"].replace("region=region1;", "region=region2;")))
    assert _texts(plan, _files(plan), running) == [
        "running SBC: region region1 peer 198.51.100.1:5060 weight: 50, plan: 100 "
        "(regions.region1.peers[198.51.100.1:5060].weight <> trunk_groups[0].peers[a.%s].weight)" % DOMAIN,
        "running SBC: ACL range 198.51.100.0/28 region: region2, plan: region1 "
        "(acl[198.51.100.0/28].region <> acl.ranges[0].region)"]


def test_unreadable_live_state_and_missing_configuration_are_drift() -> None:
    plan = _plan()
    texts = _texts(plan, _files(plan), {"regions": None, "acl": None, "errors": ["cannot ask Kamailio for x"]})
    assert texts == ["running SBC: live state: cannot ask Kamailio for x, plan: readable (runtime <> )"]
    assert [d["text"] for d in sbc_readback.compare(plan, None)] == [
        "deployed configuration: no commsgw.routing configuration deployed: absent, plan: ams ( <> site.name)"]


def test_deployment_level_fields_are_compared() -> None:
    plan = _plan()
    state = kb.state_from_files(_files(plan))
    assert state is not None
    state.update(site="fra", local_region="region2")
    found = sbc_readback.compare(plan, state, kb.WEIGHT_SCALE)
    assert [(d["field"], d["sbc"], d["value"], d["expected"]) for d in found] == [
        ("site.name", "site", "fra", "ams"), ("trunk_groups[0].region", "local_region", "region2", "region1")]


def test_rpc_answers_of_another_shape_are_refused() -> None:
    with pytest.raises(sbc_readback.ReadbackError, match="subnetDump"):
        kl.subnet_rows({"not": "a list"})
    with pytest.raises(sbc_readback.ReadbackError, match="item"):
        kl.subnet_rows([{"group": 1, "ip": "1.2.3.0"}])
    with pytest.raises(sbc_readback.ReadbackError, match="not a SIP URI"):
        kl.runtime_rows({"RECORDS": [{"SET": {"ID": 1, "TARGETS": [{"DEST": {"URI": "http://x"}}]}}]})


def test_weights_in_the_plan_state_are_scaled_per_tier_only_when_asked() -> None:
    plan = _plan()
    assert [p["weight"] for p in sbc_readback.plan_state(plan)["regions"]["region1"]["peers"]] == [60, 20]
    assert [p["weight"] for p in sbc_readback.plan_state(plan, kb.WEIGHT_SCALE)["regions"]["region1"]["peers"]] == \
        [100, 33]


def test_module_reads_files_back_and_names_the_drift(tmp_path: Path) -> None:
    plan = _plan()
    args = {"platform_options": {"config_dir": str(tmp_path / "etc")}, "runtime": False, "plan": plan}
    code, result = run_module("sbc_state_info", args, tmp_path)
    assert code == 0 and result["onboarded"] is False and result["in_sync"] is False, result
    assert result["drift"] == ["deployed configuration: no commsgw.routing configuration deployed: absent, plan: ams "
                               "( <> site.name)"]
    (tmp_path / "etc" / "peers").mkdir(parents=True)
    for name, text in _files(plan).items():
        Path(file_path(str(tmp_path / "etc"), name)).write_text(text)  # dispatcher.list in peers/
    code, result = run_module("sbc_state_info", args, tmp_path)
    assert code == 0 and result["drift"] == ["in sync"] and result["in_sync"] is True, result
    assert result["gathered"]["runtime"] is None
    assert result["gathered"]["artefacts"]["dispatcher.list"] == sbc_readback.sha256_text(_files(plan)["dispatcher.list"])
    code, result = run_module("sbc_state_info", dict(args, plan={"site": {}}), tmp_path)
    assert code == 1 and result["msg"].startswith("plan: not a routing plan (KeyError"), result
    (tmp_path / "etc" / "commsgw-srv.json").write_text("{broken")
    code, result = run_module("sbc_state_info", args, tmp_path)
    assert code == 1 and "commsgw-srv.json is not JSON" in result["msg"], result


def test_a_pending_restart_and_an_unreadable_push_state_are_drift_of_the_running_sbc() -> None:
    """Issue 21 item 8: files a push swapped in but Kamailio has not loaded yet (the run was cut off)."""
    plan = _plan()
    state = kb.state_from_files(_files(plan))
    assert state is not None
    state["pending"] = {"restart": True, "reload": [], "artefacts": ["kamailio.cfg"], "since": 0.0}
    assert [d["text"] for d in sbc_readback.compare(plan, state, kb.WEIGHT_SCALE)] == [
        "running SBC: restart pending: kamailio.cfg changed 1970-01-01T00:00:00Z, plan: applied (pending <> )"]
    state["pending"] = {"restart": False, "reload": ["dispatcher.reload"], "artefacts": ["dispatcher.list"], "since": 0.0}
    assert [d["text"] for d in sbc_readback.compare(plan, state, kb.WEIGHT_SCALE)][0].startswith(
        "running SBC: reload pending (dispatcher.reload): dispatcher.list changed ")
    state["pending"] = {"error": "cannot read the push state: permission denied"}
    assert [d["text"] for d in sbc_readback.compare(plan, state, kb.WEIGHT_SCALE)] == [
        "running SBC: push state: cannot read the push state: permission denied, plan: readable (pending <> )"]
