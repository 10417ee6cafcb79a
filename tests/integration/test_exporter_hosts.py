# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe exporter on a production-shaped SBC host: unprivileged, sandboxed, scraped over the network.

One Debian 13 host (systemd-nspawn, reached over SSH as ``ops`` with sudo: tests/harness/sbc_hosts.py)
is onboarded with playbooks/onboard.yml (the packaged Kamailio 6.0 under systemd, mutual TLS to the
simulated ACG on the bridge), then playbooks/exporter.yml installs the exporter with the role's defaults
but its listen address. Bridge ``cgwexp0``, 10.218.0.0/24: host .1, SBC .11, ACG DNS .53, the region's
peers .17-.19 (10.218.0.16/28).

In order: the service runs as its own user with the kamailio and RPC groups only, no capability, sandboxed
(``systemd-analyze security`` below 2.0); what that user can and cannot do on the host; a scrape from
the host sees ACG and the SBC's own view; started as root it refuses; a second run changes nothing;
TLS and basic auth from the role's options.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import ssl
import typing as t
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness.acg_sim import AcgSim
from harness.pki import TestCA
from harness.sbc_hosts import Guest, SbcHostLab
from harness.tools import needs
from integration.test_production_hosts import Hosts, _install_tls_files, _play, _recap, _sbc, _write_inventory

# An SBC host suite: started first, one SBC host suite at a time (tests/conftest.py).
pytestmark = [pytest.mark.integration, needs("systemd-nspawn", "debootstrap", "sipp", "knotd", "ssh", "openssl"),
              pytest.mark.sbc_hosts, pytest.mark.xdist_group("sbc-hosts")]

BRIDGE = "cgwexp0"
SUBNET = "10.218.0.0/24"
ACG_DNS = "10.218.0.53"
REGION1 = "10.218.0.16/28"
AMS = Guest("exp-ams-1", "trixie", "10.218.0.11")
USER = "commsgw-probe-exporter"
URL = "http://%s:9473" % AMS.address
SECURITY_LIMIT = 2.0
# A lab deployment (one region, one site): one host is all this test needs; test_exporter_e2e.py has two regions.
DEPLOYMENT: dict[str, t.Any] = {
    "name": "exphost", "type": "lab", "base_domain": "acg-exp.commsgw.test", "management_region": "West Europe",
    "allow_non_public_ranges": True, "acg_transport": "tls",
    "service_regions": [
        {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1.acg-exp.commsgw.test",
         "ip_ranges": [REGION1]}],
    "sites": [{"name": "amsterdam", "service_region": "region1"}],
    "routing": {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1, "invite_timer_ms": 1000},
    "emergency_dial_strings": ["112", "999"],
}


class Rig(Hosts):
    def __init__(self, lab: SbcHostLab, sim: AcgSim, tmp: Path) -> None:
        super().__init__(lab, sim, tmp, core="10.218.0.2")
        assert sim.operator_ca is not None
        self.extra = {"commsgw_dns_nameservers": [ACG_DNS], "commsgw_onboard_probe": False,
                      "kamailio_tls_chain_ca": "/etc/kamailio/tls/operator-root.pem",
                      "probe_exporter_listen_address": AMS.address}
        self.inventory = self.write({})

    def write(self, extra: dict[str, t.Any]) -> Path:
        sbc = dict(_sbc(AMS), core_allowed_sources=["10.218.0.0/29"])
        return _write_inventory(self.tmp / "inventory" / "hosts.json", self.lab, DEPLOYMENT,
                                {"amsterdam": [(AMS, sbc)]}, dict(self.extra, **extra))

    def exporter_pid(self) -> int:
        return int(self.root(AMS, "systemctl show -p MainPID --value commsgw-probe-exporter").strip() or 0)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("exporter-hosts")
    with SbcHostLab([AMS], bridge=BRIDGE, subnet=SUBNET, nameserver=ACG_DNS) as lab:
        for address in list(ipaddress.IPv4Network(REGION1).hosts())[:3]:
            lab.add_address(str(address))
        for address in ("10.218.0.2", ACG_DNS):
            lab.add_address(address)
        sim = AcgSim(DEPLOYMENT, tmp / "acg-sim", peers_per_region=3, dns_address=ACG_DNS).start()
        box = Rig(lab, sim, tmp)
        try:
            _install_tls_files(box, AMS)
            _play(box.inventory, "playbooks/onboard.yml")
            yield box
        finally:
            sim.stop()


def _get(url: str, headers: t.Optional[dict[str, str]] = None, context: t.Optional[ssl.SSLContext] = None
         ) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _value(text: str, prefix: str) -> list[float]:
    return [float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix)]


def test_exporter_runs_unprivileged_and_sandboxed(rig: Rig) -> None:
    out = _play(rig.inventory, "playbooks/exporter.yml").stdout
    assert _recap(out, AMS.name)["failed"] == 0
    assert rig.root(AMS, "systemctl is-active commsgw-probe-exporter").strip() == "active"
    pid = rig.exporter_pid()
    status = rig.root(AMS, "cat /proc/%d/status" % pid)
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    uid = rig.root(AMS, "id -u %s" % USER).strip()
    assert fields["Uid"].split() == [uid] * 4, fields["Uid"]  # real, effective, saved, filesystem: never root
    groups = {rig.root(AMS, "getent group %s | cut -d: -f1" % gid).strip() for gid in fields["Groups"].split()}
    # Its own group, the SBC's (the key) and the SBC's RPC group (Kamailio's peer states), nothing else.
    assert groups == {USER, "kamailio", "commsgw-rpc"}, groups
    assert fields["CapEff"].strip() == fields["CapPrm"].strip() == fields["CapBnd"].strip() == "0000000000000000"
    assert fields["NoNewPrivs"].strip() == "1" and fields["Seccomp"].strip() == "2"
    security = rig.root(AMS, "systemd-analyze security --no-pager commsgw-probe-exporter.service")
    score = float(re.search(r"Overall exposure level for commsgw-probe-exporter\.service: ([0-9.]+)", security).group(1))
    print("systemd-analyze security commsgw-probe-exporter.service: %.1f" % score)
    print(security[-1200:])
    assert score < SECURITY_LIMIT, security
    # Its files: code and configuration root's; the configuration readable through its group only.
    assert rig.root(AMS, "stat -c '%U:%G %a' /usr/local/lib/commsgw-probe-exporter "
                         "/etc/commsgw-probe-exporter /etc/commsgw-probe-exporter/config.json").split() == [
        "root:root", "755", "root:%s" % USER, "750", "root:%s" % USER, "640"]


def test_what_the_exporters_user_can_and_cannot_do(rig: Rig) -> None:
    """As the exporter's user, then inside the running exporter's own mount namespace."""
    def as_user(command: str) -> int:
        return rig.lab.ssh(AMS.name, "runuser -u %s -- sh -c %s" % (USER, _quote(command)), become=True).returncode

    assert as_user("head -c1 /etc/kamailio/tls/sbc.key >/dev/null") == 0  # the SBC's key: through the kamailio group
    assert as_user("cat /etc/kamailio/peers/dispatcher.list >/dev/null") == 0
    assert as_user("cat /etc/shadow") != 0
    assert as_user("touch /etc/kamailio/planted") != 0
    assert as_user("touch /usr/local/lib/commsgw-probe-exporter/planted") != 0
    assert as_user("echo x >> /etc/commsgw-probe-exporter/config.json") != 0
    assert as_user("sudo -n true") != 0
    # The exporter's own view of the file system (ProtectSystem=strict): read-only even for root, but for
    # Kamailio's run directory (the RPC reply socket) and its private /tmp and /var/tmp (PrivateTmp).
    pid = rig.exporter_pid()
    for path in ("/etc/planted", "/var/lib/planted", "/usr/local/lib/commsgw-probe-exporter/planted"):
        inside = rig.lab.ssh(AMS.name, "nsenter -t %d -m -- touch %s" % (pid, path), become=True)
        assert inside.returncode != 0 and "Read-only file system" in inside.stderr, (path, inside.stderr)
    assert rig.lab.ssh(AMS.name, "nsenter -t %d -m -- sh -c 'touch /run/kamailio/.x && rm /run/kamailio/.x'" % pid,
                       become=True).returncode == 0


def _quote(command: str) -> str:
    return "'" + command.replace("'", "'\\''") + "'"


def test_a_scrape_from_the_network_sees_acg_and_the_sbc(rig: Rig) -> None:
    status, text = _get(URL + "/probe?target=amsterdam", {"X-Prometheus-Scrape-Timeout-Seconds": "10"})
    assert status == 200, text
    assert _value(text, "probe_success") == [1.0], text[:2000]
    assert _value(text, 'commsgw_region_healthy_peers{deployment="exphost",site="amsterdam",region="region1"') == [3.0]
    # The SBC's own view over Kamailio's jsonrpcs socket, by the unprivileged exporter.
    assert _value(text, 'commsgw_sbc_view_up{') == [1.0]
    assert len([line for line in text.splitlines()
                if line.startswith("commsgw_sbc_peer_state{") and 'state="active"' in line]) == 3
    assert _value(text, 'commsgw_provisioning_api_ttl_seconds{') == [60.0]
    # A hostile scrape is refused and probes nothing.
    before = _get(URL + "/metrics")[1]
    assert _get(URL + "/probe?target=dublin")[0] == 400
    after = _get(URL + "/metrics")[1]
    runs = 'commsgw_exporter_probe_runs_total{site="amsterdam"}'
    assert _value(before, runs) == _value(after, runs)


def test_started_as_root_it_refuses(rig: Rig) -> None:
    proc = rig.lab.ssh(AMS.name, "python3 -I -B /usr/local/lib/commsgw-probe-exporter/commsgw-probe-exporter serve "
                                 "--config /etc/commsgw-probe-exporter/config.json", become=True, timeout=60)
    assert proc.returncode == 2 and "refusing to run as root" in proc.stderr, proc.stderr


def test_second_run_changes_nothing(rig: Rig) -> None:
    pid = rig.exporter_pid()
    out = _play(rig.inventory, "playbooks/exporter.yml").stdout
    assert _recap(out, AMS.name)["changed"] == 0, out[-4000:]
    assert rig.exporter_pid() == pid


def test_an_upgrade_removes_a_library_no_longer_shipped_and_restarts(rig: Rig) -> None:
    """An older release's library under the exporter's collection tree goes (it would stay importable), an edited one
    is rewritten, and the exporter is restarted on the code the role installed (one task, sbc_program_files)."""
    lib = "/usr/local/lib/commsgw-probe-exporter/ansible_collections/commsgw/routing/plugins/module_utils"
    shipped = lib + "/probe/run.py"
    rig.root(AMS, "echo 'raise ImportError(\"an older release\")' > %s/probe/gone_in_this_release.py && "
                  "echo '# hand edit' >> %s" % (lib, shipped))
    pid = rig.exporter_pid()
    out = _play(rig.inventory, "playbooks/exporter.yml").stdout
    assert _recap(out, AMS.name)["failed"] == 0, out[-4000:]
    assert rig.lab.ssh(AMS.name, "test -e %s/probe/gone_in_this_release.py" % lib, become=True).returncode != 0
    assert "# hand edit" not in rig.root(AMS, "tail -n 2 %s" % shipped)
    assert rig.exporter_pid() != pid
    assert _get(URL + "/probe?target=amsterdam", {"X-Prometheus-Scrape-Timeout-Seconds": "10"})[0] == 200


def test_tls_and_basic_auth_from_the_role(rig: Rig) -> None:
    ca = TestCA(rig.tmp / "web-ca", name="Monitoring Test Root")
    cert = ca.issue_server("exporter", dns=["sbc-ams-1.mgmt.test"])
    rig.root(AMS, "install -d -o root -g %s -m 0750 /etc/commsgw-probe-exporter/tls" % USER)
    for source, name in ((cert.chain, "exporter.crt"), (cert.key, "exporter.key")):
        rig.lab.copy_to(AMS.name, source, "/etc/commsgw-probe-exporter/tls/" + name, become=True, mode="0640")
    rig.root(AMS, "chgrp %s /etc/commsgw-probe-exporter/tls/*" % USER)
    hashed = rig.root(AMS, "echo 'scrape me' | python3 -I -B /usr/local/lib/commsgw-probe-exporter/"
                           "commsgw-probe-exporter hash-password").strip()
    inventory = rig.write({"probe_exporter_tls_cert_file": "/etc/commsgw-probe-exporter/tls/exporter.crt",
                           "probe_exporter_tls_key_file": "/etc/commsgw-probe-exporter/tls/exporter.key",
                           "probe_exporter_basic_auth_users": {"prometheus": hashed}})
    pid = rig.exporter_pid()
    out = _play(inventory, "playbooks/exporter.yml").stdout
    assert hashed not in out  # no_log
    assert rig.exporter_pid() != pid  # restarted for its new web configuration
    context = ssl.create_default_context(cafile=str(ca.cert))
    context.check_hostname = False  # the test reaches it by address; the chain is verified
    https = "https://%s:9473" % AMS.address
    assert _get(https + "/metrics", context=context)[0] == 401
    good = {"Authorization": "Basic " + base64.b64encode(b"prometheus:scrape me").decode()}
    assert _get(https + "/metrics", {"Authorization": "Basic " + base64.b64encode(b"prometheus:x").decode()},
                context=context)[0] == 401
    status, text = _get(https + "/probe?target=amsterdam", good, context=context)
    assert status == 200 and _value(text, "probe_success") == [1.0]
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        _get(URL + "/metrics")  # plain HTTP on the TLS port: no answer
    rig.write({})  # back to the defaults for whatever runs next
