# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 13 items 1 and 2 without DNS: the record checks, the dispatcher row guard, the refresher's own
check, routing_plan's check of answers passed in, and the ``srv_limits`` inventory field.

The same records on a real Knot and a real Kamailio: tests/integration/test_hostile_dns.py.
"""

from __future__ import annotations

import copy
import typing as t
from pathlib import Path

import dns.name
import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import refresher
from ansible_collections.commsgw.routing.plugins.module_utils.srv import lookup as sl
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import KamailioViewError, dispatcher_sets
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import srv_name
from ansible_collections.commsgw.routing.plugins.modules.routing_plan import outcome as routing_plan
from ansible_collections.commsgw.routing.tests.unit.inventory_files import INVENTORIES, load_hostvars
from ansible_collections.commsgw.routing.tests.unit.plan.test_plan import answer, model_of
from ansible_collections.commsgw.routing.tests.unit.kamailio.test_refresher import (  # noqa: F401  # pylint: disable=unused-import
    SRV, Reloads, _answer, _resolver, spec)

TLS = sl.SrvLimits(ports=(5061,))


def _check(*rows: tuple[int, int, int, t.Any], limits: sl.SrvLimits = TLS) -> list[tuple[int, int, int, str]]:
    return sl.check_record("_sip._tls.r1.test", "127.0.53.1", list(rows), limits)


def _kind(*rows: tuple[int, int, int, t.Any], limits: sl.SrvLimits = TLS) -> sl.DnsLookupError:
    with pytest.raises(sl.DnsLookupError) as caught:
        _check(*rows, limits=limits)
    return caught.value


@pytest.mark.parametrize("zone_name, shown", [
    (r"x\;obproxy=sip:evil.acg.test.", "'x;obproxy=sip:evil.acg.test'"),
    (r"q\"uote.acg.test.", "'q\"uote.acg.test'"),
    (r"sp\032ace.acg.test.", "'sp<U+0020>ace.acg.test'"),
    (r"\208\176cg.acg.test.", "'<U+0430>cg.acg.test'"),
    (r"nl\010x.acg.test.", "'nl<U+000A>x.acg.test'"),
    # A newline at the end of a label once passed ('$' matches before a trailing newline).
    (r"sbc1.acg.test\010.", "'sbc1.acg.test<U+000A>'"),
    (r"sbc1\010.acg.test.", "'sbc1<U+000A>.acg.test'"),
    (r"back\\slash.acg.test.", "'back<U+005C>slash.acg.test'"),
    ("_sip.acg.test.", "'_sip.acg.test'"),
    ("-peer.acg.test.", "'-peer.acg.test'"),
    ("peer-.acg.test.", "'peer-.acg.test'"),
])
def test_a_target_that_is_not_a_host_name_is_refused_and_shown_safely(zone_name: str, shown: str) -> None:
    error = _kind((10, 50, 5061, dns.name.from_text(zone_name)))
    assert error.kind == sl.BAD_TARGET_NAME
    assert "target %s is not an RFC 1123 host name" % shown in str(error)
    assert str(error).isprintable() and "\\" not in str(error)


def test_a_bad_name_among_good_ones_refuses_the_whole_record() -> None:
    error = _kind((10, 50, 5061, dns.name.from_text("sbc1.acg.test.")),
                  (10, 50, 5061, dns.name.from_text(r"x\;obproxy=sip:evil.acg.test.")))
    assert error.kind == sl.BAD_TARGET_NAME


def test_good_targets_pass_normalised() -> None:
    assert _check((10, 50, 5061, dns.name.from_text("SBC1.Acg.Test.")), (20, 0, 5061, "sbc-2.acg.test")) == [
        (10, 50, 5061, "sbc1.acg.test"), (20, 0, 5061, "sbc-2.acg.test")]


def test_port_zero_and_unexpected_ports_have_their_own_kinds() -> None:
    zero = _kind((10, 50, 0, "sbc1.acg.test"))
    assert zero.kind == sl.PORT_ZERO and "port 0" in str(zero)
    other = _kind((10, 50, 5061, "sbc1.acg.test"), (10, 50, 5070, "sbc2.acg.test"))
    assert other.kind == sl.UNEXPECTED_PORT
    assert "sbc2.acg.test is on port 5070; expected 5061 (srv_limits.ports)" in str(other)
    # No port list (SrvLimits() alone): any port but 0.
    assert _check((10, 50, 5070, "sbc1.acg.test"), limits=sl.SrvLimits())[0][2] == 5070
    assert _kind((10, 50, 0, "sbc1.acg.test"), limits=sl.SrvLimits()).kind == sl.PORT_ZERO


def test_too_many_targets() -> None:
    rows = [(10, 1, 5061, "s%d.acg.test" % n) for n in range(17)]
    error = _kind(*rows)
    assert error.kind == sl.TOO_MANY_TARGETS and "17 targets, more than the 16 allowed" in str(error)
    assert len(_check(*rows, limits=sl.SrvLimits(max_targets=17, ports=(5061,)))) == 17


def test_dot_target_alone_or_among_others_is_no_service() -> None:
    alone = _kind((0, 0, 0, dns.name.root))
    assert alone.kind == sl.NO_SERVICE and "only target is '.'" in str(alone)
    mixed = _kind((10, 50, 5061, "sbc1.acg.test"), (0, 0, 0, dns.name.root))
    assert mixed.kind == sl.NO_SERVICE and "next to 1 other(s)" in str(mixed)


def test_limits_default_per_transport_and_inventory_overrides() -> None:
    assert sl.limits_for("tls") == sl.SrvLimits(16, (5061,))
    assert sl.limits_for("udp") == sl.limits_for("tcp") == sl.SrvLimits(16, (5060,))
    assert sl.limits_for("tls", {"ports": [5062, 5061], "max_targets": 4}) == sl.SrvLimits(4, (5061, 5062))
    assert sl.limits_for("tls", None) == sl.limits_for("tls", {})


def test_the_record_kinds_are_distinct_error_kinds() -> None:
    assert len(set(sl.RECORD_KINDS)) == len(sl.RECORD_KINDS) and set(sl.RECORD_KINDS) <= set(sl.ERROR_KINDS)
    assert len(set(sl.ERROR_KINDS)) == len(sl.ERROR_KINDS)


# -- dispatcher.list rows: a name that is not a host name never goes into an attribute string

def _group(target: str, hostname: str = "pstn-region1.acg.test") -> dict[str, t.Any]:
    return {"order": 1, "role": "local", "region": "region1", "hostname": hostname, "srv_name": "_sip._tls." + hostname,
            "ip_ranges": ["20.61.48.16/28"],
            "peers": [{"priority": 10, "weight": 50, "port": 5061, "target": target, "addresses": ["20.61.48.17"]}]}


@pytest.mark.parametrize("transport", ["tls", "udp"])
def test_dispatcher_rows_refuse_a_target_name_that_would_add_attributes(transport: str) -> None:
    with pytest.raises(KamailioViewError, match=r"target 'x;obproxy=sip:evil.acg.test' is not an RFC 1123 host"):
        dispatcher_sets([_group("x;obproxy=sip:evil.acg.test")], "%s:10.0.0.1:5061" % transport, transport)
    with pytest.raises(KamailioViewError, match=r"target 'sbc1.acg.test\\n' is not an RFC 1123 host"):
        dispatcher_sets([_group("sbc1.acg.test\n")], "%s:10.0.0.1:5061" % transport, transport)
    with pytest.raises(KamailioViewError, match=r"target 'SBC1.acg.test' is not an RFC 1123 host"):
        dispatcher_sets([_group("SBC1.acg.test")], "%s:10.0.0.1:5061" % transport, transport)
    sets = dispatcher_sets([_group("sbc1.acg.test")], "%s:10.0.0.1:5061" % transport, transport)
    assert sets[0]["destinations"][0]["attrs"].endswith(";target=sbc1.acg.test")


def test_dispatcher_rows_refuse_a_tls_name_that_would_add_attributes() -> None:
    group = _group("sbc1.acg.test")
    group["peers"][0]["hostname"] = "pstn.acg.test;obproxy=sip:evil"
    with pytest.raises(KamailioViewError, match="TLS name 'pstn.acg.test;obproxy=sip:evil'"):
        dispatcher_sets([group], "tls:10.0.0.1:5061", "tls")


# -- the refresher checks whatever its resolver hands it, and keeps the file

@pytest.mark.parametrize("target, port, kind", [
    ("x;obproxy=sip:evil.acg-lab.commsgw.test", 5060, sl.BAD_TARGET_NAME),
    ("p1.acg-lab.commsgw.test", 0, sl.PORT_ZERO),
    ("p1.acg-lab.commsgw.test", 5070, sl.UNEXPECTED_PORT),
])
def test_refresher_refuses_a_hostile_answer_and_keeps_the_file(spec: dict[str, t.Any], target: str, port: int,
                                                               kind: str) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    hostile = sl.SrvAnswer(SRV, 60, (sl.SrvTarget(10, 50, port, target, ("127.0.10.1",)),))
    outcome = refresher.refresh(spec, _resolver(hostile), reloads, now=1000.0)
    assert outcome.refused == [SRV] and outcome.failed == [] and not outcome.written and reloads.count == 0
    assert any("[%s]; refused, previous peers kept" % kind in e for e in outcome.errors), outcome.errors
    assert Path(spec["dispatcher_list"]).read_text() == before


def test_refresher_refuses_too_many_targets_per_the_spec(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    many = [(10, 1, "p%d.acg-lab.commsgw.test" % n, "127.0.10.%d" % (1 + n % 14)) for n in range(17)]
    outcome = refresher.refresh(spec, _resolver(_answer(many)), Reloads(), now=1000.0)
    assert outcome.refused == [SRV] and "[too_many_targets]" in outcome.errors[0]
    assert Path(spec["dispatcher_list"]).read_text() == before
    # The spec carries the plan's bounds: more targets allowed there, the same answer is written.
    outcome = refresher.refresh(dict(spec, srv_limits={"max_targets": 17, "ports": [5060]}),
                                _resolver(_answer(many)), Reloads(), now=1000.0)
    assert outcome.refused == [] and outcome.written


def test_refresher_spec_with_a_broken_srv_limits_is_refused(spec: dict[str, t.Any], tmp_path: Path) -> None:
    import json
    raw = json.loads(Path(spec["_path"]).read_text())
    raw["srv_limits"] = {"ports": "5061"}
    Path(spec["_path"]).write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="srv_limits"):
        refresher.load_spec(spec["_path"])


def test_rendered_spec_carries_the_plans_srv_limits(spec: dict[str, t.Any]) -> None:
    assert spec["srv_limits"] == {"max_targets": 16, "ports": [5060]}  # the lab is plain UDP


# -- routing_plan: answers passed in are held to the same checks

def _hosts(**srv_limits: t.Any) -> dict[str, dict[str, t.Any]]:
    hosts = load_hostvars(INVENTORIES / "production")
    hosts = copy.deepcopy(hosts)
    if srv_limits:
        for variables in hosts.values():
            variables["commsgw_deployment"]["srv_limits"] = srv_limits
    return hosts


def test_routing_plan_refuses_hostile_answers_passed_in() -> None:
    deployment = model_of(_hosts())
    name = srv_name(deployment.service_regions[0].hostname)
    hostile = answer(name, 60, (10, 50, 5061, "x;obproxy=sip:evil.example", ["20.61.48.17"]))
    failed, result = routing_plan({"hosts": _hosts(), "require_sbc_settings": False, "resolved": {name: hostile}})
    assert failed and "plans" not in result
    lines = result["problems"].splitlines()
    assert len(lines) == 1
    assert "resolved[%s]" % name in lines[0] and "[bad_target_name]" in lines[0]
    good = answer(name, 60, (10, 50, 5061, "sbc1.example", ["20.61.48.17"]))
    failed, result = routing_plan({"hosts": _hosts(), "require_sbc_settings": False, "resolved": {name: good}})
    assert not failed and result["plans"]


def test_srv_limits_inventory_field_reaches_the_plan_and_is_checked() -> None:
    deployment = model_of(_hosts(max_targets=4, ports=[5061, 5062]))
    assert deployment.srv_limits == {"max_targets": 4, "ports": [5061, 5062]}
    failed, result = routing_plan({"hosts": _hosts(max_targets=4, ports=[5061, 5062]),
                                   "require_sbc_settings": False, "resolved": {}})
    assert not failed
    assert {p["srv_limits"]["max_targets"] for p in result["plans"].values()} == {4}
    assert next(iter(result["plans"].values()))["srv_limits"]["ports"] == [5061, 5062]
    failed, result = routing_plan({"hosts": _hosts(max_targets=0, ports=[0, "5061", True]),
                                   "require_sbc_settings": False, "resolved": {}})
    assert failed
    text = result["problems"]
    assert "srv_limits.max_targets" in text and "an integer from 1 to 256" in text
    for index in range(3):
        assert "srv_limits.ports[%d]" % index in text
    failed, result = routing_plan({"hosts": _hosts(retries=3), "require_sbc_settings": False, "resolved": {}})
    assert failed and "srv_limits.retries" in result["problems"]


def test_probe_dns_step_reports_a_plan_with_broken_srv_limits_without_crashing() -> None:
    from ansible_collections.commsgw.routing.plugins.module_utils.probe import dns as probe_dns
    from ansible_collections.commsgw.routing.plugins.module_utils.probe import settings as probe_settings
    record = {"hostname": "pstn-region1.acg.test", "srv_name": "_sip._tls.pstn-region1.acg.test", "region": "region1",
              "srv_limits": {"ports": "5061"}}
    report, targets = probe_dns.resolve_record(
        record, ["20.61.48.16/28"], "sip", "tls", probe_settings.ProbeSettings(), "trunk_groups[region1]")
    assert report["kind"] == "bad_srv_limits" and "srv_limits.ports" in report["detail"] and targets == []
