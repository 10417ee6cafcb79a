# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw.routing.acg_resource_info over the real HTTP path (issue 12): the module runs as Ansible runs
it, azure-identity's DefaultAzureCredential gets a token from a local Entra authority with a client
secret (EnvironmentCredential), and azure-core reads the recorded ARM responses from a local HTTPS
server (tests/harness/arm_server.py). One test per HTTP error case, each with its own message."""

from __future__ import annotations

import json
import socket
import sys
import time
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from harness.arm_server import CLIENT_ID, CLIENT_SECRET, TENANT, TOKEN, ArmServer  # noqa: E402
from harness.tools import needs, run_module  # noqa: E402

pytestmark = [pytest.mark.integration, needs("openssl")]


@pytest.fixture
def azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME", "AZURE_PASSWORD", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AZURE_TENANT_ID", TENANT)
    monkeypatch.setenv("AZURE_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("AZURE_CLIENT_SECRET", CLIENT_SECRET)


def _run(arm: ArmServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
         **options: t.Any) -> tuple[int, dict[str, t.Any]]:
    monkeypatch.setenv("AZURE_AUTHORITY_HOST", arm.url)
    args = {"resource_id": arm.resource_id(name), "arm_endpoint": arm.url, "ca_path": str(arm.ca),
            "disable_instance_discovery": True, "timeout": 5, "max_retry_wait": 10}
    args.update(options)
    return run_module("acg_resource_info", args, tmp_path)


def _resource_gets(arm: ArmServer) -> list[str]:
    return [query["api-version"] for method, path, query in arm.requests if "communicationsGateways" in path]


def test_reads_the_resource_with_default_azure_credential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          azure_env: None) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "consistent")
    assert rc == 0, result
    assert result["api_version"] == "2023-09-01"  # newest stable; 2024-02-29-preview is skipped
    assert result["changed"] is False
    assert [loc["name"] for loc in result["resource"]["service_locations"]] == ["westeurope", "northeurope"]
    assert result["raw"]["properties"]["serviceLocations"][0]["primaryRegionProperties"]["operatorAddresses"] == [
        "198.51.100.11", "198.51.100.12"]
    # The real identity path: OpenID configuration, client-credentials token, then ARM with that token.
    token_posts = [query for method, path, query in arm.requests if method == "POST"]
    assert token_posts and token_posts[0]["grant_type"] == "client_credentials"
    assert token_posts[0]["scope"] == arm.url + "/.default"
    assert ("GET", "/providers/Microsoft.VoiceServices", {"api-version": "2021-04-01"}) in arm.requests
    assert CLIENT_SECRET not in str(result)


def test_newer_api_version_with_extra_fields(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             azure_env: None) -> None:
    with ArmServer(tmp_path, provider="provider-newer.json") as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "newer-api")
    assert rc == 0, result
    assert result["api_version"] == "2025-06-30"
    assert "futureFeature" not in result["raw"]["properties"]
    assert result["resource"]["sku"] == "standard"


def test_pinned_api_version_skips_negotiation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              azure_env: None) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "api-2023-01-31", api_version="2023-01-31")
        assert not any(path == "/providers/Microsoft.VoiceServices" for method, path, query in arm.requests)
    assert rc == 0, result
    assert result["api_version"] == "2023-01-31"
    assert result["resource"]["sku"] is None and result["resource"]["integrated_mcp_enabled"] is None


def test_fallback_versions_when_the_provider_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            azure_env: None) -> None:
    with ArmServer(tmp_path, provider=None, refuse_versions=["2023-09-01"]) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "consistent")
        tried = _resource_gets(arm)
    assert rc == 0, result
    assert tried == ["2023-09-01", "2023-04-03"]
    assert result["api_version"] == "2023-04-03"


def test_access_token_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "consistent", access_token=TOKEN)
        assert not any(method == "POST" for method, path, query in arm.requests)
    assert rc == 0, result
    assert TOKEN not in str(result)


def test_credential_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, azure_env: None) -> None:
    monkeypatch.setenv("AZURE_CLIENT_SECRET", "wrong")
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "consistent")
    assert rc != 0
    assert result["error_kind"] == "auth"
    assert result["msg"].startswith("authentication failed: no token for scope %s/.default" % arm.url)
    assert "AADSTS7000215" in result["msg"]
    assert "wrong" not in result["msg"]


def test_401_token_refused_by_arm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "consistent", access_token="expired-token")
    assert rc != 0
    assert result["error_kind"] == "auth"
    assert result["msg"].startswith("authentication failed: ARM refused the token")
    assert "InvalidAuthenticationToken" in result["msg"]


@pytest.mark.parametrize("name, kind, words", [
    ("status-403", "forbidden", "needs the Reader role on the ACG resource"),
    ("no-such-acg", "not_found", "not found (404): ACG resource {id} does not exist")])
def test_403_and_404(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, azure_env: None, name: str, kind: str,
                     words: str) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, name)
    assert rc != 0
    assert result["error_kind"] == kind
    assert words.format(id=arm.resource_id(name)) in result["msg"]


def test_429_waits_for_retry_after_then_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              azure_env: None) -> None:
    with ArmServer(tmp_path) as arm:
        started = time.monotonic()
        rc, result = _run(arm, tmp_path, monkeypatch, "throttle-2")
        elapsed = time.monotonic() - started
        gets = _resource_gets(arm)
    assert rc == 0, result
    assert len(gets) == 3
    assert elapsed >= 2.0  # two Retry-After: 1 waits


def test_429_after_the_retries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, azure_env: None) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "throttle-forever", max_retries=2)
        gets = _resource_gets(arm)
    assert rc != 0
    assert result["error_kind"] == "throttled"
    assert "after 3 attempt(s) and 2.0 s of Retry-After waits" in result["msg"]
    assert len(gets) == 3


def test_429_retry_after_beyond_the_total_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               azure_env: None) -> None:
    with ArmServer(tmp_path, retry_after="120") as arm:
        started = time.monotonic()
        rc, result = _run(arm, tmp_path, monkeypatch, "throttle-forever")
        assert time.monotonic() - started < 30
    assert result["error_kind"] == "throttled"
    assert "after 1 attempt(s) and 0.0 s" in result["msg"]


@pytest.mark.parametrize("status", [500, 503])
def test_5xx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, azure_env: None, status: int) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "status-%d" % status, max_retries=1)
        gets = _resource_gets(arm)
    assert rc != 0
    assert result["error_kind"] == "server"
    assert "Azure Resource Manager failed with %d" % status in result["msg"]
    assert len(gets) == (2 if status == 503 else 1)  # 503 carries Retry-After, 500 does not


def test_tls_failure_without_the_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "consistent", access_token=TOKEN, ca_path=None)
    assert rc != 0
    assert result["error_kind"] == "tls"
    assert result["msg"].startswith("TLS failure talking to %s" % arm.url)
    assert "CERTIFICATE_VERIFY_FAILED" in result["msg"]


def test_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as silent:  # accepts connections, never answers the TLS handshake
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = "https://127.0.0.1:%d" % silent.getsockname()[1]
        rc, result = run_module("acg_resource_info", {
            "resource_id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.VoiceServices/"
                           "communicationsGateways/x", "arm_endpoint": url, "access_token": TOKEN,
            "api_version": "2023-09-01", "timeout": 1}, tmp_path)
    assert rc != 0
    assert result["error_kind"] == "timeout"
    assert result["msg"].startswith("no answer from %s within 1.0 s" % url)


def test_unknown_shape_names_the_json_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           azure_env: None) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "bad-shape")
    assert rc != 0
    assert result["error_kind"] == "shape"
    assert result["msg"].startswith(
        "unknown shape at properties.serviceLocations[1].primaryRegionProperties.operatorAddresses:")


def test_bad_options(tmp_path: Path) -> None:
    rc, result = run_module("acg_resource_info", {"subscription_id": "s", "access_token": TOKEN}, tmp_path)
    assert rc != 0 and result["error_kind"] == "options"
    assert result["msg"] == "resource_group, name missing: give resource_id, or subscription_id, resource_group and name"
    rc, result = run_module("acg_resource_info", {"resource_id": "/x", "arm_endpoint": "http://127.0.0.1:1",
                                                  "access_token": TOKEN}, tmp_path)
    assert rc != 0 and "is not the id of an ACG resource" in result["msg"]


def test_missing_azure_libraries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shadow = tmp_path / "shadow" / "azure"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")  # a plain package 'azure' without core or identity
    monkeypatch.syspath_prepend(str(tmp_path / "shadow"))
    rc, result = run_module("acg_resource_info", {"name": "x", "access_token": TOKEN}, tmp_path)
    assert rc != 0
    assert result["error_kind"] == "missing_library"
    assert "azure-identity" in result["msg"]


# -- issue 21 item 13: ARM's answer must be the resource asked for -------------------------------------
def _consistent() -> dict[str, t.Any]:
    return json.loads((ROOT / "tests" / "data" / "azure" / "consistent.json").read_text())


@pytest.mark.parametrize("field, value, shown", [
    ("id", "{id}\nfoo: bar", "'{id}\\nfoo: bar'"),          # a newline: YAML of ARM's choosing in the draft
    ("name", "../../x", "'../../x'"),                        # a path: the draft's file name outside its directory
    ("id", "{id}-other", "'{id}-other'"),                    # another resource altogether
    ("name", None, "None"),
])
def test_an_answer_for_another_resource_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str,
                                                   value: t.Optional[str], shown: str) -> None:
    with ArmServer(tmp_path) as arm:
        rid = arm.resource_id("contoso-emea")
        body = dict(_consistent(), id=rid)
        body[field] = value.format(id=rid) if value else value
        arm.bodies["contoso-emea"] = body
        rc, result = _run(arm, tmp_path, monkeypatch, "contoso-emea", access_token=TOKEN)
    assert rc != 0
    assert result["error_kind"] == "mismatch"
    assert result["msg"] == ("ARM answered with another resource than the one asked for: the answer's %s is %s; "
                             "expected %r (the resource read, %s)"
                             % (field, shown.format(id=rid), rid if field == "id" else "contoso-emea", rid))
    assert "raw" not in result and "resource" not in result


def test_ids_compare_case_insensitively_and_the_name_comes_from_the_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ArmServer(tmp_path) as arm:
        rid = arm.resource_id("contoso-emea")
        arm.bodies["contoso-emea"] = dict(_consistent(), id=rid.lower(), name="CONTOSO-EMEA")
        rc, result = _run(arm, tmp_path, monkeypatch, "contoso-emea", access_token=TOKEN)
    assert rc == 0, result
    assert result["resource_name"] == "contoso-emea"


@pytest.mark.parametrize("resource_id, words", [
    ("/subscriptions/s/resourceGroups/g/providers/Microsoft.VoiceServices/communicationsGateways/x\nfoo: bar",
     "the name 'x\\nfoo: bar' is not a valid Azure name"),
    ("/subscriptions/s/resourceGroups/g/providers/Microsoft.VoiceServices/communicationsGateways/..",
     "the name '..' is not a valid Azure name"),
])
def test_a_resource_id_with_an_unsafe_segment_is_refused(tmp_path: Path, resource_id: str, words: str) -> None:
    rc, result = run_module("acg_resource_info", {"resource_id": resource_id, "access_token": TOKEN}, tmp_path)
    assert rc != 0 and result["error_kind"] == "options"
    assert words in result["msg"], result["msg"]


def test_validate_certs_false_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ArmServer(tmp_path) as arm:
        rc, result = _run(arm, tmp_path, monkeypatch, "consistent", access_token=TOKEN, ca_path=None,
                          validate_certs=False)
        verified, checked = _run(arm, tmp_path, monkeypatch, "consistent", access_token=TOKEN)
    assert rc == 0, result
    # ansible-core 2.19 returns each warning as a structured summary; older ones as the text.
    texts = [w["event"]["msg"] if isinstance(w, dict) else w for w in result["warnings"]]
    assert texts == [
        "validate_certs is false: the certificates of %s and of the authority are not verified, so anyone on the "
        "path can answer as Azure Resource Manager (and receive the credential); give the endpoint's CA in ca_path "
        "instead" % arm.url]
    assert verified == 0 and "warnings" not in checked, checked
