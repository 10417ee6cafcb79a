# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Onboarding the shape operators run: Debian SBC hosts over SSH with become, the README's defaults.

Three hosts boot under systemd-nspawn with systemd as PID 1 (tests/harness/sbc_hosts.py): two
Debian 13 hosts (Kamailio 6.0 from the distribution package, the two sites of a production
deployment over mutual TLS) and one Debian 12 host (Kamailio 5.6, plain transport). Ansible reaches
them over real SSH as the non-root user ``ops`` with sudo and a password. Nothing here sets
``kamailio_service_manager`` or ``ansible_connection``: the role runs the package's own
``kamailio.service`` as user ``kamailio``, the certificates live in ``/etc/kamailio/tls`` as the
README says. The simulated ACG (tests/harness/acg_sim.py: Knot DNS, mutual-TLS fronts demanding
SNI, SIPp peers) listens on addresses of the test bridge, so calls really cross it.

The tests run in order on one set of hosts: check mode on fresh hosts, the onboarding, calls, the
second run, the failures that must leave the SBC serving, then Debian 12.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import subprocess
import sys
import time
import typing as t
from pathlib import Path
from xml.etree import ElementTree

import pytest

from harness.acg_sim import AcgSim
from harness.dns import DnsServer
from harness.sbc_hosts import Guest, SbcHostLab
from harness.sipp import SippCaller, SippPeer
from harness.tools import memory_manager_args_in, needs
from harness.tools import recap as _recap  # test_exporter_hosts imports it from here

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.reload import reload
from ansible_collections.commsgw.routing.plugins.module_utils.probe.module import PROBED_WITH_READ
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.shipped import shipped_files

# One SBC host suite at a time (tests/conftest.py: guest names and the CPU of their boots are shared).
# An SBC host suite: one at a time (tests/conftest.py).
pytestmark = [needs("systemd-nspawn", "debootstrap", "sipp", "knotd", "ssh"), pytest.mark.sbc_hosts,
              pytest.mark.xdist_group("sbc-hosts")]

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = "cgwprod0"
SUBNET = "10.214.0.0/24"
CORE = "10.214.0.2"            # the operator core placing calls (SIPp on the host)
CORE_NEXT_HOP = "10.214.0.3:5060"
ACG_DNS = "10.214.0.53"        # the simulated ACG's DNS (Knot)
OLD_DNS = "10.214.0.54"        # DNS of the Debian 12 plain-transport deployment
REGION1 = "10.214.0.16/28"
REGION2 = "10.214.0.32/28"
OLD_PEERS = {"p1.acg-old.commsgw.test": "10.214.0.49", "p2.acg-old.commsgw.test": "10.214.0.50"}
AMS = Guest("sbc-ams-1", "trixie", "10.214.0.11")
DUB = Guest("sbc-dub-1", "trixie", "10.214.0.12")
OLD = Guest("sbc-old-1", "bookworm", "10.214.0.13")
TLS_DIR = "/etc/kamailio/tls"
PLAYBOOK_TIMEOUT_S = 420
# The kamailio role's push (push.yml) prints this banner whenever it is included; a re-run must not include it.
PUSH_BANNER = "TASK [commsgw.routing.kamailio : Check the SBC's TLS files as the user Kamailio runs as]"

DEPLOYMENT: dict[str, t.Any] = {
    "name": "prodshape", "type": "production", "base_domain": "acg-prod.commsgw.test",
    "management_region": "West Europe",
    # Bridge addresses stand in for ACG's public /28s: explicitly allowed for this test rig only.
    "allow_non_public_ranges": True, "acg_transport": "tls",
    "service_regions": [
        {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1.acg-prod.commsgw.test",
         "ip_ranges": [REGION1]},
        {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2.acg-prod.commsgw.test",
         "ip_ranges": [REGION2]}],
    "sites": [{"name": "amsterdam", "service_region": "region1"}, {"name": "dublin", "service_region": "region2"}],
    "routing": {"options_interval_s": 1, "failure_threshold": 2, "recovery_threshold": 1, "invite_timer_ms": 1000},
    "emergency_dial_strings": ["112", "999"],
}


# The collection's own client (kamailio/runtime.py and what it imports, as sbc/shipped.py ships it next to the SRV
# refresher), unpacked into a private directory inside the guest and asked as root.
RPC = ("import json, os, sys, tempfile\n"
       "lib = tempfile.mkdtemp()\n"
       "for name, text in json.loads(sys.stdin.readline()).items():\n"
       "    os.makedirs(os.path.dirname(os.path.join(lib, name)), exist_ok=True)\n"
       "    open(os.path.join(lib, name), 'w').write(text)\n"
       "sys.path.insert(0, lib)\n"
       "from kamailio.runtime import JsonRpc, rpc_endpoints\n"
       "cfg = open('/etc/kamailio/kamailio.cfg').read()\n"
       "print(json.dumps(JsonRpc(rpc_endpoints(cfg, '/run/kamailio'), 5.0).call(sys.argv[1])))\n")


def _sbc(guest: Guest, tls: bool = True, core_next_hop: str = CORE_NEXT_HOP, core: str = CORE) -> dict[str, t.Any]:
    """commsgw_sbc as the README documents it: only addresses, next hop, the core ACL (required in a
    production deployment: the caller ``core``; the next hop is allowed implicitly) and the default TLS paths."""
    settings: dict[str, t.Any] = {
        "acg_listen": {"address": guest.address, "port": 5061 if tls else 5060},
        "core_listen": {"address": guest.address, "port": 5070, "transport": "udp"},
        "core_next_hop": core_next_hop,
        "core_allowed_sources": [core + "/32"],
    }
    if tls:
        settings["tls"] = {"certificate": TLS_DIR + "/sbc.chain.pem", "private_key": TLS_DIR + "/sbc.key",
                           "ca_bundle": TLS_DIR + "/acg-roots.pem"}
    return settings


def _write_inventory(path: Path, lab: SbcHostLab, deployment: dict[str, t.Any],
                     sites: dict[str, list[tuple[Guest, dict[str, t.Any]]]], extra: dict[str, t.Any]) -> Path:
    groups = {"site_" + site: {"hosts": {g.name: dict(lab.inventory_vars(g.name), commsgw_sbc=sbc)
                                         for g, sbc in members},
                               "vars": {"commsgw_site": site, "commsgw_sbc_platform": "kamailio"}}
              for site, members in sites.items()}
    inventory = {"all": {"vars": extra, "children": {"acg_" + deployment["name"]: {
        "vars": {"commsgw_deployment": deployment}, "children": groups}}}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(inventory, indent=1))
    return path


def _play(inventory: Path, *args: str, check: bool = True, pipelining: bool = False) -> subprocess.CompletedProcess[str]:
    """ansible-playbook from this checkout; ``pipelining``: with SSH pipelining (one SSH session per module call,
    no module file copied to the host), which operators often turn on for speed (docs/rerun.md)."""
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), *args]
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_PIPELINING=str(pipelining))
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=PLAYBOOK_TIMEOUT_S,
                          check=False)
    print("ansible-playbook %s: rc %d in %.1f s" % (" ".join(args), proc.returncode, time.monotonic() - started))
    if check and proc.returncode != 0:
        raise AssertionError("ansible-playbook %s failed (%d):\n%s\n%s"
                             % (args, proc.returncode, proc.stdout[-8000:], proc.stderr[-2000:]))
    return proc


class Hosts:
    """Booted SBC hosts and the simulated ACG: a root shell on each host, Kamailio's PID, calls from
    the core (SIPp on ``core``, an address of the lab's bridge)."""

    def __init__(self, lab: SbcHostLab, sim: AcgSim, tmp: Path, core: str = CORE) -> None:
        self.lab, self.sim, self.tmp, self.core = lab, sim, tmp, core

    def root(self, guest: Guest, command: str, timeout: float = 60) -> str:
        proc = self.lab.ssh(guest.name, command, become=True, timeout=timeout)
        assert proc.returncode == 0, "%s: %s failed (%d): %s %s" % (guest.name, command, proc.returncode,
                                                                    proc.stdout, proc.stderr)
        return proc.stdout

    def rpc(self, guest: Guest, method: str) -> t.Any:
        """A jsonrpc call to the running Kamailio, made inside the guest as root (the collection's
        own client, RPC above, fed to the guest's python3 with its files on one line)."""
        script = "exec(%r)" % RPC
        proc = self.lab.ssh(guest.name, "python3 -c %s %s" % (shlex.quote(script), shlex.quote(method)), become=True,
                            input=json.dumps(shipped_files("kamailio.runtime")) + "\n", timeout=30)
        assert proc.returncode == 0, "%s: %s failed: %s" % (guest.name, method, proc.stderr[-2000:])
        return json.loads(proc.stdout)

    def reload(self, guest: Guest, method: str, limit_s: float = 12.0) -> None:
        """``method`` (a dispatcher or permissions reload) as the collection's own reloads make it (kamailio/reload.py):
        refused within reload_delta (5 s) of the last one, which the refresher's timer or an earlier test may have made,
        so tried again until ``limit_s``; any other error fails at once."""
        reload(lambda name: self.rpc(guest, name), method, limit_s)

    def main_pid(self, guest: Guest) -> int:
        return int(self.root(guest, "systemctl show -p MainPID --value kamailio").strip() or 0)

    def state(self, guest: Guest) -> str:
        """What an unchanged SBC keeps: its config tree (names, owners, modes, digests), units, PID and its secret.
        The refresher's state file (its run history, rewritten by every run of the timer) and its temporary files
        are not part of it."""
        skip = "-path ./.commsgw-backups -prune -o -path './peers/.commsgw-*' -prune -o"
        return self.root(guest, "cd /etc/kamailio && find . %s -printf '%%p %%u:%%g %%m\\n' | sort && find . %s "
                                "-type f -exec sha256sum {} + | sort; ls /etc/systemd/system; "
                                "systemctl show -p MainPID --value kamailio; "
                                "find %s -printf '%%p %%u:%%g %%m\\n' 2>/dev/null; sha256sum %s 2>/dev/null || true"
                                % (skip, skip, SECRET_DIR, SECRET_DIR + "/secret.cfg"))

    def calls(self, guest: Guest, count: int, name: str) -> tuple[int, int, dict[str, int]]:
        """``count`` calls from the core through ``guest``; (successful, failed, INVITEs per region)."""
        before = self._invites()
        caller = SippCaller("%s-%d" % (name, int(time.time() * 1000)), self.tmp / "sipp", self.core,
                            "%s:5070" % guest.address, hold_ms=100)
        result = caller.run(count, rate=10.0, timeout_s=60)
        after = self._invites()
        return result.successful, result.failed, {r: after[r] - before.get(r, 0) for r in after}

    def _invites(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for peer in self.sim.peers:
            totals[peer.region] = totals.get(peer.region, 0) + peer.counts().get("INVITE", 0)
        return totals


class Rig(Hosts):
    """The booted hosts, the simulated ACG and the inventories."""

    def __init__(self, lab: SbcHostLab, sim: AcgSim, old_dns: DnsServer, old_peers: list[SippPeer],
                 tmp: Path) -> None:
        super().__init__(lab, sim, tmp)
        self.old_dns, self.old_peers = old_dns, old_peers
        common = {"commsgw_dns_nameservers": [ACG_DNS], "commsgw_onboard_probe": True,
                  # The test CA of the simulator signs the SBC's certificate; ACG's roots are another CA.
                  "kamailio_tls_chain_ca": TLS_DIR + "/operator-root.pem"}
        self.inventory = _write_inventory(tmp / "production" / "hosts.json", lab, DEPLOYMENT,
                                          {"amsterdam": [(AMS, _sbc(AMS))], "dublin": [(DUB, _sbc(DUB))]}, common)


def _install_tls_files(rig: Hosts, guest: Guest) -> None:
    """What an operator does before onboarding: the SBC's chain, key and trusted roots in /etc/kamailio/tls."""
    pki = rig.sim.pki_dir
    assert rig.sim.operator_ca is not None
    files = {"sbc.chain.pem": pki / "sbc.chain.pem", "sbc.key": pki / "sbc.key", "acg-roots.pem": pki / "ca-bundle.pem",
             "operator-root.pem": Path(rig.sim.operator_ca.cert)}
    rig.root(guest, "install -d -o root -g kamailio -m 0750 %s" % TLS_DIR)
    for name, source in files.items():
        rig.lab.copy_to(guest.name, source, "%s/%s" % (TLS_DIR, name), become=True, mode="0640")
    rig.root(guest, "chown root:kamailio %s/*" % TLS_DIR)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("production")
    with SbcHostLab([AMS, DUB, OLD], bridge=BRIDGE, subnet=SUBNET, nameserver=ACG_DNS) as lab:
        for cidr in (REGION1, REGION2):
            hosts = list(ipaddress.IPv4Network(cidr).hosts())
            for address in hosts[:3]:
                lab.add_address(str(address))
        for address in (CORE, ACG_DNS, OLD_DNS, *OLD_PEERS.values()):
            lab.add_address(address)
        sim = AcgSim(DEPLOYMENT, tmp / "acg-sim", peers_per_region=3, dns_address=ACG_DNS).start()
        old_dns = DnsServer(tmp / "old-dns", address=OLD_DNS).start()
        old_dns.set_records(srv={"_sip._tls.pstn-region1.acg-old.commsgw.test":
                                 [(10, 50, 5060, name) for name in sorted(OLD_PEERS)]},
                            a={name: [address] for name, address in OLD_PEERS.items()}, ttl=30)
        old_peers = [SippPeer("old-%d" % i, tmp / "sipp", address, port=5060).start()
                     for i, address in enumerate(OLD_PEERS.values())]
        box = Rig(lab, sim, old_dns, old_peers, tmp)
        try:
            for guest in (AMS, DUB):
                _install_tls_files(box, guest)
            yield box
        finally:
            for peer in old_peers:
                peer.stop(kill=True)
            old_dns.stop()
            sim.stop()


DROP_IN = "/etc/systemd/system/kamailio.service.d/commsgw.conf"


def _memory_manager_args(rig: Rig, guest: Guest, pid: int) -> list[str]:
    """The -x/-X arguments (memory managers) of the running Kamailio ``pid``, from its command line."""
    return memory_manager_args_in(rig.root(guest, "tr '\\0' '\\n' < /proc/%d/cmdline" % pid).splitlines())


def test_check_mode_on_fresh_hosts_lists_changes_and_changes_nothing(rig: Rig) -> None:
    before = {g.name: rig.state(g) for g in (AMS, DUB)}
    out = _play(rig.inventory, "playbooks/onboard.yml", "--check", "--diff").stdout
    for guest in (AMS, DUB):
        assert _recap(out, guest.name)["changed"] >= 3, out[-4000:]
        assert rig.state(guest) == before[guest.name], "check mode changed %s" % guest.name
    assert "+++ after: /etc/kamailio/peers/dispatcher.list" in out, out[-4000:]
    assert "kamailio.service.d/commsgw.conf" in out


REFRESHER_DIR = "/usr/local/lib/commsgw-srv-refresh"  # the role's default kamailio_refresher_dir
SECRET_DIR = "/var/lib/kamailio-commsgw"  # the directory of commsgw_sbc.secret_file's default
# What releases before the kamailio package installed there: flat files whose names the package's replace.
OLD_FLAT_LIBRARIES = ("refresher.py", "kamailio.py", "kamailio_runtime.py", "srv_lookup.py", "safe_files.py")
# Issue 21 item 2: what a compromised refresher would try (tests/harness/refresher_attacks.py), on the host.
ATTACKS = ROOT / "tests" / "harness" / "refresher_attacks.py"
ATTACKS_ON_HOST = "/usr/local/lib/commsgw-test-attacks.py"
SPEC = "/etc/commsgw-srv-refresh/commsgw-srv.json"  # the refresher's input: a root-owned copy
# The layout of the releases before issue 21: the refresher's user in Kamailio's group, the config dir its
# group's (0771) so that it replaced dispatcher.list there by rename, its state in the unit's StateDirectory=.
OLD_LAYOUT = ("groupadd -r commsgw-srv && useradd -r -g commsgw-srv -G kamailio -d /nonexistent "
              "-s /usr/sbin/nologin commsgw-srv && chown root:commsgw-srv /etc/kamailio && chmod 0771 /etc/kamailio "
              "&& printf '# peers of the old release\\n' > /etc/kamailio/dispatcher.list "
              "&& chown commsgw-srv:kamailio /etc/kamailio/dispatcher.list && chmod 0640 /etc/kamailio/dispatcher.list "
              "&& install -d -o commsgw-srv -g commsgw-srv -m 0750 /var/lib/commsgw-srv-refresh "
              "&& echo '{}' > /var/lib/commsgw-srv-refresh/.commsgw-srv-state.json")

OPEN_IN_THE_OLD_LAYOUT = {"rename over kamailio.cfg", "rename over tls.cfg", "read the private key", "swap tls/",
                          "replace its own input", "create a file in the config dir"}


def _attack_as_refresher(rig: Hosts, guest: Guest, spec: str, undo: bool = False) -> dict[str, str]:
    """The attacks as the host's refresher user with its groups from /etc/group (the file layout alone, no unit)."""
    rig.lab.copy_to(guest.name, ATTACKS, ATTACKS_ON_HOST, become=True, mode="0644")
    out = rig.root(guest, "cd / && setpriv --reuid=commsgw-srv --regid=commsgw-srv --init-groups --no-new-privs "
                          "python3 %s --config-dir /etc/kamailio --key %s/sbc.key --spec %s --run-dir /run/kamailio%s"
                   % (ATTACKS_ON_HOST, TLS_DIR, spec, " --undo" if undo else ""))
    outcome = json.loads(out.split("commsgw-attacks ", 1)[1])
    print("%s: attacks as commsgw-srv (groups %s): %s" % (
        guest.name, rig.root(guest, "id -nG commsgw-srv").strip(), outcome))
    return t.cast("dict[str, str]", outcome)


def test_onboard_two_sites_over_tls_with_the_probe(rig: Rig) -> None:
    # An upgrade on AMS: the older release's flat libraries (broken on purpose) are still there.
    rig.root(AMS, "mkdir -p %s && cd %s && for f in %s; do echo 'raise ImportError(\"old flat library\")' > $f; done"
             % (REFRESHER_DIR, REFRESHER_DIR, " ".join(OLD_FLAT_LIBRARIES)))
    # ... and the old release's layout, which let its refresher change Kamailio's configuration and read its key.
    rig.root(AMS, OLD_LAYOUT)
    old = _attack_as_refresher(rig, AMS, "/etc/kamailio/commsgw-srv.json", undo=True)
    assert OPEN_IN_THE_OLD_LAYOUT <= {name for name, what in old.items() if what == "succeeded"}, old
    out = _play(rig.inventory, "playbooks/onboard.yml").stdout
    summaries = _probe_summaries(out)
    for guest in (AMS, DUB):
        assert re.search(r"site \S+ on %s: PASS" % guest.name, out), out[-6000:]
        assert PROBED_WITH_READ not in summaries[guest.name]  # pushed, so probed after its push (docs/rerun.md)
        pid = rig.main_pid(guest)
        assert pid > 0
        assert rig.root(guest, "ps -o user= -p %d" % pid).strip() == "kamailio"
        # Issue 25: the drop-in starts it with the TLSF memory manager for shared and private memory.
        assert _memory_manager_args(rig, guest, pid) == ["-x", "tlsf", "-X", "tlsf"]
        assert rig.root(guest, "systemctl is-active kamailio").strip() == "active"
        assert "kamailio 6.0" in rig.root(guest, "kamailio -v")
        listing = rig.root(guest, "stat -c '%n %U:%G %a' /etc/kamailio/kamailio.cfg /etc/kamailio/tls.cfg "
                                  "/etc/kamailio/address.list /etc/kamailio/peers/dispatcher.list "
                                  "/etc/kamailio /etc/kamailio/peers /run/kamailio /run/kamailio/kamailio_rpc.sock "
                                  + SPEC)
        # Only the push writes the config dir; the refresher's own dir is peers/ (setgid: Kamailio reads what it
        # writes); the run dir lets others reach the RPC socket, which only the RPC group may use.
        assert [line.split()[1:] for line in listing.splitlines()] == [
            ["root:kamailio", "640"], ["root:kamailio", "640"], ["root:kamailio", "640"],
            ["commsgw-srv:kamailio", "640"], ["root:kamailio", "751"], ["commsgw-srv:kamailio", "2750"],
            ["kamailio:kamailio", "771"], ["kamailio:commsgw-rpc", "660"], ["root:commsgw-srv", "640"]], listing
        # The refresher's groups: its own and the RPC socket's, not Kamailio's (the upgrade took it out of it);
        # Kamailio's user is in the RPC group and the running Kamailio has it.
        assert rig.root(guest, "id -nG commsgw-srv").split() == ["commsgw-srv", "commsgw-rpc"]
        assert "commsgw-rpc" in rig.root(guest, "id -nG kamailio").split()
        rpc_gid = rig.root(guest, "getent group commsgw-rpc").split(":")[2]
        assert rpc_gid in rig.root(guest, "grep ^Groups: /proc/%d/status" % pid).split()[1:]
        # The old places are gone: the peer list in the config dir, the unit's old state directory.
        assert rig.root(guest, "ls -A /etc/kamailio/dispatcher.list /var/lib/commsgw-srv-refresh 2>&1 || true"
                        ).count("No such file") == 2
        refresher = rig.root(guest, "systemctl show -p User -p ProtectSystem -p NoNewPrivileges "
                                    "commsgw-srv-refresh.service; systemctl is-active commsgw-srv-refresh.timer")
        assert "User=commsgw-srv" in refresher and "ProtectSystem=strict" in refresher, refresher
        assert "NoNewPrivileges=yes" in refresher and refresher.strip().endswith("active"), refresher
        # The refresher's libraries keep their module_utils layout (the kamailio package), the old flat files
        # are gone, and the installed script imports them with the host's own python3.
        listing = rig.root(guest, "cd %s && find . -name '*.py' | sort" % REFRESHER_DIR).split()
        assert "./kamailio/refresher.py" in listing and "./kamailio/__init__.py" in listing, listing
        assert not set("./" + name for name in OLD_FLAT_LIBRARIES) & set(listing), listing
        assert "usage" in rig.root(guest, "%s/commsgw-srv-refresh --help" % REFRESHER_DIR).lower()
        # The package's unit runs the rendered configuration through the drop-in, as user kamailio.
        show = rig.root(guest, "systemctl show -p User -p ExecStart -p DropInPaths kamailio")
        assert "User=kamailio" in show and "/etc/kamailio/kamailio.cfg" in show and "commsgw.conf" in show
        # Issue 21: the SBC's own secret was made there, outside /etc/kamailio, readable by kamailio and root
        # only (not by the refresher's group), imported by kamailio.cfg, and never shown to the controller.
        assert rig.root(guest, "stat -c '%%n %%U:%%G %%a' %s %s/secret.cfg" % (SECRET_DIR, SECRET_DIR)).split() == [
            SECRET_DIR, "root:root", "711", SECRET_DIR + "/secret.cfg", "kamailio:root", "400"]
        assert 'import_file "%s/secret.cfg"' % SECRET_DIR in rig.root(guest, "cat /etc/kamailio/kamailio.cfg")
        # HMAC's two padded dialog keys and the ping token (kamailio/secret.py).
        values = re.findall(r"![0-9a-f]{32,128}!", rig.root(guest, "cat %s/secret.cfg" % SECRET_DIR))
        assert len(values) == 3 and not any(v.strip("!") in out for v in values)
        assert "secret.cfg" not in rig.root(guest, "find /etc/kamailio -name 'secret*'")
    # The same attacks on the upgraded host: the layout alone stops each of them.
    new = _attack_as_refresher(rig, AMS, SPEC)
    assert len(new) == 8 and "succeeded" not in new.values(), new


def _refresher_run(rig: Hosts, guest: Guest) -> str:
    """Start the refresher's unit once, wait for it to finish; the journal of that run (its invocation)."""
    proc = rig.lab.ssh(guest.name, "systemctl start commsgw-srv-refresh.service", become=True, timeout=120)
    invocation = rig.root(guest, "systemctl show -p InvocationID --value commsgw-srv-refresh.service").strip()
    journal = rig.root(guest, "journalctl -o cat --no-pager _SYSTEMD_INVOCATION_ID=%s" % invocation)
    assert proc.returncode == 0, "%s\n%s\n%s" % (proc.stdout, proc.stderr, journal)
    return journal


def _rows(rig: Hosts, guest: Guest) -> set[tuple[int, str]]:
    """(set id, URI) of every destination the running Kamailio routes over."""
    return {(int(r["SET"]["ID"]), d["DEST"]["URI"])
            for r in rig.rpc(guest, "dispatcher.list")["RECORDS"] for d in r["SET"]["TARGETS"]}


def test_refresher_unit_cannot_touch_kamailio_and_still_refreshes(rig: Rig) -> None:
    """Issue 21 item 2 through the refresher's real unit (its user, groups and sandbox): a drop-in runs the attacks
    before the refresher's own ExecStart; each fails, nothing changes, and the refresher still rewrites its peer
    list and reloads Kamailio 6.0 over the RPC socket (the reply comes back to its abstract address)."""
    digests = "sha256sum /etc/kamailio/kamailio.cfg /etc/kamailio/tls.cfg %s/sbc.key %s" % (TLS_DIR, SPEC)
    before = rig.root(AMS, digests)
    peers = rig.root(AMS, "cat /etc/kamailio/peers/dispatcher.list")
    dropped = [line for line in peers.splitlines() if line.strip() and not line.startswith("#")][-1]
    rows = _rows(rig, AMS)
    dropin = "/run/systemd/system/commsgw-srv-refresh.service.d"
    rig.root(AMS, "systemctl stop commsgw-srv-refresh.timer")  # no run of its own between the steps below
    try:
        # Kamailio runs a list without one peer: the next run of the refresher (which still holds the SRV answers)
        # must rewrite the file and reload Kamailio to get it back.
        rig.root(AMS, "grep -vxF %s /etc/kamailio/peers/dispatcher.list > /run/peers.tmp && cat /run/peers.tmp "
                      "> /etc/kamailio/peers/dispatcher.list && rm /run/peers.tmp" % shlex.quote(dropped))
        rig.reload(AMS, "dispatcher.reload")
        assert _rows(rig, AMS) == rows - {(int(dropped.split()[0]), dropped.split()[1])}
        time.sleep(6)  # dispatcher refuses a reload within reload_delta (5 s) of the previous one
        rig.lab.copy_to(AMS.name, ATTACKS, ATTACKS_ON_HOST, become=True, mode="0644")
        rig.root(AMS, "mkdir -p %s && printf '[Service]\\nExecStartPre=/usr/bin/python3 %s --config-dir /etc/kamailio "
                      "--key %s/sbc.key --spec %s --run-dir /run/kamailio\\n' > %s/attack.conf && systemctl daemon-reload"
                 % (dropin, ATTACKS_ON_HOST, TLS_DIR, SPEC, dropin))
        journal = _refresher_run(rig, AMS)
    finally:
        rig.root(AMS, "rm -rf %s && systemctl daemon-reload && systemctl start commsgw-srv-refresh.timer" % dropin)
    outcome = json.loads(journal.split("commsgw-attacks ", 1)[1].splitlines()[0])
    print("sbc-ams-1: attacks in the refresher's unit: %s" % outcome)
    assert len(outcome) == 8 and "succeeded" not in outcome.values(), outcome
    assert rig.root(AMS, digests) == before
    assert "rewritten and dispatcher reloaded" in journal, journal
    assert rig.root(AMS, "cat /etc/kamailio/peers/dispatcher.list") == peers
    assert rig.root(AMS, "stat -c '%U:%G %a' /etc/kamailio/peers/dispatcher.list").split() == [
        "commsgw-srv:kamailio", "640"]
    assert _rows(rig, AMS) == rows
    # The unit's sandbox as systemd rates it on the host (docs/production-hosts.md gives the figure).
    security = rig.root(AMS, "systemd-analyze security --no-pager commsgw-srv-refresh.service | tail -n 1")
    print("sbc-ams-1: %s" % security.strip())
    assert re.search(r"commsgw-srv-refresh.service: \d+\.\d+ (OK|SAFE)", security), security


def test_calls_flow_through_each_site_to_its_local_region(rig: Rig) -> None:
    for guest, local, other in ((AMS, "region1", "region2"), (DUB, "region2", "region1")):
        successful, failed, invites = rig.calls(guest, 10, guest.name)
        assert (successful, failed) == (10, 0), invites
        assert invites[local] == 10 and invites[other] == 0, invites


def test_second_run_changes_nothing(rig: Rig) -> None:
    """And, on the default path (systemd, SSH + become), it skips the push: nothing changed since the last one, so
    the render found the SBC converged and onboard.yml left the apply step out (issue 25 item 2, docs/rerun.md; -v
    shows the read's reasons should it not)."""
    pids = {g.name: rig.main_pid(g) for g in (AMS, DUB)}
    out = _play(rig.inventory, "playbooks/onboard.yml", "-v").stdout
    for guest in (AMS, DUB):
        assert _recap(out, guest.name)["changed"] == 0, out[-6000:]
        assert rig.main_pid(guest) == pids[guest.name]
        skipped = re.search(r"TASK \[Push the configuration\][^\n]*\nskipping: \[%s\]" % re.escape(guest.name), out)
        read = out.find("reasons:", out.find("ok: [%s]" % guest.name, out.find("Read the Kamailio version")))
        assert skipped, "%s: the push ran again; the read said: %s" % (guest.name, out[read:read + 1500])
        # ... and the probe ran in the read's round trip, its result returned by the probe task.
        assert PROBED_WITH_READ in _probe_summaries(out)[guest.name], out[-6000:]
    assert PUSH_BANNER not in out, out[-6000:]


def test_a_converged_run_is_recorded_and_reported(rig: Rig) -> None:
    """The change record and the SBCs' reports, written once per batch for its SBCs (docs/rerun.md): each converged
    SBC gets one push step that changed nothing, the verdict of the probe its read ran, and that probe's report on
    the controller. Both SBCs in one batch (serial 2), as a fleet onboards."""
    pids = {g.name: rig.main_pid(g) for g in (AMS, DUB)}
    records, reports = rig.tmp / "rerun-records", rig.tmp / "rerun-reports"
    out = _play(rig.inventory, "playbooks/onboard.yml", "-e", "commsgw_change_record_dir=%s" % records,
                "-e", "commsgw_probe_report_dir=%s" % reports, "-e", "commsgw_onboard_serial=2").stdout
    assert PUSH_BANNER not in out, out[-6000:]
    [record] = [json.loads(path.read_text()) for path in records.glob("*.json")]
    assert record["result"] == "ok", record
    for guest in (AMS, DUB):
        assert rig.main_pid(guest) == pids[guest.name]
        entry = record["sbcs"][guest.name]
        assert (entry["status"], entry["files"], entry["service_action"], entry["probe"]["verdict"]) == (
            "ok", [], "none", "pass"), entry
        assert [(step["kind"], step["files"], step["service_action"]) for step in entry["steps"]] == [
            ("push", [], "none")], entry
        # The files the probe module writes on the controller: JSON {"reports": [...]} and JUnit XML.
        [report] = json.loads((reports / ("%s.json" % guest.name)).read_text())["reports"]
        assert (report["host"], report["verdict"]) == (guest.name, "pass"), report
        junit = ElementTree.parse(reports / ("%s.xml" % guest.name)).getroot()
        assert junit.tag == "testsuites" and junit.findall("testsuite/testcase"), ElementTree.tostring(junit)
        assert not junit.findall(".//failure"), ElementTree.tostring(junit)
        assert PROBED_WITH_READ in _probe_summaries(out)[guest.name], out[-6000:]


def test_a_changed_sbc_is_probed_after_its_push_the_others_with_their_read(rig: Rig) -> None:
    """docs/rerun.md: the read probes only an SBC it finds as its last push left it; one whose managed file changed
    (a mode, here) is pushed back and probed live after that push, in the same run. With SSH pipelining: the push,
    the read and the probe work without a module file on the host."""
    rig.root(AMS, "chmod 600 /etc/kamailio/address.list")
    out = _play(rig.inventory, "playbooks/onboard.yml", pipelining=True).stdout
    summaries = _probe_summaries(out)
    assert _recap(out, AMS.name)["changed"] >= 1, out[-6000:]
    assert rig.root(AMS, "stat -c %a /etc/kamailio/address.list").strip() == "640"
    assert "PASS" in summaries[AMS.name] and PROBED_WITH_READ not in summaries[AMS.name], summaries[AMS.name]
    assert _recap(out, DUB.name)["changed"] == 0
    assert "PASS" in summaries[DUB.name] and PROBED_WITH_READ in summaries[DUB.name], summaries[DUB.name]


def _probe_summaries(out: str) -> dict[str, str]:
    """Host -> its printed probe summary, whitespace collapsed (the callback wraps long lines)."""
    section = out[out.index("TASK [Print the probe summary and fail on a FAIL verdict]"):]
    section = section[:section.find("\nTASK [", 1) if "\nTASK [" in section[1:] else len(section)]
    return {name: " ".join(text.split())
            for name, text in re.findall(r"ok: \[([^\]]+)\] =>(.*?)(?=\nok: \[|\Z)", section, re.S)}


def test_drift_reads_back_in_sync_over_ssh_with_become(rig: Rig) -> None:
    """The read-back on the default path: the packaged Kamailio's files in /etc/kamailio (root:kamailio 640)
    and its RPC socket, read by the non-root SSH user through become."""
    out = _play(rig.inventory, "playbooks/drift.yml").stdout
    for guest in (AMS, DUB):
        # The YAML result format of ansible.cfg: "ok: [host] =>", "msg:", "- in sync".
        assert re.search(r"ok: \[%s\] =>\s*msg:\s*- in sync\n" % re.escape(guest.name), out), out[-6000:]


def test_key_kamailio_cannot_read_is_caught_by_the_preflight(rig: Rig) -> None:
    before = rig.state(AMS)
    rig.root(AMS, "chmod 0600 %s/sbc.key" % TLS_DIR)
    try:
        proc = _play(rig.inventory, "playbooks/onboard.yml", "--limit", "localhost,sbc-ams-1", check=False)
    finally:
        rig.root(AMS, "chmod 0640 %s/sbc.key" % TLS_DIR)
    assert proc.returncode != 0
    assert "TLS preflight failed" in proc.stdout and "sbc.key" in proc.stdout, proc.stdout[-4000:]
    assert "did not start" not in proc.stdout  # caught before any candidate start
    assert rig.state(AMS) == before


def test_an_sbc_that_fails_in_a_batch_leaves_the_others_recorded(rig: Rig) -> None:
    """Both SBCs in one batch (serial 2) with a change record: sbc-ams-1's push fails its TLS preflight, and the
    rollout stops; sbc-dub-1, whose push ended, is recorded finished before the failing SBC's rescue closes the
    record (docs/change-records.md), not left in progress."""
    before = rig.state(AMS)
    records = rig.tmp / "failed-batch-records"
    rig.root(AMS, "chmod 0600 %s/sbc.key" % TLS_DIR)
    try:
        proc = _play(rig.inventory, "playbooks/onboard.yml", "-e", "commsgw_onboard_serial=2",
                     "-e", "commsgw_change_record_dir=%s" % records, check=False)
    finally:
        rig.root(AMS, "chmod 0640 %s/sbc.key" % TLS_DIR)
    assert proc.returncode != 0 and "TLS preflight failed" in proc.stdout, proc.stdout[-4000:]
    assert rig.state(AMS) == before
    [record] = [json.loads(path.read_text()) for path in records.glob("*.json")]
    failed, finished = record["sbcs"][AMS.name], record["sbcs"][DUB.name]
    assert record["result"] == "failed" and failed["status"] == "failed", record
    assert "TLS preflight failed" in failed["message"], failed
    assert finished["status"] == "ok" and finished["finished"] and finished["steps"], finished


def test_config_that_cannot_start_leaves_the_running_one_untouched(rig: Rig) -> None:
    before = rig.state(AMS)
    files = {name: rig.root(AMS, "cat /etc/kamailio/%s" % path) for name, path in (
        ("kamailio.cfg", "kamailio.cfg"), ("dispatcher.list", "peers/dispatcher.list"), ("address.list", "address.list"),
        ("tls.cfg", "tls.cfg"))}
    files["kamailio.cfg"] += '\nroute[COMMSGW_BROKEN] {\n    sl_send_reply("200", "never");\n    ds_no_such();\n}\n'
    # ... rendered for another memory manager: the push writes the unit's drop-in for it before the start-test.
    assert "\n#memory_manager=tlsf\n" in files["kamailio.cfg"]
    files["kamailio.cfg"] = files["kamailio.cfg"].replace("\n#memory_manager=tlsf\n", "\n#memory_manager=qm\n")
    drop_in = rig.root(AMS, "cat %s" % DROP_IN)
    playbook = rig.tmp / "broken.yml"
    playbook.write_text(json.dumps([{"name": "Push a broken configuration", "hosts": "sbc-ams-1",
                                     "gather_facts": False, "tasks": [{
                                         "name": "Push", "ansible.builtin.include_role": {
                                             "name": "commsgw.routing.kamailio"},
                                         "vars": {"kamailio_files": files}}]}]))
    proc = _play(rig.inventory, str(playbook), check=False)
    assert proc.returncode != 0
    assert "did not start" in proc.stdout, proc.stdout[-4000:]
    assert rig.state(AMS) == before
    # The rescue put the previous drop-in back (a reboot starts the previous configuration as it ran) and left no
    # backup of it behind.
    assert rig.root(AMS, "cat %s" % DROP_IN) == drop_in and "-x tlsf -X tlsf" in drop_in, drop_in
    assert rig.root(AMS, "ls -A %s" % os.path.dirname(DROP_IN)).split() == ["commsgw.conf"]
    assert "-x tlsf -X tlsf" in rig.root(AMS, "systemctl show -p ExecStart kamailio")
    successful, failed, invites = rig.calls(AMS, 5, "after-broken")
    assert (successful, failed) == (5, 0), invites


def test_debian12_plain_transport_onboards_and_tls_is_refused(rig: Rig) -> None:
    old = dict(DEPLOYMENT, name="old", type="lab", base_domain="acg-old.commsgw.test", acg_transport="udp",
               allow_plain_transport=True,
               service_regions=[{"name": "region1", "azure_region": "westeurope",
                                 "hostname": "pstn-region1.acg-old.commsgw.test", "ip_ranges": ["10.214.0.48/28"]}],
               sites=[{"name": "lab", "service_region": "region1"}])
    extra = {"commsgw_dns_nameservers": [OLD_DNS], "kamailio_refresher_nameservers": [OLD_DNS],
             "commsgw_onboard_probe": False}
    udp = _write_inventory(rig.tmp / "old-udp" / "hosts.json", rig.lab, old,
                           {"lab": [(OLD, _sbc(OLD, tls=False))]}, extra)
    # The DNS of this rig serves port 5060; the TLS refusal under test comes later (the Kamailio version).
    old_tls = dict(old, acg_transport="tls", allow_plain_transport=False, srv_limits={"ports": [5060]})
    tls = _write_inventory(rig.tmp / "old-tls" / "hosts.json", rig.lab, old_tls, {"lab": [(OLD, _sbc(OLD))]}, extra)
    refused = _play(tls, "playbooks/onboard.yml", check=False)
    assert refused.returncode != 0
    assert "5.7.5" in refused.stdout, refused.stdout[-4000:]
    out = _play(udp, "playbooks/onboard.yml").stdout
    assert _recap(out, OLD.name)["failed"] == 0
    pid = rig.main_pid(OLD)
    assert rig.root(OLD, "ps -o user= -p %d" % pid).strip() == "kamailio"
    assert "kamailio 5.6" in rig.root(OLD, "kamailio -v")
    assert _memory_manager_args(rig, OLD, pid) == ["-x", "tlsf", "-X", "tlsf"]
    caller = SippCaller("old-%d" % int(time.time() * 1000), rig.tmp / "sipp", CORE, "%s:5070" % OLD.address,
                        hold_ms=100)
    result = caller.run(6, rate=10.0, timeout_s=60)
    assert (result.successful, result.failed) == (6, 0)
    assert sum(peer.received_invites() for peer in rig.old_peers) == 6
    again = _play(udp, "playbooks/onboard.yml").stdout
    assert _recap(again, OLD.name)["changed"] == 0, again[-4000:]
    assert rig.main_pid(OLD) == pid
