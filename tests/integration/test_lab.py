# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab in a box: the simulated ACG on its own (scripts/acg-sim) and the README's main command,
``scripts/lab``, end to end.

* ``test_simulator_cli``: the simulator built from a throw-away inventory (address block
  127.0.90-91.x, with MCP hostnames): its DNS answers (SRV priorities/weights, A records, MCP, the
  provisioning API name with TTL 60), mutual TLS with the SBC certificate it wrote (SNI = regional
  hostname, certificate for that hostname), OPTIONS answered, then switched at run time (no OPTIONS
  answer, connections refused, a silent region, the region back), and nothing left after ``down``.
* ``test_scripts_lab_shows_failover``: runs ``scripts/lab`` (the real demo on inventory/demo,
  127.0.60-81.x) with its lab directory in a temporary directory and asserts its report: every call
  completed, answered in region 1 before and in region 2 after region 1 went down, both probe
  verdicts PASS, and no process of the lab left running.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import typing as t
from pathlib import Path

import dns.message
import dns.query
import dns.rdatatype
import pytest

from harness import rootfs
from harness.tools import needs
from harness.tls_front import tls_client

pytestmark = [
    pytest.mark.integration,
    needs("sipp", "knotd", "unshare", "openssl"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the lab's Kamailio runs in mount namespaces (root)"),
]

REPO = Path(__file__).resolve().parents[2]
DEMO_TIMEOUT_S = 900


def _env(extra: t.Optional[dict[str, str]] = None) -> dict[str, str]:
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    env["PATH"] = "%s:%s" % (Path(sys.executable).parent, env.get("PATH", ""))
    env.update(extra or {})
    return env


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path("/proc/%s/cmdline" % entry).read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append("%s: %s" % (entry, cmdline))
    return found


# -- the simulator alone -------------------------------------------------------------------------
SIM_DOMAIN = "acg-simtest.commsgw.test"
R1, R2 = "pstn-region1." + SIM_DOMAIN, "pstn-region2." + SIM_DOMAIN


def _sim_inventory(path: Path) -> Path:
    (path / "group_vars").mkdir(parents=True)
    (path / "hosts.yml").write_text(json.dumps({"all": {"children": {"acg_simtest": {"children": {
        "site_a": {"hosts": {"sbc-a": {}}}, "site_b": {"hosts": {"sbc-b": {}}}}}}}}))
    (path / "group_vars" / "acg_simtest.yml").write_text(json.dumps({
        "commsgw_dns_nameservers": ["127.0.53.91"],
        "commsgw_deployment": {
            "name": "simtest", "type": "production", "base_domain": SIM_DOMAIN, "management_region": "West Europe",
            "allow_non_public_ranges": True,
            "service_regions": [
                {"name": "region1", "azure_region": "westeurope", "hostname": R1, "ip_ranges": ["127.0.90.0/28"],
                 "mcp_hostname": "mcp-region1." + SIM_DOMAIN},
                {"name": "region2", "azure_region": "northeurope", "hostname": R2, "ip_ranges": ["127.0.91.0/28"],
                 "mcp_hostname": "mcp-region2." + SIM_DOMAIN}],
            "sites": [{"name": "a", "service_region": "region1"}, {"name": "b", "service_region": "region2"}]}}))
    for site in ("a", "b"):
        (path / "group_vars" / ("site_%s.yml" % site)).write_text(json.dumps({"commsgw_site": site}))
    return path


def _acg_sim(state_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(REPO / "scripts" / "acg-sim"), "--state-dir", str(state_dir), *args], cwd=REPO,
                          env=_env(), capture_output=True, text=True, timeout=180, check=False)
    if check and proc.returncode != 0:
        raise AssertionError("acg-sim %s failed (%d):\n%s\n%s" % (args, proc.returncode, proc.stdout, proc.stderr))
    return proc


def _options(peer: str, hostname: str, source: str = "127.0.90.200") -> bytes:
    return ("OPTIONS sip:%s:5061;transport=tls SIP/2.0\r\n"
            "Via: SIP/2.0/TLS %s:5061;branch=z9hG4bK-lab-%d\r\n"
            "From: <sip:sbc@%s>;tag=lab\r\nTo: <sip:%s>\r\nCall-ID: lab-%d@%s\r\nCSeq: 1 OPTIONS\r\n"
            "Max-Forwards: 70\r\nContent-Length: 0\r\n\r\n" % (
                hostname, source, time.time_ns(), source, hostname, time.time_ns(), source)).encode()


def test_simulator_cli(tmp_path: Path) -> None:
    state = tmp_path / "sim"
    inventory = _sim_inventory(tmp_path / "inventory")
    try:
        up = _acg_sim(state, "--json", "up", "--inventory", str(inventory), "--peers", "2")
        status = json.loads(up.stdout)
        nameserver = status["dns"]["address"]
        assert json.loads((state / "extra-vars.json").read_text())["commsgw_dns_nameservers"] == [nameserver]

        def ask(name: str, rdtype: str) -> t.Any:
            return dns.query.udp(dns.message.make_query(name, dns.rdatatype.from_text(rdtype)), nameserver, timeout=2)

        srv = ask("_sip._tls." + R1, "SRV").answer[0]
        assert sorted((r.priority, r.weight, r.port, str(r.target)) for r in srv) == [
            (10, 50, 5061, "sip1.%s." % R1), (10, 50, 5061, "sip2.%s." % R1)]
        assert [str(r) for r in ask("sip2." + R2, "A").answer[0]] == ["127.0.91.2"]
        mcp = ask("_sip._tls.mcp-region2." + SIM_DOMAIN, "SRV").answer[0]
        assert sorted((r.priority, str(r.target)) for r in mcp) == [(10, "mcp.%s." % R2), (20, "mcp.%s." % R1)]
        provapi = ask("provapi." + SIM_DOMAIN, "A").answer[0]
        assert provapi.ttl == 60

        pki = state / "pki"
        peer = ("127.0.90.1", 5061)
        ok = tls_client(peer, pki / "ca-bundle.pem", cert=pki / "sbc.chain.pem", key=pki / "sbc.key", sni=R1,
                        send=_options("127.0.90.1", R1))
        assert ok.ok and ok.reply is not None and ok.reply.startswith(b"SIP/2.0 200"), ok
        assert ok.server_subject and ok.server_subject.get("commonName") == R1
        # Mutual TLS: without the SBC certificate the peer refuses (TLS 1.3 says so after the handshake).
        anonymous = tls_client(peer, pki / "ca-bundle.pem", sni=R1, send=_options("127.0.90.1", R1))
        assert anonymous.reply is None, anonymous
        # MCP answers TLS with its certificate.
        mcp_ok = tls_client(("127.0.90.14", 5061), pki / "ca-bundle.pem", cert=pki / "sbc.chain.pem",
                            key=pki / "sbc.key", sni="mcp-region1." + SIM_DOMAIN)
        assert mcp_ok.ok, mcp_ok

        # Run-time switches.
        _acg_sim(state, "set-peer", "127.0.90.1", "no-options")
        silent = tls_client(peer, pki / "ca-bundle.pem", cert=pki / "sbc.chain.pem", key=pki / "sbc.key", sni=R1,
                            send=_options("127.0.90.1", R1), timeout=2)
        assert silent.reply is None and silent.error == "no SIP reply", silent
        _acg_sim(state, "set-peer", "127.0.90.1", "down")
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(peer, timeout=2).close()
        _acg_sim(state, "region-down", "region2")
        for address in ("127.0.91.1", "127.0.91.2"):
            quiet = tls_client((address, 5061), pki / "ca-bundle.pem", cert=pki / "sbc.chain.pem", key=pki / "sbc.key",
                               sni=R2, send=_options(address, R2), timeout=2)
            assert quiet.reply is None, quiet
        status = json.loads(_acg_sim(state, "--json", "region-up", "region2").stdout)
        states = {p["address"]: p["state"] for p in status["peers"]}
        assert states == {"127.0.90.1": "down", "127.0.90.2": "200", "127.0.91.1": "200", "127.0.91.2": "200"}
        back = tls_client(("127.0.91.1", 5061), pki / "ca-bundle.pem", cert=pki / "sbc.chain.pem",
                          key=pki / "sbc.key", sni=R2, send=_options("127.0.91.1", R2))
        assert back.reply is not None and back.reply.startswith(b"SIP/2.0 200"), back
        counts = {p["address"]: p["received"] for p in status["peers"]}
        assert counts["127.0.90.1"]["OPTIONS"] >= 2, counts
        bad = _acg_sim(state, "set-peer", "127.0.90.9", "200", check=False)
        assert bad.returncode == 1 and "no simulated peer 127.0.90.9" in bad.stderr
    finally:
        _acg_sim(state, "down", check=False)
    assert _processes_mentioning(str(state)) == []
    assert not (state / "control.sock").exists()
    assert _acg_sim(state, "status", check=False).returncode == 1


# -- the README's main command ---------------------------------------------------------------------
def test_scripts_lab_shows_failover() -> None:
    host = rootfs.host_kamailio_version()
    if not (host and rootfs.version_tuple(host) >= (6, 0)):
        try:
            rootfs.kamailio6_runtime()  # built and cached once; the demo reuses it
        except rootfs.RootfsUnavailable as exc:
            pytest.skip(str(exc))
    # A short path of its own, not tmp_path: the lab's Kamailio sockets live under it (sun_path holds 108
    # bytes) and a parallel run's tmp_path is a level deeper.
    lab_dir = Path(tempfile.mkdtemp(prefix="cgwlab-"))
    lab_dir.chmod(0o711)  # searchable, as tmp_path is (tests/conftest.py)
    started = time.monotonic()
    try:
        proc = subprocess.run([str(REPO / "scripts" / "lab")], cwd=REPO, env=_env({"COMMSGW_LAB_DIR": str(lab_dir)}),
                              capture_output=True, text=True, timeout=DEMO_TIMEOUT_S, check=False)
        _check_the_lab_report(proc, lab_dir, time.monotonic() - started)
    finally:
        shutil.rmtree(lab_dir, ignore_errors=True)


def _check_the_lab_report(proc: subprocess.CompletedProcess[str], lab_dir: Path, seconds: float) -> None:
    output = proc.stdout + proc.stderr
    print(output[-6000:])  # the report, with pytest -s
    assert proc.returncode == 0, output[-8000:]
    assert "RESULT: FAILOVER OK" in proc.stdout
    # Progress was visible: every step announced itself.
    for step in range(1, 11):
        assert "[%d/10]" % step in proc.stderr
    # The probe exporters ran and said where their status pages are (docs/monitoring.md).
    assert "status page of sbc-ams-1's probe exporter: http://127.0.70.1:9473/" in proc.stderr
    report = json.loads((lab_dir / "report.json").read_text())
    # TLS on Kamailio 6.0 only: on Debian 12 the push role ran it from the rootfs (kamailio_rootfs).
    assert report["sbc_version"].startswith("kamailio 6."), report["sbc_version"]
    before, after = report["before"], report["after"]
    assert report["local_region"] == "region1" and report["other_region"] == "region2"
    assert before["completed"] == before["calls"] > 0, before
    assert before["answered_by_region"] == {"region1": before["calls"], "region2": 0}, before
    assert after["region_down"] == "region1"
    assert after["completed"] == after["calls"] > 0, after
    assert after["answered_by_region"] == {"region1": 0, "region2": after["calls"]}, after
    assert report["probe"] == {"sbc-ams-1": "PASS", "sbc-dub-1": "PASS"}, report["probe"]
    # The SBC took region 1's peers out of service by itself (dispatcher flags I = inactive).
    assert all(p["sbc_after"].startswith("I") for p in report["peers"] if p["region"] == "region1"), report["peers"]
    # Nothing left running: no process refers to the lab directory, no simulator socket.
    assert _processes_mentioning(str(lab_dir)) == []
    assert not list((lab_dir / "acg-sim").glob("*.sock"))
    print("scripts/lab took %.0f s" % seconds)
