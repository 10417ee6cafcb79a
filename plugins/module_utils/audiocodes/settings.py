# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Mediant's own keys of ``commsgw_sbc`` (the common keys: ``sbc.settings``). Every problem names its field
(``hosts[<host>].commsgw_sbc.<key>``), what is wrong and what is expected.

``api_url``             required: the device's REST API, ``https://<host>[:port]`` (plain HTTP is refused: Basic
                        authentication would carry the password in clear).
``api_username``        required: a device user with Security Administrator level (the password is the host
                        variable ``audiocodes_api_password``, kept in a vault).
``api_ca_path``         absolute path on the controller of the CA that signed the device's HTTPS certificate
                        (default: the system store).
``api_validate_certs``  default true; false skips the HTTPS certificate check, with a warning on every run.
``sip_interfaces``      required: ``{acg: {index, name}, core: {index, name}}``, the operator's SIP Interfaces (their
                        sockets, TLS listener and media are provisioned with the device, not by this collection).
``tls_context``         required with TLS: the operator's TLS Context holding the SBC certificate, key and chain
                        and ACG's roots as its only trusted roots (docs/platforms/audiocodes.md, "TLS towards ACG").
``index_base``          default 100: the first row index of every table this collection owns; rows below it, or
                        whose name does not start with ``CGW-``, are the operator's and never changed.
"""

from __future__ import annotations

import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.fields import abs_path, bool_field, is_int

FIELDS = ("api_url", "api_username", "api_ca_path", "api_validate_certs", "sip_interfaces", "tls_context",
          "index_base")
DEFAULT_INDEX_BASE = 100
MAX_INDEX_BASE = 4000  # the renderer's bound too: room for every owned row above it
# The device's name columns (IP Group, Proxy Set, TLS Context, SIP Interface): up to 40 characters of these
# (docs/platforms/audiocodes.md, grammar table: "name").
_NAME = re.compile(r"\A[A-Za-z0-9_.-]{1,40}\Z")
_URL = re.compile(r"\Ahttps://(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?/?\Z")
_USER = re.compile(r"\A[A-Za-z0-9_.@-]{1,64}\Z")


def _name(raw: t.Any, path: str, what: str, findings: Findings) -> t.Optional[str]:
    if not isinstance(raw, str) or not _NAME.match(raw):
        findings.error(path, "is not a Mediant object name" if raw is not None else "is missing",
                       "the name of %s: 1-40 characters of A-Z a-z 0-9 _ . -" % what, raw)
        return None
    return raw


def _interfaces(raw: t.Any, path: str, findings: Findings) -> t.Optional[dict[str, dict[str, t.Any]]]:
    if not isinstance(raw, dict) or set(raw) != {"acg", "core"}:
        findings.error(path, "is missing" if raw is None else "is not {acg: ..., core: ...}",
                       "{acg: {index, name}, core: {index, name}}: the SIP Interfaces facing ACG and the core", raw)
        return None
    result: dict[str, dict[str, t.Any]] = {}
    for side in ("acg", "core"):
        entry = raw[side]
        if not isinstance(entry, dict) or set(entry) != {"index", "name"}:
            findings.error("%s.%s" % (path, side), "is not {index, name}",
                           "the SIP Interface's row index and its name", entry)
            return None
        index = entry["index"]
        if not is_int(index) or not 0 <= index < MAX_INDEX_BASE:
            findings.error("%s.%s.index" % (path, side), "is not a row index", "an integer 0..%d" % (MAX_INDEX_BASE - 1),
                           index)
            return None
        name = _name(entry["name"], "%s.%s.name" % (path, side), "the %s SIP Interface" % side, findings)
        if name is None:
            return None
        result[side] = {"index": index, "name": name}
    if result["acg"]["name"] == result["core"]["name"]:
        findings.error(path, "names one SIP Interface for both sides",
                       "two SIP Interfaces: the ACG side and the core side are told apart by interface",
                       result["acg"]["name"])
        return None
    return result


def validate_settings(raw: t.Mapping[str, t.Any], base: str, tls: bool, findings: Findings) -> dict[str, t.Any]:
    """The Mediant's keys of ``commsgw_sbc``, complete with defaults."""
    url = raw.get("api_url")
    if not isinstance(url, str) or not _URL.match(url):
        findings.error(base + ".api_url", "is missing" if url is None else "is not an HTTPS URL of the device",
                       "https://<device>[:port] (plain HTTP would carry the password in clear)", url)
        url = None
    user = raw.get("api_username")
    if not isinstance(user, str) or not _USER.match(user):
        findings.error(base + ".api_username", "is missing" if user is None else "is not a device user name",
                       "the REST user (Security Administrator level): 1-64 of A-Z a-z 0-9 _ . @ -", user)
        user = None
    settings: dict[str, t.Any] = {
        "api_url": url.rstrip("/") if url else None, "api_username": user,
        "api_ca_path": abs_path(raw.get("api_ca_path"), base + ".api_ca_path", None, findings),
        "api_validate_certs": bool_field(raw, "api_validate_certs", base, True, findings),
        "sip_interfaces": _interfaces(raw.get("sip_interfaces"), base + ".sip_interfaces", findings),
        "tls_context": None, "index_base": DEFAULT_INDEX_BASE}
    if settings["api_validate_certs"] is False:
        findings.warn(base + ".api_validate_certs", "is false: the device's HTTPS certificate is not checked, so "
                      "anyone on the path can read the credentials and the configuration",
                      "true, with api_ca_path naming the CA of the device's certificate", False)
    context = raw.get("tls_context")
    if context is not None or tls:
        settings["tls_context"] = _name(context, base + ".tls_context",
                                        "the TLS Context with the SBC certificate and ACG's roots (R-09, R-24)"
                                        if tls else "a TLS Context", findings)
    index_base = raw.get("index_base", DEFAULT_INDEX_BASE)
    if not is_int(index_base) or not 1 <= index_base <= MAX_INDEX_BASE:
        findings.error(base + ".index_base", "is not a row index", "an integer 1..%d (default %d): the first row "
                       "this collection owns in each table" % (MAX_INDEX_BASE, DEFAULT_INDEX_BASE), index_base)
    else:
        settings["index_base"] = index_base
    return settings
