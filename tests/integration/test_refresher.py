# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installed SRV refresher script against a real DNS server and a real running Kamailio.

Address block of this module: peers 127.0.213.0/28, SBCs 127.0.223.1-2 / 127.0.233.1-2.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402
from tests.harness.refresher_install import install_refresher  # noqa: E402
from tests.harness.tools import private_tmp  # noqa: E402

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (  # noqa: E402
    JsonRpc, RpcEndpoints, RpcError)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment  # noqa: E402
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio  # noqa: E402

pytestmark = pytest.mark.integration

SRV = "_sip._tls.pstn-region1.acg-lab.commsgw.test"
RANGE = "127.0.213.0/28"


class Box:
    def __init__(self, tmp: Path, dns: DnsServer, proc: "subprocess.Popen[bytes]") -> None:
        self.tmp = tmp
        self.dns = dns
        self.proc = proc
        self.etc = tmp / "etc"
        self.rpc = JsonRpc(RpcEndpoints(str(tmp / "run" / "kamailio_rpc.sock"), None), timeout_s=3)

    def uris(self) -> set[str]:
        result = self.rpc.call("dispatcher.list")
        return {d["DEST"]["URI"] for r in result["RECORDS"] for d in r["SET"]["TARGETS"]}

    def refresh(self) -> subprocess.CompletedProcess[str]:
        script = self.tmp / "refresher" / "commsgw-srv-refresh"
        return subprocess.run([sys.executable, str(script), "--spec", str(self.etc / "commsgw-srv.json"), "--force",
                               "--allowed-dir", str(self.tmp / "run"),
                               "--nameserver", self.dns.address, "--dns-timeout", "2"],
                              capture_output=True, text=True, timeout=60, check=False)


def _peers(dns: DnsServer, peers: dict[str, str]) -> None:
    dns.set_records(srv={SRV: [(10, 50, 5060, n) for n in sorted(peers)]}, a={n: [a] for n, a in peers.items()},
                    ttl=30)


def _render(etc: Path, run: Path, acg: str, core: str, rpc_group: t.Optional[str] = None) -> None:
    """The rendered configuration of an SBC listening on ``acg``/``core``, with peers p1 and p2."""
    deployment, findings = validate_deployment({
        "name": "lab", "type": "lab", "base_domain": "acg-lab.commsgw.test", "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True,
        "acg_transport": "udp",
        "service_regions": [{"name": "region1", "azure_region": "westeurope",
                             "hostname": "pstn-region1.acg-lab.commsgw.test", "ip_ranges": [RANGE]}],
        "sites": [{"name": "lab", "service_region": "region1"}]}, [Sbc("sbc1", "lab")])
    assert not findings.errors
    resolved = {SRV: {"name": SRV, "ttl": 30, "targets": [
        {"priority": 10, "weight": 50, "port": 5060, "target": n, "addresses": [a]}
        for n, a in [("p1.acg-lab.commsgw.test", "127.0.213.1"), ("p2.acg-lab.commsgw.test", "127.0.213.2")]]}}
    plan = build_site_plan(deployment, deployment.sites[0], resolved)
    settings = {"acg_listen": {"address": acg}, "core_listen": {"address": core},
                "core_next_hop": "127.0.234.1:5060", "config_dir": str(etc), "run_dir": str(run),
                "shared_memory_mb": 64, "rpc_group": rpc_group}
    for name, content in render_kamailio(plan, settings, "5.6.3").items():
        path = Path(file_path(str(etc), name))  # dispatcher.list: in peers/, as the push puts it
        path.parent.mkdir(exist_ok=True)
        path.write_text(content)
        os.chmod(path, 0o644)


def _stop_kamailio(proc: "subprocess.Popen[bytes]") -> None:
    """SIGTERM to Kamailio's process group, SIGKILL if it is not gone within 10 s."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Box]:
    tmp = tmp_path_factory.mktemp("refresher")
    (tmp / "etc").mkdir()
    (tmp / "run").mkdir()
    dns = DnsServer.start_on_free_address(tmp / "dns", first=60)
    _peers(dns, {"p1.acg-lab.commsgw.test": "127.0.213.1", "p2.acg-lab.commsgw.test": "127.0.213.2"})
    _render(tmp / "etc", tmp / "run", "127.0.223.1", "127.0.233.1")
    # Installed the way the role installs it: the script with its libraries next to it.
    (tmp / "refresher").mkdir()
    install_refresher(tmp / "refresher")
    log = open(tmp / "kamailio.log", "wb")
    proc = subprocess.Popen(["kamailio", "-f", str(tmp / "etc" / "kamailio.cfg"), "-DD", "-E", "-w", str(tmp),
                             "-m", "64"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    box = Box(tmp, dns, proc)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                box.rpc.call("core.version")
                break
            except RpcError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp / "kamailio.log").read_text()[-2000:]
                time.sleep(0.1)
        yield box
    finally:
        _stop_kamailio(proc)
        log.close()
        dns.stop()


def test_unchanged_record_set_neither_rewrites_nor_reloads(box: Box) -> None:
    path = box.etc / "peers" / "dispatcher.list"
    stamp = path.stat().st_mtime_ns
    run = box.refresh()
    assert run.returncode == 0, run.stderr
    assert "written=False reloaded=False" in run.stderr
    assert path.stat().st_mtime_ns == stamp


def test_changed_record_set_is_rewritten_and_reloaded_in_place(box: Box) -> None:
    pid = box.proc.pid
    _peers(box.dns, {"p1.acg-lab.commsgw.test": "127.0.213.1", "p3.acg-lab.commsgw.test": "127.0.213.3"})
    run = box.refresh()
    assert run.returncode == 0, run.stderr
    assert "reloaded=True" in run.stderr
    assert "127.0.213.3" in (box.etc / "peers" / "dispatcher.list").read_text()
    assert box.uris() == {"sip:127.0.213.1:5060;transport=udp", "sip:127.0.213.3:5060;transport=udp"}
    assert box.proc.poll() is None and box.proc.pid == pid


def test_target_outside_the_28_is_refused(box: Box) -> None:
    before = (box.etc / "peers" / "dispatcher.list").read_text()
    _peers(box.dns, {"p1.acg-lab.commsgw.test": "127.0.213.1", "evil.acg-lab.commsgw.test": "127.0.99.7"})
    run = box.refresh()
    assert run.returncode == 1
    assert "refused" in run.stderr and "127.0.99.7" in run.stderr
    assert (box.etc / "peers" / "dispatcher.list").read_text() == before
    assert "sip:127.0.99.7:5060;transport=udp" not in box.uris()


def test_dns_failure_is_logged_and_old_list_kept(box: Box) -> None:
    before = (box.etc / "peers" / "dispatcher.list").read_text()
    box.dns.set_records(srv={}, a={"other.acg-lab.commsgw.test": ["127.0.213.9"]}, ttl=30)  # SRV gone: NXDOMAIN
    run = box.refresh()
    assert run.returncode == 1
    assert "ERROR" in run.stderr and SRV in run.stderr
    assert (box.etc / "peers" / "dispatcher.list").read_text() == before
    assert len(box.uris()) == 2


# --- the production layout (issue 21): Kamailio and the refresher as two unprivileged users

KAM_ID = 64011  # Kamailio's uid and gid (numeric: nothing is added to /etc/passwd)
REF_ID = 64012  # the refresher's uid and primary gid (commsgw-srv on a host)
RPC_ID = 64013  # kamailio_rpc_group: the jsonrpcs socket's group; Kamailio's user and the refresher's are members

# Each attack of issue 21 item 2, run as the refresher's user (a script the production-shaped hosts run too).
ATTACKS = ROOT / "tests" / "harness" / "refresher_attacks.py"


def _as(uid: int, gid: int, groups: t.Sequence[int], argv: list[str]) -> list[str]:
    """``argv`` run as uid/gid with exactly ``groups`` as supplementary groups and no way back to root."""
    group_arg = ["--groups=" + ",".join(map(str, groups))] if groups else ["--clear-groups"]
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, *group_arg, "--no-new-privs",
            "--inh-caps=-all", "--bounding-set=-all", *argv]


def _layout(base: Path, before_issue_21: bool = False) -> dict[str, Path]:
    """The kamailio role's layout with the refresher on: config dir root:kamailio 0751, its files 0640, tls/
    root:kamailio 0750 with the key 0640, peers/ the refresher's (setgid kamailio, 2750), the run dir Kamailio's
    (0771), the refresher's input a root-owned copy (root:refresher 0640).

    ``before_issue_21``: the layout of the releases before: config dir root:refresher 0771 (the refresher replaced
    dispatcher.list there by rename), the refresher's input in it, the run dir 0770 (the refresher reached it
    through Kamailio's group, of which it was a member)."""
    etc, run, work, spec, lib = (base / n for n in ("etc", "run", "work", "spec", "lib"))
    etc_owner = (0, REF_ID, 0o771) if before_issue_21 else (0, KAM_ID, 0o751)
    for path, uid, gid, mode in ((etc, *etc_owner), (run, KAM_ID, KAM_ID, 0o770 if before_issue_21 else 0o771),
                                 (work, KAM_ID, KAM_ID, 0o700), (spec, 0, REF_ID, 0o750), (lib, 0, 0, 0o755)):
        path.mkdir()
        os.chown(path, uid, gid)
        os.chmod(path, mode)
    _render(etc, run, "127.0.223.2", "127.0.233.2", rpc_group=str(RPC_ID))  # the root Kamailio of `box` holds .1
    (etc / "tls").mkdir()
    (etc / "tls" / "sbc.key").write_text("-----BEGIN PRIVATE KEY-----\nnot a real key\n-----END PRIVATE KEY-----\n")
    (etc / "tls.cfg").write_text("[client:default]\nprivate_key = %s\n" % (etc / "tls" / "sbc.key"))
    for path in list(etc.rglob("*")):
        os.chown(path, 0, KAM_ID)
        os.chmod(path, 0o750 if path.is_dir() else 0o640)
    if before_issue_21:
        os.rename(etc / "peers" / "dispatcher.list", etc / "dispatcher.list")
        os.rmdir(etc / "peers")
        return {"etc": etc, "run": run, "work": work, "spec": etc / "commsgw-srv.json", "lib": lib}
    os.chown(etc / "peers", REF_ID, KAM_ID)
    os.chmod(etc / "peers", 0o2750)
    os.chown(etc / "peers" / "dispatcher.list", REF_ID, KAM_ID)  # the push gives it the directory's owner
    shutil.copy(etc / "commsgw-srv.json", spec / "commsgw-srv.json")
    os.chown(spec / "commsgw-srv.json", 0, REF_ID)
    os.chmod(spec / "commsgw-srv.json", 0o640)
    install_refresher(lib)
    return {"etc": etc, "run": run, "work": work, "spec": spec / "commsgw-srv.json", "lib": lib}


def _attack(d: dict[str, Path], groups: t.Sequence[int], env: dict[str, str]) -> dict[str, str]:
    """tests/harness/refresher_attacks.py against layout ``d`` as the refresher's uid with ``groups``."""
    attacks = subprocess.run(_as(REF_ID, REF_ID, groups, [
        sys.executable, "-c", ATTACKS.read_text(), "--config-dir", str(d["etc"]), "--key",
        str(d["etc"] / "tls" / "sbc.key"), "--spec", str(d["spec"]), "--run-dir", str(d["run"])]),
        capture_output=True, text=True, timeout=60, check=False, env=env, cwd="/")
    assert attacks.returncode == 0, attacks.stderr
    outcome = json.loads(attacks.stdout.split("commsgw-attacks ", 1)[1])
    print("attacks as uid %d, groups %s: %s" % (REF_ID, list(groups), outcome))
    return t.cast("dict[str, str]", outcome)


ENV = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}  # as on the host: no collection path


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root (to drop to other users)")
def test_the_attacks_succeed_against_the_layout_before_issue_21() -> None:
    """The attack script is no dummy: against the old layout (the refresher in Kamailio's group, the config dir
    its group's) every attack but the chmod of root's directory succeeds."""
    base = Path(tempfile.mkdtemp(prefix="commsgw-old-layout-", dir="/var/tmp"))
    os.chmod(base, 0o755)
    try:
        d = _layout(base, before_issue_21=True)
        outcome = _attack(d, [KAM_ID], ENV)
        assert {name for name, what in outcome.items() if what != "succeeded"} == {"chmod the config dir"}, outcome
        assert (d["etc"] / "kamailio.cfg").read_text() == 'loadmodule "exec.so"\n'
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root (to drop to other users)")
def test_unprivileged_refresher_changes_only_the_peer_list(box: Box) -> None:
    """Kamailio as its own user; the refresher as another user whose only other group is the RPC socket's.

    Issue 21 item 2: as the refresher's uid and groups, replacing kamailio.cfg, tls.cfg or its own input by rename,
    swapping tls/, reading the private key, changing the config dir's mode and creating files in it or in
    Kamailio's run dir all fail; the refresher still rewrites its peer
    list (in peers/, group Kamailio's through the setgid bit) and reloads it over the socket, and the reply
    comes back to an abstract address (no reply file in Kamailio's run dir, no /tmp of its own needed).
    """
    # Not under /tmp: the refresher gets a private /tmp below, as systemd's PrivateTmp= gives it.
    base = Path(tempfile.mkdtemp(prefix="commsgw-unpriv-", dir="/var/tmp"))
    os.chmod(base, 0o755)  # the unprivileged users must reach their directories
    d = _layout(base)
    etc, run = d["etc"], d["run"]
    before = {name: (etc / name).read_bytes() for name in ("kamailio.cfg", "tls.cfg")}
    log = open(base / "kamailio.log", "wb")
    # Kamailio's user is a member of the RPC group (the role adds it), so it may give its socket that group.
    proc = subprocess.Popen(_as(KAM_ID, KAM_ID, [RPC_ID], ["kamailio", "-f", str(etc / "kamailio.cfg"), "-DD", "-E",
                                                           "-w", str(d["work"]), "-m", "64"]),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        rpc = JsonRpc(RpcEndpoints(str(run / "kamailio_rpc.sock"), None), timeout_s=3, kamailio_user=KAM_ID)
        deadline = time.monotonic() + 15
        while True:
            try:
                rpc.call("core.version")
                break
            except RpcError:
                assert proc.poll() is None and time.monotonic() < deadline, (base / "kamailio.log").read_text()[-2000:]
                time.sleep(0.1)
        sock = os.stat(run / "kamailio_rpc.sock")
        assert (sock.st_uid, sock.st_gid, sock.st_mode & 0o777) == (KAM_ID, RPC_ID, 0o660)
        outcome = _attack(d, [RPC_ID], ENV)
        assert len(outcome) == 8 and "succeeded" not in outcome.values(), outcome
        assert {name: (etc / name).read_bytes() for name in before} == before
        _peers(box.dns, {"p1.acg-lab.commsgw.test": "127.0.213.1", "p4.acg-lab.commsgw.test": "127.0.213.4"})
        # A private /tmp (PrivateTmp=): the reply address must not depend on a file there.
        (base / "host-tmp").mkdir()
        run_ = subprocess.run(private_tmp(base / "host-tmp") + _as(REF_ID, REF_ID, [RPC_ID], [
            sys.executable, str(d["lib"] / "commsgw-srv-refresh"), "--spec", str(d["spec"]),
            "--force", "--allowed-dir", str(etc / "peers"), "--allowed-dir", str(run), "--state-dir", str(etc / "peers"),
            "--kamailio-user", str(KAM_ID), "--nameserver", box.dns.address, "--dns-timeout", "2"]),
            capture_output=True, text=True, timeout=60, check=False, env=ENV, cwd="/")
        assert run_.returncode == 0, run_.stderr
        assert "reloaded=True" in run_.stderr
        uris = {d["DEST"]["URI"] for r in rpc.call("dispatcher.list")["RECORDS"] for d in r["SET"]["TARGETS"]}
        assert uris == {"sip:127.0.213.1:5060;transport=udp", "sip:127.0.213.4:5060;transport=udp"}
        info = os.stat(etc / "peers" / "dispatcher.list")
        assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (REF_ID, KAM_ID, 0o640)
        assert sorted(os.listdir(etc / "peers")) == [".commsgw-srv-state.json", "dispatcher.list"]
        assert sorted(os.listdir(run)) == ["kamailio_ctl", "kamailio_rpc.fifo", "kamailio_rpc.sock"]
    finally:
        _stop_kamailio(proc)
        log.close()
        shutil.rmtree(base, ignore_errors=True)
