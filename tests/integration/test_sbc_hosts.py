# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC host lab (harness/sbc_hosts.py): a Debian 13 and a Debian 12 guest booted side by side.

Everything is checked over real SSH as the operator user ``ops``: unprivileged login, sudo only with
its password, systemd as PID 1, the distribution's Kamailio (6.0 on trixie, 5.6 on bookworm) with its
stock unit, a real ansible-playbook run with become, guest-to-guest and guest-to-host traffic across
the bridge, and after the lab is closed nothing of it left on the machine.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.sbc_hosts import CGROUP_GROUP, CGROUP_ROOT, STATE_DIR, Guest, SbcHostLab
from harness.tools import needs

pytestmark = [
    pytest.mark.integration,
    needs("systemd-nspawn", "debootstrap", "ssh", "ssh-keygen", "zstd", "openssl", "unshare"),
    pytest.mark.skipif(os.geteuid() != 0, reason="bridges, cgroups and systemd-nspawn need root"),
    pytest.mark.sbc_hosts,
    pytest.mark.xdist_group("sbc-hosts"),  # one SBC host suite at a time (tests/conftest.py)
]

REPO = Path(__file__).resolve().parents[2]
BRIDGE = "cgwtst0"  # not the default cgwbr0, so a human's lab on this machine is left alone
SUBNET = "10.213.7.0/24"
HOST = "10.213.7.1"
GUESTS = [Guest("sbc-trixie", "trixie", "10.213.7.11"), Guest("sbc-bookworm", "bookworm", "10.213.7.12")]
KAMAILIO_SERIES = {"trixie": "6.0.", "bookworm": "5.6."}

PLAY = """
- hosts: sbcs
  gather_facts: true
  become: true
  tasks:
    - name: a root-owned file, written through sudo with the become password
      ansible.builtin.copy:
        dest: /etc/commsgw-harness-check
        content: "{{ ansible_facts['distribution_release'] }} {{ ansible_facts['virtualization_type'] }}\\n"
        owner: root
        mode: "0600"
"""


def _leftovers() -> list[str]:
    """Anything of the test lab still on the machine: bridge, mounts, nspawn processes, cgroup dirs."""
    found = []
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        found.append(f"bridge {BRIDGE}")
    found += ["mount " + line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if f"sbc-lab-{BRIDGE}" in line]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "systemd-nspawn" in cmdline and BRIDGE in cmdline:
                found.append(f"process {entry}: {cmdline}")
    found += [f"cgroup {h / CGROUP_GROUP / BRIDGE}" for h in CGROUP_ROOT.iterdir()
              if (h / CGROUP_GROUP / BRIDGE).exists()]
    return found


def _ok(lab: SbcHostLab, guest: str, command: str, become: bool = False) -> str:
    res = lab.ssh(guest, command, become=become)
    assert res.returncode == 0, f"{guest}: {command!r} -> {res.returncode}: {res.stderr}"
    return res.stdout


def _fake_crashed_run() -> None:
    """What a killed run leaves: our bridge, a cgroup dir, a state directory (the lab must clear them). A run
    really killed before this one may have left them already."""
    if not Path("/sys/class/net", BRIDGE).exists():
        subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True, timeout=10)
    (CGROUP_ROOT / "systemd" / CGROUP_GROUP / BRIDGE / "sbc-trixie" / "payload").mkdir(parents=True, exist_ok=True)
    (STATE_DIR / f"sbc-lab-{BRIDGE}" / "sbc-trixie" / "upper").mkdir(parents=True, exist_ok=True)


def test_trixie_and_bookworm_guests(tmp_path: Path) -> None:
    started = time.monotonic()
    _fake_crashed_run()
    # A datagram sink on the bridge's host address (bound once the lab made the bridge).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
        with SbcHostLab(GUESTS, bridge=BRIDGE, subnet=SUBNET, nameserver=HOST) as lab:
            sink.bind((HOST, 0))
            sink.settimeout(10)
            port = sink.getsockname()[1]
            print("\nSBC lab figures:", json.dumps(lab.figures))
            for g in GUESTS:
                name = g.name
                assert _ok(lab, name, "id -u").strip() != "0"
                assert _ok(lab, name, "id -un").strip() == "ops"
                # sudo: with the password root, without it refused (no NOPASSWD anywhere).
                assert _ok(lab, name, "id -u", become=True).strip() == "0"
                res = lab.ssh(name, "sudo -n true")
                assert res.returncode != 0 and "password" in res.stderr.lower(), res.stderr
                res = lab.ssh(name, "sudo -S -p '' true", input="not-the-password\n")
                assert res.returncode != 0
                assert _ok(lab, name, "cat /proc/1/comm").strip() == "systemd"
                assert _ok(lab, name, "hostname").strip() == name
                version = re.search(r"kamailio (\d+\.\d+\.\d+)", _ok(lab, name, "/usr/sbin/kamailio -v"))
                assert version and version.group(1).startswith(KAMAILIO_SERIES[g.suite]), version
                assert _ok(lab, name, "systemctl show -p User --value kamailio").strip() == "kamailio"
                # Each guest reaches the other one and the bridge host over the bridge.
                other = next(o for o in GUESTS if o.name != name)
                banner = _ok(lab, name, "python3 -c 'import socket; "
                                        f"print(socket.create_connection((\"{other.address}\", 22), 3).recv(64))'")
                assert "SSH-2.0-OpenSSH" in banner
                _ok(lab, name, "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                               f".sendto(b\"hello from {name}\", (\"{HOST}\", {port}))'")
                data, peer = sink.recvfrom(256)
                assert data == f"hello from {name}".encode() and peer[0] == g.address
                # Kamailio as the package left it (reported, not asserted: this is what onboarding meets).
                state = lab.ssh(name, "systemctl is-active kamailio; systemctl is-enabled kamailio").stdout.split()
                listening = lab.ssh(name, "ss -Hlntup | awk '/kamailio/ {print $1 \":\" $5}'", become=True).stdout
                print(f"{name}: kamailio {version.group(1)} active/enabled={state} on {listening.split()}")

            # An extra bridge address (where simulated ACG peers or DNS would listen), reached from a guest.
            peer = lab.add_address("10.213.7.49/28")
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as peer_sink:
                peer_sink.bind((peer, 5060))
                peer_sink.settimeout(10)
                _ok(lab, "sbc-trixie", "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                                       f".sendto(b\"OPTIONS\", (\"{peer}\", 5060))'")
                data, source = peer_sink.recvfrom(64)
                assert data == b"OPTIONS" and source[0] == "10.213.7.11"
            # copy_to with become: a root-owned file from the host.
            (tmp_path / "note").write_text("from the harness\n")
            lab.copy_to("sbc-bookworm", tmp_path / "note", "/etc/commsgw-note", become=True, mode="0640")
            assert _ok(lab, "sbc-bookworm", "stat -c '%U %a' /etc/commsgw-note; cat /etc/commsgw-note",
                       become=True).split("\n")[:2] == ["root 640", "from the harness"]

            inventory = tmp_path / "inventory.json"
            inventory.write_text(json.dumps({"sbcs": {"hosts": {g.name: lab.inventory_vars(g.name) for g in GUESTS}}}))
            (tmp_path / "play.yml").write_text(PLAY)
            env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                       ANSIBLE_HOST_KEY_CHECKING="False")
            env["PATH"] = "%s:%s" % (Path(sys.executable).parent, env.get("PATH", ""))
            t0 = time.monotonic()
            res = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory),
                                  str(tmp_path / "play.yml")], capture_output=True, text=True, timeout=180,
                                 env=env, cwd=str(REPO), check=False)
            print(f"ansible-playbook: {time.monotonic() - t0:.1f} s")
            assert res.returncode == 0, res.stdout + res.stderr
            for g in GUESTS:
                assert _ok(lab, g.name, "stat -c '%U %a' /etc/commsgw-harness-check", become=True).strip() \
                    == "root 600"
                assert _ok(lab, g.name, "cat /etc/commsgw-harness-check", become=True).strip() \
                    == f"{g.suite} container"
                assert lab.ssh(g.name, "cat /etc/commsgw-harness-check").returncode != 0  # ops cannot read it

            # A guest `reboot` makes nspawn exit 133; the lab starts it again and it comes back on SSH.
            _ok(lab, "sbc-bookworm", "touch /run/before-reboot", become=True)  # /run: tmpfs of this boot
            print(f"reboot to ready: {lab.reboot('sbc-bookworm')} s")
            assert lab.exit_codes("sbc-bookworm") == [133]
            assert lab.ssh("sbc-bookworm", "test -e /run/before-reboot").returncode == 1
            assert _ok(lab, "sbc-bookworm", "cat /etc/commsgw-harness-check", become=True).strip() \
                == "bookworm container"  # the overlay (guest state) survives the reboot
    assert _leftovers() == []
    print(f"poweroff of both guests: {lab.figures['poweroff_s']} s; test total: {time.monotonic() - started:.1f} s")
