# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Certificate decoding with the standard library only (the probe and the TLS preflight run on SBC
hosts that have no ``cryptography``)."""

from __future__ import annotations

import os
import shutil
import ssl
import tempfile
import typing as t


def can_decode() -> bool:
    """Whether this Python has the ssl module's certificate parser (a private CPython helper)."""
    return hasattr(getattr(ssl, "_ssl", None), "_test_decode_cert")


def decode_pem(pem: str) -> dict[str, t.Any]:
    """One PEM certificate decoded like ``getpeercert()`` (subject, issuer, subjectAltName, dates).

    The parser reads only from a file, so the block goes to a private directory (0700, O_EXCL) and is
    removed at once. Raises AttributeError without the parser (see ``can_decode``), ssl.SSLError or
    ValueError for a block that is no certificate.
    """
    decoder = ssl._ssl._test_decode_cert  # type: ignore[attr-defined]  # pylint: disable=protected-access
    directory = tempfile.mkdtemp(prefix="commsgw-cert-")
    try:
        path = os.path.join(directory, "cert.pem")
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(pem.rstrip("\n") + "\n")
        return t.cast("dict[str, t.Any]", decoder(path))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def dns_names(cert: t.Mapping[str, t.Any]) -> list[str]:
    """The DNS subjectAltNames of a decoded certificate, in order."""
    return [value for kind, value in cert.get("subjectAltName", ()) if kind == "DNS"]
