# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TLS preflight against real certificates from the test PKI, real modes and owners, real users.

Readability is judged for ``nobody`` (an unprivileged user every Debian host has) with files owned by
root, so the tests that chown need root, as on the SBC host where the preflight runs through become.
"""

from __future__ import annotations

import dataclasses
import grp
import json
import os
import pwd
import shutil
import ssl
import subprocess
import tempfile
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.tls.file_access import RunAsUser, permits
from ansible_collections.commsgw.routing.plugins.module_utils.tls.preflight import check_tls_files
from harness.pki import Issued, TestCA
from harness.tools import needs, run_module


def _account(names: t.Sequence[str]) -> str:
    for name in names:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    return "nobody"


# An account alone in its primary group (issue 21: a key's group must hold Kamailio's user only); Debian's
# nogroup also holds _apt and sync, which test_key_group_with_other_members_is_an_error uses.
UNPRIVILEGED = _account(["kamailio"])
UNPRIVILEGED_GROUP = grp.getgrgid(pwd.getpwnam(UNPRIVILEGED).pw_gid).gr_name
NO_SUCH_USER = "commsgw-no-such-user"

pytestmark = [needs("openssl"),
              pytest.mark.skipif(os.geteuid() != 0, reason="chowns files to root and judges them for nobody")]


@dataclasses.dataclass(frozen=True)
class Pki:
    operator_ca: TestCA   # signs the SBC's certificate; ACG trusts it (chain_ca)
    acg_ca: TestCA        # the SBC trusts it for ACG (ca_bundle)
    rogue_ca: TestCA      # trusted by nobody
    sbc: Issued
    other: Issued         # another SBC certificate from the same CA: its key is "the wrong key"
    expired: Issued
    expiring: Issued      # 10 days left
    encrypted_key: Path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    base = tmp_path_factory.mktemp("pki")
    operator = TestCA(base / "operator", name="Test Operator Root")
    encrypted = base / "encrypted.key"
    sbc = operator.issue_client("sbc", dns=["sbc1.operator.test"], days=365)  # well past the 30-day warning
    subprocess.run(["openssl", "pkey", "-in", str(sbc.key), "-aes256", "-passout", "pass:secret",
                    "-out", str(encrypted)], check=True, capture_output=True)
    return Pki(operator_ca=operator, acg_ca=TestCA(base / "acg", name="Test ACG Root"),
               rogue_ca=TestCA(base / "rogue", name="Unrelated Rogue Root"), sbc=sbc,
               other=operator.issue_client("other", dns=["sbc2.operator.test"]),
               expired=operator.issue_client("expired", dns=["sbc1.operator.test"], expired=True),
               expiring=operator.issue_client("expiring", dns=["sbc1.operator.test"], days=10),
               encrypted_key=encrypted)


@dataclasses.dataclass
class Installed:
    """TLS files laid out as on an SBC: /…/tls/{sbc.crt,sbc.key,acg-ca.pem,operator-root.pem}."""

    directory: Path
    certificate: Path
    private_key: Path
    ca_bundle: Path
    chain_ca: Path

    def check(self, **overrides: t.Any) -> dict[str, t.Any]:
        args: dict[str, t.Any] = {"certificate": str(self.certificate), "private_key": str(self.private_key),
                                  "ca_bundle": str(self.ca_bundle), "chain_ca": str(self.chain_ca),
                                  "run_as_user": UNPRIVILEGED}
        args.update(overrides)
        result = check_tls_files(**args).as_dict()
        json.dumps(result)  # what the module returns must serialise
        return result


@pytest.fixture
def world_dir() -> t.Iterator[Path]:
    """A directory every user can search: pytest's own tmp_path sits below a 0700 directory."""
    directory = Path(tempfile.mkdtemp(prefix="commsgw-preflight-test-", dir="/tmp"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


def install(world_dir: Path, pki: Pki, issued: t.Optional[Issued] = None, key: t.Optional[Path] = None,
            key_mode: int = 0o640, key_group: str = UNPRIVILEGED_GROUP) -> Installed:
    issued = issued or pki.sbc
    tls = world_dir / "tls"
    tls.mkdir(mode=0o755)
    tls.chmod(0o755)  # whatever the umask
    files = Installed(directory=tls, certificate=tls / "sbc.crt", private_key=tls / "sbc.key",
                      ca_bundle=tls / "acg-ca.pem", chain_ca=tls / "operator-root.pem")
    shutil.copyfile(issued.chain, files.certificate)
    shutil.copyfile(key or issued.key, files.private_key)
    shutil.copyfile(pki.acg_ca.cert, files.ca_bundle)
    shutil.copyfile(pki.operator_ca.cert, files.chain_ca)
    for public in (files.certificate, files.ca_bundle, files.chain_ca):
        os.chown(public, 0, 0)
        public.chmod(0o644)
    os.chown(files.private_key, 0, grp.getgrnam(key_group).gr_gid)
    files.private_key.chmod(key_mode)
    return files


def only_error(result: dict[str, t.Any]) -> str:
    assert result["ok"] is False
    assert len(result["errors"]) == 1, result["errors"]
    return result["errors"][0]


# -- all good -------------------------------------------------------------------------------------------------------
def test_good_files_pass_and_describe_the_certificate(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    result = files.check()
    assert result["ok"] is True and result["errors"] == [] and result["warnings"] == []
    cert = result["certificate"]
    assert cert["subject"] == "sbc1.operator.test" and cert["san"] == ["sbc1.operator.test"]
    assert cert["issuer"] == "Test Operator Root"
    assert cert["days_left"] in (364, 365) and cert["not_after"].endswith("Z")
    assert result["checked"]["key_matches_certificate"] is True and result["checked"]["chain_verified"] is True
    assert result["checked"]["files"]["private_key"]["mode"] == "0640"
    assert result["checked"]["files"]["private_key"]["readable_by_run_as_user"] is True


def test_key_0640_for_the_users_group_passes_and_root_always_reads(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, key_mode=0o640, key_group=UNPRIVILEGED_GROUP)
    assert files.check()["ok"] is True
    files.private_key.chmod(0o600)
    assert files.check(run_as_user="root")["ok"] is True


def test_key_group_with_other_members_is_an_error(world_dir: Path, pki: Pki) -> None:
    """Issue 21 item 2: the refresher was put in Kamailio's group and so could read the key. A key its group may
    read, whose group holds anyone besides the run-as user, fails, naming them."""
    gid = pwd.getpwnam("nobody").pw_gid
    others = sorted(({e.pw_name for e in pwd.getpwall() if e.pw_gid == gid} | set(grp.getgrgid(gid).gr_mem)) - {"nobody"})
    if not others:
        pytest.skip("nobody's group has no other member here")
    files = install(world_dir, pki, key_mode=0o640, key_group=grp.getgrgid(gid).gr_name)
    message = only_error(files.check(run_as_user="nobody"))
    assert "readable by group %s, whose members include %s besides nobody" % (grp.getgrgid(gid).gr_name,
                                                                              ", ".join(others)) in message
    # The members this run takes out of the group (the role's refresher user, on an upgrade) do not count.
    assert not any("whose members include" in e for e in files.check(run_as_user="nobody",
                                                                     key_group_leaving=others)["errors"])
    assert "whose members include %s besides" % others[-1] in only_error(
        files.check(run_as_user="nobody", key_group_leaving=others[:-1]))
    files.private_key.chmod(0o600)  # root-only: no group reads it, nothing to object to (it is unreadable then)
    assert not any("whose members include" in e for e in files.check(run_as_user="nobody")["errors"])


# -- key --------------------------------------------------------------------------------------------------------
def test_key_of_another_certificate_is_a_mismatch(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, key=pki.other.key)
    result = files.check()
    message = only_error(result)
    assert message.startswith("private_key %s does not belong to certificate %s"
                              % (files.private_key, files.certificate))
    assert "key values mismatch" in message
    assert result["checked"]["key_matches_certificate"] is False and result["checked"]["chain_verified"] is None


def test_encrypted_key_is_refused_without_prompting(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, key=pki.encrypted_key)
    message = only_error(files.check())
    assert message.startswith("private_key %s is encrypted (passphrase protected)" % files.private_key)


def test_a_file_without_a_key_is_named(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, key=pki.sbc.cert)
    assert only_error(files.check()).startswith("private_key %s holds no PEM private key" % files.private_key)


def test_no_key_material_in_the_result(world_dir: Path, pki: Pki) -> None:
    key_lines = [line for line in pki.sbc.key.read_text().splitlines() if line and not line.startswith("-----")]
    files = install(world_dir, pki, key_mode=0o644)
    files.certificate.write_text(pki.other.chain.read_text())  # mismatch: OpenSSL gets to read the key
    text = json.dumps(files.check())
    assert key_lines and not any(line in text for line in key_lines)


# -- modes, owners, users -----------------------------------------------------------------------------------------
def test_world_readable_key_is_an_error_with_the_fix(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, key_mode=0o644)
    message = only_error(files.check())
    assert message.startswith("private_key %s is accessible to every user on the host (mode 0644, owner root"
                              % files.private_key)
    assert "chown root:%s %s && chmod 0640 %s" % (UNPRIVILEGED_GROUP, files.private_key, files.private_key) in message


def test_key_only_root_can_read_is_unreadable_for_the_run_as_user(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, key_mode=0o600, key_group="root")
    result = files.check()
    message = only_error(result)
    assert message.startswith(("private_key %s: user nobody (groups %s) cannot read it (mode 0600, owner root, group"
                              " root)" % (files.private_key, UNPRIVILEGED_GROUP)).replace("nobody", UNPRIVILEGED))
    assert "chmod 0640" in message
    assert result["checked"]["files"]["private_key"]["readable_by_run_as_user"] is False
    # Root reads it all the same, so the content checks still ran.
    assert result["checked"]["chain_verified"] is True


def test_unsearchable_parent_directory_is_named(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    files.directory.chmod(0o700)
    result = files.check()
    assert result["ok"] is False
    assert len(result["errors"]) == 4  # every file lives in the directory
    key_error = [e for e in result["errors"] if e.startswith("private_key")][0]
    assert ("directory %s (mode 0700, owner root, group root) is not searchable (x) by nobody"
            % files.directory).replace("nobody", UNPRIVILEGED) in key_error


def test_a_symlink_is_followed_and_named(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, key_mode=0o600, key_group="root")
    hidden = world_dir / "private"
    hidden.mkdir(mode=0o700)
    target = hidden / "sbc.key"
    files.private_key.rename(target)
    files.private_key.symlink_to(target)
    result = files.check()
    assert result["ok"] is False
    # The private directory is reported first: the target's own mode is not even reached.
    assert only_error(result).startswith(("private_key %s (a symlink to %s): user nobody cannot reach it: directory %s"
                                         % (files.private_key, target, hidden)).replace("nobody", UNPRIVILEGED))
    hidden.chmod(0o755)
    os.chown(target, 0, grp.getgrnam(UNPRIVILEGED_GROUP).gr_gid)
    target.chmod(0o640)
    assert files.check()["ok"] is True


def test_supplementary_group_grants_group_access(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_text("x")
    os.chown(path, 0, 54321)
    path.chmod(0o640)
    info = path.stat()
    member = RunAsUser(name="member", uid=12345, gid=100, groups=frozenset({100, 54321}))
    outsider = RunAsUser(name="outsider", uid=12346, gid=100, groups=frozenset({100}))
    owner = RunAsUser(name="owner", uid=0, gid=0, groups=frozenset({0}))
    assert permits(info, member, 4) is True  # r through the supplementary group 54321
    assert permits(info, outsider, 4) is False
    assert permits(info, member, 1) is False  # 0640 grants the group no x
    path.chmod(0o040)
    assert permits(path.stat(), member, 4) is True  # group bits count even when the owner has none
    assert permits(path.stat(), owner, 4) is True  # root: mode bits do not bind it


def test_unknown_user_is_an_error_and_the_other_checks_still_run(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    result = files.check(run_as_user=NO_SUCH_USER)
    assert only_error(result).startswith("run_as_user %s: no such user on this host" % NO_SUCH_USER)
    assert result["checked"]["chain_verified"] is True


# -- files --------------------------------------------------------------------------------------------------------
def test_missing_file_names_the_option(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    files.ca_bundle.unlink()
    result = files.check()
    assert only_error(result) == ("ca_bundle %s does not exist; expected a PEM file at this path" % files.ca_bundle)
    assert result["checked"]["chain_verified"] is True  # chain_ca is given, so the chain check runs


def test_missing_key_skips_the_checks_that_need_it(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    files.private_key.unlink()
    result = files.check()
    assert only_error(result).startswith("private_key %s does not exist" % files.private_key)
    assert result["checked"]["key_matches_certificate"] is None


def test_a_directory_is_not_a_regular_file(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    assert only_error(files.check(certificate=str(files.directory))).startswith(
        "certificate %s is not a regular file (a directory)" % files.directory)


def test_a_ca_bundle_without_certificates_is_an_error(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    files.ca_bundle.write_text("not a certificate\n")
    assert only_error(files.check()) == (
        "ca_bundle %s does not load as a CA file (no certificate or crl found); expected one or more PEM CA"
        " certificates" % files.ca_bundle)


def test_a_certificate_file_without_a_certificate_is_an_error(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    files.certificate.write_text("nothing here\n")
    result = files.check()
    assert result["errors"][0].startswith("certificate %s holds no PEM certificate" % files.certificate)
    assert result["certificate"] == {}


# -- dates ----------------------------------------------------------------------------------------------------------
def test_expired_certificate_is_an_error(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, issued=pki.expired)
    result = files.check()
    message = only_error(result)  # the chain itself is fine: no second error for the same expiry
    assert message.startswith("certificate %s (CN=sbc1.operator.test) expired on 2020-01-02T00:00:00Z ("
                              % files.certificate)
    assert result["certificate"]["days_left"] < -365
    assert result["checked"]["chain_verified"] is True


def test_expired_certificate_with_a_foreign_chain_gets_both_errors(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, issued=pki.expired)
    shutil.copyfile(pki.rogue_ca.cert, files.chain_ca)
    result = files.check()
    assert len(result["errors"]) == 2
    assert "expired on" in result["errors"][0]
    assert "does not verify against chain_ca" in result["errors"][1]


def test_certificate_expiring_in_10_days_is_a_warning(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki, issued=pki.expiring)
    result = files.check()
    assert result["ok"] is True and result["errors"] == []
    assert result["certificate"]["days_left"] in (9, 10)
    assert len(result["warnings"]) == 1
    assert result["warnings"][0].startswith("certificate %s (CN=sbc1.operator.test) expires on"
                                            % files.certificate)
    assert "(expiry_warning_days=30): renew it before then" in result["warnings"][0]
    assert files.check(expiry_warning_days=5)["warnings"] == []


def test_certificate_not_yet_valid_is_an_error(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    message = only_error(files.check(now=time.time() - 2 * 86400))
    assert message.startswith("certificate %s (CN=sbc1.operator.test) is not valid before" % files.certificate)
    assert "check the host clock" in message


def test_a_python_without_the_decoder_is_an_error_not_a_traceback(world_dir: Path, pki: Pki,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    files = install(world_dir, pki)
    monkeypatch.delattr(ssl._ssl, "_test_decode_cert")  # pylint: disable=protected-access
    result = files.check()
    assert only_error(result).startswith("certificate %s: this host's Python (" % files.certificate)
    assert result["checked"]["chain_verified"] is True  # the other checks do not need the decoder


# -- chain ----------------------------------------------------------------------------------------------------------
def test_chain_to_another_ca_names_the_reason(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    shutil.copyfile(pki.sbc.cert, files.certificate)  # leaf only: the issuer is looked up in chain_ca
    shutil.copyfile(pki.rogue_ca.cert, files.chain_ca)
    result = files.check()
    message = only_error(result)
    assert message.startswith("certificate %s does not verify against chain_ca %s: unable to get local issuer"
                              " certificate; expected the certificate file to hold the leaf followed by every"
                              " intermediate" % (files.certificate, files.chain_ca))
    assert result["checked"]["chain_verified"] is False


def test_chain_ca_defaults_to_the_ca_bundle(world_dir: Path, pki: Pki) -> None:
    files = install(world_dir, pki)
    message = only_error(files.check(chain_ca=None))  # the bundle holds ACG's root, not the operator's
    assert message.startswith("certificate %s does not verify against ca_bundle %s: self-signed certificate in"
                              " certificate chain" % (files.certificate, files.ca_bundle))
    shutil.copyfile(pki.operator_ca.cert, files.ca_bundle)
    assert files.check(chain_ca=None)["ok"] is True


# -- the module, as Ansible runs it: a separate Python process -------------------------------------------------------
def test_module_passes_in_check_mode_and_warns(world_dir: Path, pki: Pki, tmp_path: Path) -> None:
    files = install(world_dir, pki, issued=pki.expiring)
    code, result = run_module("tls_preflight", {
        "certificate": str(files.certificate), "private_key": str(files.private_key),
        "ca_bundle": str(files.ca_bundle), "chain_ca": str(files.chain_ca),
        "run_as_user": UNPRIVILEGED, "_ansible_check_mode": True}, tmp_path)
    assert code == 0, result
    assert result["changed"] is False and result["ok"] is True and result["errors"] == []
    assert len(result["warnings_found"]) == 1
    assert result["warnings_found"][0] in json.dumps(result["warnings"])  # shown by Ansible (structured in 2.19)
    assert result["certificate"]["subject"] == "sbc1.operator.test"


def test_module_fails_with_every_error_one_per_line(world_dir: Path, pki: Pki, tmp_path: Path) -> None:
    files = install(world_dir, pki, key=pki.other.key, key_mode=0o644)
    code, result = run_module("tls_preflight", {
        "certificate": str(files.certificate), "private_key": str(files.private_key),
        "ca_bundle": str(files.ca_bundle), "run_as_user": UNPRIVILEGED}, tmp_path)
    assert code == 1 and result["failed"] is True and result["changed"] is False
    lines = result["msg"].splitlines()
    assert lines[0] == ("TLS preflight failed for certificate %s with key %s (run as nobody): 2 error(s):"
                        % (files.certificate, files.private_key)).replace("nobody", UNPRIVILEGED)
    assert lines[1:] == result["errors"] and len(lines) == 3
    assert "accessible to every user" in lines[1] and "does not belong to certificate" in lines[2]


def test_the_module_judges_for_the_user_its_platform_names_never_a_default(world_dir: Path, pki: Pki,
                                                                           tmp_path: Path) -> None:
    """Issue 22: the generic TLS preflight once judged readability for ``kamailio`` when the caller named no user, so a
    platform whose SBC runs as another account got a pass for a key that account cannot read."""
    files = install(world_dir, pki)
    args = {"certificate": str(files.certificate), "private_key": str(files.private_key),
            "ca_bundle": str(files.ca_bundle)}
    code, result = run_module("tls_preflight", args, tmp_path)
    assert code == 1 and result["msg"] == "missing required arguments: run_as_user", result
    with pytest.raises(TypeError, match="run_as_user"):
        check_tls_files(args["certificate"], args["private_key"], args["ca_bundle"])  # type: ignore[call-arg] # pylint: disable=missing-kwoa
