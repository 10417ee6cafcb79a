# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe reports for the exporter's unit tests, made by the real ``run_probe`` over a fake network.

DNS answers and each peer's outcome are table lookups and the SBC's view is a registered fake
platform (as tests/unit/probe/test_probe_sbc_state.py does); the region, site and SBC verdicts are the
probe's own code. Site "s" of deployment "d": region1 local (10.0.1.1-3), region2 remote
(10.0.2.1-3), MCP record of region1 (10.0.9.1).
"""

from __future__ import annotations

import copy
import threading
import time
import typing as t
from unittest import mock

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe import settings as probe_settings
from ansible_collections.commsgw.routing.plugins.module_utils.exporter import config as cfg
from ansible_collections.commsgw.routing.tests.unit.probe.test_probe_sbc_state import PLAN as SBC_STATE_PLAN

R1 = ["10.0.1.1", "10.0.1.2", "10.0.1.3"]
R2 = ["10.0.2.1", "10.0.2.2", "10.0.2.3"]
MCP = "10.0.9.1"
NOT_AFTER = "Jun  1 12:00:00 2031 GMT"

# test_probe_sbc_state's site, its MCP record reaching only its own /28 (10.0.9.1 is in no trunk group's range).
PLAN: dict[str, t.Any] = copy.deepcopy(SBC_STATE_PLAN)
PLAN["mcp"]["records"][0]["ip_ranges"] = ["10.0.9.0/28"]


class Network:
    """What the fake network answers: peers in ``dead`` give no reply, ``names`` renames SRV targets
    (hostile names), ``outside`` lists addresses DNS gives outside the /28, ``sbc`` the SBC's states."""

    def __init__(self) -> None:
        self.dead: set[str] = set()
        self.names: dict[str, str] = {}
        self.outside: set[str] = set()
        self.reason = "OK"
        self.sbc: t.Optional[dict[str, t.Optional[str]]] = {}
        self.targets = {"_sip._tls.r1.test": list(R1), "_sip._tls.r2.test": list(R2), "_sip._tls.mcp1.test": [MCP]}

    def target(self, address: str) -> str:
        return self.names.get(address, "p-%s" % address)

    def resolve(self, record: t.Mapping[str, t.Any], ranges: t.Sequence[str], kind: str, transport: str,
                settings: probe.ProbeSettings, path: str) -> tuple[dict[str, t.Any], list[probe.PeerTarget]]:
        addresses = self.targets[record["srv_name"]]
        report = {"srv_name": record["srv_name"], "ok": True, "kind": None, "detail": "", "ttl": 60, "lookup_ms": 4.0,
                  "targets": [{"target": self.target(a), "addresses": [a]} for a in addresses],
                  "out_of_range": [], "findings": []}
        return report, [probe.PeerTarget(kind=kind, region=record["region"], srv_name=record["srv_name"],
                                         hostname=record["hostname"], verify_hostname=record["hostname"],
                                         target=self.target(a), address=a, port=5061, priority=10, weight=10,
                                         transport=transport, in_range=a not in self.outside) for a in addresses]

    def peer(self, target: probe.PeerTarget, settings: probe.ProbeSettings,
             contexts: t.Optional[probe.TlsContexts] = None) -> probe.PeerResult:
        result = probe_settings.result_for(target)
        if not target.in_range:
            result.failure, result.detail = probe.OUT_OF_RANGE, "outside"
        elif target.transport not in settings.allowed_transports:
            result.failure, result.detail = probe.TRANSPORT_NOT_ALLOWED, "not allowed"
        elif target.address in self.dead:
            result.failure, result.detail = probe.NO_REPLY, "no reply to OPTIONS within 3.0 s"
        else:
            result.healthy = True
            result.tls = {"not_after": NOT_AFTER, "days_to_expiry": 2000, "san": [target.hostname]}
            if target.kind == "sip":
                result.code, result.reason, result.rtt_ms = 200, self.reason, 5.0
        return result

    def view(self, options: t.Mapping[str, t.Any]) -> probe.SbcView:
        if self.sbc is None:
            return probe.SbcView(platform="fake", source="", errors=["cannot read"])
        runtime = [probe.SbcDestination(group="1000" if a == MCP else "1", uri="sip:%s:5061;transport=tls" % a, host=a,
                                        port=5061, transport="tls", state=self.sbc.get(a, "active"))
                   for a in R1 + R2 + [MCP] if self.sbc.get(a, "active") != "absent"]
        return probe.SbcView(platform="fake", source="fake rpc", runtime=runtime)

    def run_probe(self, plan: t.Mapping[str, t.Any] = PLAN, settings: t.Optional[probe.ProbeSettings] = None,
                  **kwargs: t.Any) -> dict[str, t.Any]:
        settings = settings or probe.ProbeSettings(check_provisioning_ttl=False)
        kwargs.setdefault("sbc_platform", "fake")
        kwargs.setdefault("sbc_settle_s", 0)
        kwargs.pop("platform_options", None)
        with mock.patch.object(probe, "resolve_record", self.resolve), \
                mock.patch.object(probe, "probe_peer", self.peer), \
                mock.patch.object(probe, "sbc_view_reader", lambda name: self.view if name == "fake" else None):
            return probe.run_probe(plan, settings, **kwargs)


class CountingProbe:
    """A probe_fn for the runner: counts runs, can take ``delay_s`` (on a real clock) and can fail."""

    def __init__(self, network: t.Optional[Network] = None, delay_s: float = 0.0) -> None:
        self.network = network or Network()
        self.delay_s = delay_s
        self.calls = 0
        self.arguments: list[dict[str, t.Any]] = []
        self.fail: t.Optional[Exception] = None
        self.lock = threading.Lock()

    def __call__(self, **kwargs: t.Any) -> dict[str, t.Any]:
        with self.lock:
            self.calls += 1
            self.arguments.append(kwargs)
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.fail is not None:
            raise self.fail
        return self.network.run_probe(host=kwargs.get("host"), settings=kwargs.get("settings"))


def config_dict(**overrides: t.Any) -> dict[str, t.Any]:
    raw: dict[str, t.Any] = {
        "schema_version": 1, "listen": {"address": "127.0.0.1", "port": 0}, "min_interval_s": 5,
        "sites": {"s": {"plan": copy.deepcopy(PLAN), "host": "sbc-1", "platform": "fake"}},
        "modules": {"default": {"timeout_s": 3.0}, "quick": {"timeout_s": 1.0, "transports": ["tls"]}},
    }
    raw.update(overrides)
    return raw


def exporter_config(**overrides: t.Any) -> cfg.ExporterConfig:
    return cfg.parse_config(config_dict(**overrides))
