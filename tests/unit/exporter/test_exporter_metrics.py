# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probe reports as Prometheus metrics (exporter/metrics.py), checked by Prometheus' own ``promtool check
metrics``; hostile DNS names cannot add series; every family is documented in docs/monitoring.md."""

from __future__ import annotations

import calendar
import re
import subprocess
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.exporter import metrics, selfmetrics
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.runner import options_sent
from harness.tools import needs

from ansible_collections.commsgw.routing.tests.unit.exporter.exporter_fakes import MCP, R1, R2, Network

REPO = Path(__file__).resolve().parents[3]
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def exposition(report: t.Mapping[str, t.Any], vantage: str = "sbc_host") -> str:
    out = metrics.Exposition()
    out.add("probe_success", 1)
    metrics.report_metrics(out, report, vantage)
    return out.render()


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Parse the text format strictly: every line a comment or one well-formed sample."""
    found = []
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        match = SAMPLE.match(line)
        assert match, "not a sample line: %r" % line
        labels: dict[str, str] = {}
        rest = match.group(3) or ""
        while rest:
            label = LABEL.match(rest)
            assert label, "bad labels in %r" % line
            labels[label.group(1)] = label.group(2).replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
            rest = rest[label.end():]
        found.append((match.group(1), labels, float(match.group(4))))
    return found


def value(text: str, name: str, **labels: str) -> float:
    hits = [v for n, ls, v in samples(text) if n == name and all(ls.get(k) == x for k, x in labels.items())]
    assert len(hits) == 1, "%s%s: %d samples" % (name, labels, len(hits))
    return hits[0]


@needs("promtool")
def test_a_report_is_valid_prometheus_text() -> None:
    network = Network()
    network.dead.add(R1[2])
    text = exposition(network.run_probe())
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30,
                           check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert value(text, "commsgw_site_verdict", verdict="warn") == 1
    assert value(text, "commsgw_site_verdict", verdict="pass") == 0
    assert value(text, "commsgw_region_healthy_peers", region="region1", role="local") == 2
    assert value(text, "commsgw_region_peers", region="region1") == 3
    peer = {"region": "region1", "peer": "%s:5061" % R1[2]}
    assert value(text, "commsgw_peer_options_up", **peer) == 0
    assert value(text, "commsgw_peer_failure", **dict(peer, **{"class": "no_reply"})) == 1
    assert value(text, "commsgw_peer_status_code", **peer) == 0
    assert value(text, "commsgw_peer_rtt_seconds", peer="%s:5061" % R1[0]) == 0.005
    assert value(text, "commsgw_peer_failure", **{"peer": "%s:5061" % R1[0], "class": "none"}) == 1
    assert value(text, "commsgw_peer_cert_expiry_timestamp_seconds", peer="%s:5061" % R1[0]) == calendar.timegm((2031, 6, 1, 12, 0, 0))
    assert value(text, "commsgw_mcp_up", peer="%s:5061" % MCP) == 1
    assert value(text, "commsgw_mcp_reachable_targets", region="region1") == 1
    assert value(text, "commsgw_srv_targets", region="region2", kind="sip") == 3
    assert value(text, "commsgw_dns_lookup_seconds", region="region2", kind="sip") == 0.004
    # The SBC (fake platform) keeps the dead peer active: the probe's view and its own disagree.
    assert value(text, "commsgw_sbc_peer_state", **dict(peer, state="active")) == 1
    assert value(text, "commsgw_sbc_peer_state_mismatch", **peer) == 1
    assert value(text, "commsgw_sbc_peer_state_mismatch", peer="%s:5061" % R1[0]) == 0
    assert value(text, "commsgw_sbc_view_up") == 1
    # One OPTIONS per SIP peer reached; the MCP target is never sent one.
    assert options_sent(network.run_probe()) == 6


def test_hostile_target_names_cannot_add_series() -> None:
    """DNS decides SRV target names: quotes, backslashes and newlines in them stay inside one label value."""
    network = Network()
    evil = 'x"} 1\nprobe_success{site="forged"} 1\n# TYPE injected gauge\ninjected 1\n\\'
    network.names[R1[0]] = evil
    text = exposition(network.run_probe())
    names = {name for name, _labels, _value in samples(text)}
    assert "injected" not in names
    assert [labels for name, labels, _v in samples(text) if name == "probe_success"] == [{}]
    targets = {labels.get("target") for _n, labels, _v in samples(text) if labels.get("peer") == "%s:5061" % R1[0]}
    assert targets == {evil}


def test_long_label_values_are_clipped() -> None:
    network = Network()
    network.names[R2[0]] = "a" * 5000
    text = exposition(network.run_probe())
    assert max(len(line) for line in text.splitlines()) < 2 * metrics.MAX_LABEL_CHARS + 400


def test_sbc_states_absent_probing_and_unreadable() -> None:
    network = Network()
    network.sbc = {R2[0]: "absent", R2[1]: "probing", R2[2]: "weird-platform-state"}
    text = exposition(network.run_probe())
    assert value(text, "commsgw_sbc_peer_state", peer="%s:5061" % R2[0], state="absent") == 1
    assert value(text, "commsgw_sbc_peer_state", peer="%s:5061" % R2[1], state="probing") == 1
    # A state the neutral set does not know is "unknown", never a new label value.
    assert value(text, "commsgw_sbc_peer_state", peer="%s:5061" % R2[2], state="unknown") == 1
    assert value(text, "commsgw_sbc_drift_peers", kind="missing") == 1
    network.sbc = None
    text = exposition(network.run_probe())
    assert value(text, "commsgw_sbc_view_up") == 0
    assert {ls["state"] for n, ls, _v in samples(text) if n == "commsgw_sbc_peer_state"} == {"unknown"}


def test_out_of_range_peer() -> None:
    network = Network()
    network.outside.add(R2[1])
    text = exposition(network.run_probe())
    assert value(text, "commsgw_peer_in_range", peer="%s:5061" % R2[1]) == 0
    assert value(text, "commsgw_peer_failure", **{"peer": "%s:5061" % R2[1], "class": "out_of_range"}) == 1
    assert value(text, "commsgw_peer_in_range", peer="%s:5061" % R2[0]) == 1


def test_management_vantage_reports_the_devices_own_view_only() -> None:
    """An SBC behind a management API: no OPTIONS from here, so no probe-side peer figures and no verdict
    from peers that were never contacted; the SBC's own view decides."""
    network = Network()
    network.sbc = {R1[0]: "inactive"}
    report = network.run_probe(settings=probe.ProbeSettings(allowed_transports=(), check_provisioning_ttl=False))
    assert report["verdict"] == "fail"  # the probe itself: no peer reached
    text = exposition(report, vantage="management")
    names = {name for name, _labels, _value in samples(text)}
    assert not names & {"commsgw_peer_options_up", "commsgw_region_healthy_peers", "commsgw_mcp_up"}
    assert value(text, "commsgw_probe_info", vantage="management") == 1
    assert value(text, "commsgw_sbc_active_peers", region="region1") == 2
    assert value(text, "commsgw_site_verdict", verdict="fail") == 0
    assert options_sent(report) == 0


@pytest.mark.parametrize("families", [metrics.FAMILIES, selfmetrics.FAMILIES], ids=["probe", "exporter"])
def test_every_metric_family_is_documented(families: t.Mapping[str, t.Any]) -> None:
    doc = (REPO / "docs" / "monitoring.md").read_text()
    missing = [name for name in families if "`%s`" % name not in doc]
    assert not missing, "docs/monitoring.md does not describe %s" % ", ".join(missing)


def test_escape_and_number() -> None:
    assert metrics.escape('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    assert metrics.number(True) == "1" and metrics.number(3.0) == "3" and metrics.number(0.25) == "0.25"
    assert metrics.number(float("nan")) == "NaN" and metrics.number(float("-inf")) == "-Inf"
