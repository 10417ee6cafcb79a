# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SRV refresher's decisions, with a fake resolver and a reload counter (no DNS, no Kamailio).

The input files are rendered by the real renderer from a real plan, so "unchanged record set ->
byte-identical file" is checked against what the push writes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import refresher
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import JsonRpc, RpcEndpoints, RpcError
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import SrvAnswer, SrvTarget
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio
from tests.harness.refresher_install import install_refresher

SRV = "_sip._tls.pstn-region1.acg-lab.commsgw.test"
DEPLOYMENT = {
    "name": "lab", "type": "lab", "base_domain": "acg-lab.commsgw.test", "management_region": "West Europe",
    "allow_non_public_ranges": True, "allow_plain_transport": True,
    "acg_transport": "udp",
    "service_regions": [{"name": "region1", "azure_region": "westeurope",
                         "hostname": "pstn-region1.acg-lab.commsgw.test", "ip_ranges": ["127.0.10.0/28"]}],
    "sites": [{"name": "lab", "service_region": "region1"}],
}


def _answer(peers: t.Sequence[tuple[int, int, str, str]], ttl: int = 60) -> SrvAnswer:
    return SrvAnswer(SRV, ttl, tuple(SrvTarget(p, w, 5060, name, (addr,)) for p, w, name, addr in peers))


TWO = [(10, 60, "p1.acg-lab.commsgw.test", "127.0.10.1"), (10, 40, "p2.acg-lab.commsgw.test", "127.0.10.2")]


@pytest.fixture()
def spec(tmp_path: Path) -> dict[str, t.Any]:
    deployment, findings = validate_deployment(DEPLOYMENT, [Sbc("sbc1", "lab")])
    assert not findings.errors, findings.errors
    resolved = {SRV: {"name": SRV, "ttl": 60, "targets": [
        {"priority": p, "weight": w, "port": 5060, "target": n, "addresses": [a]} for p, w, n, a in TWO]}}
    plan = build_site_plan(deployment, deployment.sites[0], resolved)
    settings = {"acg_listen": {"address": "127.0.20.1"}, "core_listen": {"address": "127.0.30.1"},
                "core_next_hop": "127.0.31.1:5060", "config_dir": str(tmp_path), "run_dir": str(tmp_path / "run")}
    for name, content in render_kamailio(plan, settings, "5.6.3").items():
        path = Path(file_path(str(tmp_path), name))  # dispatcher.list: in peers/, as the push puts it
        path.parent.mkdir(exist_ok=True)
        path.write_text(content)
    return refresher.load_spec(str(tmp_path / "commsgw-srv.json"))


class Reloads:
    def __init__(self, fail: bool = False) -> None:
        self.count = 0
        self.fail = fail

    def __call__(self) -> None:
        self.count += 1
        if self.fail:
            raise refresher.RpcError("no Kamailio")


def _resolver(answer: t.Union[SrvAnswer, Exception]) -> t.Callable[[str], SrvAnswer]:
    def resolve(name: str) -> SrvAnswer:
        assert name == SRV
        if isinstance(answer, Exception):
            raise answer
        return answer
    return resolve


def test_unchanged_record_set_keeps_the_rendered_file_and_does_not_reload(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    # Same peers, another TTL and another order: no real change.
    outcome = refresher.refresh(spec, _resolver(_answer(list(reversed(TWO)), ttl=30)), reloads, now=1000.0)
    assert outcome.resolved == [SRV] and not outcome.errors
    assert not outcome.written and reloads.count == 0
    assert Path(spec["dispatcher_list"]).read_text() == before


def test_changed_record_set_rewrites_and_reloads_once(spec: dict[str, t.Any]) -> None:
    reloads = Reloads()
    new = [(10, 60, "p1.acg-lab.commsgw.test", "127.0.10.1"), (10, 40, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    outcome = refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1000.0)
    text = Path(spec["dispatcher_list"]).read_text()
    assert outcome.written and outcome.reloaded and reloads.count == 1
    assert "sip:127.0.10.3:5060;transport=udp" in text and "127.0.10.2" not in text
    # Next run within the TTL: nothing is due, nothing resolved, no reload.
    outcome = refresher.refresh(spec, _resolver(RuntimeError("must not be asked")), reloads, now=1030.0)
    assert outcome.resolved == [] and reloads.count == 1 and 0 < outcome.next_due_s <= 30
    # After the TTL, the same answer again: no reload.
    outcome = refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1061.0)
    assert outcome.resolved == [SRV] and reloads.count == 1


def test_target_outside_the_28_is_refused_and_old_list_kept(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    hijacked = TWO + [(10, 10, "evil.example.test", "192.0.2.66")]
    outcome = refresher.refresh(spec, _resolver(_answer(hijacked)), reloads, now=1000.0)
    assert outcome.refused == [SRV] and any("192.0.2.66" in e for e in outcome.errors)
    assert reloads.count == 0 and Path(spec["dispatcher_list"]).read_text() == before


def test_dns_failure_is_logged_and_old_list_kept(spec: dict[str, t.Any], caplog: pytest.LogCaptureFixture) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    outcome = refresher.refresh(spec, _resolver(refresher.RefreshError("SRV %s: no answer within 3.0 s" % SRV)),
                                reloads, now=1000.0)
    assert outcome.failed == [SRV] and reloads.count == 0
    assert Path(spec["dispatcher_list"]).read_text() == before
    assert "no answer within" in caplog.text
    assert outcome.next_due_s == refresher.RETRY_AFTER_FAILURE_S


def test_failed_lookup_after_a_good_one_keeps_the_last_good_peers(spec: dict[str, t.Any]) -> None:
    reloads = Reloads()
    new = [(10, 50, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1000.0)
    after_change = Path(spec["dispatcher_list"]).read_text()
    outcome = refresher.refresh(spec, _resolver(refresher.RefreshError("SERVFAIL")), reloads, now=2000.0)
    assert outcome.failed == [SRV] and reloads.count == 1
    assert Path(spec["dispatcher_list"]).read_text() == after_change


def test_failed_reload_puts_the_old_file_back_and_retries(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    new = [(10, 50, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    outcome = refresher.refresh(spec, _resolver(_answer(new)), Reloads(fail=True), now=1000.0)
    assert not outcome.written and any("dispatcher.reload failed" in e for e in outcome.errors)
    assert Path(spec["dispatcher_list"]).read_text() == before
    reloads = Reloads()
    outcome = refresher.refresh(spec, _resolver(_answer(new)), reloads, now=1000.0 + refresher.RETRY_AFTER_FAILURE_S)
    assert outcome.reloaded and reloads.count == 1


def test_new_priority_tier_needs_a_render_and_is_not_applied(spec: dict[str, t.Any]) -> None:
    before = Path(spec["dispatcher_list"]).read_text()
    reloads = Reloads()
    tiered = TWO + [(20, 10, "p4.acg-lab.commsgw.test", "127.0.10.4")]
    outcome = refresher.refresh(spec, _resolver(_answer(tiered)), reloads, now=1000.0)
    assert any("tiers changed" in e for e in outcome.errors)
    assert reloads.count == 0 and Path(spec["dispatcher_list"]).read_text() == before


def test_spec_names_the_rendered_rpc_endpoints(spec: dict[str, t.Any]) -> None:
    rpc = refresher.rpc_for(spec)
    assert rpc.endpoints.socket and rpc.endpoints.socket.endswith("/run/kamailio_rpc.sock")
    assert json.loads(Path(spec["_path"]).read_text())["schema_version"] == refresher.SCHEMA_VERSION


# --- what the refresher may touch: the spec's directory and --allowed-dir only

def _respec(spec: dict[str, t.Any], **changes: t.Any) -> str:
    """Rewrite commsgw-srv.json with ``changes`` and return its path."""
    path = Path(spec["_path"])
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))
    return str(path)


def test_spec_paths_outside_the_allowed_dirs_are_refused(spec: dict[str, t.Any], tmp_path: Path) -> None:
    outside = tmp_path.parent / (tmp_path.name + "-elsewhere")
    outside.mkdir()
    for key in ("dispatcher_list", "rpc_socket", "rpc_fifo"):
        path = _respec(spec, **{key: str(outside / "target")})
        with pytest.raises(refresher.SpecPathError, match="outside the allowed directories"):
            refresher.load_spec(path)
        _respec(spec, **{key: spec[key] if key != "dispatcher_list" else "dispatcher.list"})
    # The run dir given with --allowed-dir is fine for the RPC endpoints.
    path = _respec(spec, rpc_socket=str(outside / "kamailio_rpc.sock"))
    assert refresher.load_spec(path, [str(outside)])["rpc_socket"] == str(outside / "kamailio_rpc.sock")
    assert not (outside / "target").exists()


def test_symlink_escaping_the_allowed_dirs_is_refused(spec: dict[str, t.Any], tmp_path: Path) -> None:
    outside = tmp_path.parent / (tmp_path.name + "-victim")
    outside.mkdir()
    victim = outside / "victim.list"
    victim.write_text("keep me\n")
    (tmp_path / "escape.list").symlink_to(victim)
    (tmp_path / "escape-dir").symlink_to(outside)
    for name in ("escape.list", "escape-dir/victim.list"):
        with pytest.raises(refresher.SpecPathError, match="really %s" % victim):
            refresher.load_spec(_respec(spec, dispatcher_list=name))
    assert victim.read_text() == "keep me\n"


def test_dotdot_is_refused_even_when_it_resolves_inside(spec: dict[str, t.Any], tmp_path: Path) -> None:
    for key, value in (("dispatcher_list", "run/../dispatcher.list"),
                       ("rpc_socket", str(tmp_path / "run" / ".." / "run" / "kamailio_rpc.sock"))):
        with pytest.raises(refresher.SpecPathError, match=r"contains '\.\.'"):
            refresher.load_spec(_respec(spec, **{key: value}))
        _respec(spec, **{key: "dispatcher.list" if key == "dispatcher_list" else spec[key]})


def test_endpoints_from_kamailio_cfg_are_held_to_the_same_dirs(spec: dict[str, t.Any], tmp_path: Path) -> None:
    # No endpoint in the spec: they come from kamailio.cfg, whose run dir here is /run/kamailio.
    cfg = tmp_path / "kamailio.cfg"
    cfg.write_text(cfg.read_text().replace(str(tmp_path / "run"), "/run/kamailio"))
    loaded = refresher.load_spec(_respec(spec, rpc_socket=None, rpc_fifo=None))
    with pytest.raises(refresher.SpecPathError, match="/run/kamailio/kamailio_rpc.sock is outside"):
        refresher.rpc_for(loaded)
    loaded = refresher.load_spec(loaded["_path"], ["/run/kamailio"])
    assert refresher.rpc_for(loaded).endpoints.socket == "/run/kamailio/kamailio_rpc.sock"


def test_symlinked_dispatcher_list_is_never_replaced(spec: dict[str, t.Any], tmp_path: Path) -> None:
    real = tmp_path / "real.list"
    listed = Path(spec["dispatcher_list"])
    real.write_text(listed.read_text())
    listed.unlink()
    listed.symlink_to(real)  # inside the config dir, but a symlink: refused at load time
    with pytest.raises(refresher.SpecPathError, match="not a regular file"):
        refresher.load_spec(spec["_path"])
    # And at write time, if it became one after the spec was read.
    listed.unlink()
    listed.write_text(real.read_text())
    loaded = refresher.load_spec(spec["_path"])
    listed.unlink()
    listed.symlink_to(real)
    before = real.read_text()
    reloads = Reloads()
    new = [(10, 50, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    outcome = refresher.refresh(loaded, _resolver(_answer(new)), reloads, now=1000.0)
    assert outcome.unsafe == [str(listed)] and not outcome.written and reloads.count == 0
    assert listed.is_symlink() and real.read_text() == before


def test_written_files_get_the_kamailio_group_and_0640(spec: dict[str, t.Any]) -> None:
    gid = os.getgid()  # a group the test may give; the unit passes kamailio
    new = [(10, 50, "p3.acg-lab.commsgw.test", "127.0.10.3")]
    outcome = refresher.refresh(spec, _resolver(_answer(new)), Reloads(), now=1000.0, file_gid=gid)
    assert outcome.written
    for path in (Path(spec["dispatcher_list"]), Path(spec["_path"]).parent / ".commsgw-srv-state.json"):
        info = path.stat()
        assert stat.S_IMODE(info.st_mode) == 0o640 and info.st_gid == gid, path


def test_installed_script_refuses_an_outside_spec_with_status_2(spec: dict[str, t.Any], tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    install_refresher(bin_dir)  # as the role installs it
    victim = tmp_path.parent / (tmp_path.name + "-script") / "dispatcher.list"
    victim.parent.mkdir()
    path = _respec(spec, dispatcher_list=str(victim))
    run = subprocess.run([sys.executable, str(bin_dir / "commsgw-srv-refresh"), "--spec", path, "--force",
                          "--nameserver", "127.0.0.1", "--dns-port", "9", "--dns-timeout", "0.5"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2, run.stderr
    assert "outside the allowed directories" in run.stderr
    assert not victim.exists() and not (tmp_path / ".commsgw-srv-state.json").exists()


# --- the jsonrpcs client: only a real socket / FIFO gets a request, replies come back via the run dir

def test_regular_files_and_symlinks_never_get_a_request(tmp_path: Path) -> None:
    sock, fifo = tmp_path / "rpc.sock", tmp_path / "rpc.fifo"
    sock.write_text("")
    fifo.write_text("")
    rpc = JsonRpc(RpcEndpoints(str(sock), str(fifo), str(tmp_path)), timeout_s=0.5)
    with pytest.raises(RpcError, match="not a socket.*not a FIFO"):
        rpc.call("core.version")
    assert sock.read_text() == "" and fifo.read_text() == ""
    # A symlink to a real FIFO is not followed either.
    real = tmp_path / "real.fifo"
    os.mkfifo(real)
    reader = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
    try:
        link = tmp_path / "link.fifo"
        link.symlink_to(real)
        with pytest.raises(RpcError, match="not a FIFO"):
            JsonRpc(RpcEndpoints(None, str(link), str(tmp_path)), timeout_s=0.5).call("core.version")
        assert os.read(reader, 4096) == b""
    finally:
        os.close(reader)


@pytest.fixture
def short_dir() -> t.Iterator[Path]:
    """A directory with a short path: a reply socket under a long one (a deep --basetemp) would not fit
    sun_path, and the client then rightly falls back to the temp dir, which is not what these tests show."""
    path = Path(tempfile.mkdtemp(prefix="cgw-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _stand_in_kamailio(run: Path, seen: dict[str, t.Any]) -> tuple[socket.socket, threading.Thread]:
    """A datagram socket at Kamailio's place that answers one request and notes the sender's address."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(run / "kamailio_rpc.sock"))

    def answer() -> None:
        server.settimeout(5)
        data, sender = server.recvfrom(65536)
        seen.update(sender=sender, listing=sorted(os.listdir(run)))
        if isinstance(sender, str) and sender.startswith("/"):
            info, parent = os.stat(sender), os.stat(os.path.dirname(sender))
            seen.update(mode=stat.S_IMODE(info.st_mode), uid=info.st_uid, dir_uid=parent.st_uid)
        server.sendto(json.dumps({"jsonrpc": "2.0", "id": json.loads(data)["id"], "result": "ok"}).encode(), sender)

    thread = threading.Thread(target=answer)
    thread.start()
    return server, thread


def test_reply_address_is_abstract_and_nothing_is_made_in_the_run_dir(short_dir: Path) -> None:
    """Issue 21 item 3: the reply address is an abstract one (no file, nothing to chown in a directory
    Kamailio's user controls); a stand-in Kamailio answers on a real datagram socket."""
    run = short_dir / "run"
    run.mkdir(mode=0o770)
    seen: dict[str, t.Any] = {}
    server, thread = _stand_in_kamailio(run, seen)
    try:
        assert JsonRpc(RpcEndpoints(str(run / "kamailio_rpc.sock"), None), timeout_s=5).call("core.version") == "ok"
    finally:
        thread.join(timeout=10)
        server.close()
    assert isinstance(seen["sender"], bytes) and seen["sender"].startswith(b"\0commsgw-rpc-")
    assert seen["listing"] == ["kamailio_rpc.sock"] and os.listdir(run) == ["kamailio_rpc.sock"]


def test_reply_dir_socket_is_private_and_gone_afterwards(short_dir: Path) -> None:
    """``reply_dir`` (the candidate's scratch dir, its own): a 0600 socket there, removed after the call."""
    run, replies = short_dir / "run", short_dir / "replies"
    run.mkdir()
    replies.mkdir(mode=0o711)
    seen: dict[str, t.Any] = {}
    server, thread = _stand_in_kamailio(run, seen)
    try:
        rpc = JsonRpc(RpcEndpoints(str(run / "kamailio_rpc.sock"), None), timeout_s=5, kamailio_user=os.geteuid(),
                      reply_dir=str(replies))
        assert rpc.call("core.version") == "ok"
    finally:
        thread.join(timeout=10)
        server.close()
    assert os.path.dirname(seen["sender"]) == str(replies) and seen["mode"] == 0o600
    assert os.listdir(replies) == []


@pytest.mark.parametrize("mode", [0o770, 0o757], ids=["group-writable", "world-writable"])
def test_reply_dir_others_may_write_is_refused(short_dir: Path, mode: int) -> None:
    replies = short_dir / "replies"
    replies.mkdir()
    os.chmod(replies, mode)
    run = short_dir / "run"
    run.mkdir()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(run / "kamailio_rpc.sock"))
    try:
        with pytest.raises(RpcError, match="writable by nobody else"):
            JsonRpc(RpcEndpoints(str(run / "kamailio_rpc.sock"), None), 1, reply_dir=str(replies)).call("core.version")
    finally:
        server.close()
    assert os.listdir(replies) == []


def test_installed_libraries_import_without_the_collection(tmp_path: Path) -> None:
    """The shipped set (lookup shipped_code) holds everything kamailio/refresher.py imports on the SBC host."""
    install_refresher(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ANSIBLE_COLLECTIONS_PATH")}
    run = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from kamailio import refresher; "
                          "print(refresher.__file__)", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, check=False, env=env, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tmp_path / "kamailio" / "refresher.py")


# --- issue 21 item 14: a refresher failing for days is visible

def test_failing_runs_are_counted_and_turn_stale_after_max_age(spec: dict[str, t.Any]) -> None:
    failing = _resolver(refresher.RefreshError("SERVFAIL"))
    outcome = refresher.refresh(spec, _resolver(_answer(TWO)), Reloads(), now=1000.0, max_age_s=600)
    assert outcome.stale is None
    outcome = refresher.refresh(spec, failing, Reloads(), now=2000.0, force=True, max_age_s=600)
    state = refresher.load_state(spec, None)["health"]
    assert state["consecutive_failures"] == 1 and state["last_success"] == 1000.0
    assert outcome.stale and "no good run for 1000 s (limit 600 s), 1 failed run(s) in a row" in outcome.stale
    outcome = refresher.refresh(spec, _resolver(_answer(TWO)), Reloads(), now=2100.0, force=True, max_age_s=600)
    assert outcome.stale is None and refresher.load_state(spec, None)["health"]["consecutive_failures"] == 0


def test_stale_refresher_exits_3_and_the_probe_view_names_it(spec: dict[str, t.Any], tmp_path: Path) -> None:
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.probe_view import refresher_health
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    install_refresher(bin_dir)
    state_dir = Path(spec["dispatcher_list"]).parent
    state = {"digest": spec["_digest"], "records": {},
             "health": {"first_run": 1.0, "last_success": 1.0, "last_run": 1.0, "consecutive_failures": 3}}
    (state_dir / ".commsgw-srv-state.json").write_text(json.dumps(state))
    run = subprocess.run([sys.executable, str(bin_dir / "commsgw-srv-refresh"), "--spec", spec["_path"], "--force",
                          "--state-dir", str(state_dir), "--max-age", "60", "--nameserver", "127.0.0.1",
                          "--dns-port", "9", "--dns-timeout", "0.3"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 3, run.stderr
    assert "stale: no good run for" in run.stderr
    health = refresher_health(str(state_dir.parent), 10 ** 10)
    assert health and health["consecutive_failures"] == 4 and "no good run for" in health["stale"]


def test_daemon_pid_file_is_not_written_through_a_symlink(spec: dict[str, t.Any], tmp_path: Path) -> None:
    """Issue 21 item 11: the process-mode loop opens its pid file with O_NOFOLLOW."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    install_refresher(bin_dir)
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    pid_file = tmp_path / "refresher.pid"
    pid_file.symlink_to(victim)
    run = subprocess.run([sys.executable, str(bin_dir / "commsgw-srv-refresh"), "--spec", spec["_path"], "--daemon",
                          "--max-runs", "1", "--pid-file", str(pid_file), "--nameserver", "127.0.0.1",
                          "--dns-port", "9", "--dns-timeout", "0.3"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert victim.read_text() == "keep\n", run.stdout + run.stderr
    assert pid_file.is_symlink()
