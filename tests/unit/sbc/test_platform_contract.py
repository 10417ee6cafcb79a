# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issues 10 and 22: the SBC platform contract (module_utils/sbc/contract.py), proven for every shipped platform and
for the walking skeleton of another collection (tests/platforms/.../commsgw_test/skeleton, an API platform).

Each test is parametrised over ``registry.SHIPPED`` plus the skeleton: a platform is proven by these tests the
moment it is registered (and gives its test data under tests/data/platforms/<name>/, see the README there)."""

from __future__ import annotations

import ast
import copy
import ipaddress
import json
import sys
import typing as t
import urllib.request
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "platforms"))  # the skeleton's collection, next to this one

from ansible_collections.commsgw.routing.plugins.filter.sbc_platform_role import (  # noqa: E402
    sbc_platform_connection, sbc_platform_role)
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import validate_inventory  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.sbc import readback as sbc_readback  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import (  # noqa: E402
    API, HOOKS, PEER_STATES, TLS_FILES, SbcPlatform)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.options import (  # noqa: E402
    PlatformOptionsError, inventory_options, validate_options)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (  # noqa: E402
    DEFAULT_PLATFORM, SHIPPED, UnknownPlatform, get_platform, platform_names)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import (  # noqa: E402
    COMMON_FIELDS, parse_sbc_settings)
from ansible_collections.commsgw.routing.tests.harness.skeleton_api import SkeletonServer  # noqa: E402
from ansible_collections.commsgw.routing.tests.harness.tools import run_module  # noqa: E402
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars  # noqa: E402

DATA = REPO / "tests" / "data" / "platforms"
SKELETON = "commsgw_test.skeleton.skeleton"
NAMES = sorted(SHIPPED) + [SKELETON]
HOST = "sbc-contract-1"
COMMON = {"acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
          "core_next_hop": "10.0.0.20:5060"}
TLS = {"certificate": "/etc/sbc/cert.pem", "private_key": "/etc/sbc/key.pem", "ca_bundle": "/etc/sbc/ca.pem"}


def _contract(name: str) -> dict[str, t.Any]:
    return t.cast(dict, json.loads((DATA / name / "contract.json").read_text(encoding="utf-8")))


def _settings(name: str) -> dict[str, t.Any]:
    platform = get_platform(name)
    tls = TLS if platform.tls_form == TLS_FILES else {}
    return dict(copy.deepcopy(COMMON), tls=tls, **_contract(name)["settings"])


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


def _plan(kind: str, drop: t.Optional[str] = None, name: t.Optional[str] = None) -> dict[str, t.Any]:
    """The plan of the inventory ``kind``'s first site; for platform ``name`` with the routing knobs its contract
    data sets (``routing``: a platform that cannot take the inventory's, SbcPlatform.routing_limits)."""
    hostvars = load_hostvars(INVENTORIES / kind)
    routing = _contract(name)["routing"] if name and "routing" in _contract(name) else {}
    for variables in hostvars.values():
        variables["commsgw_deployment"].setdefault("routing", {}).update(routing)
        if kind == "production":  # with MCP, so that MCP records are rendered and read back too
            for region in variables["commsgw_deployment"]["service_regions"]:
                region["mcp_hostname"] = region["hostname"].replace("pstn-", "mcp-")
    report = validate_inventory(hostvars)[0]
    assert not report["errors"], report["errors"]
    deployment = report["model"]
    unresolved = build_site_plan(deployment, deployment.sites[0])
    return build_site_plan(deployment, deployment.sites[0], _answers(unresolved, drop))


def _render(platform: SbcPlatform, plan: dict[str, t.Any]) -> dict[str, str]:
    return platform.render(plan, _settings(platform.name), host=HOST, **_contract(platform.name)["render_options"])


def _recorded(name: str) -> tuple[dict[str, t.Any], dict[str, t.Optional[str]], dict[str, t.Any]]:
    """(plan, artefacts, answers): what a real SBC of the platform answered (runtime.json), or for a platform with
    a stand-in (the skeleton's API server) what the stand-in answers once the plan's artefacts are applied."""
    contract = _contract(name)
    if "recorded" in contract:
        recorded = json.loads((DATA / name / contract["recorded"]).read_text(encoding="utf-8"))
        return recorded["plan"], recorded["files"], recorded["answers"]
    platform = get_platform(name)
    plan = _plan("lab", name=name)
    artefacts = _render(platform, plan)
    if contract["stand_in"] == "tests/harness/mediant_sim.py":
        return plan, artefacts, _mediant_answers(platform, plan, artefacts)
    with SkeletonServer() as server:
        options = {"url": server.url, "username": server.device.username, "password": server.device.password}
        request = urllib.request.Request(server.url + "/config", method="PUT", headers=_auth(options),
                                         data=json.dumps({"content": artefacts["config.json"]}).encode())
        urllib.request.urlopen(request, timeout=5).read()  # noqa: S310 - loopback
        answers = platform.hooks()._answers(validate_options(platform, options)[0])  # pylint: disable=protected-access
    return plan, artefacts, answers


def _mediant_answers(platform: SbcPlatform, plan: dict[str, t.Any], artefacts: dict[str, str]) -> dict[str, t.Any]:
    """The Mediant stand-in's answers once the plan's rows are applied through the platform's own push."""
    import tempfile  # pylint: disable=import-outside-toplevel
    from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import artefacts as texts, push
    from ansible_collections.commsgw.routing.tests.harness.mediant_sim import MediantServer
    from ansible_collections.commsgw.routing.tests.harness.pki import TestCA
    with tempfile.TemporaryDirectory(prefix="contract-mediant-") as tmp:
        ca = TestCA(Path(tmp) / "ca", name="contract Mediant CA")
        issued = ca.issue_server("mediant", dns=["mediant.test"], ips=["127.0.0.24"])
        server = MediantServer("127.0.0.24", 0, issued.chain, issued.key, "ops", "pw").start()
        try:
            options = validate_options(platform, {"url": server.url, "username": "ops", "password": "pw",
                                                  "ca_path": str(ca.cert)})[0]
            client = platform.hooks().client(options)
            push.apply(plan, t.cast(t.Any, texts.from_texts(artefacts)), client)
            return {"GET /api/v1/files/ini": client.get_ini()}
        finally:
            server.stop()


def _auth(options: t.Mapping[str, str]) -> dict[str, str]:
    import base64  # pylint: disable=import-outside-toplevel
    token = base64.b64encode(("%s:%s" % (options["username"], options["password"])).encode()).decode()
    return {"Authorization": "Basic " + token, "Content-Type": "application/json"}


# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_registration_is_complete_and_its_hooks_load_on_first_use(name: str) -> None:
    platform = get_platform(name)
    assert platform.name == name and platform.connection in ("host", "api")
    module = platform.hooks()
    missing = [hook for hook in HOOKS if not callable(getattr(module, hook, None))]
    assert not missing, "%s's hooks module lacks %s" % (name, missing)
    assert platform.read_timeout in platform.options
    assert not platform.artefact_root or platform.artefact_root in platform.options
    assert set(platform.option_sources) <= set(platform.options)
    assert sbc_platform_connection(name) == platform.connection  # what exporter.yml decides by


def test_a_platform_of_another_collection_must_be_an_api_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    """AnsiballZ carries only this collection's module_utils to an SBC host: a host platform of another
    collection could never run there, so the registry refuses it by name."""
    from ansible_collections.commsgw_test.skeleton.plugins.module_utils.skeleton import platform as skeleton
    import dataclasses
    assert get_platform(SKELETON).connection == API
    monkeypatch.setattr(skeleton, "PLATFORM", dataclasses.replace(skeleton.PLATFORM, connection="host"))
    monkeypatch.setattr("ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry._LOADED", {})
    with pytest.raises(UnknownPlatform, match="must be reached through an API"):
        get_platform(SKELETON)
    with pytest.raises(UnknownPlatform, match="cannot be loaded .*No module named"):
        get_platform("commsgw_test.nowhere.acme")
    with pytest.raises(UnknownPlatform, match="is not a registered SBC platform"):
        get_platform("Commsgw.x.y")  # not a qualified name: never imported


@pytest.mark.parametrize("kind", ["lab", "production"])
@pytest.mark.parametrize("name", NAMES)
def test_rendered_artefacts_read_back_as_the_plans_facts(name: str, kind: str) -> None:
    platform = get_platform(name)
    plan = _plan(kind, name=name)
    artefacts = _render(platform, plan)
    assert set(artefacts) & set(platform.state_artefacts), "the rendered artefacts carry no routing state"
    state = platform.state_from_artefacts(artefacts, {})
    assert state is not None
    assert state["type"] == kind and state["site"] == plan["site"]["name"]
    assert sbc_readback.compare(plan, state, platform.weight_scale) == []
    assert platform.state_from_artefacts({}, {}) is None  # never onboarded


@pytest.mark.parametrize("name", NAMES)
def test_artefacts_of_another_plan_are_drift_in_plan_terms(name: str) -> None:
    platform = get_platform(name)
    plan = _plan("production", name=name)
    dropped = str(ipaddress.ip_network(plan["trunk_groups"][0]["ip_ranges"][0])[2])
    state = platform.state_from_artefacts(_render(platform, _plan("production", drop=dropped, name=name)), {})
    texts = [d["text"] for d in sbc_readback.compare(plan, state, platform.weight_scale)]
    assert any(dropped in text for text in texts), texts


@pytest.mark.parametrize("name", NAMES)
def test_runtime_answers_read_back_in_sync_with_neutral_peer_states(name: str) -> None:
    """What the SBC answers (recorded from a real one, or its stand-in): its running peers are the plan's, for the
    read-back (drift) and the probe's view alike, each in one of the contract's neutral states."""
    platform = get_platform(name)
    plan, artefacts, answers = _recorded(name)
    assert sorted(answers) == sorted(platform.runtime_queries)
    state = platform.state_from_artefacts(artefacts, {})
    assert state is not None
    state["runtime"] = dict(platform.runtime_state(artefacts, answers), errors=[])
    assert state["runtime"]["regions"] is not None and state["runtime"]["acl"] is not None
    assert sbc_readback.compare(plan, state, platform.weight_scale) == []
    planned = {(a, p["port"]) for g in plan["trunk_groups"] for p in g["peers"] for a in p["addresses"]}
    running = platform.runtime_peers(answers)
    assert planned and {(d.host, d.port) for d in running} >= planned
    assert {d.state for d in running} <= set(PEER_STATES) | {None}
    assert {p["state"] for p in state["runtime"]["peers"]} <= set(PEER_STATES) | {None}
    assert not any(key in peer for peer in state["runtime"]["peers"] for key in ("set_id", "probing", "flags"))


@pytest.mark.parametrize("name", NAMES)
def test_the_settings_validator_names_each_of_its_fields(name: str) -> None:
    platform = get_platform(name)
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
def test_the_tls_material_is_files_or_the_devices(name: str) -> None:
    """TLS material is what the platform presents and trusts: files on the SBC host are one form."""
    platform = get_platform(name)
    base = "hosts[%s].commsgw_sbc.tls" % HOST
    findings = Findings()
    parse_sbc_settings(dict(_settings(name), tls={"verify_hostname": True}), HOST, "tls", findings, name)
    if platform.tls_form == TLS_FILES:
        assert sorted(f.path for f in findings.errors) == [base + "." + k for k in ("ca_bundle", "certificate",
                                                                                    "private_key")]
    else:
        assert not findings.errors, [f.render() for f in findings.errors]
        findings = Findings()
        parse_sbc_settings(dict(_settings(name), tls=TLS), HOST, "tls", findings, name)
        assert {f.path for f in findings.errors} == {base + "." + k for k in TLS}


@pytest.mark.parametrize("name", NAMES)
def test_the_refresher_declaration_is_consistent(name: str) -> None:
    platform = get_platform(name)
    refresher = platform.refresher
    if not refresher.needed:
        assert refresher.reason and not (refresher.reads or refresher.writes or refresher.reloads)
        return
    artefacts = _render(platform, _plan("production", name=name))
    assert refresher.reads and set(refresher.reads) <= set(artefacts)
    assert refresher.writes and set(refresher.writes) <= set(platform.state_artefacts) & set(artefacts)
    assert refresher.reloads


def _role_dir(platform: SbcPlatform) -> Path:
    namespace, collection, role = platform.role.split(".")
    if (namespace, collection) == ("commsgw", "routing"):
        return REPO / "roles" / role
    return REPO / "tests" / "platforms" / "ansible_collections" / namespace / collection / "roles" / role


@pytest.mark.parametrize("name", NAMES)
def test_the_role_has_every_entry_point_the_playbooks_include(name: str) -> None:
    platform = get_platform(name)
    role = _role_dir(platform)
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))["argument_specs"]
    for entry in ("main", "render", "settle", "rollback", "hold", "release"):  # playbooks/tasks/migrate_sbc.yml
        assert (role / "tasks" / (entry + ".yml")).is_file(), entry
        assert specs[entry]["options"], entry
    role_text = "".join(path.read_text(encoding="utf-8") for path in role.rglob("*.yml"))
    for variable in ("commsgw_sbc_plan", "commsgw_sbc_artefacts", "commsgw_sbc_change_steps", "commsgw_sbc_push",
                     "commsgw_sbc_rollback_to", "commsgw_sbc_settle_required"):
        assert variable in role_text, variable
    assert sbc_platform_role(name) == platform.role


def _fragment_options(platform: SbcPlatform) -> dict[str, t.Any]:
    namespace, collection, fragment = platform.options_doc.split(".")
    root = REPO if (namespace, collection) == ("commsgw", "routing") else (
        REPO / "tests" / "platforms" / "ansible_collections" / namespace / collection)
    tree = ast.parse((root / "plugins" / "doc_fragments" / (fragment + ".py")).read_text(encoding="utf-8"))
    text = next(node.value.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", "") == "DOCUMENTATION")
    return t.cast(dict, yaml.safe_load(text)["options"]["platform_options"]["suboptions"])


@pytest.mark.parametrize("name", NAMES)
def test_the_options_doc_fragment_documents_the_options_spec(name: str) -> None:
    """The spec is written once, in the registration; its doc fragment must say the same (keys, types, defaults,
    required), and the modules validate platform_options against the spec."""
    platform = get_platform(name)
    documented = _fragment_options(platform)
    assert sorted(documented) == sorted(platform.options)
    for key, spec in platform.options.items():
        doc = documented[key]
        assert (doc.get("type"), doc.get("default"), bool(doc.get("required"))) == (
            spec.get("type"), spec.get("default"), bool(spec.get("required"))), key


@pytest.mark.parametrize("name", NAMES)
def test_platform_options_are_validated_against_the_spec(name: str) -> None:
    platform = get_platform(name)
    given = {key: "/x" if spec.get("type") == "path" else "x" for key, spec in platform.options.items()
             if spec.get("required")}
    options, masked = validate_options(platform, given)
    assert {k: v for k, v in options.items() if v is not None} == dict(platform.with_defaults({}), **given)
    assert masked == {given[k] for k, spec in platform.options.items() if spec.get("no_log") and k in given}
    with pytest.raises(PlatformOptionsError, match=r"platform_options of platform %s: .*platform_options\.bogus"
                       % name.replace(".", r"\.")):
        validate_options(platform, dict(given, bogus=1))
    # The inventory gives the options its sources name, and nothing else.
    settings = {source.split(".", 1)[1]: "from-settings" for source in platform.option_sources.values()
                if source.startswith("commsgw_sbc.")}
    host_vars: dict[str, t.Any] = {}
    for source in platform.option_sources.values():
        if "." not in source:
            host_vars[source] = "from-host"
        elif not source.startswith("commsgw_sbc."):  # a key of a host variable (commsgw_deployment.name)
            variable, key = source.split(".", 1)
            host_vars.setdefault(variable, {"unrelated": 3})[key] = "from-host"
    found = inventory_options(platform, dict(settings, unrelated=1), dict(host_vars, unrelated=2))
    assert set(found) == set(platform.option_sources)
    assert not inventory_options(platform, {}, {source.split(".")[0]: "not a mapping"
                                                for source in platform.option_sources.values()
                                                if "." in source and not source.startswith("commsgw_sbc.")})


def test_an_unregistered_platform_is_named_with_the_registered_ones() -> None:
    with pytest.raises(UnknownPlatform) as caught:
        get_platform("opensips")
    assert str(caught.value).startswith("commsgw_sbc_platform: 'opensips' is not a registered SBC platform; "
                                        "registered: " + ", ".join(platform_names()))
    with pytest.raises(AnsibleFilterError, match="commsgw_sbc_platform: 'opensips'"):
        sbc_platform_role("opensips")
    assert sbc_platform_role("") == sbc_platform_role(None) == get_platform(DEFAULT_PLATFORM).role
    # A host of an unregistered platform: the platform is the error, not the platform's own keys.
    findings = Findings()
    parse_sbc_settings(dict(_settings("kamailio"), udp_workers=4), HOST, "tls", findings, "opensips")
    assert not findings.errors


@pytest.mark.parametrize("module, args", [
    ("sbc_state_info", {}),
    ("migration_diff", {"artefacts": {}, "plan": {}}),
    ("migration_wait", {"required": ["192.0.2.1:5061"]}),
    ("probe", {"plan": {"trunk_groups": [], "site": {"name": "x"}}}),
])
def test_the_generic_modules_take_any_platform_and_name_them_on_a_typo(module: str, args: dict,
                                                                       tmp_path: Path) -> None:
    """No module lists platforms itself (a new platform edits no module): the registry decides, and an
    unknown name fails naming the option and the registered platforms; an unknown platform option is named."""
    rc, result = run_module(module, dict(args, platform="acme"), tmp_path)
    assert rc != 0 and result.get("failed"), result
    assert result["msg"].startswith("platform: commsgw_sbc_platform: 'acme' is not a registered SBC platform; "
                                    "registered: %s" % ", ".join(platform_names())), result["msg"]
    rc, result = run_module(module, dict(args, platform="kamailio", platform_options={"config_dirr": "/x"}), tmp_path)
    assert rc != 0 and "platform_options.config_dirr" in result["msg"], result
    doc = (REPO / "plugins" / "modules" / (module + ".py")).read_text(encoding="utf-8")
    assert "choices: [kamailio" not in doc and "config_dir:" not in doc and "rpc_socket" not in doc
