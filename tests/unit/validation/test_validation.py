# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation rules: the broken-inventory corpus, every rule good and bad, and an injection fuzz.

The corpus (tests/fixtures/broken/*.yml) holds complete inventories with exactly one fault each and
the exact findings that fault must produce; the test fails on a missing finding *and* on any extra one.
"""

from __future__ import annotations

import copy
import pathlib
import re
import typing as t

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import ERROR, WARNING, Finding
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.hosts import (
    render_findings, site_plans, validate_inventory)
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import ROUTING_LIMITS, Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import (
    fqdn_problem, normalise_fqdn, validate_deployment)

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "broken"
CORPUS_FILES = sorted(CORPUS.glob("*.yml"))
BASE = "a1b2c3d4e5f6g7h8.commsgw.azure.com"


# -- baselines (the same facts as inventory/production and inventory/lab) ---------------------------
def production() -> dict[str, t.Any]:
    return {
        "name": "contoso-emea", "type": "production", "base_domain": BASE, "management_region": "West Europe",
        "service_regions": [
            {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1." + BASE,
             "ip_ranges": ["20.61.48.16/28"]},
            {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2." + BASE,
             "ip_ranges": ["20.82.160.32/28"]},
        ],
        "sites": [{"name": "amsterdam", "service_region": "region1"},
                  {"name": "dublin", "service_region": "region2"}],
        "emergency_dial_strings": ["112", "999"],
    }


def production_mcp() -> dict[str, t.Any]:
    raw = production()
    raw["service_regions"][0]["mcp_hostname"] = "mcp-region1." + BASE
    raw["service_regions"][1]["mcp_hostname"] = "mcp-region2." + BASE
    raw["mcp"] = {"policy": "continue", "hold_down_s": 30, "continue_next_hop": "core.operator.example:5060"}
    return raw


def lab() -> dict[str, t.Any]:
    return {
        "name": "lab", "type": "lab", "base_domain": "acg-lab.commsgw.test", "management_region": "West Europe",
        "allow_non_public_ranges": True,
        "service_regions": [{"name": "region1", "azure_region": "westeurope",
                             "hostname": "pstn-region1.acg-lab.commsgw.test", "ip_ranges": ["127.0.10.0/28"]}],
        "sites": [{"name": "lab", "service_region": "region1"}],
        "emergency_dial_strings": ["112", "999"],
    }


PRODUCTION_SBCS = (Sbc("sbc-ams-1", "amsterdam"), Sbc("sbc-dub-1", "dublin"))
LAB_SBCS = (Sbc("lab-sbc-1", "lab"),)


def check(raw: t.Any, sbcs: t.Sequence[Sbc] = PRODUCTION_SBCS) -> tuple[list[Finding], list[Finding]]:
    findings = validate_deployment(raw, sbcs)[1]
    return findings.errors, findings.warnings


def summary(findings: t.Iterable[Finding]) -> list[tuple[str, str, str]]:
    return sorted((f.path, f.rule, f.message) for f in findings)


# -- the corpus ------------------------------------------------------------------------------------
def corpus_hostvars(case: dict[str, t.Any]) -> dict[str, dict[str, t.Any]]:
    """Every host sees the file's deployment unless it carries its own copy (a host_vars override)."""
    hostvars = {}
    for host, variables in case["hosts"].items():
        merged = {"commsgw_deployment": copy.deepcopy(case["deployment"])}
        merged.update(copy.deepcopy(variables))
        hostvars[host] = merged
    return hostvars


def unmatched(expected: list[dict[str, t.Any]], actual: list[Finding]) -> tuple[list[t.Any], list[Finding]]:
    """Pair each expected item with one distinct finding; return what is left on both sides."""
    left = list(actual)
    missing = []
    for item in expected:
        hit = next((f for f in left if f.path == item["path"] and f.rule == item.get("rule", "")
                    and item["message"] in f.message), None)
        if hit is None:
            missing.append(item)
        else:
            left.remove(hit)
    return missing, left


def test_corpus_is_large_and_well_formed() -> None:
    assert len(CORPUS_FILES) >= 45
    rules = set()
    for path in CORPUS_FILES:
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert set(case) == {"description", "hosts", "deployment", "expect"}, path.name
        assert case["description"] and case["expect"], path.name
        rules.update(item["rule"] for item in case["expect"])
    # Every rule that validation enforces has at least one broken example.
    for rule in ("R-01", "R-02", "R-03", "R-04", "R-05", "R-06", "R-07", "R-09", "R-13", "R-14", "R-18", "R-19",
                 "R-20", "R-21", "R-25", "R-28"):
        assert rule in rules, rule


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_broken_inventory_reports_exactly_its_fault(path: pathlib.Path) -> None:
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    reports = validate_inventory(corpus_hostvars(case))
    assert len(reports) == 1
    report = reports[0]
    expected_errors = [e for e in case["expect"] if e.get("severity", ERROR) == ERROR]
    expected_warnings = [e for e in case["expect"] if e.get("severity", ERROR) == WARNING]
    missing, extra = unmatched(expected_errors, report["errors"])
    assert not missing and not extra, "missing %s; unexpected %s" % (missing, render_findings([report]))
    missing, extra = unmatched(expected_warnings, report["warnings"])
    assert not missing and not extra, "missing %s; unexpected %s" % (
        missing, render_findings([report], "warnings"))
    # A deployment with errors is never handed on to planning.
    assert (report["model"] is None) == bool(expected_errors)


# -- good inputs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, sbcs", [(production(), PRODUCTION_SBCS), (production_mcp(), PRODUCTION_SBCS),
                                       (lab(), LAB_SBCS)], ids=["production", "production-mcp", "lab"])
def test_good_baselines_have_no_findings(raw: dict[str, t.Any], sbcs: tuple[Sbc, ...]) -> None:
    deployment, findings = validate_deployment(raw, sbcs)
    assert findings.items == []
    assert deployment.name == raw["name"]
    assert [r.name for r in deployment.service_regions] == [r["name"] for r in raw["service_regions"]]


def test_every_fault_is_reported_in_one_run() -> None:
    raw = production()
    raw["management_region"] = "Mars Central"
    raw["service_regions"][0]["ip_ranges"] = ["20.61.48.16/27"]
    raw["service_regions"][1]["hostname"] = "bad_host"
    raw["emergency_dial_strings"] = ["11x"]
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in sorted(errors, key=lambda f: f.path)] == [
        ("emergency_dial_strings[0]", "R-25"), ("management_region", "R-04"),
        ("service_regions[0].ip_ranges[0]", "R-07"), ("service_regions[1].hostname", "R-06")]


def test_warnings_are_kept_apart_from_errors() -> None:
    raw = production()
    raw["emergency_dial_strings"] = []          # warning R-25
    raw["service_regions"][1]["azure_region"] = "francecentral"  # warning R-05 (not a pair)
    raw["routing"] = {"invite_timer_ms": 1}     # error R-14
    errors, warnings = check(raw)
    assert [(f.severity, f.path) for f in errors] == [(ERROR, "routing.invite_timer_ms")]
    assert sorted((f.severity, f.path) for f in warnings) == [
        (WARNING, "emergency_dial_strings"), (WARNING, "service_regions[1].azure_region")]


def test_finding_renders_path_value_expectation_and_rule() -> None:
    raw = production()
    raw["service_regions"][1]["ip_ranges"] = ["20.82.160.32/27"]
    errors = check(raw)[0]
    assert errors[0].render() == (
        "service_regions[1].ip_ranges[0]: is a /27 (got '20.82.160.32/27'; "
        "expected an IPv4 /28 on its network boundary, e.g. 203.0.113.16/28) [R-07]")


# -- R-01 / R-02 / R-03 ------------------------------------------------------------------------------
def test_lab_needs_exactly_one_region_and_site() -> None:
    raw = lab()
    raw["service_regions"] = []
    errors = check(raw, LAB_SBCS)[0]
    assert ("service_regions", "R-02") in [(f.path, f.rule) for f in errors]


def test_production_pairs_each_site_with_a_different_region() -> None:
    raw = production()
    raw["sites"][1]["service_region"] = "region1"
    errors = check(raw)[0]
    assert summary(errors) == [
        ("service_regions[1]", "R-03", "is paired with no site"),
        ("sites[1].service_region", "R-03", "repeats the service region of sites[0].service_region")]


def test_lab_site_must_name_its_region() -> None:
    raw = lab()
    raw["sites"][0]["service_region"] = "region9"
    errors = check(raw, LAB_SBCS)[0]
    assert [(f.path, f.rule) for f in errors] == [("sites[0].service_region", "R-03")]


def test_missing_service_regions_is_one_error_not_a_cascade() -> None:
    raw = production()
    del raw["service_regions"]
    errors = check(raw)[0]
    assert summary(errors) == [("service_regions", "", "is missing")]


# -- R-04 management region --------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["centralindia", "Central India", "India Central", "central india", "CENTRALINDIA",
                                   "central-india"])
def test_management_region_accepts_every_spelling_of_central_india(value: str) -> None:
    raw = production()
    raw["management_region"] = value
    for index, (azure, rng) in enumerate((("centralindia", "20.192.0.16/28"), ("southindia", "20.193.0.16/28"))):
        raw["service_regions"][index].update(azure_region=azure, ip_ranges=[rng])
    errors, warnings = check(raw)
    assert errors == [] and warnings == []


@pytest.mark.parametrize("value", ["East US", "westcentralus", "West Europe", "uksouth", "Canada Central",
                                   "australiaeast"])
def test_every_current_management_region_is_accepted(value: str) -> None:
    raw = production()
    raw["management_region"] = value
    errors, warnings = check(raw)
    assert errors == []
    # Advice only: a far-away management region is a warning, never an error.
    assert all(w.path == "management_region" and w.rule == "R-04" for w in warnings)


@pytest.mark.parametrize("value", ["North Europe", "West Europe\n", "West\tEurope", "West Europe;", "West_Europe", ""])
def test_management_region_rejects_other_values(value: str) -> None:
    raw = production()
    raw["management_region"] = value
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == [("management_region", "R-04")]


def test_management_region_colocated_with_service_region_is_fine() -> None:
    raw = production()
    raw["management_region"] = "westeurope"
    assert check(raw) == ([], [])


# -- R-05 Azure regions ------------------------------------------------------------------------------
@pytest.mark.parametrize("first, second", [("westeurope", "northeurope"), ("West Europe", "North Europe"),
                                           ("eastus", "westus"), ("qatarcentral", "uaenorth"),
                                           ("italynorth", "westeurope")])
def test_region_pairs_without_findings(first: str, second: str) -> None:
    raw = production()
    raw["service_regions"][0]["azure_region"] = first
    raw["service_regions"][1]["azure_region"] = second
    raw["management_region"] = "East US" if first == "eastus" else "West Europe"
    errors, warnings = check(raw)
    assert errors == []
    # Qatar/UAE lie outside the management region's area: only the R-04 nearest-region advice remains.
    assert [w.rule for w in warnings] in ([], ["R-04"])


def test_qatar_with_far_region_is_a_warning_only() -> None:
    raw = production()
    raw["service_regions"][0]["azure_region"] = "Qatar Central"
    raw["service_regions"][1]["azure_region"] = "eastus"
    raw["management_region"] = "East US"
    errors, warnings = check(raw)
    assert errors == []
    assert [(w.path, w.rule) for w in warnings] == [("service_regions[1].azure_region", "R-05")]


def test_cross_area_without_single_region_geography_is_an_error() -> None:
    raw = production()
    raw["service_regions"][1]["azure_region"] = "australiaeast"
    errors, warnings = check(raw)
    assert [(f.path, f.rule) for f in errors] == [("service_regions[1].azure_region", "R-05")]
    assert warnings == []  # no pairing advice on top of the error


def test_coming_soon_region_is_a_warning() -> None:
    raw = production()
    raw["service_regions"][1]["azure_region"] = "denmarkeast"
    warnings = check(raw)[1]
    assert ("service_regions[1].azure_region", "R-05") in [(w.path, w.rule) for w in warnings]
    assert any("not generally available" in w.message for w in warnings)


def test_lab_region_pair_rules_do_not_apply() -> None:
    raw = lab()
    raw["service_regions"][0]["azure_region"] = "qatarcentral"
    errors, warnings = check(raw, LAB_SBCS)
    assert errors == []
    assert [w.rule for w in warnings] == ["R-04"]  # management region far from Qatar


# -- hostnames ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["pstn-region1.example.com", "pstn-region1.example.com.", "a.b", "x1.y-2.z3",
                                   "a" * 63 + ".example.com", "1.2.3.example.com"])
def test_fqdn_accepts(value: str) -> None:
    assert fqdn_problem(value) is None


@pytest.mark.parametrize("value, problem", [
    ("", "is empty"), ("a" * 250 + ".com", "longer than 253"), ("example", "not fully qualified"),
    ("a..b", "invalid label ''"), ("a.b..", "invalid label ''"), (".a.b", "invalid label ''"),
    ("a-.b", "invalid label 'a-'"), ("a.b\n", "whitespace"), ("a.b\x00", "control"), ("a.b\x7f", "control"),
    ("a.1", "all-numeric"), ("ä.example.com", "invalid label"), ("a.b:5061", "invalid label 'b:5061'"),
])
def test_fqdn_rejects(value: str, problem: str) -> None:
    found = fqdn_problem(value)
    assert found is not None and problem in found


def test_normalise_fqdn_strips_one_root_dot_and_case() -> None:
    assert normalise_fqdn("PSTN.Example.COM.") == "pstn.example.com"


def test_custom_domain_hostnames_are_advice_not_errors() -> None:
    raw = production()
    for region in raw["service_regions"]:
        region["hostname"] = region["hostname"].replace(BASE, "acg.operator.example")
    errors, warnings = check(raw)
    assert errors == []
    assert [(w.path, w.rule) for w in warnings] == [
        ("service_regions[0].hostname", "R-28"), ("service_regions[1].hostname", "R-28")]


# -- ranges ------------------------------------------------------------------------------
def test_several_ranges_per_region_are_fine() -> None:
    raw = production()
    raw["service_regions"][0]["ip_ranges"] = ["20.61.48.16/28", "20.61.48.32/28", "4.208.10.0/28"]
    assert check(raw) == ([], [])


def test_lab_may_use_loopback_only_when_allowed() -> None:
    raw = lab()
    assert check(raw, LAB_SBCS) == ([], [])
    raw["allow_non_public_ranges"] = False
    errors = check(raw, LAB_SBCS)[0]
    assert [(f.path, f.rule, f.message) for f in errors] == [
        ("service_regions[0].ip_ranges[0]", "R-07", "is not a public range")]


@pytest.mark.parametrize("value", ["100.64.0.0/28", "192.168.1.0/28", "169.254.0.0/28", "0.0.0.0/28",
                                   "224.0.0.0/28", "198.18.0.0/28"])
def test_non_public_ranges_are_errors_in_production(value: str) -> None:
    raw = production()
    raw["service_regions"][1]["ip_ranges"] = [value]
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == [("service_regions[1].ip_ranges[0]", "R-07")]


@pytest.mark.parametrize("value", ["20.82.160.32/028", " 20.82.160.32/28", "20.82.160.32/28 ", "20.82.160.032/28"])
def test_range_must_be_written_canonically(value: str) -> None:
    raw = production()
    raw["service_regions"][1]["ip_ranges"] = [value]
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == [("service_regions[1].ip_ranges[0]", "R-07")]


# -- transport and routing ------------------------------------------------------
@pytest.mark.parametrize("transport", ["tcp", "udp"])
def test_plain_transport_needs_the_explicit_allowance_and_always_warns(transport: str) -> None:
    for raw, sbcs in ((production(), PRODUCTION_SBCS), (lab(), LAB_SBCS)):
        raw["acg_transport"] = transport
        errors = check(raw, sbcs)[0]
        assert [(f.path, f.rule) for f in errors] == [("acg_transport", "R-09")]
        assert "allow_plain_transport" in errors[0].message
        raw["allow_plain_transport"] = True
        errors, warnings = check(raw, sbcs)
        assert errors == [] and [(w.path, w.rule) for w in warnings] == [("acg_transport", "R-09")]


@pytest.mark.parametrize("key", sorted(ROUTING_LIMITS))
def test_routing_limits_are_inclusive(key: str) -> None:
    low, high = ROUTING_LIMITS[key]
    rule = "R-14" if key == "invite_timer_ms" else "R-13"
    for value, ok in ((low, True), (high, True), (low - 1, False), (high + 1, False)):
        raw = production()
        raw["routing"] = {key: value}
        deployment, findings = validate_deployment(raw, PRODUCTION_SBCS)
        got = [(f.path, f.rule) for f in findings.errors]
        assert got == ([] if ok else [("routing." + key, rule)]), (key, value)
        if ok:
            assert deployment.routing[key] == value


def test_routing_defaults_fill_unset_keys() -> None:
    raw = production()
    raw["routing"] = {"invite_timer_ms": 3000}
    deployment, findings = validate_deployment(raw, PRODUCTION_SBCS)
    assert not findings.errors
    assert deployment.routing == {"options_interval_s": 5, "failure_threshold": 2, "recovery_threshold": 1,
                                  "invite_timer_ms": 3000}


# -- R-18..R-20 MCP ------------------------------------------------------------------------------------
@pytest.mark.parametrize("hop", ["core.operator.example", "core.operator.example:5060", "192.0.2.10",
                                 "192.0.2.10:5080"])
def test_mcp_continue_next_hop_accepts(hop: str) -> None:
    raw = production_mcp()
    raw["mcp"]["continue_next_hop"] = hop
    assert check(raw) == ([], [])


@pytest.mark.parametrize("hop", ["core", "core.operator.example:0", "core.operator.example:65536", "[::1]:5060",
                                 "sip:core.operator.example", "core.operator.example:5060\n", "192.0.2.10:"])
def test_mcp_continue_next_hop_rejects(hop: str) -> None:
    raw = production_mcp()
    raw["mcp"]["continue_next_hop"] = hop
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == [("mcp.continue_next_hop", "R-20")]


def test_mcp_settings_without_mcp_hostnames_need_no_next_hop() -> None:
    raw = production()
    raw["mcp"] = {"policy": "continue"}
    errors, warnings = check(raw)
    assert errors == [] and [(f.path, f.rule) for f in warnings] == [("mcp", "R-18")]


def test_mcp_block_without_any_mcp_hostname_is_flagged() -> None:
    """An mcp: block does nothing when no region has an mcp_hostname: say so, naming mcp (issue 13)."""
    raw = production()
    raw["mcp"] = {"policy": "retry", "hold_down_s": 30}
    errors, warnings = check(raw)
    assert errors == []
    assert [(f.path, f.message) for f in warnings] == [
        ("mcp", "is set but no service region has an mcp_hostname: these settings do nothing")]
    assert "mcp_hostname in every service region" in warnings[0].expected
    # No mcp block, or MCP on every region: nothing to say.
    assert check(production()) == ([], []) and check(production_mcp()) == ([], [])


@pytest.mark.parametrize("where", ["hostname", "mcp_hostname"])
def test_lookalike_letter_in_a_hostname_is_shown_by_code_point(where: str) -> None:
    """A Cyrillic 'а' (U+0430) looks like 'a': the message names the code point, never prints the letter."""
    raw = production_mcp()
    raw["service_regions"][1][where] = "pstn-region2.contoso.comms\u0430zure.example"
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == [("service_regions[1].%s" % where, "R-06")]
    line = errors[0].render()
    assert "U+0430 (CYRILLIC SMALL LETTER A)" in line and "comms<U+0430>zure" in line
    assert "\u0430" not in line and line.isascii()


def test_routing_retry_codes_is_refused_as_fixed_by_acg() -> None:
    raw = production()
    raw["routing"] = {"retry_codes": [503, 500]}
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == [("routing.retry_codes", "R-16")]
    assert errors[0].message == "is not configurable: the retry set is fixed by ACG"
    assert "408, 503, 504" in errors[0].expected and "R-16" in errors[0].expected
    # Any other unknown routing key stays a plain typo.
    raw["routing"] = {"retry_code": [503]}
    assert [f.message for f in check(raw)[0]] == ["is not a known field"]


@pytest.mark.parametrize("hold, ok", [(1, True), (3600, True), (3601, False), (-5, False)])
def test_mcp_hold_down_range(hold: int, ok: bool) -> None:
    raw = production_mcp()
    raw["mcp"]["hold_down_s"] = hold
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == ([] if ok else [("mcp.hold_down_s", "R-19")])


# -- R-25 emergency ------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, ok", [("112", True), ("+44999", True), ("1" * 15, True), ("1" * 16, False),
                                       ("", False), ("+", False), ("11 2", False), ("112\n", False),
                                       ("１１２", False), ("*112", False)])
def test_emergency_dial_strings(value: str, ok: bool) -> None:
    raw = production()
    raw["emergency_dial_strings"] = [value]
    errors = check(raw)[0]
    assert [(f.path, f.rule) for f in errors] == ([] if ok else [("emergency_dial_strings[0]", "R-25")])


def test_emergency_defaults_apply_when_unset() -> None:
    raw = production()
    del raw["emergency_dial_strings"]
    deployment, findings = validate_deployment(raw, PRODUCTION_SBCS)
    assert findings.items == [] and deployment.emergency_dial_strings == ["112", "911", "999"]


# -- SBC hosts -----------------------------------------------------------------------------------------
def test_hosts_default_to_kamailio_and_every_site_needs_one() -> None:
    errors = check(production(), (Sbc("sbc-ams-1", "amsterdam"),))[0]
    assert [(f.path, f.rule) for f in errors] == [("sites[1]", "R-03")]


def test_site_list_broken_does_not_blame_every_host() -> None:
    raw = production()
    raw["sites"] = {"amsterdam": "region1"}
    errors = check(raw)[0]
    assert summary(errors) == [("sites", "", "has the wrong type")]


# -- injection fuzz ------------------------------------------------------------------------------------
# What may reach a rendered config: plain tokens only. Azure region names keep their single spaces
# ('West Europe'), which the catalog look-up requires; nothing else does.
SAFE = re.compile(r"[A-Za-z0-9._:/+-]*\Z")
SAFE_AZURE = re.compile(r"[A-Za-z0-9._:/+ -]*\Z")

# (field path, where the value lives in the good deployment); paths are the findings' paths.
FUZZ_FIELDS: list[tuple[str, tuple[t.Any, ...]]] = [
    ("name", ("name",)), ("type", ("type",)), ("base_domain", ("base_domain",)),
    ("management_region", ("management_region",)), ("acg_transport", ("acg_transport",)),
    ("mcp.policy", ("mcp", "policy")), ("mcp.continue_next_hop", ("mcp", "continue_next_hop")),
    ("emergency_dial_strings[1]", ("emergency_dial_strings", 1)),
] + [
    ("service_regions[%d].%s" % (i, key), ("service_regions", i, key))
    for i in (0, 1) for key in ("name", "azure_region", "hostname", "mcp_hostname")
] + [
    ("service_regions[%d].ip_ranges[0]" % i, ("service_regions", i, "ip_ranges", 0)) for i in (0, 1)
] + [
    ("sites[%d].%s" % (i, key), ("sites", i, key)) for i in (0, 1) for key in ("name", "service_region")
]


def _get(raw: t.Any, where: tuple[t.Any, ...]) -> t.Any:
    for key in where:
        raw = raw[key]
    return raw


def _set(raw: t.Any, where: tuple[t.Any, ...], value: t.Any) -> None:
    _get(raw, where[:-1])[where[-1]] = value


def production_mcp_full() -> dict[str, t.Any]:
    raw = production_mcp()
    raw["acg_transport"] = "tls"
    return raw


# Characters that break out of a quoted string, a line or a SIP header; drawn more often than chance would.
NASTY = list("\n\r\t \"';<>&|$`\\\x00\x7f\u2028")


@st.composite
def hostile_text(draw: st.DrawFn, good: str) -> str:
    """Arbitrary text, or the good value with a few characters spliced in (near misses, often at an end)."""
    if draw(st.booleans()):
        return draw(st.text(max_size=30))
    value = good
    for _step in range(draw(st.integers(1, 3))):
        position = draw(st.one_of(st.just(len(value)), st.just(0), st.integers(0, len(value))))
        char = draw(st.one_of(st.sampled_from(NASTY), st.characters()))
        value = value[:position] + char + value[position:]
    return value


def _string_leaves(value: t.Any) -> t.Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(key)
            yield from _string_leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _string_leaves(item)


@pytest.mark.parametrize("path, where", FUZZ_FIELDS, ids=[field[0] for field in FUZZ_FIELDS])
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_strings_are_rejected_or_safe(path: str, where: tuple[t.Any, ...], data: st.DataObject) -> None:
    raw = production_mcp_full()
    value = data.draw(hostile_text(_get(raw, where)), label="value")
    _set(raw, where, value)
    deployment, findings = validate_deployment(raw, PRODUCTION_SBCS)
    if any(f.path == path for f in findings.errors):
        return
    allowed = SAFE_AZURE if path.endswith("azure_region") or path == "management_region" else SAFE
    assert allowed.match(value), "unsafe value accepted at %s: %r" % (path, value)
    if not findings.errors:
        # End to end: nothing unsafe reaches the plans that renderers consume.
        for plan in site_plans(deployment):
            for text in _string_leaves(plan):
                assert SAFE_AZURE.match(text), text


@pytest.mark.parametrize("part", ["host", "site", "platform"])
@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data())
def test_fuzzed_host_variables_are_rejected_or_safe(part: str, data: st.DataObject) -> None:
    good = {"host": "sbc-ams-1", "site": "amsterdam", "platform": "kamailio"}[part]
    value = data.draw(hostile_text(good), label="value")
    ams = {"host": "sbc-ams-1", "site": "amsterdam", "platform": "kamailio", part: value}
    hostvars = {
        ams["host"]: {"commsgw_deployment": production(), "commsgw_site": ams["site"],
                      "commsgw_sbc_platform": ams["platform"]},
        "sbc-ams-2": {"commsgw_deployment": production(), "commsgw_site": "amsterdam"},
        "sbc-dub-1": {"commsgw_deployment": production(), "commsgw_site": "dublin"},
    }
    path = {"host": "hosts[%s]" % value, "site": "hosts[sbc-ams-1].commsgw_site",
            "platform": "hosts[sbc-ams-1].commsgw_sbc_platform"}[part]
    report = validate_inventory(hostvars)[0]
    if any(f.path == path for f in report["errors"]):
        return
    assert SAFE.match(value), "unsafe value accepted at %s: %r" % (path, value)
