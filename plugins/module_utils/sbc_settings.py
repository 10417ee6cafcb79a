# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-SBC host settings: the ``commsgw_sbc`` inventory variable of each Kamailio SBC host.

The routing plan says *where* calls go; these settings say how one SBC box is wired (its sockets,
files and process sizing). Every field, its default and why:

``acg_listen``            mapping, required. ``address``: the explicit IPv4 address of the ACG-facing
                          socket (no wildcard: the config tells the two sides apart by socket);
                          ``port``: default 5061 with TLS, 5060 otherwise. Transport comes from the
                          deployment (``commsgw_deployment.acg_transport``).
``core_listen``           mapping, required. ``address`` (explicit IPv4), ``port`` (default 5060),
                          ``transport`` udp|tcp (default udp): the socket facing the operator core.
                          Must differ from ``acg_listen`` in address or port.
``core_next_hop``         "host:port", required: where requests arriving from ACG are sent.
``tls``                   mapping, required when the deployment uses TLS: ``certificate``,
                          ``private_key``, ``ca_bundle`` (absolute paths on the SBC) and
                          ``verify_hostname`` (default true, R-24).
``config_dir``            absolute path, default /etc/kamailio: every rendered file is referenced
                          by an absolute path under it.
``run_dir``               absolute path, default /run/kamailio: jsonrpcs FIFO/socket and ctl socket.
``shared_memory_mb``      default 512 with TLS (OpenSSL contexts need it), 128 otherwise.
``private_memory_mb``     default 8 (Kamailio's own default).
``udp_workers``           default 4: SIP worker processes per UDP socket.
``tcp_workers``           default 2. With TLS keep it low or use ECDSA client keys (see the notes on
                          RSA signatures with several TCP workers).
``allow_tls_on_unfixed_kamailio``  default false: the documented override to render TLS for a
                          Kamailio older than 5.7.5 (memory corruption under OpenSSL 3).
``acl_action``            reject|drop, default reject: a request on the ACG-facing socket from
                          outside every ACG /28 gets "403 Forbidden" (reject) or no answer (drop).
``emergency_reply_code``  default 403: the final reply to an emergency dial string arriving from
                          the core (R-25: never sent to ACG; the core must route it elsewhere).
``size_headroom_bytes``   default 256: bytes this SBC adds to a request (one Via, two
                          Record-Route); a received message longer than the ACG limit minus this
                          is refused locally with 513 (R-27).
``options_timeout_ms``    default min(1000, options interval / 2): how long an OPTIONS probe
                          waits (the global tm fr_timer); keeps "taken out" within window + 1 s.
``log_level``             Kamailio ``debug`` level, default 2 (notice... errors).
``core_allowed_sources``  list of IPv4 CIDRs allowed to send to ``core_listen`` (absent: no core
                          ACL, with a warning); ``number_normalisation``: optional rewrite of
                          non-E.164 numbers towards ACG (R-26). Both: see ``core_policy``.
"""

from __future__ import annotations

import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core_policy import (
    parse_core_allowed_sources, parse_number_normalisation)
from ansible_collections.commsgw.routing.plugins.module_utils.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.host_port import HostPortError, split_host_port
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio_runtime import (
    DEFAULT_CONFIG_DIR, DEFAULT_PRIVATE_MEMORY_MB, DEFAULT_RUN_DIR, DEFAULT_SHARED_MEMORY_MB,
    DEFAULT_TLS_SHARED_MEMORY_MB)
from ansible_collections.commsgw.routing.plugins.module_utils.validation import fqdn_problem

SBC_VAR = "commsgw_sbc"
CORE_TRANSPORTS = ("udp", "tcp")
ACL_ACTIONS = ("reject", "drop")
_INT_RANGES: dict[str, tuple[int, int]] = {
    "shared_memory_mb": (64, 65536),
    "private_memory_mb": (4, 1024),
    "udp_workers": (1, 64),
    "tcp_workers": (1, 64),
    "emergency_reply_code": (400, 699),
    "size_headroom_bytes": (0, 4096),
    "options_timeout_ms": (100, 10000),
    "log_level": (-5, 3),
}
_TOP_FIELDS = ("acg_listen", "core_listen", "core_next_hop", "tls", "config_dir", "run_dir", "shared_memory_mb",
               "private_memory_mb", "udp_workers", "tcp_workers", "allow_tls_on_unfixed_kamailio", "acl_action",
               "emergency_reply_code", "size_headroom_bytes", "options_timeout_ms", "log_level",
               "core_allowed_sources", "number_normalisation")


def _is_int(value: t.Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    if not _is_int(raw) or not 1 <= raw <= 65535:
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


def _abs_path(raw: t.Any, path: str, default: t.Optional[str], findings: Findings) -> t.Optional[str]:
    if raw is None:
        return default
    # Paths are written into quoted strings of kamailio.cfg and tls.cfg.
    unsafe = isinstance(raw, str) and any(ch.isspace() or ch == '"' or ord(ch) < 32 or ord(ch) == 127 for ch in raw)
    if not isinstance(raw, str) or not raw.startswith("/") or unsafe:
        findings.error(path, "is not an absolute path", "an absolute path without spaces or quotes", raw)
        return default
    return raw.rstrip("/") or "/"


def parse_sbc_settings(raw: t.Any, host: str, acg_transport: str, findings: Findings) -> dict[str, t.Any]:
    """Validate ``commsgw_sbc`` of ``host`` and return it complete with defaults (plain data).

    Problems are added to ``findings`` with paths ``hosts[<host>].commsgw_sbc.<field>``; the returned
    mapping is only meaningful when no error was added.
    """
    base = "hosts[%s].%s" % (host, SBC_VAR)
    tls = acg_transport == "tls"
    if raw is None:
        findings.error(base, "is missing", "a mapping with at least acg_listen, core_listen and core_next_hop")
        raw = {}
    top = _mapping(raw, base, _TOP_FIELDS, findings)

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
    core = {"address": _address(core_raw.get("address"), base + ".core_listen.address", findings),
            "port": _port(core_raw.get("port"), base + ".core_listen.port", 5060, findings),
            "transport": core_transport}
    if acg["address"] and core["address"] and (acg["address"], acg["port"]) == (core["address"], core["port"]):
        findings.error(base + ".core_listen", "is the same socket as acg_listen",
                       "a different address or port than acg_listen (the sides are told apart by socket)",
                       "%s:%d" % (core["address"], core["port"]))

    next_hop = _next_hop(top.get("core_next_hop"), base + ".core_next_hop", findings)

    tls_settings = None
    tls_raw = _mapping(top.get("tls"), base + ".tls", ("certificate", "private_key", "ca_bundle", "verify_hostname"),
                       findings)
    if tls:
        tls_settings = {}
        for key in ("certificate", "private_key", "ca_bundle"):
            if tls_raw.get(key) is None:
                findings.error("%s.tls.%s" % (base, key), "is missing", "an absolute path on the SBC (R-24)")
            tls_settings[key] = _abs_path(tls_raw.get(key), "%s.tls.%s" % (base, key), None, findings)
        verify = tls_raw.get("verify_hostname", True)
        if not isinstance(verify, bool):
            findings.error(base + ".tls.verify_hostname", "is not a boolean", "true or false", verify)
            verify = True
        if verify is False:
            findings.warn(base + ".tls.verify_hostname", "is false: the SBC accepts any trusted certificate from "
                          "an ACG peer, whatever host name it names (R-24 host-name check switched off)",
                          "true (the default) unless a lab needs it", verify, rule="R-24")
        tls_settings["verify_hostname"] = verify

    settings: dict[str, t.Any] = {
        "host": host,
        "acg_listen": acg,
        "core_listen": core,
        "core_next_hop": next_hop,
        "tls": tls_settings,
        "config_dir": _abs_path(top.get("config_dir"), base + ".config_dir", DEFAULT_CONFIG_DIR, findings),
        "run_dir": _abs_path(top.get("run_dir"), base + ".run_dir", DEFAULT_RUN_DIR, findings),
        "shared_memory_mb": DEFAULT_TLS_SHARED_MEMORY_MB if tls else DEFAULT_SHARED_MEMORY_MB,
        "private_memory_mb": DEFAULT_PRIVATE_MEMORY_MB,
        "udp_workers": 4,
        "tcp_workers": 2,
        "emergency_reply_code": 403,
        "size_headroom_bytes": 256,
        "options_timeout_ms": None,  # derived from the plan's OPTIONS interval when rendering
        "log_level": 2,
    }
    for key, (low, high) in _INT_RANGES.items():
        value = top.get(key)
        if value is None:
            continue
        if not _is_int(value) or not low <= value <= high:
            findings.error("%s.%s" % (base, key), "is out of range", "an integer %d..%d" % (low, high), value)
            continue
        settings[key] = int(value)
    override = top.get("allow_tls_on_unfixed_kamailio", False)
    if not isinstance(override, bool):
        findings.error(base + ".allow_tls_on_unfixed_kamailio", "is not a boolean", "true or false", override)
        override = False
    settings["allow_tls_on_unfixed_kamailio"] = override
    action = top.get("acl_action", "reject")
    if action not in ACL_ACTIONS:
        findings.error(base + ".acl_action", "is not supported", " or ".join(ACL_ACTIONS), action)
        action = "reject"
    settings["acl_action"] = action
    settings["core_allowed_sources"] = parse_core_allowed_sources(
        top.get("core_allowed_sources"), base + ".core_allowed_sources", next_hop, findings)
    settings["number_normalisation"] = parse_number_normalisation(
        top.get("number_normalisation"), base + ".number_normalisation", findings)
    return settings


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
        # The host lands inside kamailio.cfg: the inventory's one host-name rule, single labels allowed.
        if fqdn_problem(host, min_labels=1) is not None or host.replace(".", "").isdigit():
            findings.error(path, "has no valid host", expected, raw)
            return None
    return {"host": host, "port": int(port or 0)}


class SettingsError(ValueError):
    """Settings that did not validate; the message lists every finding."""


def normalise_sbc_settings(raw: t.Mapping[str, t.Any], acg_transport: str,
                           host: t.Optional[str] = None) -> dict[str, t.Any]:
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
    settings = parse_sbc_settings(dict(raw), host, acg_transport, findings)
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
