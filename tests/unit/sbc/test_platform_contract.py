# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 10: the SBC platform contract (module_utils.sbc_platform), proven for every registered platform.

Each test is parametrised over ``sbc_platforms.PLATFORMS``: a platform is proven by these tests the moment
it is registered (and gives its test data under tests/data/platforms/<name>/, see the README there)."""

from __future__ import annotations

import copy
import ipaddress
import json
import typing as t
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.commsgw.routing.plugins.filter.sbc_platform_role import sbc_platform_role
from ansible_collections.commsgw.routing.plugins.module_utils.sbc import readback as sbc_readback
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import validate_inventory
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import SbcPlatform
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    PLATFORMS, UnknownPlatform, get_platform)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import COMMON_FIELDS, parse_sbc_settings
from ansible_collections.commsgw.routing.tests.harness.tools import run_module
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "platforms"
NAMES = sorted(PLATFORMS)
HOST = "sbc-contract-1"
COMMON = {"acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
          "core_next_hop": "10.0.0.20:5060",
          "tls": {"certificate": "/etc/sbc/cert.pem", "private_key": "/etc/sbc/key.pem", "ca_bundle": "/etc/sbc/ca.pem"}}


def _contract(name: str) -> dict[str, t.Any]:
    return t.cast(dict, json.loads((DATA / name / "contract.json").read_text(encoding="utf-8")))


def _settings(name: str) -> dict[str, t.Any]:
    return dict(copy.deepcopy(COMMON), **_contract(name)["settings"])


def _answers(plan: dict[str, t.Any], drop: t.Optional[str] = None) -> dict[str, t.Any]:
    """SRV answers for every SRV name of ``plan``: two targets of one tier and a backup tier, inside the /28."""
    answers = {}
    for record in list(plan["trunk_groups"]) + list((plan.get("mcp") or {}).get("records") or []):
        net = ipaddress.ip_network(record["ip_ranges"][0])
        host = record["hostname"]
        targets = [(10, 60, "sip1." + host, str(net[1])), (10, 20, "sip2." + host, str(net[2])),
                   (20, 10, "sip3." + host, str(net[3]))]
        answers[record["srv_name"]] = {"ttl": 60, "targets": [
            {"priority": p, "weight": w, "port": 5061, "target": n, "addresses": [a]}
            for p, w, n, a in targets if a != drop]}
    return answers


def _plan(kind: str, drop: t.Optional[str] = None) -> dict[str, t.Any]:
    hostvars = load_hostvars(INVENTORIES / kind)
    if kind == "production":  # with MCP, so that MCP records are rendered and read back too
        for variables in hostvars.values():
            for region in variables["commsgw_deployment"]["service_regions"]:
                region["mcp_hostname"] = region["hostname"].replace("pstn-", "mcp-")
    report = validate_inventory(hostvars)[0]
    assert not report["errors"], report["errors"]
    deployment = report["model"]
    unresolved = build_site_plan(deployment, deployment.sites[0])
    return build_site_plan(deployment, deployment.sites[0], _answers(unresolved, drop))


def _render(platform: SbcPlatform, plan: dict[str, t.Any]) -> dict[str, str]:
    return platform.render(plan, _settings(platform.name), host=HOST, **_contract(platform.name)["render_options"])


@pytest.mark.parametrize("kind", ["lab", "production"])
@pytest.mark.parametrize("name", NAMES)
def test_rendered_files_read_back_as_the_plans_facts(name: str, kind: str) -> None:
    platform = PLATFORMS[name]
    plan = _plan(kind)
    files = _render(platform, plan)
    assert set(files) & set(platform.state_files), "the rendered files carry no routing state"
    state = platform.state_from_files(files, {})
    assert state is not None
    assert state["type"] == kind and state["site"] == plan["site"]["name"]
    assert sbc_readback.compare(plan, state, platform.weight_scale) == []
    assert platform.state_from_files({}, {}) is None  # never onboarded


@pytest.mark.parametrize("name", NAMES)
def test_files_of_another_plan_are_drift_in_plan_terms(name: str) -> None:
    platform = PLATFORMS[name]
    plan = _plan("production")
    dropped = str(ipaddress.ip_network(plan["trunk_groups"][0]["ip_ranges"][0])[2])
    state = platform.state_from_files(_render(platform, _plan("production", drop=dropped)), {})
    texts = [d["text"] for d in sbc_readback.compare(plan, state, platform.weight_scale)]
    assert any(dropped in text for text in texts), texts


@pytest.mark.parametrize("name", NAMES)
def test_recorded_runtime_answers_read_back_in_sync(name: str) -> None:
    """What a real SBC of the platform answered (tests/data/platforms/<name>/runtime.json): its running
    peers are the plan's, for the read-back (drift) and the probe's view alike."""
    platform = PLATFORMS[name]
    recorded = json.loads((DATA / name / _contract(name)["recorded"]).read_text(encoding="utf-8"))
    plan, files, answers = recorded["plan"], recorded["files"], recorded["answers"]
    assert sorted(answers) == sorted(platform.runtime_queries)
    state = platform.state_from_files(files, {})
    assert state is not None
    state["runtime"] = dict(platform.runtime_state(files, answers), errors=[])
    assert state["runtime"]["regions"] is not None and state["runtime"]["acl"] is not None
    assert sbc_readback.compare(plan, state, platform.weight_scale) == []
    planned = {(a, p["port"]) for g in plan["trunk_groups"] for p in g["peers"] for a in p["addresses"]}
    running = {(d.host, d.port) for d in platform.runtime_peers(answers)}
    assert planned and running == planned
    # An answer that lost a peer is drift of the running state.
    first = next(iter(answers["dispatcher.list"]["RECORDS"])) if name == "kamailio" else None
    if first is not None:
        lost = copy.deepcopy(answers)
        lost["dispatcher.list"]["RECORDS"][0]["SET"]["TARGETS"] = first["SET"]["TARGETS"][1:]
        state["runtime"] = dict(platform.runtime_state(files, lost), errors=[])
        assert [d["source"] for d in sbc_readback.compare(plan, state, platform.weight_scale)] == ["runtime"]


@pytest.mark.parametrize("name", NAMES)
def test_the_settings_validator_names_each_of_its_fields(name: str) -> None:
    platform = PLATFORMS[name]
    assert not set(platform.settings_fields) & set(COMMON_FIELDS)
    findings = Findings()
    settings = parse_sbc_settings(_settings(name), HOST, "tls", findings, name)
    assert not findings.errors, [f.render() for f in findings.errors]
    assert set(platform.settings_fields) <= set(settings)  # complete with defaults
    base = "hosts[%s].commsgw_sbc" % HOST
    for field in platform.settings_fields:
        findings = Findings()
        parse_sbc_settings(dict(_settings(name), **{field: {"not": "valid"}}), HOST, "tls", findings, name)
        assert [f.path for f in findings.errors] == ["%s.%s" % (base, field)], [f.render() for f in findings.errors]
    findings = Findings()
    parse_sbc_settings(dict(_settings(name), no_such_field=1), HOST, "tls", findings, name)
    (error,) = findings.errors
    assert error.path == base + ".no_such_field"
    assert all(field in error.expected for field in COMMON_FIELDS + platform.settings_fields)


@pytest.mark.parametrize("name", NAMES)
def test_the_refresher_declaration_is_consistent(name: str) -> None:
    platform = PLATFORMS[name]
    refresher = platform.refresher
    if not refresher.needed:
        assert refresher.reason and not (refresher.reads or refresher.writes or refresher.reloads)
        return
    files = _render(platform, _plan("production"))
    assert refresher.reads and set(refresher.reads) <= set(files)
    assert refresher.writes and set(refresher.writes) <= set(platform.state_files) & set(files)
    assert refresher.reloads


@pytest.mark.parametrize("name", NAMES)
def test_the_role_and_modules_the_playbooks_use_exist(name: str) -> None:
    platform = PLATFORMS[name]
    namespace, collection, role = platform.role.split(".")
    assert (namespace, collection) == ("commsgw", "routing")
    tasks = REPO / "roles" / role / "tasks"
    for entry in ("main", "render", "migrate"):  # include_role / tasks_from in playbooks/*.yml
        assert (tasks / (entry + ".yml")).is_file()
    specs = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
    # The playbooks hand every platform's role its site plan as commsgw_sbc_plan, never by a platform's own name.
    for playbook in (REPO / "playbooks").glob("*.yml"):
        text = playbook.read_text(encoding="utf-8")
        assert "%s_plan" % role not in text, playbook
        if "sbc_platform_role" in text:
            assert "commsgw_sbc_plan:" in text, playbook
    role_text = "".join(path.read_text(encoding="utf-8") for path in (REPO / "roles" / role).rglob("*.yml"))
    assert "commsgw_sbc_plan" in role_text
    for entry in ("render", "migrate"):
        assert specs["argument_specs"][entry]["options"]
    for module in (platform.start_test, platform.apply):
        assert (REPO / "plugins" / "modules" / (module.split(".")[-1] + ".py")).is_file()
    assert sbc_platform_role(name) == platform.role
    assert platform.options({"config_dir": None})["config_dir"] == platform.defaults["config_dir"]


def test_an_unregistered_platform_is_named_with_the_registered_ones() -> None:
    with pytest.raises(UnknownPlatform) as caught:
        get_platform("opensips")
    assert str(caught.value) == ("commsgw_sbc_platform: 'opensips' is not a registered SBC platform; registered: "
                                 + ", ".join(NAMES))
    with pytest.raises(AnsibleFilterError, match="commsgw_sbc_platform: 'opensips'"):
        sbc_platform_role("opensips")
    assert sbc_platform_role("") == sbc_platform_role(None) == PLATFORMS["kamailio"].role  # the default
    # A host of an unregistered platform: the platform is the error, not the platform's own keys.
    findings = Findings()
    parse_sbc_settings(dict(_settings("kamailio"), udp_workers=4), HOST, "tls", findings, "opensips")
    assert not findings.errors


@pytest.mark.parametrize("module, args", [
    ("sbc_state_info", {}),
    ("migration_diff", {"config_dir": "/nonexistent", "files": {}, "plan": {}}),
    ("migration_wait", {"required": ["192.0.2.1:5061"]}),
    ("probe", {"plan": {"trunk_groups": [], "site": {"name": "x"}}}),
])
def test_the_generic_modules_take_any_registered_platform_and_name_them_on_a_typo(module: str, args: dict,
                                                                                  tmp_path: Path) -> None:
    """No module lists platforms itself (a new platform edits no module): the registry decides, and an
    unknown name fails naming the option and the registered platforms."""
    rc, result = run_module(module, dict(args, platform="acme"), tmp_path)
    assert rc != 0 and result.get("failed"), result
    assert result["msg"].startswith("platform: commsgw_sbc_platform: 'acme' is not a registered SBC platform; "
                                    "registered: %s" % ", ".join(NAMES)), result["msg"]
    doc = (REPO / "plugins" / "modules" / (module + ".py")).read_text(encoding="utf-8")
    assert "choices: [kamailio" not in doc
