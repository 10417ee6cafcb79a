# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The REST client and the push against the stand-in of the documented Mediant REST API
(tests/harness/mediant_sim.py, HTTPS on loopback): credentials, TLS verification, 400 with the
device's line, 409 waited out with a bound, idempotence, rollback after a refused script, and never
a full ini upload (a device reset)."""

from __future__ import annotations

import copy
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import api, ini, push, render
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import change_script, empty_rows, owned_rows
from ansible_collections.commsgw.routing.tests.unit.audiocodes import plans as P
from harness.mediant_sim import Device, MediantServer
from harness.pki import TestCA

PASSWORD = "s3cret-Rest"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("mediant-pki")
    ca = TestCA(base / "ca", name="Mediant stand-in CA")
    issued = ca.issue_server("mediant", dns=["mediant.test"], ips=["127.0.0.23"])
    rogue = TestCA(base / "rogue", name="Unrelated CA")
    return {"ca": ca.cert, "cert": issued.chain, "key": issued.key, "rogue": rogue.cert}


@pytest.fixture
def device(pki: dict[str, Path]) -> t.Iterator[tuple[Device, MediantServer]]:
    server = MediantServer("127.0.0.23", 0, pki["cert"], pki["key"], "admin", PASSWORD).start()
    yield server.device, server
    server.stop()
    assert server.device.resets() == [], "a full ini upload (device reset) was made"


def client(server: MediantServer, pki: dict[str, Path], **options: t.Any) -> api.MediantClient:
    sleeps: list[float] = []
    options.setdefault("ca_file", str(pki["ca"]))
    made = api.MediantClient(server.url, options.pop("user", "admin"), options.pop("password", PASSWORD),
                             conflict_delay_s=0.5, sleep=sleeps.append, timeout_s=10, **options)
    made.sleeps = sleeps  # type: ignore[attr-defined]
    return made


@pytest.fixture(scope="module")
def plans() -> list[dict[str, t.Any]]:
    return P.resolved_plans("production")


def _ours(device: Device, base: int = 100) -> dict[str, t.Any]:
    return owned_rows(ini.rows_from_ini(device.ini()), base)


def test_wrong_password_is_a_credentials_error(device, pki) -> None:
    _device, server = device
    with pytest.raises(api.CredentialsError, match="401"):
        client(server, pki, password="wrong").get_ini()


def test_the_device_certificate_is_verified_against_the_ca_option(device, pki) -> None:
    _device, server = device
    with pytest.raises(api.DeviceError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        client(server, pki, ca_file=str(pki["rogue"])).get_ini()
    unverified = client(server, pki, ca_file=None, verify=False)
    assert unverified.status()["versionID"].startswith("7.40A")
    assert any("not verified" in w for w in unverified.warnings)
    assert "s3cret" not in repr(unverified)


def test_a_refused_line_shows_the_devices_error_line(device, pki) -> None:
    _device, server = device
    with pytest.raises(api.ScriptRejected) as caught:
        client(server, pki).put_incremental("configure voip\n proxy-set 100\n  debug-level 7\n exit\nexit\n")
    assert caught.value.status == 400
    assert any("line 3" in line and "debug-level" in line for line in caught.value.error_lines), caught.value


def test_apply_then_a_second_apply_sends_nothing(device, pki, plans) -> None:
    dev, server = device
    art = render.render(plans[0], P.settings())
    first = push.apply(plans[0], art, client(server, pki))
    assert first["changed"] and first["round_trips"] == 3 and len(dev.scripts()) == 1
    assert first["drift"]  # the empty device did not have the plan
    second = push.apply(plans[0], art, client(server, pki))
    assert not second["changed"] and second["round_trips"] == 1 and second["drift"] == []
    assert len(dev.scripts()) == 1 and second["script"] == ""
    assert push.read_state(client(server, pki), art.identity, 100)["regions"] == first["diff"]["after"]["regions"]
    rows = ini.rows_from_ini(dev.ini())
    assert rows["ip_group"][(0,)]["name"] == "Default_IPG"  # the operator's rows are untouched


def test_check_mode_sends_no_script(device, pki, plans) -> None:
    dev, server = device
    result = push.apply(plans[0], render.render(plans[0], P.settings()), client(server, pki), check_mode=True)
    assert result["changed"] and result["round_trips"] == 1 and dev.scripts() == []
    assert result["script"].startswith("configure network\n")


def test_a_changed_plan_sends_only_its_difference(device, pki, plans) -> None:
    dev, server = device
    push.apply(plans[0], render.render(plans[0], P.settings()), client(server, pki))
    changed = copy.deepcopy(plans[0])
    changed["trunk_groups"][0]["peers"][0]["weight"] = 70
    del changed["trunk_groups"][1]["peers"][2]
    result = push.apply(changed, render.render(changed, P.settings()), client(server, pki))
    assert result["changed"] and result["round_trips"] == 3
    assert dev.scripts()[-1] == ("configure network\n no dns dns-to-ip 105\nexit\n"  # the target left
                                 "configure voip\n proxy-ip 100/0\n  weight 70\n  activate\n exit\n"
                                 " no proxy-ip 101/2\nexit\n")
    assert [(s["action"], s["table"]) for s in result["steps"]] == [
        ("remove", "Dns2Ip"), ("change", "ProxyIp"), ("remove", "ProxyIp")]


def test_internal_dns_names_moving_to_other_rows_are_accepted(device, pki, plans) -> None:
    """The Internal DNS rows are in name order: dropping the first target moves every later name one row up. The
    device refuses a second row of one name, so changed rows are removed before they are written again (a migration
    narrowing to the new peers did exactly this against the stand-in)."""
    dev, server = device
    push.apply(plans[0], render.render(plans[0], P.settings()), client(server, pki))
    changed = copy.deepcopy(plans[0])
    group, peer = min(((g, p) for g, tg in enumerate(changed["trunk_groups"]) for p in range(len(tg["peers"]))),
                      key=lambda gp: changed["trunk_groups"][gp[0]]["peers"][gp[1]]["target"])
    del changed["trunk_groups"][group]["peers"][peer]
    wanted = render.render(changed, P.settings())
    result = push.apply(changed, wanted, client(server, pki))
    assert result["changed"] and not result["rolled_back"] and result["round_trips"] == 3
    assert _ours(dev)["dns"] == wanted.rows["dns"]
    assert push.apply(changed, wanted, client(server, pki))["round_trips"] == 1


def test_409_is_waited_out_within_its_bound(device, pki, plans) -> None:
    dev, server = device
    dev.busy(2)
    patient = client(server, pki, conflict_attempts=4)
    result = push.apply(plans[0], render.render(plans[0], P.settings()), patient)
    assert result["changed"] and patient.sleeps == [0.5, 0.5]  # type: ignore[attr-defined]
    dev.busy(100)
    bounded = client(server, pki, conflict_attempts=4)
    with pytest.raises(api.DeviceBusy, match="after 4 tries"):
        bounded.get_ini()
    assert bounded.round_trips == 4


def test_a_refused_script_is_rolled_back_to_the_previous_rows(device, pki, plans) -> None:
    dev, server = device
    push.apply(plans[0], render.render(plans[0], P.settings()), client(server, pki))
    before = _ours(dev)
    changed = copy.deepcopy(plans[0])
    changed["trunk_groups"][0]["peers"][1]["weight"] = 5
    changed["trunk_groups"][1]["peers"][0]["priority"] = 1
    dev.refuse_line("proxy-ip 101/0")  # the device refuses a grammatical line half-way
    with pytest.raises(push.ApplyFailed) as caught:
        push.apply(changed, render.render(changed, P.settings()), client(server, pki))
    result = caught.value.result
    assert result["rolled_back"] and "refused" in result["error"] and result["round_trips"] == 5
    assert "line" in result["error"]
    dev.refuse_line(None)
    assert _ours(dev) == before  # the first change (100/1 weight 5) was applied, then reverted


def test_a_refused_first_apply_leaves_the_operator_rows_as_they_were(device, pki, plans) -> None:
    dev, server = device
    untouched = ini.rows_from_ini(dev.ini())
    dev.refuse_line("sbc routing ip2ip-routing 110")
    with pytest.raises(push.ApplyFailed) as caught:
        push.apply(plans[0], render.render(plans[0], P.settings()), client(server, pki))
    assert caught.value.result["rolled_back"], caught.value.result.get("rollback_error")
    assert ini.rows_from_ini(dev.ini()) == untouched


def test_the_client_has_no_full_ini_upload() -> None:
    assert not [name for name in dir(api.MediantClient) if "put" in name and "incremental" not in name]


def test_a_row_losing_a_parameter_is_rewritten_not_left_with_it() -> None:
    """A migration's rollback found it: a Classification row that was an allow rule of an IP Group and becomes the
    final deny rule keeps its src-ip-group-name if only the changed parameters are written. The grammar has no empty
    value to unset it, so the row is removed and written anew."""
    allow = {"classification-name": "CGW-ACL-107", "src-sip-interface-name": "SI-ACG", "src-ip-address": "10.0.0.x",
             "src-ip-group-name": "Default_IPG", "action-type": "allow"}
    deny = {"classification-name": "CGW-ACL-107", "src-sip-interface-name": "SI-ACG", "src-ip-address": "*.*.*.*",
            "action-type": "deny"}
    dev = Device()
    current, wanted = empty_rows(), empty_rows()
    current["classification"][(107,)], wanted["classification"][(107,)] = allow, deny
    dev.rows["classification"][(107,)] = dict(allow)
    script, steps = change_script(current, wanted)
    assert [(s["action"], s["table"]) for s in steps] == [("remove", "Classification"), ("add", "Classification")]
    assert dev.apply_script(script)[0] == 200
    assert dev.rows["classification"][(107,)] == deny
