# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of module_utils/srv: RFC 2782 ordering, the /28 audit and DNS error classification.

The DNS behaviour itself is tested against a real server in tests/integration/test_srv_dns.py; here a
small fake resolver only raises dnspython's own exceptions to pin down the classification.
"""

from __future__ import annotations

import collections
import random
import typing as t

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.resolver
import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.srv import deployment as srv
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import ERROR
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment

DRAWS = 10_000
TOLERANCE = 0.025  # +-2.5 percentage points; the binomial sd at p=0.3, n=10,000 is 0.46 points


def target(name: str, priority: int, weight: int, addresses: tuple[str, ...] = ("20.61.48.17",)) -> srv.SrvTarget:
    return srv.SrvTarget(priority=priority, weight=weight, port=5061, target=name, addresses=addresses)


def first_pick_shares(targets: list[srv.SrvTarget], seed: int = 2782) -> dict[str, float]:
    rng = random.Random(seed)
    counts = collections.Counter(srv.rfc2782_order(targets, rng)[0].target for _draw in range(DRAWS))
    return {name: counts[name] / DRAWS for name in (tgt.target for tgt in targets)}


# -- rfc2782_order -----------------------------------------------------------------------------------
def test_first_pick_follows_weights_60_30_10() -> None:
    targets = [target("a", 10, 60), target("b", 10, 30), target("c", 10, 10)]
    shares = first_pick_shares(targets)
    # The RFC draws from [0, sum] inclusive, so exact shares are 61/101, 30/101, 10/101 at most.
    assert shares["a"] == pytest.approx(0.60, abs=TOLERANCE)
    assert shares["b"] == pytest.approx(0.30, abs=TOLERANCE)
    assert shares["c"] == pytest.approx(0.10, abs=TOLERANCE)


def test_input_order_does_not_bias_the_choice() -> None:
    forward = first_pick_shares([target("a", 10, 60), target("b", 10, 30), target("c", 10, 10)], seed=1)
    backward = first_pick_shares([target("c", 10, 10), target("b", 10, 30), target("a", 10, 60)], seed=2)
    for name in "abc":
        assert forward[name] == pytest.approx(backward[name], abs=TOLERANCE)


def test_second_pick_is_weighted_among_the_rest() -> None:
    # After "a" went first, "b" (30) and "c" (10) compete for second place: 3 to 1.
    targets = [target("a", 10, 60), target("b", 10, 30), target("c", 10, 10)]
    rng = random.Random(7)
    seconds = collections.Counter()
    for _draw in range(DRAWS * 2):
        order = srv.rfc2782_order(targets, rng)
        if order[0].target == "a":
            seconds[order[1].target] += 1
    total = sum(seconds.values())
    assert total > DRAWS  # about 60 % of 20,000 draws
    assert seconds["b"] / total == pytest.approx(0.75, abs=TOLERANCE)


def test_priority_is_strictly_respected() -> None:
    # The heavy target of priority 20 must never come before any target of priority 10.
    targets = [target("heavy-backup", 20, 1000), target("p10-a", 10, 1), target("p10-b", 10, 0),
               target("p5", 5, 0), target("p20-b", 20, 0)]
    rng = random.Random(11)
    for _draw in range(2000):
        order = srv.rfc2782_order(targets, rng)
        assert sorted(order, key=id) == sorted(targets, key=id)  # a permutation: nothing lost or doubled
        priorities = [tgt.priority for tgt in order]
        assert priorities == sorted(priorities)
        assert order[0].target == "p5"  # alone in its priority, weight 0 or not


def test_weight_zero_is_rarely_first_next_to_weighted_targets() -> None:
    targets = [target("zero", 10, 0), target("x", 10, 50), target("y", 10, 50)]
    share = first_pick_shares(targets)["zero"]
    # Chosen only when the draw in [0, 100] is 0: expected 1/101, about 1 %.
    assert 0 < share < 0.025


def test_weight_zero_targets_share_evenly_when_all_are_zero() -> None:
    shares = first_pick_shares([target("a", 10, 0), target("b", 10, 0), target("c", 10, 0)])
    for name in "abc":
        assert shares[name] == pytest.approx(1 / 3, abs=TOLERANCE)


def test_order_accepts_answer_dicts_and_is_reproducible() -> None:
    answer = srv.SrvAnswer("_sip._tls.r1.example.test", 60,
                           (target("a", 10, 60), target("b", 10, 40), target("c", 20, 0))).as_dict()
    first = srv.rfc2782_order(answer["targets"], random.Random(3))
    second = srv.rfc2782_order(answer["targets"], random.Random(3))
    assert first == second
    assert [tgt["target"] for tgt in first][-1] == "c"


def test_empty_list_gives_empty_order() -> None:
    assert srv.rfc2782_order([], random.Random(0)) == []


# -- SrvAnswer shape ----------------------------------------------------------------------------------
def test_answer_dict_shape_is_what_the_plan_reads() -> None:
    answer = srv.SrvAnswer("_sip._tls.pstn-region1.acg-lab.commsgw.test", 30,
                           (target("pb.example.test", 10, 40, ("127.0.10.2",)),
                            target("pa.example.test", 10, 60, ("127.0.10.1",))))
    data = answer.as_dict()
    assert data == {"name": "_sip._tls.pstn-region1.acg-lab.commsgw.test", "ttl": 30, "targets": [
        {"priority": 10, "weight": 40, "port": 5061, "target": "pb.example.test", "addresses": ["127.0.10.2"]},
        {"priority": 10, "weight": 60, "port": 5061, "target": "pa.example.test", "addresses": ["127.0.10.1"]}]}
    deployment, findings = validate_deployment(LAB)
    plan = build_site_plan(deployment, deployment.sites[0], {data["name"]: data})
    group = plan["trunk_groups"][0]
    assert group["srv_ttl"] == 30
    assert [peer["target"] for peer in group["peers"]] == ["pa.example.test", "pb.example.test"]


# -- audit_srv --------------------------------------------------------------------------------------
def test_audit_accepts_every_address_of_the_28() -> None:
    answer = srv.SrvAnswer("_sip._tls.r1.example.test", 60,
                           (target("a", 10, 50, ("20.61.48.16", "20.61.48.31")), target("b", 10, 50, ("20.82.160.40",))))
    assert srv.audit_srv(answer, ["20.61.48.16/28", "20.82.160.32/28"], "service_regions[0].hostname") == []


def test_audit_names_record_target_and_address_outside_the_28() -> None:
    answer = srv.SrvAnswer("_sip._tls.r1.example.test", 60,
                           (target("ok.example.test", 10, 50, ("20.61.48.20",)),
                            target("rogue.example.test", 10, 50, ("20.61.48.32", "20.61.48.21"))))
    findings = srv.audit_srv(answer, ["20.61.48.16/28"], "service_regions[1].hostname")
    assert len(findings) == 1
    finding = findings[0]
    assert (finding.severity, finding.path, finding.rule, finding.value) == (
        ERROR, "service_regions[1].hostname", "R-07", "20.61.48.32")
    for part in ("_sip._tls.r1.example.test", "rogue.example.test", "20.61.48.32"):
        assert part in finding.render()
    assert "20.61.48.16/28" in finding.expected


def test_audit_reports_a_target_without_address() -> None:
    answer = srv.SrvAnswer("_sip._tls.r1.example.test", 60,
                           (target("ok.example.test", 10, 50), target("ghost.example.test", 20, 50, ())))
    findings = srv.audit_srv(answer.as_dict(), ["20.61.48.16/28"], "service_regions[0].hostname")
    assert [(f.severity, f.value) for f in findings] == [(ERROR, "ghost.example.test")]
    assert "no IPv4 address" in findings[0].message


# -- error classification ----------------------------------------------------------------------------
class FakeResolver:
    """Raises what dnspython's Resolver.resolve raises for one server outcome."""

    lifetime = 1.5

    def __init__(self, outcome: t.Callable[[str], BaseException]) -> None:
        self.outcome = outcome

    def resolve(self, name: str, rdtype: str, search: bool = False) -> t.NoReturn:
        raise self.outcome(name)


def _failed_servers(rcode: int) -> t.Callable[[str], BaseException]:
    def make(name: str) -> BaseException:
        request = dns.message.make_query(name, "SRV")
        response = dns.message.make_response(request)
        response.set_rcode(rcode)
        return dns.resolver.NoNameservers(request=request, errors=[("192.0.2.53", False, 53, None, response)])
    return make


@pytest.mark.parametrize("outcome, kind", [
    (lambda name: dns.resolver.NXDOMAIN(qnames=[dns.name.from_text(name)]), srv.NXDOMAIN),
    (lambda name: dns.resolver.NoAnswer(), srv.NO_ANSWER),
    (lambda name: dns.resolver.LifetimeTimeout(timeout=1.5, errors=[]), srv.TIMEOUT),
    (_failed_servers(dns.rcode.SERVFAIL), srv.SERVFAIL),
    (_failed_servers(dns.rcode.REFUSED), srv.REFUSED),
])
def test_each_failure_has_its_own_kind(outcome: t.Callable[[str], BaseException], kind: str) -> None:
    with pytest.raises(srv.DnsLookupError) as caught:
        srv.lookup(FakeResolver(outcome), "_sip._tls.r1.example.test", "SRV", "192.0.2.53")
    error = caught.value
    assert error.kind == kind
    assert "_sip._tls.r1.example.test" in str(error) and "192.0.2.53" in str(error)


def test_kinds_are_distinct() -> None:
    assert len(set(srv.ERROR_KINDS)) == len(srv.ERROR_KINDS)


def test_settings_build_a_resolver_with_only_the_given_nameservers() -> None:
    settings = srv.ResolverSettings(nameservers=["127.0.53.200"], port=5353, timeout_s=0.7)
    resolver = settings.resolver()
    assert [str(ns) for ns in resolver.nameservers] == ["127.0.53.200"]
    assert resolver.port == 5353
    assert resolver.lifetime == pytest.approx(0.7) and resolver.timeout == pytest.approx(0.7)
    assert settings.describe() == "127.0.53.200 port 5353"


LAB = {
    "name": "lab", "type": "lab", "base_domain": "acg-lab.commsgw.test", "management_region": "West Europe",
    "allow_non_public_ranges": True,
    "service_regions": [{"name": "region1", "azure_region": "westeurope",
                         "hostname": "pstn-region1.acg-lab.commsgw.test", "ip_ranges": ["127.0.10.0/28"]}],
    "sites": [{"name": "lab", "service_region": "region1"}],
}
