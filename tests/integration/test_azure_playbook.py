# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/azure_check.yml and validate.yml -e commsgw_azure_check=true through real ansible-playbook
runs against the local ARM + Entra stand-in (issue 12): the consistent pair passes, every seeded
mismatch is reported once with its inventory path and its Azure path, the draft is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from harness.arm_server import CLIENT_ID, CLIENT_SECRET, TENANT, ArmServer  # noqa: E402
from harness.tools import needs  # noqa: E402

pytestmark = [pytest.mark.integration, needs("openssl")]
INVENTORY = ROOT / "tests" / "data" / "azure" / "inventory" / "hosts.yml"
SIGNALLING = "primaryRegionProperties.allowedSignalingSourceAddressPrefixes"


@pytest.fixture(scope="module")
def arm(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[ArmServer]:
    with ArmServer(tmp_path_factory.mktemp("arm")) as server:
        yield server


def _play(arm: ArmServer, playbook: str, name: str, *extra: str) -> tuple[int, str]:
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(INVENTORY),
           "playbooks/" + playbook, "-e", "commsgw_azure_resource_id=" + arm.resource_id(name),
           "-e", "commsgw_azure_arm_endpoint=" + arm.url, "-e", "commsgw_azure_ca_path=%s" % arm.ca,
           "-e", "commsgw_azure_disable_instance_discovery=true", "-e", "commsgw_azure_deployment=contoso-emea",
           *extra]
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               AZURE_TENANT_ID=TENANT, AZURE_CLIENT_ID=CLIENT_ID, AZURE_CLIENT_SECRET=CLIENT_SECRET,
               AZURE_AUTHORITY_HOST=arm.url)
    proc = subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=180, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def test_consistent_pair_passes(arm: ArmServer) -> None:
    rc, out = _play(arm, "azure_check.yml", "consistent")
    assert rc == 0, out[-4000:]
    assert "deployment contoso-emea agrees with its ACG resource, 0 warning(s)" in out
    assert CLIENT_SECRET not in out


def test_every_seeded_mismatch_is_reported_with_both_paths(arm: ArmServer) -> None:
    rc, out = _play(arm, "azure_check.yml", "many-mismatches")
    assert rc != 0
    expected = [
        "hosts[sbc-dub-1].commsgw_sbc.acg_listen.address <-> azure properties.serviceLocations[0]." + SIGNALLING,
        "service_regions[1].azure_region <-> azure properties.serviceLocations[*].name",
        "service_regions[*].azure_region <-> azure properties.serviceLocations[1].name",
        "management_region <-> azure location",
        "type <-> azure sku.name",
        "name <-> azure properties.provisioningState",
        "name <-> azure properties.status",
        "hosts[*].commsgw_sbc.acg_listen.address <-> azure properties.serviceLocations[0]."
        "primaryRegionProperties.operatorAddresses[1]",
        "service_regions[1].ip_ranges[0] <-> azure properties.allocatedSignalingAddressPrefixes",
        "service_regions[*].mcp_hostname <-> azure properties.integratedMcpEnabled",
        "emergency_dial_strings <-> azure properties.serviceLocations[0].primaryRegionProperties.esrpAddresses",
        "emergency_dial_strings <-> azure properties.emergencyDialStrings",
    ]
    for line in expected:
        assert out.count("deployment contoso-emea: " + line) == 1, (line, out[-6000:])
    assert "inventory and Azure disagree: 6 problem(s)" in out


def test_validate_includes_the_azure_check_on_request(arm: ArmServer) -> None:
    rc, out = _play(arm, "validate.yml", "sbc-not-allowed", "-e", "commsgw_azure_check=true")
    assert rc != 0
    assert ("hosts[sbc-dub-1].commsgw_sbc.acg_listen.address <-> azure properties.serviceLocations[0]."
            + SIGNALLING) in out
    asked = len(arm.requests)
    rc, out = _play(arm, "validate.yml", "sbc-not-allowed")  # the default path: offline, Azure never asked
    assert rc == 0, out[-4000:]
    assert len(arm.requests) == asked
    assert "TASK [commsgw.routing" not in out and "Read the ACG resource" not in out


def test_draft_is_written_with_todos(arm: ArmServer, tmp_path: Path) -> None:
    rc, out = _play(arm, "azure_check.yml", "consistent", "-e", "commsgw_azure_draft=%s" % tmp_path)
    assert rc == 0, out[-4000:]
    # Named after the resource asked for (ARM answers with that resource's id and name).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["consistent.yml"]
    text = (tmp_path / "consistent.yml").read_text()
    deployment = yaml.safe_load(text)["commsgw_deployment"]
    assert deployment["service_regions"][1]["azure_region"] == "northeurope"
    assert deployment["base_domain"].startswith("TODO")
    assert "ARM cannot give 7 field(s), marked TODO" in text


def test_http_error_fails_the_play_with_its_message(arm: ArmServer) -> None:
    rc, out = _play(arm, "azure_check.yml", "status-403")
    assert rc != 0
    assert "needs the Reader role on the ACG resource" in out


# -- issue 21 item 13: a hostile ARM answer writes nothing ---------------------------------------------
@pytest.mark.parametrize("field, value", [
    ("id", "{id}\nfoo: bar"),   # would add the key foo to the drafted YAML (the header comment ends at the newline)
    ("name", "../../x"),         # would name the draft DIR/../../x.yml
])
def test_a_hostile_arm_answer_writes_no_draft(tmp_path: Path, field: str, value: str) -> None:
    drafts = tmp_path / "one" / "two" / "drafts"
    drafts.mkdir(parents=True)
    with ArmServer(tmp_path / "arm") as hostile:
        rid = hostile.resource_id("contoso-emea")
        body = json.loads((ROOT / "tests" / "data" / "azure" / "consistent.json").read_text())
        body.update(id=rid, name="contoso-emea")
        body[field] = value.format(id=rid)
        hostile.bodies["contoso-emea"] = body
        rc, out = _play(hostile, "azure_check.yml", "contoso-emea", "-e", "commsgw_azure_draft=%s" % drafts)
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.yml"))
    assert rc != 0, out[-4000:]
    assert "ARM answered with another resource than the one asked for: the answer's %s is" % field in out, out[-4000:]
    assert written == [], written
