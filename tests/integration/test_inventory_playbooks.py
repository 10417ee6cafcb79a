# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Careless inventories through real ansible-playbook runs (issue 13, items 7 and 8).

Each test writes a small lab inventory, runs validate.yml, plan.yml or render.yml and reads what
the operator sees. DNS is a real Knot (tests/harness/dns.py) on a leased 127.0.53.x address; the
SRV targets are loopback addresses of this module's own (127.0.201.x), only ever written into plans.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness.dns import DnsServer  # noqa: E402

pytestmark = pytest.mark.integration

DOMAIN = "acg-t13.commsgw.test"
HOSTNAME = "pstn-region1." + DOMAIN
SRV = "_sip._tls." + HOSTNAME  # the record name is _sip._tls whatever the transport
RANGE = "127.0.201.0/28"
RIGHT_PEER, WRONG_PEER = "127.0.201.1", "127.0.201.9"
PLAYBOOK_TIMEOUT_S = 180


def _deployment(**changes: t.Any) -> dict[str, t.Any]:
    deployment = {
        "name": "t13", "type": "lab", "base_domain": DOMAIN, "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True, "acg_transport": "udp",
        "service_regions": [{"name": "region1", "azure_region": "westeurope", "hostname": HOSTNAME,
                             "ip_ranges": [RANGE]}],
        "sites": [{"name": "lab", "service_region": "region1"}],
        "emergency_dial_strings": ["112"]}
    deployment.update(changes)
    return deployment


def _two_sites(first: str, second: str) -> dict[str, t.Any]:
    """A production deployment: two regions, sites ``first`` and ``second``."""
    region2 = {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2." + DOMAIN,
               "ip_ranges": ["127.0.201.16/28"]}
    return _deployment(type="production", service_regions=[_deployment()["service_regions"][0], region2],
                       sites=[{"name": first, "service_region": "region1"},
                              {"name": second, "service_region": "region2"}])


def _sbc_settings(tmp: Path, host: str) -> dict[str, t.Any]:
    return {"acg_listen": {"address": "127.0.202.1", "port": 5060},
            "core_listen": {"address": "127.0.203.1", "port": 5060, "transport": "udp"},
            "core_next_hop": "127.0.204.1:5060",
            "config_dir": str(tmp / "etc" / host), "run_dir": str(tmp / "run" / host)}


def _inventory(tmp: Path, groups: t.Mapping[str, t.Mapping[str, t.Any]], hosts: t.Mapping[str, t.Sequence[str]],
               host_vars: t.Optional[t.Mapping[str, t.Mapping[str, t.Any]]] = None) -> Path:
    """``groups``: group name -> its group_vars; ``hosts``: host -> its groups (children of acg_t13)."""
    inv = tmp / "inventory"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "host_vars").mkdir()
    children: dict[str, t.Any] = {}
    for host, member_of in hosts.items():
        for group in member_of:
            children.setdefault(group, {"hosts": {}})["hosts"][host] = {
                "ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    (inv / "hosts.yml").write_text(json.dumps({"all": {"children": {"acg_t13": {"children": children}}}}))
    for group, variables in groups.items():
        (inv / "group_vars" / ("%s.yml" % group)).write_text(json.dumps(variables))
    for host, variables in (host_vars or {}).items():
        (inv / "host_vars" / ("%s.yml" % host)).write_text(json.dumps(variables))
    return inv / "hosts.yml"


def _play(args: list[str], inventory: Path) -> subprocess.CompletedProcess[str]:
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory)] + args
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    return subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True,
                          timeout=PLAYBOOK_TIMEOUT_S, check=False)


def _output(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def knot(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[tuple[DnsServer, DnsServer]]:
    """Split horizon: ``right`` answers the deployment's records as the operator configured them,
    ``wrong`` (standing in for the controller's own resolver) with another peer."""
    tmp = tmp_path_factory.mktemp("t13-dns")
    right = DnsServer.start_on_free_address(tmp / "right", first=200)
    try:
        wrong = DnsServer.start_on_free_address(tmp / "wrong", first=210)
    except Exception:
        right.stop()
        raise
    try:
        for server, peer in ((right, RIGHT_PEER), (wrong, WRONG_PEER)):
            server.set_records(srv={SRV: [(10, 50, 5060, "p1." + DOMAIN)]}, a={"p1." + DOMAIN: [peer]}, ttl=30)
        yield right, wrong
    finally:
        wrong.stop()
        right.stop()


def _site_groups(**extra: t.Any) -> dict[str, dict[str, t.Any]]:
    return {"site_lab": {"commsgw_site": "lab"}, **extra}


# -- commsgw_dns_nameservers in the deployment's own group_vars ----------------------------------------
@pytest.mark.parametrize("playbook", ["plan.yml", "validate.yml"])
def test_nameservers_in_the_deployments_group_vars_are_the_ones_asked(
        tmp_path: Path, knot: tuple[DnsServer, DnsServer], playbook: str) -> None:
    """README: commsgw_dns_nameservers in any group_vars. Set in the deployment's group (which only the
    SBC hosts see), it must be asked, not the controller's resolver (split horizon: wrong peers)."""
    right, wrong = knot
    inventory = _inventory(
        tmp_path, _site_groups(acg_t13={"commsgw_deployment": _deployment(), "commsgw_dns_nameservers": [right.address]}),
        {"sbc-t13-1": ["site_lab"]},
        # The controller's own resolver (localhost's view), answering for the other side of the horizon.
        host_vars={"localhost": {"commsgw_dns_nameservers": [wrong.address]}})
    plans = tmp_path / "plans"
    plans.mkdir()
    if playbook == "plan.yml":
        args = ["playbooks/plan.yml", "-e", "commsgw_resolve=true", "-e", "commsgw_plan_dir=%s" % plans]
    else:
        args = ["playbooks/validate.yml", "-e", "commsgw_srv_audit=true", "-e", "commsgw_check_provisioning_ttl=false",
                "-v"]
    proc = _play(args, inventory)
    out = _output(proc)
    assert proc.returncode == 0, out[-5000:]
    assert "via %s" % wrong.address not in out
    if playbook == "plan.yml":
        plan = json.loads((plans / "t13__lab.json").read_text())
        addresses = [a for group in plan["trunk_groups"] for peer in group["peers"] for a in peer["addresses"]]
        assert addresses == [RIGHT_PEER], plan["trunk_groups"]
    else:
        assert RIGHT_PEER in out and WRONG_PEER not in out, out[-5000:]


def test_nameservers_set_for_one_site_only_are_refused(tmp_path: Path, knot: tuple[DnsServer, DnsServer]) -> None:
    """Hosts of one deployment seeing different nameservers: refused, never asked of another resolver."""
    right, dummy = knot
    inventory = _inventory(
        tmp_path, {"acg_t13": {"commsgw_deployment": _two_sites("lab", "lab2")},
                   "site_lab": {"commsgw_site": "lab", "commsgw_dns_nameservers": [right.address]},
                   "site_lab2": {"commsgw_site": "lab2"}},
        {"sbc-t13-1": ["site_lab"], "sbc-t13-2": ["site_lab2"]})
    proc = _play(["playbooks/plan.yml", "-e", "commsgw_resolve=true"], inventory)
    out = _output(proc)
    assert proc.returncode != 0
    assert ("hosts[sbc-t13-2].commsgw_dns_nameservers: is not set while host sbc-t13-1 of the same deployment sets "
            "it") in " ".join(out.split()), out[-4000:]
    assert "filter plugin" not in out


# -- issue 25 item 7: bad DNS settings are reported by the validate step, with the field path ---------------
BAD_NAMESERVER = ("hosts[sbc-t13-1].commsgw_dns_nameservers[0]: is not an IP address (got 'localhost'; expected an "
                  "IPv4 or IPv6 address, e.g. 192.0.2.53 (a name cannot be resolved before a resolver is chosen))")
DNS_PLAYS = {
    "validate.yml": ["playbooks/validate.yml"],
    "validate.yml srv audit": ["playbooks/validate.yml", "-e", "commsgw_srv_audit=true"],
    "plan.yml": ["playbooks/plan.yml", "-e", "commsgw_resolve=true"],
    "render.yml": ["playbooks/render.yml"],
}


def _no_filter_failure(out: str) -> None:
    """What the operator must never see for bad input: a filter's failure and an exception class."""
    for words in ("filter plugin", "DnsSettingsError", "AnsibleFilterError", "Traceback"):
        assert words not in out, (words, out[-4000:])


@pytest.mark.parametrize("play", sorted(DNS_PLAYS))
@pytest.mark.parametrize("how", ["group_vars", "extra_vars"])
def test_a_nameserver_given_as_a_name_is_a_validation_error(tmp_path: Path, play: str, how: str) -> None:
    groups = {"commsgw_deployment": _deployment()}
    extra = ["-e", json.dumps({"commsgw_dns_nameservers": ["localhost"]})] if how == "extra_vars" else []
    if how == "group_vars":
        groups["commsgw_dns_nameservers"] = ["localhost"]
    render = tmp_path / "render"
    inventory = _inventory(tmp_path, _site_groups(acg_t13=groups), {"sbc-t13-1": ["site_lab"]},
                           host_vars={"sbc-t13-1": {"commsgw_sbc": _sbc_settings(tmp_path, "sbc-t13-1")}})
    proc = _play(DNS_PLAYS[play] + ["-e", "commsgw_render_dir=%s" % render, "-e", "kamailio_version=6.0.1"] + extra,
                 inventory)
    out = _output(proc)
    assert proc.returncode != 0, out[-4000:]
    assert "deployment t13: " + BAD_NAMESERVER in " ".join(out.split()), out[-4000:]
    assert "TASK [Check the inventory" in out, out[-4000:]
    _no_filter_failure(out)
    # Never dnspython's own wording (it wants an IP address and says so in its terms).
    assert "does not appear to be an IPv4 or IPv6 address" not in out
    assert not render.exists()


@pytest.mark.parametrize("play", ["validate.yml srv audit", "plan.yml", "render.yml"])
def test_a_nameserver_given_as_a_string_is_used_with_a_warning(
        tmp_path: Path, knot: tuple[DnsServer, DnsServer], play: str) -> None:
    right, dummy = knot
    render = tmp_path / "render"
    inventory = _inventory(
        tmp_path, _site_groups(acg_t13={"commsgw_deployment": _deployment(), "commsgw_dns_nameservers": right.address}),
        {"sbc-t13-1": ["site_lab"]}, host_vars={"sbc-t13-1": {"commsgw_sbc": _sbc_settings(tmp_path, "sbc-t13-1")}})
    proc = _play(DNS_PLAYS[play] + ["-e", "commsgw_render_dir=%s" % render, "-e", "kamailio_version=6.0.1",
                                    "-e", "commsgw_check_provisioning_ttl=false", "-v"], inventory)
    out = _output(proc)
    assert proc.returncode == 0, out[-4000:]
    assert ("[WARNING]: deployment t13: hosts[sbc-t13-1].commsgw_dns_nameservers: is a string, read as a list of "
            "one nameserver (got '%s'; expected a list of IP addresses, e.g. ['192.0.2.53'])" % right.address) in \
        " ".join(out.split()), out[-4000:]
    _no_filter_failure(out)
    # The string's nameserver was the one asked: the right side of the split horizon.
    if play == "render.yml":
        assert RIGHT_PEER in (render / "sbc-t13-1" / "peers" / "dispatcher.list").read_text()  # render.yml: peers/
    else:
        assert RIGHT_PEER in out and WRONG_PEER not in out, out[-4000:]


# -- each problem printed once -------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["playbooks/validate.yml"],                              # validate_inventory
    ["playbooks/plan.yml"],                                  # routing_plan (offline)
    ["playbooks/plan.yml", "-e", "commsgw_resolve=true"],    # srv_audit refuses the invalid deployment first
])
def test_each_problem_is_printed_once(tmp_path: Path, args: list[str]) -> None:
    broken = _deployment(routing={"invite_timer_ms": 15}, emergency_dial_strings=["11x"])
    inventory = _inventory(tmp_path, _site_groups(acg_t13={"commsgw_deployment": broken}), {"sbc-t13-1": ["site_lab"]})
    proc = _play(args, inventory)
    out = _output(proc)
    assert proc.returncode != 0
    for needle in ("routing.invite_timer_ms: is out of range (got 15; expected an integer from 500 to 32000) [R-14]",
                   "emergency_dial_strings[0]: is not a dial string (got '11x'"):
        assert out.count(needle) == 1, (needle, out)
    # Nor in other words (no per-field mappings repeating the lines).
    assert out.count("is out of range") == 1 and out.count("is not a dial string") == 1, out


# -- one host in two site groups -------------------------------------------------------------------------
def test_a_host_in_two_site_groups_is_refused_naming_both(tmp_path: Path) -> None:
    deployment = _two_sites("amsterdam", "dublin")
    inventory = _inventory(
        tmp_path, {"acg_t13": {"commsgw_deployment": deployment}, "site_amsterdam": {"commsgw_site": "amsterdam"},
                   "site_dublin": {"commsgw_site": "dublin"}},
        {"sbc-ams-1": ["site_amsterdam", "site_dublin"], "sbc-dub-1": ["site_dublin"]})
    proc = _play(["playbooks/validate.yml"], inventory)
    out = _output(proc)
    assert proc.returncode != 0, out[-3000:]
    assert "hosts[sbc-ams-1].commsgw_site: is set by more than one group the host is in: site_amsterdam " \
           "(commsgw_site: amsterdam), site_dublin (commsgw_site: dublin)" in out, out[-3000:]
    # The other host is in one site group only.
    assert "hosts[sbc-dub-1].commsgw_site" not in out


# -- kamailio_version: only N.N.N reaches kamailio.cfg ---------------------------------------------------
def _render_inventory(tmp: Path, right: DnsServer, **host_extra: t.Any) -> Path:
    return _inventory(
        tmp, _site_groups(acg_t13={"commsgw_deployment": _deployment(), "commsgw_dns_nameservers": [right.address]}),
        {"sbc-t13-1": ["site_lab"]},
        host_vars={"sbc-t13-1": {"commsgw_sbc": _sbc_settings(tmp, "sbc-t13-1"), **host_extra}})


@pytest.mark.parametrize("how", ["extra_vars", "role_var"])
def test_a_kamailio_version_with_a_newline_is_refused(tmp_path: Path, knot: tuple[DnsServer, DnsServer],
                                                      how: str) -> None:
    right, dummy = knot
    evil = '6.0.1\nloadmodule "/tmp/evil.so"'
    render = tmp_path / "render"
    if how == "extra_vars":
        inventory = _render_inventory(tmp_path, right)
        args = ["-e", json.dumps({"kamailio_version": evil})]
    else:
        inventory = _render_inventory(tmp_path, right, kamailio_version=evil)
        args = []
    proc = _play(["playbooks/render.yml", "-e", "commsgw_render_dir=%s" % render] + args, inventory)
    out = _output(proc)
    assert proc.returncode != 0
    assert "kamailio_version: '6.0.1\\nloadmodule \"/tmp/evil.so\"' is not a Kamailio version; expected N.N.N" in out, \
        out[-4000:]
    assert not (render / "sbc-t13-1" / "kamailio.cfg").exists()


@pytest.mark.parametrize("printed, ok", [
    ("version: kamailio 6.0.1 (x86_64/linux) 4e8ae5\nflags: USE_TCP", True),
    ("kamailio: error while loading shared libraries", False),
])
def test_the_kamailio_v_parse_path(tmp_path: Path, knot: tuple[DnsServer, DnsServer], printed: str, ok: bool) -> None:
    """Without kamailio_version the role reads `kamailio -v` (here a stand-in printing ``printed``)."""
    right, dummy = knot
    fake = tmp_path / "kamailio"
    fake.write_text("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % printed)
    fake.chmod(0o755)
    render = tmp_path / "render"
    inventory = _render_inventory(tmp_path, right, kamailio_binary=str(fake))
    proc = _play(["playbooks/render.yml", "-e", "commsgw_render_dir=%s" % render], inventory)
    out = _output(proc)
    if ok:
        assert proc.returncode == 0, out[-4000:]
        assert (render / "sbc-t13-1" / "kamailio.cfg").read_text().splitlines()[3].startswith("# Kamailio 6.0.1.")
    else:
        assert proc.returncode != 0
        assert "kamailio_version: '' is not a Kamailio version; expected N.N.N" in out, out[-4000:]
