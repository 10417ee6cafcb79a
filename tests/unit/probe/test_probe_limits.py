# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's bounds (issue 13 items 3 and 4): out-of-range targets are never contacted, targets per
record and stray replies are capped, reflected text is clipped, and the SBC's certificate host check
(first DNS subjectAltName or CN, docs/kamailio-tls.md) is judged from the whole certificate.

Sockets here are real, on 127.0.190.x (the probe's unit-test block, port 0).
"""

from __future__ import annotations

import socket
import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as lim
from ansible_collections.commsgw.routing.plugins.module_utils.probe import tls as probe_tls
from ansible_collections.commsgw.routing.plugins.module_utils.probe import verdicts as probe_verdicts
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import parse_sbc_settings

ADDRESS = "127.0.190.3"
HOST = "pstn-region1.acg.example.test"


def test_clip_marks_what_it_cut() -> None:
    assert lim.clip("short") == "short" and lim.clip(None) is None
    clipped = lim.clip("x" * 1000)
    assert clipped == "x" * lim.MAX_REFLECTED_CHARS + "...[%d more chars]" % (1000 - lim.MAX_REFLECTED_CHARS)
    assert lim.clip_list(["a"] * 30) == ["a"] * lim.MAX_SAN_KEPT + ["...[10 more]"]


def test_target_outside_the_ranges_is_never_contacted() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((ADDRESS, 0))
    listener.listen(4)
    listener.setblocking(False)
    try:
        target = probe.PeerTarget(kind="sip", region="region1", srv_name="_sip._tls." + HOST, hostname=HOST,
                                  verify_hostname=HOST, target="evil." + HOST, address=ADDRESS,
                                  port=listener.getsockname()[1], priority=10, weight=10, transport="tcp",
                                  in_range=False, ranges=("198.51.100.0/28",))
        result = probe.probe_peer(target, probe.ProbeSettings(timeout_s=1.0, allowed_transports=("tcp",)))
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection was ever made
    finally:
        listener.close()
    assert not result.healthy and result.failure == probe.OUT_OF_RANGE
    assert ADDRESS in result.detail and "198.51.100.0/28" in result.detail and "not contacted" in result.detail
    probe_verdicts.peer_verdict(result, probe.Thresholds())
    assert result.verdict == "fail"


def test_targets_per_record_are_capped() -> None:
    kept, note = lim.cap_targets(list(range(40)))
    assert kept == list(range(lim.MAX_TARGETS_PER_RECORD))
    assert note is not None and "40 targets, only the first %d probed" % lim.MAX_TARGETS_PER_RECORD in note
    assert lim.cap_targets([1, 2]) == ([1, 2], None)


@pytest.mark.parametrize("san, cn, expect", [
    ([HOST], HOST, None),
    ([HOST, "other.example"], "other.example", None),
    (["*.acg.example.test", "x.example"], "x", None),
    ([], HOST, None),  # no DNS SANs: the CN is used by both the SBC and RFC 6125
    (["other.example", HOST], "other.example", "would refuse this peer"),
    (["other.example", HOST], HOST, "only through the subject CN"),
    (["other.example"], HOST, "only the subject CN"),
    (["other.example"], "other.example", None),  # a plain mismatch: the handshake already refuses it
])
def test_sbc_host_check(san: list[str], cn: str, expect: t.Optional[str]) -> None:
    why = probe_tls.sbc_host_check(san, cn, HOST)
    if expect is None:
        assert why is None
    else:
        assert why is not None and expect in why and "first DNS subjectAltName" in why, why


def test_verify_hostname_false_warns_naming_the_field() -> None:
    raw = {"acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
           "core_next_hop": "10.0.0.20:5060",
           "tls": {"certificate": "/etc/ssl/sbc.pem", "private_key": "/etc/ssl/sbc.key",
                   "ca_bundle": "/etc/ssl/acg.pem", "verify_hostname": False}}
    findings = Findings()
    parse_sbc_settings(raw, "sbc1", "tls", findings)
    assert not findings.errors, [f.render() for f in findings.errors]
    warnings = [f for f in findings.warnings if f.path == "hosts[sbc1].commsgw_sbc.tls.verify_hostname"]
    assert len(warnings) == 1 and "R-24" in warnings[0].render(), [f.render() for f in findings.items]
    quiet = Findings()
    parse_sbc_settings(dict(raw, tls=dict(raw["tls"], verify_hostname=True)), "sbc1", "tls", quiet)
    assert not [f for f in quiet.warnings if "verify_hostname" in f.path], [f.render() for f in quiet.warnings]
