# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-SBC host settings: the ``commsgw_sbc`` inventory variable of each SBC host.

The routing plan says *where* calls go; these settings say how one SBC box is wired (its sockets,
files and process sizing). The keys below are common to every platform; the host's platform
(``commsgw_sbc_platform``, see ``sbc.registry``) validates its own keys in the same mapping
(its ``settings_fields`` and ``validate_settings``, docs/platforms.md). Every
common field, its default and why:

``acg_listen``            mapping, required. ``address``: the explicit IPv4 address of the ACG-facing
                          socket (no wildcard: the config tells the two sides apart by socket);
                          ``port``: default 5061 with TLS, 5060 otherwise. Transport comes from the
                          deployment (``commsgw_deployment.acg_transport``).
``core_listen``           mapping, required. ``address`` (explicit IPv4), ``port`` (default 5060),
                          ``transport`` udp|tcp (default udp): the socket facing the operator core.
                          Must differ from ``acg_listen`` in address or port.
``core_next_hop``         "host:port", required: where requests arriving from ACG are sent.
``tls``                   mapping, required when the deployment uses TLS: ``certificate``,
                          ``private_key``, ``ca_bundle`` (absolute paths on the SBC, for a platform whose
                          TLS material is files: ``SbcPlatform.tls_form``) and ``verify_hostname``
                          (default true, R-24). A platform whose device holds its material names it with
                          its own keys; its ``tls`` takes ``verify_hostname`` only.
``acl_action``            reject|drop, default reject: a request on the ACG-facing socket from
                          outside every ACG /28 gets "403 Forbidden" (reject) or no answer (drop).
``emergency_reply_code``  default 403: the final reply to an emergency dial string arriving from
                          the core (R-25: never sent to ACG; the core must route it elsewhere).
``size_headroom_bytes``   default 256: bytes this SBC adds to a request (one Via, two
                          Record-Route); a received message longer than the ACG limit minus this
                          is refused locally with 513 (R-27).
``core_allowed_sources``  list of IPv4 CIDRs allowed to send to ``core_listen`` (absent: no core
                          ACL, with a warning; an error in a production-type deployment);
                          ``number_normalisation``: optional rewrite of non-E.164 numbers towards
                          ACG (R-26). Both: see ``plan.core_policy``.
"""

from __future__ import annotations

import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.plan.core_policy import (
    parse_core_allowed_sources, parse_number_normalisation)
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.core.host_port import HostPortError, split_host_port
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import TLS_FILES
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    DEFAULT_PLATFORM, UnknownPlatform, get_platform)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.fields import abs_path, int_fields, is_int
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import fqdn_problem

SBC_VAR = "commsgw_sbc"
CORE_TRANSPORTS = ("udp", "tcp")
ACL_ACTIONS = ("reject", "drop")
_INT_RANGES: dict[str, tuple[int, int]] = {
    "emergency_reply_code": (400, 699),
    "size_headroom_bytes": (0, 4096),
}
# Keys every platform shares; a platform adds its own (SbcPlatform.settings_fields).
TLS_FILE_FIELDS = ("certificate", "private_key", "ca_bundle")
COMMON_FIELDS = ("acg_listen", "core_listen", "core_next_hop", "tls", "acl_action", "emergency_reply_code",
                 "size_headroom_bytes", "core_allowed_sources", "number_normalisation")


def _address(raw: t.Any, path: str, findings: Findings) -> t.Optional[str]:
    if not isinstance(raw, str):
        findings.error(path, "is missing or not a string", "an explicit IPv4 address", raw)
        return None
    try:
        address = ipaddress.IPv4Address(raw)
    except ValueError:
        findings.error(path, "is not an IPv4 address", "an explicit IPv4 address such as 192.0.2.10", raw)
        return None
    if address.is_unspecified:
        # The routing tells ACG-side from core-side traffic by the socket a request arrived on.
        findings.error(path, "is the wildcard address", "the explicit address of one interface", raw)
        return None
    return str(address)


def _port(raw: t.Any, path: str, default: int, findings: Findings) -> int:
    if raw is None:
        return default
    if not is_int(raw) or not 1 <= raw <= 65535:
        findings.error(path, "is not a port number", "an integer 1..65535", raw)
        return default
    return int(raw)


def _mapping(raw: t.Any, path: str, fields: t.Sequence[str], findings: Findings) -> dict[str, t.Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        findings.error(path, "is not a mapping", "a mapping with: " + ", ".join(fields), raw)
        return {}
    for key in raw:
        if key not in fields:
            findings.error("%s.%s" % (path, key), "is not a known field", "one of: " + ", ".join(fields), raw[key])
    return raw


def parse_sbc_settings(raw: t.Any, host: str, acg_transport: str, findings: Findings,
                       platform: t.Any = DEFAULT_PLATFORM, deployment_type: t.Any = None) -> dict[str, t.Any]:
    """Validate ``commsgw_sbc`` of ``host`` and return it complete with defaults (plain data).

    The common keys are checked here and the keys of ``platform`` (``commsgw_sbc_platform``) by
    that platform's validator; an unregistered platform (reported by the deployment validation)
    gets only the common checks. A ``deployment_type`` of production requires ``core_allowed_sources``.
    Problems are added to ``findings`` with paths
    ``hosts[<host>].commsgw_sbc.<field>``; the returned mapping is only meaningful when no error was added.
    """
    base = "hosts[%s].%s" % (host, SBC_VAR)
    tls = acg_transport == "tls"
    if raw is None:
        findings.error(base, "is missing", "a mapping with at least acg_listen, core_listen and core_next_hop")
        raw = {}
    try:
        registered = get_platform(platform)
    except UnknownPlatform:
        registered = None
    own = registered.settings_fields if registered else ()
    top = _mapping(raw, base, COMMON_FIELDS + own, findings) if registered else _common_only(raw, base, findings)

    acg_raw = _mapping(top.get("acg_listen"), base + ".acg_listen", ("address", "port"), findings)
    acg = {"address": _address(acg_raw.get("address"), base + ".acg_listen.address", findings),
           "port": _port(acg_raw.get("port"), base + ".acg_listen.port", 5061 if tls else 5060, findings),
           "transport": acg_transport}

    core_raw = _mapping(top.get("core_listen"), base + ".core_listen", ("address", "port", "transport"), findings)
    core_transport = core_raw.get("transport", "udp")
    if core_transport not in CORE_TRANSPORTS:
        findings.error(base + ".core_listen.transport", "is not supported", " or ".join(CORE_TRANSPORTS),
                       core_transport)
        core_transport = "udp"
    elif core_transport == "udp":
        # docs/core-side.md: the core ACL trusts source addresses, which a UDP datagram does not prove.
        findings.warn(base + ".core_listen.transport", "is udp%s: the core ACL (core_allowed_sources) trusts "
                      "a source address, which a spoofed UDP datagram fakes"
                      % ("" if "transport" in core_raw else " (the default)"),
                      "tcp, whose handshake proves the source address", core_transport)
    core = {"address": _address(core_raw.get("address"), base + ".core_listen.address", findings),
            "port": _port(core_raw.get("port"), base + ".core_listen.port", 5060, findings),
            "transport": core_transport}
    if acg["address"] and core["address"] and (acg["address"], acg["port"]) == (core["address"], core["port"]):
        findings.error(base + ".core_listen", "is the same socket as acg_listen",
                       "a different address or port than acg_listen (the sides are told apart by socket)",
                       "%s:%d" % (core["address"], core["port"]))

    next_hop = _next_hop(top.get("core_next_hop"), base + ".core_next_hop", findings)

    files = registered is None or registered.tls_form == TLS_FILES
    tls_settings = _tls(top.get("tls"), base + ".tls", files, findings) if tls else None
    if not tls:
        _mapping(top.get("tls"), base + ".tls", TLS_FILE_FIELDS + ("verify_hostname",), findings)

    settings: dict[str, t.Any] = {
        "host": host,
        "acg_listen": acg,
        "core_listen": core,
        "core_next_hop": next_hop,
        "tls": tls_settings,
        "emergency_reply_code": 403,
        "size_headroom_bytes": 256,
    }
    if registered:
        settings.update(registered.validate_settings(top, base, tls, findings))
    int_fields(top, base, _INT_RANGES, settings, findings)
    action = top.get("acl_action", "reject")
    if action not in ACL_ACTIONS:
        findings.error(base + ".acl_action", "is not supported", " or ".join(ACL_ACTIONS), action)
        action = "reject"
    settings["acl_action"] = action
    settings["core_allowed_sources"] = parse_core_allowed_sources(
        top.get("core_allowed_sources"), base + ".core_allowed_sources", next_hop, findings,
        required=deployment_type == "production")
    settings["number_normalisation"] = parse_number_normalisation(
        top.get("number_normalisation"), base + ".number_normalisation", findings)
    return settings


def _tls(raw: t.Any, path: str, files: bool, findings: Findings) -> dict[str, t.Any]:
    """The ``tls`` settings of a TLS deployment: the files (``files``) and ``verify_hostname``."""
    tls_raw = _mapping(raw, path, (TLS_FILE_FIELDS if files else ()) + ("verify_hostname",), findings)
    tls_settings: dict[str, t.Any] = {}
    for key in TLS_FILE_FIELDS if files else ():
        if tls_raw.get(key) is None:
            findings.error("%s.%s" % (path, key), "is missing", "an absolute path on the SBC (R-24)")
        tls_settings[key] = abs_path(tls_raw.get(key), "%s.%s" % (path, key), None, findings)
    verify = tls_raw.get("verify_hostname", True)
    if not isinstance(verify, bool):
        findings.error(path + ".verify_hostname", "is not a boolean", "true or false", verify)
        verify = True
    if verify is False:
        findings.warn(path + ".verify_hostname", "is false: the SBC accepts any trusted certificate from "
                      "an ACG peer, whatever host name it names (R-24 host-name check switched off)",
                      "true (the default) unless a lab needs it", verify, rule="R-24")
    tls_settings["verify_hostname"] = verify
    return tls_settings


def _common_only(raw: t.Any, base: str, findings: Findings) -> dict[str, t.Any]:
    if raw is not None and not isinstance(raw, dict):
        findings.error(base, "is not a mapping", "a mapping with: " + ", ".join(COMMON_FIELDS), raw)
        return {}
    return raw or {}


def _next_hop(raw: t.Any, path: str, findings: Findings) -> t.Optional[dict[str, t.Any]]:
    expected = "host:port, e.g. 192.0.2.20:5060 or core.example.net:5060"
    try:
        host, port = split_host_port(raw, require_port=True)
    except HostPortError as exc:
        findings.error(path, exc.problem, expected, raw)
        return None
    try:
        host = str(ipaddress.IPv4Address(host))
    except ValueError:
        # The host lands inside a platform's configuration: the inventory's one host-name rule, single labels allowed.
        if fqdn_problem(host, min_labels=1) is not None or host.replace(".", "").isdigit():
            findings.error(path, "has no valid host", expected, raw)
            return None
    return {"host": host, "port": int(port or 0)}


class SettingsError(ValueError):
    """Settings that did not validate; the message lists every finding."""


def normalise_sbc_settings(raw: t.Mapping[str, t.Any], acg_transport: str,
                           host: t.Optional[str] = None, platform: str = DEFAULT_PLATFORM) -> dict[str, t.Any]:
    """Accept either raw ``commsgw_sbc`` data or already-normalised settings; raise on errors.

    Normalised settings carry ``acg_listen.transport``; they are re-checked against the plan's
    transport so that a settings dict rendered for a UDP lab is never used for a TLS deployment.
    """
    host = host or str(raw.get("host") or "sbc")
    if isinstance(raw.get("acg_listen"), dict) and "transport" in raw["acg_listen"]:
        if raw["acg_listen"]["transport"] != acg_transport:
            raise SettingsError("hosts[%s].%s: settings were normalised for transport %s, the plan uses %s"
                                % (host, SBC_VAR, raw["acg_listen"]["transport"], acg_transport))
        raw = _denormalise(raw)
    findings = Findings()
    settings = parse_sbc_settings(dict(raw), host, acg_transport, findings, platform)
    if findings.errors:
        raise SettingsError("; ".join(f.render() for f in findings.errors))
    return settings


def _denormalise(settings: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Back from normalised to raw shape (so parsing stays the single validation path)."""
    raw = {k: v for k, v in settings.items() if k != "host" and v is not None}
    raw["acg_listen"] = {k: v for k, v in settings["acg_listen"].items() if k != "transport"}
    hop = settings.get("core_next_hop")
    if isinstance(hop, dict):
        raw["core_next_hop"] = "%s:%d" % (hop["host"], hop["port"])
    return raw
