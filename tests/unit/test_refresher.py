# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SRV refresher's decisions, with a fake resolver and a reload counter (no DNS, no Kamailio).

The input files are rendered by the real renderer from a real plan, so "unchanged record set ->
byte-identical file" is checked against what the push writes.
"""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils import refresher
from ansible_collections.commsgw.routing.plugins.module_utils.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.srv_lookup import SrvAnswer, SrvTarget
from ansible_collections.commsgw.routing.plugins.module_utils.validation import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio

SRV = "_sip._tls.pstn-region1.acg-lab.commsgw.test"
DEPLOYMENT = {
    "name": "lab", "type": "lab", "base_domain": "acg-lab.commsgw.test", "management_region": "West Europe",
    "allow_non_public_ranges": True, "allow_plain_transport": True,
    "acg_transport": "udp",
    "service_regions": [{"name": "region1", "azure_region": "westeurope",
                         "hostname": "pstn-region1.acg-lab.commsgw.test", "ip_ranges": ["127.0.10.0/28"]}],
    "sites": [{"name": "lab", "service_region": "region1"}],
}


def _answer(peers: t.Sequence[tuple[int, int, str, str]], ttl: int = 60) -> SrvAnswer:
    return SrvAnswer(SRV, ttl, tuple(SrvTarget(p, w, 5060, name, (addr,)) for p, w, name, addr in peers))


TWO = [(10, 60, "p1.acg-lab.commsgw.test", "127.0.10.1"), (10, 40, "p2.acg-lab.commsgw.test", "127.0.10.2")]


@pytest.fixture()
def spec(tmp_path: Path) -> dict[str, t.Any]:
    deployment, findings = validate_deployment(DEPLOYMENT, [Sbc("sbc1", "lab")])
    assert not findings.errors, findings.errors
    resolved = {SRV: {"name": SRV, "ttl": 60, "targets": [
        {"priority": p, "weight": w, "port": 5060, "target": n, "addresses": [a]} for p, w, n, a in TWO]}}
    plan = build_site_plan(deployment, deployment.sites[0], resolved)
    settings = {"acg_listen": {"address": "127.0.20.1"}, "core_listen": {"address": "127.0.30.1"},
                "core_next_hop": "127.0.31.1:5060", "config_dir": str(tmp_path), "run_dir": str(tmp_path / "run")}
    for name, content in render_kamailio(plan, settings, "5.6.3").items():
        (tmp_path / name).write_text(content)
    return refresher.load_spec(str(tmp_path / "commsgw-srv.json"))


class Reloads:
    def __init__(self, fail: bool = False) -> None:
        self.count = 0
        self.fail = fail

    def __call__(self) -> None:
        self.count += 1
        if self.fail:
            raise refresher.RpcError("no Kamailio")


def _resolver(answer: t.Union[SrvAnswer, Exception]) -> t.Callable[[str], SrvAnswer]:
    def resolve(name: str) -> SrvAnswer:
        assert name == SRV
        if isinstance(answer, Exception):
            raise answer
        return answer
    return resolve


def test_unchanged_record_set_keeps_the_rendered_file_and_does_not_reload(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    # Same peers, another TTL and another order: no real change.
    outcome = refresher.refresh(spec, _resolver(_answer(list(reversed(TWO)), ttl=30)), reloads, now=1000.0)
    assert outcome.resolved == [SRV] and not outcome.errors
    assert not outcome.written and reloads.count == 0
    assert Path(spec["dispatcher_list"]).read_text() == before


def test_changed_record_set_rewrites_and_reloads_once(spec: dict[str, t.Any]) -> None:
    reloads = Reloads()
    new = [(10, 60, "p1.acg-lab.commsgw.test", "127.0.10.1"), (10, 40, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    outcome = refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1000.0)
    text = Path(spec["dispatcher_list"]).read_text()
    assert outcome.written and outcome.reloaded and reloads.count == 1
    assert "sip:127.0.10.3:5060;transport=udp" in text and "127.0.10.2" not in text
    # Next run within the TTL: nothing is due, nothing resolved, no reload.
    outcome = refresher.refresh(spec, _resolver(RuntimeError("must not be asked")), reloads, now=1030.0)
    assert outcome.resolved == [] and reloads.count == 1 and 0 < outcome.next_due_s <= 30
    # After the TTL, the same answer again: no reload.
    outcome = refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1061.0)
    assert outcome.resolved == [SRV] and reloads.count == 1


def test_target_outside_the_28_is_refused_and_old_list_kept(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    hijacked = TWO + [(10, 10, "evil.example.test", "192.0.2.66")]
    outcome = refresher.refresh(spec, _resolver(_answer(hijacked)), reloads, now=1000.0)
    assert outcome.refused == [SRV] and any("192.0.2.66" in e for e in outcome.errors)
    assert reloads.count == 0 and Path(spec["dispatcher_list"]).read_text() == before


def test_dns_failure_is_logged_and_old_list_kept(spec: dict[str, t.Any], caplog: pytest.LogCaptureFixture) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    outcome = refresher.refresh(spec, _resolver(refresher.RefreshError("SRV %s: no answer within 3.0 s" % SRV)),
                                reloads, now=1000.0)
    assert outcome.failed == [SRV] and reloads.count == 0
    assert Path(spec["dispatcher_list"]).read_text() == before
    assert "no answer within" in caplog.text
    assert outcome.next_due_s == refresher.RETRY_AFTER_FAILURE_S


def test_failed_lookup_after_a_good_one_keeps_the_last_good_peers(spec: dict[str, t.Any]) -> None:
    reloads = Reloads()
    new = [(10, 50, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1000.0)
    after_change = Path(spec["dispatcher_list"]).read_text()
    outcome = refresher.refresh(spec, _resolver(refresher.RefreshError("SERVFAIL")), reloads, now=2000.0)
    assert outcome.failed == [SRV] and reloads.count == 1
    assert Path(spec["dispatcher_list"]).read_text() == after_change


def test_failed_reload_puts_the_old_file_back_and_retries(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    new = [(10, 50, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    outcome = refresher.refresh(spec, _resolver(_answer(new)), Reloads(fail=True), now=1000.0)
    assert not outcome.written and any("dispatcher.reload failed" in e for e in outcome.errors)
    assert Path(spec["dispatcher_list"]).read_text() == before
    reloads = Reloads()
    outcome = refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1000.0 + refresher.RETRY_AFTER_FAILURE_S)
    assert outcome.reloaded and reloads.count == 1


def test_new_priority_tier_needs_a_render_and_is_not_applied(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    tiered = TWO + [(20, 10, "p4.acg-lab.commsgw.test", "127.0.10.4")]
    outcome = refresher.refresh(spec, _resolver(_answer(tiered)), reloads, now=1000.0)
    assert any("tiers changed" in e for e in outcome.errors)
    assert reloads.count == 0 and Path(spec["dispatcher_list"]).read_text() == before


def test_spec_names_the_rendered_rpc_endpoints(spec: dict[str, t.Any]) -> None:
    rpc = refresher.rpc_for(spec)
    assert rpc.endpoints.socket and rpc.endpoints.socket.endswith("/run/kamailio_rpc.sock")
    assert json.loads(Path(spec["_path"]).read_text())["schema_version"] == refresher.SCHEMA_VERSION
