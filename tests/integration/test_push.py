# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Push safety on a real Kamailio (plain-process mode) driven by real ansible-playbook runs.

One SBC on loopback (address block 127.0.212-234.x, this module's own), a real DNS server (Knot via
tests/harness/dns.py) answering the lab SRV record. Scenarios, in order, on the same SBC:
first onboard starts it; a second run changes nothing, and skips the push until a hand edit or a stopped
Kamailio needs it (issue 25 item 2); check mode shows the peer-list diff and
changes nothing; a changed peer list is reloaded without a restart (same PID); a config that
cannot start is rejected and the running SBC keeps serving. Issue 21: a peer list whose reload fails
is rolled back with a reload in the same process; a push onto a full disk (a tiny tmpfs mounted over
the configuration directory) leaves every file old and Kamailio serving; a push while another run holds
the SBC's lease fails naming it (or waits for it), and the SRV refresher run during a push keeps out.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402
from tests.harness.lab_inventory import lab_inventory, stop_kamailio  # noqa: E402
from tests.harness.refresher_install import install_refresher  # noqa: E402
from tests.harness.sipp import udp_options  # noqa: E402
from tests.harness.tools import fill, memory_manager_args_in, recap as _recap, tmpfs  # noqa: E402

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (  # noqa: E402
    JsonRpc, RpcEndpoints)
from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import (  # noqa: E402
    acquire, release, state_dir_for)

pytestmark = pytest.mark.integration

SRV = "_sip._tls.pstn-region1.acg-lab.commsgw.test"
PEERS = "127.0.212.0/28"
ACG = "127.0.222.1"
CORE = "127.0.232.1"
PLAYBOOK_TIMEOUT_S = 240


def _inventory(tmp: Path, dns_address: str) -> Path:
    return lab_inventory(tmp, dns_address, "sbc-push", "acg-lab.commsgw.test", PEERS, ACG, CORE, "127.0.234.1:5060")


def _play(args: list[str], inventory: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory)] + args
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True,
                          timeout=PLAYBOOK_TIMEOUT_S, check=False)
    if check and proc.returncode != 0:
        raise AssertionError("ansible-playbook %s failed (%d):\n%s\n%s"
                             % (args, proc.returncode, proc.stdout[-6000:], proc.stderr[-2000:]))
    return proc


def _options(src: str, dst: str, port: int = 5060, timeout_s: float = 2.0) -> t.Optional[str]:
    return udp_options(src, dst, port, timeout_s, user="push-test")


class Sbc:
    def __init__(self, tmp: Path, inventory: Path, dns: DnsServer) -> None:
        self.tmp = tmp
        self.inventory = inventory
        self.dns = dns
        self.live = tmp / "live"
        self.etc = self.live / "etc"

    def pid(self) -> int:
        return int((self.live / "run" / "kamailio.pid").read_text().strip())

    def rpc(self) -> JsonRpc:
        run = str(self.live / "run")
        return JsonRpc(RpcEndpoints(run + "/kamailio_rpc.sock", run + "/kamailio_rpc.fifo"), timeout_s=3)

    def dispatcher_uris(self) -> set[str]:
        result = self.rpc().call("dispatcher.list")
        return {dest["DEST"]["URI"] for record in result["RECORDS"] for dest in record["SET"]["TARGETS"]}

    def snapshot(self) -> dict[str, str]:
        # The rendered files by name, dispatcher.list from peers/ (where Kamailio reads it).
        return {p.name: p.read_text() for d in (self.etc, self.etc / "peers") if d.is_dir()
                for p in d.iterdir() if p.is_file() and not p.name.startswith(".")}

    def stop(self) -> None:
        stop_kamailio(self.live / "run" / "kamailio.pid")


def _set_peers(dns: DnsServer, peers: dict[str, str]) -> None:
    dns.set_records(srv={SRV: [(10, 50, 5060, name) for name in sorted(peers)]},
                    a={name: [address] for name, address in peers.items()}, ttl=30)


@pytest.fixture(scope="module")
def sbc(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Sbc]:
    tmp = tmp_path_factory.mktemp("push")
    dns = DnsServer.start_on_free_address(tmp / "dns", first=40)
    _set_peers(dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p2.acg-lab.commsgw.test": "127.0.212.2"})
    box = Sbc(tmp, _inventory(tmp, dns.nameservers[0]), dns)
    try:
        yield box
    finally:
        box.stop()
        dns.stop()


def test_first_onboard_starts_the_sbc(sbc: Sbc) -> None:
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert _recap(out, "sbc-push")["changed"] >= 2, out[-3000:]
    assert os.path.exists("/proc/%d" % sbc.pid())
    # Serves: an ACG address inside the /28 gets an answer, one outside is refused.
    assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"
    assert _options("127.0.99.9", ACG) == "SIP/2.0 403 Forbidden"
    assert sbc.dispatcher_uris() == {"sip:127.0.212.1:5060;transport=udp", "sip:127.0.212.2:5060;transport=udp"}


def test_kamailio_runs_as_kamailio_and_files_are_not_world_readable(sbc: Sbc) -> None:
    kamailio = pwd.getpwnam("kamailio")
    with open("/proc/%d/status" % sbc.pid(), encoding="ascii") as handle:
        uids = re.search(r"^Uid:\s+(\d+)\s+(\d+)", handle.read(), re.MULTILINE)
    assert uids and (int(uids.group(1)), int(uids.group(2))) == (kamailio.pw_uid, kamailio.pw_uid)
    for name in ("kamailio.cfg", "dispatcher.list", "address.list", "commsgw-srv.json"):
        info = Path(file_path(str(sbc.etc), name)).stat()
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, kamailio.pw_gid, 0o640), name


def test_second_run_changes_nothing(sbc: Sbc) -> None:
    pid = sbc.pid()
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert _recap(out, "sbc-push")["changed"] == 0, out[-3000:]
    assert sbc.pid() == pid


SKIPPED_PUSH = re.compile(r"TASK \[Push the configuration\][^\n]*\nskipping: \[sbc-push\]")
PUSH_STEP = "TASK [commsgw.routing.kamailio : Install the configuration once a candidate"


def test_a_re_run_skips_the_push_until_a_hand_edit_or_a_stopped_kamailio_needs_it(sbc: Sbc) -> None:
    # Issue 25 item 2: nothing changed since the last push, so the re-run reads once and skips the push.
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert SKIPPED_PUSH.search(out) and PUSH_STEP not in out, out[-3000:]
    assert _recap(out, "sbc-push")["changed"] == 0
    # A hand edit and a Kamailio that was stopped: check mode finds the edit (and changes nothing) ...
    rendered = (sbc.etc / "kamailio.cfg").read_text()
    with open(sbc.etc / "kamailio.cfg", "a", encoding="utf-8") as handle:
        handle.write("# hand edit\n")
    sbc.stop()
    out = _play(["playbooks/onboard.yml", "--check", "--diff", "-e", "commsgw_onboard_probe=false"], sbc.inventory).stdout
    assert not SKIPPED_PUSH.search(out) and PUSH_STEP in out, out[-3000:]
    assert re.search(r"^-# hand edit$", out, re.MULTILINE), out[-3000:]
    assert (sbc.etc / "kamailio.cfg").read_text().endswith("# hand edit\n")
    # ... and the run repairs both, then the next run skips again.
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert _recap(out, "sbc-push")["changed"] >= 2 and PUSH_STEP in out, out[-3000:]
    assert (sbc.etc / "kamailio.cfg").read_text() == rendered
    assert os.path.exists("/proc/%d" % sbc.pid())
    assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"
    out = _play(["playbooks/onboard.yml", "-e", "commsgw_onboard_probe=false"], sbc.inventory).stdout
    assert SKIPPED_PUSH.search(out) and _recap(out, "sbc-push")["changed"] == 0, out[-3000:]


def test_check_mode_shows_the_diff_and_changes_nothing(sbc: Sbc) -> None:
    pid = sbc.pid()
    before = sbc.snapshot()
    _set_peers(sbc.dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p3.acg-lab.commsgw.test": "127.0.212.3"})
    out = _play(["playbooks/onboard.yml", "--check", "--diff"], sbc.inventory).stdout
    assert _recap(out, "sbc-push")["changed"] >= 1
    assert re.search(r"^\+.*sip:127\.0\.212\.3:5060", out, re.MULTILINE), out[-3000:]
    assert re.search(r"^-.*sip:127\.0\.212\.2:5060", out, re.MULTILINE), out[-3000:]
    assert sbc.snapshot() == before
    assert sbc.pid() == pid
    assert "sip:127.0.212.2:5060;transport=udp" in sbc.dispatcher_uris()


def test_changed_peer_list_is_reloaded_without_restart(sbc: Sbc) -> None:
    pid = sbc.pid()
    cfg_before = (sbc.etc / "kamailio.cfg").read_text()
    out = _play(["playbooks/onboard.yml"], sbc.inventory).stdout
    assert "Reload the peer list" in out and _recap(out, "sbc-push")["changed"] >= 2, out[-3000:]
    assert sbc.pid() == pid, "a peer-list change must not restart Kamailio"
    assert (sbc.etc / "kamailio.cfg").read_text() == cfg_before
    assert sbc.dispatcher_uris() == {"sip:127.0.212.1:5060;transport=udp", "sip:127.0.212.3:5060;transport=udp"}
    backups = list((Path(state_dir_for(str(sbc.etc))) / "backups").iterdir())
    assert any("127.0.212.2" in (b / "dispatcher.list").read_text() for b in backups if (b / "dispatcher.list").exists())


def test_config_that_cannot_start_is_rejected_and_sbc_keeps_serving(sbc: Sbc) -> None:
    pid = sbc.pid()
    before = sbc.snapshot()
    files = {name: before[name] for name in ("kamailio.cfg", "dispatcher.list", "address.list")}
    # Passes the parser's first look but fails at start: a function of a module that is not loaded.
    files["kamailio.cfg"] += '\nroute[COMMSGW_BROKEN] {\n    sl_send_reply("200", "never");\n    ds_no_such();\n}\n'
    playbook = sbc.tmp / "push.yml"
    playbook.write_text(json.dumps([{"name": "Push", "hosts": "all", "gather_facts": False, "tasks": [{
        "name": "Push files", "ansible.builtin.include_role": {"name": "commsgw.routing.kamailio"},
        "vars": {"kamailio_files": files}}]}]))
    proc = _play([str(playbook)], sbc.inventory, check=False)
    assert proc.returncode != 0
    assert "did not start" in proc.stdout, proc.stdout[-3000:]
    assert sbc.snapshot() == before
    assert sbc.pid() == pid
    assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"


def _memory_manager_args(pid: int) -> list[str]:
    with open("/proc/%d/cmdline" % pid, "rb") as handle:
        return memory_manager_args_in(handle.read().decode().split("\0"))


def test_the_memory_manager_follows_the_configuration_and_its_rollback(sbc: Sbc) -> None:
    """Issue 25: the role's kamailio_memory_manager (set directly here) is rendered into kamailio.cfg, so changing it
    restarts Kamailio under it; back to the default, TLSF. A push that fails after its swap restarts the previous
    configuration under the manager that configuration names, not the failed one's."""
    _play(["playbooks/onboard.yml", "-e", "kamailio_memory_manager=qm"], sbc.inventory)
    assert "\n#memory_manager=qm\n" in (sbc.etc / "kamailio.cfg").read_text()
    assert _memory_manager_args(sbc.pid()) == ["-x", "qm", "-X", "qm"]
    pid = sbc.pid()
    _play(["playbooks/onboard.yml"], sbc.inventory)
    assert "\n#memory_manager=tlsf\n" in (sbc.etc / "kamailio.cfg").read_text()
    assert sbc.pid() != pid and _memory_manager_args(sbc.pid()) == ["-x", "tlsf", "-X", "tlsf"]
    before = sbc.snapshot()
    files = {name: before[name] for name in ("kamailio.cfg", "dispatcher.list", "address.list")}
    files["kamailio.cfg"] = files["kamailio.cfg"].replace("\n#memory_manager=tlsf\n", "\n#memory_manager=fm\n")
    files["kamailio.cfg"] += '\nroute[COMMSGW_BROKEN] {\n    sl_send_reply("200", "never");\n    ds_no_such();\n}\n'
    proc = _push_files(sbc, files, kamailio_test_start=False)  # no start-test: the swap and the restart fail
    assert proc.returncode != 0 and "the previous configuration was restored from" in proc.stdout, proc.stdout[-4000:]
    assert sbc.snapshot() == before
    assert _memory_manager_args(sbc.pid()) == ["-x", "tlsf", "-X", "tlsf"]
    assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"


def test_change_record_names_each_file_with_its_sha256_and_the_reload(sbc: Sbc) -> None:
    """Issue 11 item 7: one JSON record per onboard run, in the directory named on the command line."""
    import hashlib

    from ansible.release import __version__ as ansible_version

    records = sbc.tmp / "changes"
    pid = sbc.pid()
    before = sbc.snapshot()
    _set_peers(sbc.dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p4.acg-lab.commsgw.test": "127.0.212.4"})
    _play(["playbooks/onboard.yml", "-e", "commsgw_change_record_dir=%s" % records], sbc.inventory)
    [path] = [p for p in records.iterdir() if p.suffix == ".json"]
    record = json.loads(path.read_text())
    after = sbc.snapshot()
    assert path.stem == record["run_id"]
    assert (record["schema_version"], record["playbook"], record["check_mode"], record["result"]) == (
        1, "onboard.yml", False, "ok")
    assert record["ansible_core_version"] == ansible_version and record["collection_version"] == "0.1.0"
    assert record["started"] < record["finished"] and record["duration_s"] > 0
    entry = record["sbcs"]["sbc-push"]
    sha = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in before.items()}
    sha_now = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in after.items()}
    assert entry["files"] == [{"name": "dispatcher.list", "sha256_before": sha["dispatcher.list"],
                               "sha256_after": sha_now["dispatcher.list"]}]
    assert sha["dispatcher.list"] != sha_now["dispatcher.list"]
    assert (entry["status"], entry["service_action"], entry["pid_before"], entry["pid_after"]) == (
        "ok", "reload", pid, pid)
    assert sbc.pid() == pid and 0 < entry["duration_s"] < record["duration_s"]
    assert entry["probe"]["verdict"] is None  # commsgw_onboard_probe is off in this fixture

    # A check run writes its own record: what would change, nothing changed.
    _set_peers(sbc.dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p5.acg-lab.commsgw.test": "127.0.212.5"})
    _play(["playbooks/onboard.yml", "--check", "-e", "commsgw_change_record_dir=%s" % records], sbc.inventory)
    [check] = [json.loads(p.read_text()) for p in records.iterdir() if p.suffix == ".json" and p != path]
    assert check["check_mode"] is True and check["result"] == "ok"
    entry = check["sbcs"]["sbc-push"]
    assert [f["name"] for f in entry["files"]] == ["dispatcher.list"]
    assert entry["files"][0]["sha256_before"] == sha_now["dispatcher.list"] and sbc.snapshot() == after


def _push_files(sbc: Sbc, files: dict[str, str], check: bool = False, **role_vars: t.Any) -> subprocess.CompletedProcess[str]:
    """The role's push of ``files`` (its main entry point, as onboard includes it)."""
    playbook = sbc.tmp / ("push-%d.yml" % len(list(sbc.tmp.glob("push-*.yml"))))
    playbook.write_text(json.dumps([{"name": "Push", "hosts": "all", "gather_facts": False, "tasks": [{
        "name": "Push files", "ansible.builtin.include_role": {"name": "commsgw.routing.kamailio"},
        "vars": dict(role_vars, kamailio_files=files)}]}]))
    return _play([str(playbook)], sbc.inventory, check=check)


def test_a_peer_list_whose_reload_fails_is_rolled_back_with_a_reload_in_the_same_process(sbc: Sbc) -> None:
    """Issue 21 item 14: the rescue used to restart Kamailio whatever failed, cutting the calls in setup.
    The start test is off here, so a list Kamailio cannot load gets as far as the reload."""
    pid = sbc.pid()
    before = sbc.snapshot()
    uris = sbc.dispatcher_uris()
    files = {name: before[name] for name in ("kamailio.cfg", "dispatcher.list", "address.list", "commsgw-srv.json")}
    files["dispatcher.list"] += "not a destination\n1\n"
    proc = _push_files(sbc, files, kamailio_test_start=False)
    out = proc.stdout
    assert proc.returncode != 0 and "dispatcher.reload failed" in out, out[-4000:]
    assert sbc.pid() == pid, "a failed reload must be rolled back with a reload, not a restart"
    assert "the previous configuration was restored from" in out, out[-6000:]
    assert re.search(r"TASK \[commsgw.routing.kamailio : Reload the previous peer list / address list\] \**\n+"
                     r"changed: \[sbc-push\]", out), out[-4000:]
    assert sbc.snapshot() == before and sbc.dispatcher_uris() == uris
    assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"


def test_a_push_onto_a_full_disk_leaves_the_sbc_all_old_and_serving(sbc: Sbc) -> None:
    """Issue 21 item 7: room for the backup and address.list but not for the new kamailio.cfg; the old
    push renamed address.list into place and then failed on kamailio.cfg, outside any rescue."""
    pid = sbc.pid()
    keep = sbc.tmp / "etc-before-tmpfs"
    shutil.copytree(sbc.etc, keep, symlinks=True)

    def files_now() -> dict[str, bytes]:
        # The rendered files by name, dispatcher.list from peers/ (where the push puts it).
        return {p.name: p.read_bytes() for d in (sbc.etc, sbc.etc / "peers") if d.is_dir()
                for p in d.iterdir() if p.is_file() and p.name != "filler.bin" and not p.name.startswith(".")}
    with tmpfs(sbc.etc, "size=512k"):
        # The same tree, owners and modes (the refresher's peers/ too), now on a filesystem that fills up.
        shutil.copytree(keep, sbc.etc, symlinks=True, dirs_exist_ok=True)
        for entry in [keep, *keep.rglob("*")]:
            os.lchown(sbc.etc / entry.relative_to(keep), entry.lstat().st_uid, entry.lstat().st_gid)
        before = files_now()
        files = {name: before[name].decode() for name in ("kamailio.cfg", "dispatcher.list", "address.list",
                                                          "commsgw-srv.json")}
        files["kamailio.cfg"] += "# a longer configuration\n" * 4000
        files["address.list"] = files["address.list"].replace("\n", "\n\n", 1)
        pages = sum(-(-len(data) // 4096) for data in before.values())
        fill(sbc.etc, leave_bytes=(pages + 2) * 4096)
        proc = _push_files(sbc, files)
        after = files_now()
        assert after == before, "half-new: %s" % sorted(n for n in before if after.get(n) != before[n])
        assert proc.returncode != 0 and "not enough free space in %s" % sbc.etc in proc.stdout, proc.stdout[-4000:]
        assert sbc.pid() == pid
        assert _options("127.0.212.9", ACG) == "SIP/2.0 200 OK"
        assert sbc.dispatcher_uris()
        (sbc.etc / "filler.bin").unlink()
    assert files_now() == before  # the one under the tmpfs


def test_a_push_while_another_run_holds_the_sbc_fails_naming_it_or_waits_for_it(sbc: Sbc) -> None:
    """Issue 21 item 9: run A holds the lease (what its first task does); run B's onboard fails naming A and
    changes nothing; with a wait it goes on once A gives the lease back."""
    pid = sbc.pid()
    before = sbc.snapshot()
    state = state_dir_for(str(sbc.etc))
    _set_peers(sbc.dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p6.acg-lab.commsgw.test": "127.0.212.6"})
    acquire(state, "run-A", controller="ops@controller-a")
    try:
        proc = _play(["playbooks/onboard.yml"], sbc.inventory, check=False)
        assert proc.returncode != 0, proc.stdout[-4000:]
        assert "another push holds this SBC: run run-A (controller ops@controller-a" in proc.stdout, proc.stdout[-4000:]
        assert sbc.snapshot() == before and sbc.pid() == pid
        timer = threading.Timer(3.0, release, (state, "run-A"))
        timer.start()
        proc = _play(["playbooks/onboard.yml", "-e", "kamailio_push_lease_wait_s=60"], sbc.inventory)
        timer.join()
    finally:
        release(state, "run-A")
    assert "sip:127.0.212.6:5060;transport=udp" in sbc.dispatcher_uris() and sbc.pid() == pid


def test_a_refresher_run_during_a_push_does_not_touch_the_peer_list(sbc: Sbc) -> None:
    """Issue 21 item 9: the SRV refresher skips its run while a push holds the SBC's lease."""
    time.sleep(6)  # Kamailio's reload_delta (5 s) after the previous test's reload: a refresher run may reload
    (sbc.tmp / "refresher").mkdir()
    install_refresher(sbc.tmp / "refresher")
    peer_list = sbc.etc / "peers" / "dispatcher.list"
    listed = peer_list.read_text()
    _set_peers(sbc.dns, {"p1.acg-lab.commsgw.test": "127.0.212.1", "p7.acg-lab.commsgw.test": "127.0.212.7"})
    state = state_dir_for(str(sbc.etc))

    def refresh() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(sbc.tmp / "refresher" / "commsgw-srv-refresh"),
                               "--spec", str(sbc.etc / "commsgw-srv.json"), "--force", "--allowed-dir",
                               str(sbc.live / "run"), "--allowed-dir", str(sbc.etc / "peers"), "--nameserver", sbc.dns.nameservers[0], "--dns-timeout", "2"],
                              capture_output=True, text=True, timeout=60, check=False)

    acquire(state, "run-B", controller="ops@controller-b")
    try:
        during = refresh()
        assert peer_list.read_text() == listed, "the refresher rewrote the list during a push"
        assert "run skipped: a push holds this SBC: run run-B" in during.stderr, during.stderr
    finally:
        release(state, "run-B")
    after = refresh()  # the same run once the push is over: it does write, so the check above could fail
    assert "127.0.212.7" in peer_list.read_text(), after.stderr
    _play(["playbooks/onboard.yml"], sbc.inventory)
