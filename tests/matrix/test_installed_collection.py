# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README's offline commands against the INSTALLED collection, on whatever ansible-core runs
this pytest (issue 11 item 1: `scripts/test matrix` runs this file once per core of the matrix).

The collection is built from this checkout and installed into a temporary collections path; the
playbooks run as `commsgw.routing.<name>` from a directory outside the checkout, with no repo
ansible.cfg and no .collections on sys.path, as an operator runs them. The SRV records of the
shipped lab and production inventories come from a real Knot on a leased 127.0.53.x address; the
answers are only written into plans and dispatcher.list, never contacted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
PLAYBOOK_TIMEOUT_S = 180
KAMAILIO_VERSION = "6.0.1"
LAB_SRV = "_sip._tls.pstn-region1.acg-lab.commsgw.test"
PRODUCTION_DOMAIN = "a1b2c3d4e5f6g7h8.commsgw.azure.com"
# Targets inside the example /28s (inventory/lab: 127.0.10.0/28; inventory/production: 20.61.48.16/28
# and 20.82.160.32/28). Never contacted: render and plan only write them down.
RECORDS: dict[str, list[tuple[str, str]]] = {
    LAB_SRV: [("p1.acg-lab.commsgw.test", "127.0.10.1")],
    "_sip._tls.pstn-region1." + PRODUCTION_DOMAIN: [("p1-r1." + PRODUCTION_DOMAIN, "20.61.48.17"),
                                                    ("p2-r1." + PRODUCTION_DOMAIN, "20.61.48.18")],
    "_sip._tls.pstn-region2." + PRODUCTION_DOMAIN: [("p1-r2." + PRODUCTION_DOMAIN, "20.82.160.33"),
                                                    ("p2-r2." + PRODUCTION_DOMAIN, "20.82.160.34")],
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Builds the release tarball and installs it; returns the environment that sees only that copy."""
    tmp = tmp_path_factory.mktemp("installed")
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANSIBLE_CONFIG", "PYTHONPATH") and not k.startswith("ANSIBLE_COLLECTIONS")}
    env.update(ANSIBLE_COLLECTIONS_PATH=str(tmp / "collections"), ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp / "ansible-tmp"), HOME=str(tmp / "home"))
    galaxy = str(BIN / "ansible-galaxy")
    subprocess.run([galaxy, "collection", "build", "--output-path", str(tmp), str(ROOT)],
                   env=env, cwd=str(tmp), check=True, capture_output=True, text=True)
    tarball = next(tmp.glob("commsgw-routing-*.tar.gz"))
    subprocess.run([galaxy, "collection", "install", "-p", str(tmp / "collections"), str(tarball)],
                   env=env, cwd=str(tmp), check=True, capture_output=True, text=True)
    # The example inventories as a user copies them: inventory/lab keeps its .lab dir beside it.
    for name in ("lab", "production"):
        shutil.copytree(ROOT / "inventory" / name, tmp / "work" / "inventory" / name)
    env["COMMSGW_MATRIX_WORK"] = str(tmp / "work")
    return env


@pytest.fixture(scope="module")
def knot(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[DnsServer]:
    server = DnsServer.start_on_free_address(tmp_path_factory.mktemp("matrix-dns"), first=230)
    try:
        server.set_records(srv={name: [(10, 50, 5061, target) for target, _address in peers]
                                for name, peers in RECORDS.items()},
                           a={target: [address] for peers in RECORDS.values() for target, address in peers},
                           ttl=30)
        yield server
    finally:
        server.stop()


def _play(env: dict[str, str], playbook: str, inventory: str, *extra: str) -> str:
    work = Path(env["COMMSGW_MATRIX_WORK"])
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(work / "inventory" / inventory),
                           "commsgw.routing." + playbook] + list(extra),
                          env=env, cwd=str(work), capture_output=True, text=True, timeout=PLAYBOOK_TIMEOUT_S,
                          check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    return out


def _dns(knot: DnsServer) -> str:
    return json.dumps({"commsgw_dns_nameservers": [knot.address]})


@pytest.mark.parametrize("inventory", ["lab", "production"])
def test_validate(installed: dict[str, str], inventory: str) -> None:
    out = _play(installed, "validate", inventory)
    assert "failed=0" in out, out[-4000:]


@pytest.mark.parametrize("inventory", ["lab", "production"])
def test_plan_with_resolved_peers(installed: dict[str, str], knot: DnsServer, tmp_path: Path,
                                  inventory: str) -> None:
    _play(installed, "plan", inventory, "-e", "commsgw_resolve=true", "-e", _dns(knot),
          "-e", "commsgw_plan_dir=%s" % tmp_path)
    plans = sorted(tmp_path.glob("*.json"))
    assert plans, "plan.yml wrote no plan file"
    text = "".join(p.read_text() for p in plans)
    wanted = [address for name, peers in RECORDS.items() for _target, address in peers
              if (name == LAB_SRV) == (inventory == "lab")]
    for address in wanted:
        assert address in text, (address, text[:2000])


@pytest.mark.parametrize("inventory", ["lab", "production"])
def test_render_with_a_given_kamailio_version(installed: dict[str, str], knot: DnsServer, tmp_path: Path,
                                              inventory: str) -> None:
    """The README's render command, `-e kamailio_version=...` included (failed on ansible-core 2.16-2.18
    with "'dict object' has no attribute 'stdout'")."""
    # Both shipped inventories carry each SBC's commsgw_sbc (inventory/production: its core ACL included).
    _play(installed, "render", inventory, "-e", "commsgw_render_dir=%s" % tmp_path,
          "-e", "kamailio_version=%s" % KAMAILIO_VERSION, "-e", _dns(knot))
    hosts = sorted(p.name for p in tmp_path.iterdir())
    assert hosts == (["lab-sbc-1"] if inventory == "lab" else ["sbc-ams-1", "sbc-ams-2", "sbc-dub-1", "sbc-dub-2"])
    for host in hosts:
        if host.startswith("sbc-dub-"):  # inventory/production's Mediant site: its rows, not Kamailio files
            assert sorted(p.name for p in (tmp_path / host).iterdir()) == ["commsgw.ini", "incremental.cli"]
            assert "CGW-ACG-1-local-region2" in (tmp_path / host / "commsgw.ini").read_text()
            continue
        cfg = (tmp_path / host / "kamailio.cfg").read_text()
        assert "# Kamailio %s." % KAMAILIO_VERSION in cfg, cfg[:400]
        assert (tmp_path / host / "peers" / "dispatcher.list").read_text().strip()
