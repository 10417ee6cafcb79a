# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's SBC view against a real Kamailio: drift between its peer list and DNS, peer states.

K1's lab (harness.kamailio.AcgLab, block 150: region 1 peers 127.0.160.x, region 2 127.0.161.x,
SBC 127.0.170.1/127.0.180.1) resolves the SRV records from a real Knot server, renders the
configuration with render_kamailio and runs the machine's Kamailio; SIPp plays the ACG peers over
UDP (the lab transport; TLS peers are covered by test_probe_live.py). The probe reads Kamailio's
dispatcher.list file and its dispatcher.list RPC, exactly what it does on an SBC host.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import summary_lines
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings
from harness.tools import needs
from harness.kamailio import AcgLab, Topology, rendered_path
from harness.sipp import SippPeer

pytestmark = [
    pytest.mark.integration,
    needs("kamailio", "sipp", "knotd", "unshare"),
]

TOPO = Topology(block=150)
R1 = [TOPO.region1(1), TOPO.region1(2), TOPO.region1(3)]
R2 = [TOPO.region2(1), TOPO.region2(2)]
NEW = TOPO.region1(4)  # a peer DNS starts listing after Kamailio loaded its list


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[AcgLab]:
    lab = AcgLab(tmp_path_factory.mktemp("probe-kamailio-lab"), TOPO)
    try:
        lab.start()
        yield lab
    finally:
        lab.stop()


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[dict[str, SippPeer]]:
    workdir = tmp_path_factory.mktemp("probe-kamailio-peers")
    # R1[2] is silent: Kamailio takes it out and the probe sees no reply: states agree.
    started = {address: SippPeer("peer-%s" % address, workdir, address, code=200, answer_options=address != R1[2])
               for address in R1 + R2 + [NEW]}
    try:
        for peer in started.values():
            peer.start()
        yield started
    finally:
        for peer in started.values():
            peer.stop(kill=True)


def lab_options(lab: AcgLab) -> dict[str, t.Any]:
    """The SBC options of the lab. Its Kamailio runs as root (harness.kamailio): its socket lets root in only,
    so the view is read as root (run_as_user) and root's replies are the ones that count."""
    return {"config_dir": str(lab.cfg_dir), "run_dir": str(lab.run_dir), "run_as_user": "root"}


def run(lab: AcgLab, **platform_options: t.Any) -> dict[str, t.Any]:
    settings = probe.ProbeSettings(
        timeout_s=1.5, allowed_transports=("udp",), check_provisioning_ttl=False,
        resolver=ResolverSettings(nameservers=[lab.dns.address], port=lab.dns.port))
    options = lab_options(lab)
    options.update(platform_options)
    return probe.run_probe(lab.plan, settings, host="sbc-ams-1", sbc_platform="kamailio", platform_options=options)


def test_in_sync_then_drift_then_stale(lab: AcgLab, peers: dict[str, SippPeer]) -> None:
    lab.reset_peers()
    assert lab.wait_peer_state(R1[2], False, 8.0) is not None, "Kamailio never took the silent peer out"
    report = run(lab)
    sbc = report["sbc_view"]
    assert sbc["errors"] == [] and "jsonrpc" in sbc["source"] and "file" in sbc["source"]
    assert {d["address"] for d in sbc["destinations"]} == set(R1 + R2)
    assert sbc["missing"] == sbc["extra"] == sbc["stale"] == [], sbc
    assert sbc["state_mismatch"] == [], sbc
    states = {d["address"]: d["state"] for d in sbc["destinations"]}
    assert states[R1[2]] == "inactive" and states[R1[0]] in ("active", "probing")
    assert report["verdict"] == "warn", report["reasons"]  # region 1 degraded by its silent peer, no drift

    # DNS moves on (ACG replaced peer .2 by .4) and nobody refreshed the SBC: drift, the task fails.
    srv, a = TOPO.dns_records()
    name1 = "_sip._tls.pstn-region1." + TOPO.domain
    srv[name1] = [rec for rec in srv[name1] if not rec[3].startswith("region1-sip2.")]
    srv[name1].append((10, 40, 5060, "region1-sip4." + TOPO.domain))
    a["region1-sip4." + TOPO.domain] = [NEW]
    lab.dns.set_records(srv=srv, a=a, ttl=60)
    try:
        report = run(lab)
        print("\n".join(summary_lines(report)))  # shown with pytest -s
        sbc = report["sbc_view"]
        assert [m["peer"] for m in sbc["missing"]] == ["udp %s:5060 (region1-sip4.%s)" % (NEW, TOPO.domain)]
        assert [e["address"] for e in sbc["extra"]] == [R1[1]]
        assert sbc["verdict"] == "fail" and report["verdict"] == "fail"
        assert any(reason.startswith("SBC view fail: drift missing") for reason in report["reasons"])

        # The deployed file no longer matches what Kamailio runs (written, never reloaded): stale.
        list_path = rendered_path(lab.cfg_dir, "dispatcher.list")
        original = list_path.read_text()
        list_path.write_text("".join(line + "\n" for line in original.splitlines() if R2[1] not in line))
        try:
            report = run(lab)
            stale = report["sbc_view"]["stale"]
            assert len(stale) == 1 and "not reloaded" in stale[0]["why"]
            assert stale[0]["only_file"] == [] and [s.split()[1] for s in stale[0]["only_running"]] == ["%s:5060" % R2[1]]
        finally:
            list_path.write_text(original)
    finally:
        lab.dns.set_records(srv=TOPO.dns_records()[0], a=TOPO.dns_records()[1], ttl=60)


def test_sbc_view_settles_after_a_restart(lab: AcgLab, peers: dict[str, SippPeer],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reachable peer probing ("trying" in Kamailio's words) when the SBC view is first read, as right after
    a restart: the probe reads again until Kamailio's own OPTIONS have them active, and says how long that took."""
    lab.reset_peers()
    assert lab.wait_peer_state(R1[2], False, 8.0) is not None, "Kamailio never took the silent peer out"
    rows = [(int(line.split()[0]), line.split()[1]) for line in lab.files["dispatcher.list"].splitlines()
            if line.strip() and not line.startswith("#") and R1[2] not in line]
    real_reader = probe.sbc_view_reader
    real = t.cast(t.Callable[[t.Mapping[str, t.Any]], probe.SbcView], real_reader("kamailio"))
    first_states: list[dict[str, t.Optional[str]]] = []

    def unsettled_first(options: t.Mapping[str, t.Any]) -> probe.SbcView:
        if not first_states:
            for set_id, uri in rows:
                lab.kamailio.rpc("dispatcher.set_state", ["tp", set_id, uri])
        view = real(options)
        if not first_states:
            first_states.append({d.host: d.state for d in view.runtime or []})
        return view

    monkeypatch.setattr(probe, "sbc_view_reader", lambda name: unsettled_first if name == "kamailio" else real_reader(name))
    try:
        report = run(lab)
    finally:
        lab.reset_peers()
    print("\n".join(summary_lines(report)))
    sbc = report["sbc_view"]
    settle = sbc["settle"]
    assert {first_states[0][address] for address in R1[:2] + R2} == {"probing"}
    assert settle["settled"] and settle["readings"] > 1 and 0 < settle["waited_s"] <= settle["limit_s"], settle
    assert settle["text"].startswith("settled after ")
    assert [e["peer"].split()[1] for e in sbc["not_active"]] == ["%s:5060" % R1[2]]  # the silent one
    assert sbc["state_mismatch"] == [] and report["verdict"] == "warn", report["reasons"]


def test_state_mismatch_and_unreadable_sbc(lab: AcgLab, peers: dict[str, SippPeer]) -> None:
    lab.reset_peers()
    # Take a healthy peer out by hand without probing ("i" = inactive, no "p"): Kamailio keeps it out.
    uri = next(line.split()[1] for line in lab.files["dispatcher.list"].splitlines()
               if line.strip() and not line.startswith("#") and R2[0] in line)
    set_id = next(int(line.split()[0]) for line in lab.files["dispatcher.list"].splitlines()
                  if line.strip() and not line.startswith("#") and R2[0] in line)
    lab.kamailio.rpc("dispatcher.set_state", ["i", set_id, uri])
    try:
        report = run(lab)
        mismatch = report["sbc_view"]["state_mismatch"]
        assert [(m["peer"].split()[1], m["sbc_state"], m["probe"]) for m in mismatch if R2[0] in m["peer"]] == [
            ("%s:5060" % R2[0], "inactive", "healthy")]
        assert report["sbc_view"]["verdict"] == "warn"  # fail_on_state_mismatch is off by default
        strict = probe.run_probe(lab.plan, probe.ProbeSettings(
            timeout_s=1.5, allowed_transports=("udp",), check_provisioning_ttl=False,
            resolver=ResolverSettings(nameservers=[lab.dns.address]),
            thresholds=probe.Thresholds(fail_on_state_mismatch=True)), sbc_platform="kamailio",
            platform_options=lab_options(lab))
        assert strict["sbc_view"]["verdict"] == "fail"
    finally:
        lab.reset_peers()
    # No Kamailio socket where we look: the probe says so instead of inventing a view.
    report = run(lab, run_dir=str(Path(lab.workdir) / "nowhere"), rpc_socket=str(Path(lab.workdir) / "nowhere.sock"))
    sbc = report["sbc_view"]
    assert sbc["verdict"] == "warn" and any("cannot ask Kamailio" in e for e in sbc["errors"])
    assert "\n".join(summary_lines(report))
