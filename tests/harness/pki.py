# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A throw-away test PKI made with the ``openssl`` CLI (no Python crypto dependency).

ECDSA P-256 by default: the notes record intermittent invalid RSA signatures from Kamailio as a TLS
client with several TCP workers, and ACG's TLS 1.2 cipher list includes ECDHE-ECDSA suites.

Usage::

    ca = TestCA(workdir / "ca", name="Test ACG Root")
    srv = ca.issue_server("acg1", dns=["region1.acg.test"])          # SAN = regional hostname
    cli = ca.issue_client("sbc1", dns=["sbc1.operator.test"])
    old = ca.issue_server("expired", dns=["region1.acg.test"], expired=True)
    rogue = TestCA(workdir / "rogue", name="Unrelated Root")         # a second, untrusted CA
    srv.cert, srv.key, srv.chain, ca.cert                             # Paths (PEM)
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import subprocess
import typing as t
from pathlib import Path

KeyType = t.Literal["ec", "rsa"]


@dataclasses.dataclass(frozen=True)
class Issued:
    """One issued certificate: PEM paths. ``chain`` = leaf + issuing CA (what a server presents)."""

    name: str
    cert: Path
    key: Path
    chain: Path
    subject_cn: str
    dns: tuple[str, ...]


def _openssl(*args: str, cwd: t.Optional[Path] = None, stdin: t.Optional[str] = None) -> str:
    proc = subprocess.run(["openssl", *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def _genkey(path: Path, key_type: KeyType) -> None:
    if key_type == "ec":
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path))
    else:
        _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(path))
    path.chmod(0o600)


class TestCA:
    """A root CA in ``directory``; issues leaf certificates signed by it (openssl ``ca``-less: x509 -req)."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, directory: t.Union[str, Path], name: str = "commsgw Test Root CA",
                 key_type: KeyType = "ec", days: int = 30) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.key = self.dir / "ca.key"
        self.cert = self.dir / "ca.crt"
        self._serial = 1
        _genkey(self.key, key_type)
        ext = self.dir / "ca.ext"
        ext.write_text("[v3_ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
                       "subjectKeyIdentifier=hash\n")
        _openssl("req", "-new", "-x509", "-key", str(self.key), "-out", str(self.cert), "-days", str(days),
                 "-subj", "/O=commsgw tests/CN=" + name, "-config", str(ext), "-extensions", "v3_ca",
                 "-sha256")

    @classmethod
    def existing(cls, directory: t.Union[str, Path], name: str = "commsgw Test Root CA") -> "TestCA":
        """The CA a ``TestCA`` made earlier in ``directory`` (its ca.key and ca.crt), to issue more from it."""
        ca = cls.__new__(cls)
        ca.dir = Path(directory)
        ca.name = name
        ca.key = ca.dir / "ca.key"
        ca.cert = ca.dir / "ca.crt"
        ca._serial = 1000  # apart from the serials the first instance used
        if not (ca.key.is_file() and ca.cert.is_file()):
            raise FileNotFoundError(f"no CA key and certificate in {ca.dir}")
        return ca

    def _issue(self, name: str, cn: str, dns: t.Sequence[str], usage: str, key_type: KeyType,
               expired: bool, days: int, ips: t.Sequence[str] = ()) -> Issued:
        key = self.dir / f"{name}.key"
        csr = self.dir / f"{name}.csr"
        cert = self.dir / f"{name}.crt"
        chain = self.dir / f"{name}.chain.pem"
        ext = self.dir / f"{name}.ext"
        _genkey(key, key_type)
        lines = ["[v3_leaf]", "basicConstraints=critical,CA:FALSE",
                 "keyUsage=critical,digitalSignature" + (",keyEncipherment" if key_type == "rsa" else ""),
                 f"extendedKeyUsage={usage}", "subjectKeyIdentifier=hash", "authorityKeyIdentifier=keyid"]
        if dns or ips:
            lines.append("subjectAltName=" + ",".join(["DNS:" + d for d in dns] + ["IP:" + i for i in ips]))
        ext.write_text("\n".join(lines) + "\n")
        _openssl("req", "-new", "-key", str(key), "-out", str(csr), "-subj", "/O=commsgw tests/CN=" + cn)
        self._serial += 1
        common = ["x509", "-req", "-in", str(csr), "-CA", str(self.cert), "-CAkey", str(self.key),
                  "-set_serial", str(self._serial + int(_dt.datetime.now().timestamp())), "-out", str(cert),
                  "-extfile", str(ext), "-extensions", "v3_leaf", "-sha256"]
        if expired:
            # OpenSSL 3.0's x509 cannot set explicit dates; `openssl ca` can (-startdate/-enddate).
            self._issue_with_dates(csr, cert, ext, "20200101000000Z", "20200102000000Z")
        else:
            _openssl(*common, "-days", str(days))
        chain.write_text(cert.read_text() + self.cert.read_text())
        csr.unlink()
        return Issued(name=name, cert=cert, key=key, chain=chain, subject_cn=cn, dns=tuple(dns))

    def _issue_with_dates(self, csr: Path, cert: Path, ext: Path, start: str, end: str) -> None:
        """Sign with explicit validity dates through a minimal `openssl ca` database."""
        db = self.dir / "ca-db"
        db.mkdir(exist_ok=True)
        (db / "index.txt").write_text("")
        (db / "serial").write_text(f"{self._serial + 1000:04X}\n")
        conf = db / "ca.cnf"
        conf.write_text(
            "[ca]\ndefault_ca=test\n"
            "[test]\n"
            f"dir={db}\ndatabase=$dir/index.txt\nserial=$dir/serial\nnew_certs_dir=$dir\n"
            f"certificate={self.cert}\nprivate_key={self.key}\ndefault_md=sha256\npolicy=any\n"
            "unique_subject=no\ncopy_extensions=none\n"
            "[any]\norganizationName=optional\ncommonName=supplied\n")
        _openssl("ca", "-batch", "-notext", "-config", str(conf), "-in", str(csr), "-out", str(cert),
                 "-startdate", start, "-enddate", end, "-extfile", str(ext), "-extensions", "v3_leaf")

    def issue_server(self, name: str, dns: t.Sequence[str], cn: t.Optional[str] = None, key_type: KeyType = "ec",
                     expired: bool = False, days: int = 30, ips: t.Sequence[str] = ()) -> Issued:
        """A TLS server certificate (ACG peer) whose SAN DNS names are ``dns`` (the regional hostname)
        and SAN IP addresses ``ips`` (a loopback HTTPS server)."""
        return self._issue(name, cn or (dns[0] if dns else name), dns, "serverAuth,clientAuth", key_type, expired,
                           days, ips)

    def issue_client(self, name: str, dns: t.Sequence[str] = (), cn: t.Optional[str] = None,
                     key_type: KeyType = "ec", expired: bool = False, days: int = 30) -> Issued:
        """A TLS client certificate (the SBC's). Kamailio uses one cert for both roles, so serverAuth too."""
        return self._issue(name, cn or (dns[0] if dns else name), dns, "clientAuth,serverAuth", key_type, expired,
                           days)


def bundle(path: t.Union[str, Path], *cas: TestCA) -> Path:
    """A CA bundle file holding the given roots (e.g. trust two CAs at once)."""
    p = Path(path)
    p.write_text("".join(ca.cert.read_text() for ca in cas))
    return p


def describe(cert: t.Union[str, Path]) -> str:
    """Human-readable subject, SAN and dates (for test failure messages)."""
    return _openssl("x509", "-in", str(cert), "-noout", "-subject", "-dates", "-ext", "subjectAltName")


@dataclasses.dataclass
class StandardPKI:
    """The certificate set the TLS scenarios need, in one call."""

    acg_ca: TestCA          # trusted by the SBC (stands in for DigiCert Global Root G2)
    operator_ca: TestCA     # trusted by the ACG fronts (the CA that signs the SBC's certificate)
    rogue_ca: TestCA        # unrelated CA: certificates from it must be refused
    peers: dict[str, Issued]  # region hostname -> ACG peer server cert (SAN = regional hostname)
    sbc: Issued             # SBC certificate/key (ECDSA P-256)
    wrong_host: Issued      # trusted by acg_ca but for another host name
    rogue_peer: Issued      # right host name, wrong CA
    expired_peer: Issued    # right host name and CA, expired


def standard_pki(directory: t.Union[str, Path], regional_hostnames: t.Sequence[str],
                 sbc_hostname: str = "sbc.operator.test", key_type: KeyType = "ec") -> StandardPKI:
    d = Path(directory)
    acg = TestCA(d / "acg-ca", name="Test ACG Root")
    op = TestCA(d / "operator-ca", name="Test Operator Root")
    rogue = TestCA(d / "rogue-ca", name="Unrelated Rogue Root")
    peers = {h: acg.issue_server("peer-" + h.split(".")[0], dns=[h], key_type=key_type) for h in regional_hostnames}
    first = regional_hostnames[0]
    return StandardPKI(
        acg_ca=acg, operator_ca=op, rogue_ca=rogue, peers=peers,
        sbc=op.issue_client("sbc", dns=[sbc_hostname], key_type=key_type),
        wrong_host=acg.issue_server("wrong-host", dns=["wrong.example"], key_type=key_type),
        rogue_peer=rogue.issue_server("rogue-peer", dns=[first], key_type=key_type),
        expired_peer=acg.issue_server("expired-peer", dns=[first], expired=True, key_type=key_type),
    )
