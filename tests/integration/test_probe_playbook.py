# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`ansible-playbook playbooks/probe.yml -i inventory/lab` against a lab "ACG" made of real software.

The shipped lab inventory says region1 = pstn-region1.acg-lab.commsgw.test with 127.0.10.0/28. The
test serves that SRV record from Knot, runs three peers on 127.0.10.1-3 port 5061 (TLS fronts with a
test PKI, SIPp behind them: two answer OPTIONS with 200, one is silent) and runs the real playbook,
with the probe on the controller (the lab host is ``ansible_connection: local`` anyway). TCP 5061 on
127.0.10.x is this module's alone (the Kamailio conformance peers there use UDP 5060).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest

from harness.tools import needs
from harness.dns import DnsServer
from harness.pki import standard_pki
from harness.tls_front import TlsFront

pytestmark = [pytest.mark.integration,
              needs("sipp", "knotd")]

REPO = Path(__file__).resolve().parents[2]
DOMAIN = "acg-lab.commsgw.test"
HOSTNAME = "pstn-region1." + DOMAIN
PEERS = {"127.0.10.1": "200", "127.0.10.2": "200", "127.0.10.3": "silent"}
SIPP_HOST, SIPP_PORTS = "127.0.199.2", {"200": 15170, "silent": 15171}


def _playbook(args: list[str], env_extra: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1", **env_extra)
    bindir = Path(sys.executable).parent
    env["PATH"] = "%s:%s" % (bindir, env.get("PATH", ""))
    return subprocess.run([str(bindir / "ansible-playbook"), "playbooks/probe.yml", "-i", "inventory/lab", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _lab_host_vars() -> str:
    """Text of every variable file of the lab inventory (to see whether it sets commsgw_sbc)."""
    return "".join(p.read_text() for p in (REPO / "inventory" / "lab").rglob("*.yml"))


@pytest.fixture(scope="module")
def lab_acg(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[dict[str, t.Any]]:
    work = tmp_path_factory.mktemp("probe-playbook")
    pki = standard_pki(work / "pki", [HOSTNAME], sbc_hostname="lab-sbc-1.operator.test")
    dns = DnsServer.start_on_free_address(work / "dns", first=170)
    sipps: list[subprocess.Popen[bytes]] = []
    fronts: list[TlsFront] = []
    try:
        for behaviour, port in SIPP_PORTS.items():
            sipps.append(subprocess.Popen(
                ["sipp", "-sf", str(REPO / ("tests/harness/sipp/probe_options_%s.xml" % behaviour)), "-i", SIPP_HOST,
                 "-p", str(port), "-t", "u1", "-nostdin", "-timeout", "600"],
                cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True))
        for address, behaviour in PEERS.items():
            fronts.append(TlsFront(listen=(address, 5061), backend=(SIPP_HOST, SIPP_PORTS[behaviour], "udp"),
                                   cert=pki.peers[HOSTNAME].chain, key=pki.peers[HOSTNAME].key,
                                   client_ca=pki.operator_ca.cert).start())
        targets = {address: "sbc%d.%s" % (index, HOSTNAME) for index, address in enumerate(PEERS, start=1)}
        dns.set_records(srv={"_sip._tls." + HOSTNAME: [(10, 50, 5061, name) for name in targets.values()]},
                        a=dict({name: [address] for address, name in targets.items()},
                               **{"provapi." + DOMAIN: ["127.0.10.14"]}), ttl=60)
        extra = {"commsgw_probe_on_controller": True, "commsgw_probe_nameservers": [dns.address],
                 "commsgw_probe_timeout": 2.0, "commsgw_probe_client_cert": str(pki.sbc.cert),
                 "commsgw_probe_client_key": str(pki.sbc.key), "commsgw_probe_ca_bundle": str(pki.acg_ca.cert),
                 "commsgw_probe_thresholds": {"cert_expiry_warn_days": 7},
                 # No Kamailio runs in this lab: point the SBC view at an empty directory.
                 "commsgw_probe_platform_options": {"config_dir": str(work / "no-kamailio"),
                                                    "run_dir": str(work / "no-kamailio")},
                 "commsgw_probe_report_dir": str(work / "reports"),
                 # The inventory's default lab dir is the checkout's .lab: SBC paths may hold no space, a clone's may.
                 "commsgw_lab_dir": str(work / "lab")}
        if "commsgw_sbc" not in _lab_host_vars():
            # The shipped lab inventory does not (yet) set the SBC's own settings that validation requires.
            extra["commsgw_sbc"] = {
                "acg_listen": {"address": "127.0.20.1", "port": 5061},
                "core_listen": {"address": "127.0.30.1", "port": 5060, "transport": "udp"},
                "core_next_hop": "127.0.31.1:5060",
                "tls": {"certificate": str(pki.sbc.cert), "private_key": str(pki.sbc.key),
                        "ca_bundle": str(pki.acg_ca.cert)}}
        (work / "extra.json").write_text(json.dumps(extra))
        yield {"work": work, "extra": work / "extra.json", "pki": pki, "dns": dns, "fronts": fronts}
    finally:
        for front in fronts:
            front.stop()
        for proc in sipps:
            proc.terminate()
            proc.wait(5)
        dns.stop()


def test_probe_playbook_on_the_lab_inventory(lab_acg: dict[str, t.Any]) -> None:
    result = _playbook(["-e", "@%s" % lab_acg["extra"], "--limit", "lab-sbc-1"], {})
    output = result.stdout + result.stderr
    print(output)  # shown with pytest -s: the play output an operator sees
    assert result.returncode == 0, output[-4000:]
    # The summary is printed in the play output, one line per peer.
    assert "site lab/lab on lab-sbc-1: WARN" in output
    assert "200 OK" in output and "no_reply" in output
    report = json.loads((lab_acg["work"] / "reports" / "lab-sbc-1.json").read_text())["reports"][0]
    region = report["regions"][0]
    assert region["healthy"] == 2 and region["total"] == 3 and region["verdict"] == "warn"
    by_address = {p["address"]: p for p in region["peers"]}
    assert by_address["127.0.10.3"]["failure"] == "no_reply"
    assert by_address["127.0.10.1"]["tls"]["san"] == [HOSTNAME]
    assert report["sbc_view"]["verdict"] == "warn"  # nothing to read: said, not invented
    junit = (lab_acg["work"] / "reports" / "lab-sbc-1.xml").read_text()
    assert 'failures="1"' in junit  # the silent peer is the only failed test case of the region suite


def test_probe_playbook_fails_on_tls_verification(lab_acg: dict[str, t.Any]) -> None:
    # The SBC trusts an unrelated CA: every peer's certificate is refused -> task fails, summary still printed.
    result = _playbook(["-e", "@%s" % lab_acg["extra"], "-e", "commsgw_probe_ca_bundle=%s"
                        % lab_acg["pki"].rogue_ca.cert], {})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    assert "site lab/lab on lab-sbc-1: FAIL" in output and "tls_unknown_ca" in output
    assert "probe verdict FAIL for lab-sbc-1" in output
