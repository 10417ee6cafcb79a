# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The exporter's configuration (JSON, written by the commsgw.routing.probe_exporter role) and the probe
arguments one scrape may use.

A scrape names a configured site (``target``) and a configured module (``module``: transports and
timeouts); nothing else a client sends reaches the probe. Every bad field is a ``ConfigError`` naming
its path (``sites.amsterdam.thresholds.max_rtt_ms``), what is wrong and what is expected.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import ProbeSettings, Thresholds
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import UnknownPlatform, get_platform
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings

SCHEMA_VERSION = 1
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")  # site and module names
TRANSPORTS = ("tls", "tcp", "udp")
# sbc_host: the exporter runs where the SBC's ACG-facing address is, and sends OPTIONS itself.
# management: the SBC is reached through a management API; the exporter cannot send OPTIONS from the
# device's address and reports the device's own view of its peers (through the platform contract) only.
VANTAGES = ("sbc_host", "management")
MAX_SCRAPE_TIMEOUT_S = 120.0


class ConfigError(ValueError):
    """A configuration field that cannot be used; the message names its path."""


@dataclasses.dataclass(frozen=True)
class Module:
    """Probe options a scrape selects with ``module=``."""

    name: str
    timeout_s: float = 3.0          # one peer: connect + handshake + reply (the probe's ``timeout``)
    dns_timeout_s: float = 2.0
    transports: tuple[str, ...] = TRANSPORTS  # of the site's allowed transports, those this module uses
    sbc_settle_s: float = 0.0       # a scrape reads the SBC's view once; alerts wait with ``for:``
    check_provisioning_ttl: bool = True
    concurrency: int = 64


@dataclasses.dataclass(frozen=True)
class Site:
    """One site the exporter may probe: its routing plan and how the probe reaches ACG and the SBC."""

    name: str
    deployment: str
    plan: t.Mapping[str, t.Any]
    host: t.Optional[str] = None
    vantage: str = "sbc_host"
    allowed_transports: tuple[str, ...] = ("tls",)
    client_cert: t.Optional[str] = None
    client_key: t.Optional[str] = None
    ca_bundle: t.Optional[str] = None
    source_address: t.Optional[str] = None
    nameservers: t.Optional[tuple[str, ...]] = None
    dns_port: int = 53
    platform: t.Optional[str] = None
    platform_options: t.Mapping[str, t.Any] = dataclasses.field(default_factory=dict)
    thresholds: Thresholds = Thresholds()


@dataclasses.dataclass(frozen=True)
class ExporterConfig:
    listen_address: str
    listen_port: int
    sites: t.Mapping[str, Site]
    modules: t.Mapping[str, Module]
    default_module: str = "default"
    min_interval_s: float = 5.0          # at most one probe run per site and module in this time
    history_s: float = 3600.0            # the status page's timeline
    timeout_offset_s: float = 0.5        # kept back from Prometheus' scrape timeout for the answer
    default_scrape_timeout_s: float = 10.0  # without X-Prometheus-Scrape-Timeout-Seconds
    max_connections: int = 32            # HTTP connections served at once; more get 503
    background_interval_s: float = 0.0   # 0: probes run only when scraped
    web_config_file: t.Optional[str] = None


# ----------------------------------------------------------------------------------------------------------
# Reading


def _get(raw: t.Mapping[str, t.Any], key: str, path: str, kinds: t.Any, default: t.Any = None,
         required: bool = False) -> t.Any:
    if key not in raw or raw[key] is None:
        if required:
            raise ConfigError("%s.%s: missing; expected %s" % (path, key, _kind_name(kinds)))
        return default
    value = raw[key]
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise ConfigError("%s.%s: %r is a boolean; expected %s" % (path, key, value, _kind_name(kinds)))
    if not isinstance(value, kinds):
        raise ConfigError("%s.%s: %r is a %s; expected %s"
                          % (path, key, value, type(value).__name__, _kind_name(kinds)))
    return value


def _kind_name(kinds: t.Any) -> str:
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    return " or ".join({str: "a string", int: "an integer", float: "a number", bool: "true or false",
                        list: "a list", dict: "a mapping"}.get(k, k.__name__) for k in kinds)


def _seconds(raw: t.Mapping[str, t.Any], key: str, path: str, default: float, low: float = 0.0,
             high: float = 3600.0, positive: bool = True) -> float:
    value = float(_get(raw, key, path, (int, float), default))
    if not math.isfinite(value) or value < low or value > high or (positive and value <= 0):
        raise ConfigError("%s.%s: %r is out of range; expected %s %s s and at most %s s"
                          % (path, key, value, "more than" if positive else "at least", low, high))
    return value


def _name(value: t.Any, path: str) -> str:
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise ConfigError("%s: %r is not a usable name; expected letters, digits, '.', '_' or '-' (at most 63, "
                          "starting with a letter or digit)" % (path, value))
    return value


def _strings(raw: t.Mapping[str, t.Any], key: str, path: str, allowed: t.Optional[t.Sequence[str]] = None
             ) -> t.Optional[tuple[str, ...]]:
    values = _get(raw, key, path, list)
    if values is None:
        return None
    for index, value in enumerate(values):
        if not isinstance(value, str) or (allowed is not None and value not in allowed):
            expected = " or ".join(allowed) if allowed else "a string"
            raise ConfigError("%s.%s[%d]: %r; expected %s" % (path, key, index, value, expected))
    return tuple(values)


def _module(name: str, raw: t.Any) -> Module:
    path = "modules.%s" % name
    if not isinstance(raw, dict):
        raise ConfigError("%s: expected a mapping of probe options" % path)
    unknown = sorted(set(raw) - {f.name for f in dataclasses.fields(Module)} - {"name"})
    if unknown:
        raise ConfigError("%s: unknown option(s) %s" % (path, ", ".join(unknown)))
    concurrency = _get(raw, "concurrency", path, int, 64)
    if not 1 <= concurrency <= 64:
        raise ConfigError("%s.concurrency: %d; expected 1 to 64" % (path, concurrency))
    return Module(name=name, timeout_s=_seconds(raw, "timeout_s", path, 3.0, high=60.0),
                  dns_timeout_s=_seconds(raw, "dns_timeout_s", path, 2.0, high=30.0),
                  transports=_strings(raw, "transports", path, TRANSPORTS) or TRANSPORTS,
                  sbc_settle_s=_seconds(raw, "sbc_settle_s", path, 0.0, high=15.0, positive=False),
                  check_provisioning_ttl=_get(raw, "check_provisioning_ttl", path, bool, True),
                  concurrency=concurrency)


def _thresholds(raw: t.Any, path: str) -> Thresholds:
    if not isinstance(raw, dict):
        raise ConfigError("%s: expected a mapping" % path)
    known = {f.name: f for f in dataclasses.fields(Thresholds)}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError("%s: unknown threshold(s) %s; known: %s" % (path, ", ".join(unknown), ", ".join(known)))
    values = {}
    for key, value in raw.items():
        kinds = (bool,) if isinstance(known[key].default, bool) else (int, float)
        values[key] = _get(raw, key, path, kinds)
    return Thresholds(**values)


def _site(name: str, raw: t.Any) -> Site:
    path = "sites.%s" % name
    if not isinstance(raw, dict):
        raise ConfigError("%s: expected a mapping" % path)
    plan = _get(raw, "plan", path, dict, required=True)
    if not isinstance(plan.get("trunk_groups"), list) or not isinstance(plan.get("site"), dict):
        raise ConfigError("%s.plan: not a routing plan (no trunk_groups/site); expected routing_plan's "
                          "host_plans[<host>]" % path)
    vantage = _get(raw, "vantage", path, str, "sbc_host")
    if vantage not in VANTAGES:
        raise ConfigError("%s.vantage: %r; expected %s" % (path, vantage, " or ".join(VANTAGES)))
    dns_port = _get(raw, "dns_port", path, int, 53)
    if not 1 <= dns_port <= 65535:
        raise ConfigError("%s.dns_port: %d; expected 1 to 65535" % (path, dns_port))
    return Site(name=name, deployment=str((plan.get("deployment") or {}).get("name") or ""), plan=plan,
                host=_get(raw, "host", path, str), vantage=vantage,
                allowed_transports=_strings(raw, "allowed_transports", path, TRANSPORTS) or ("tls",),
                client_cert=_get(raw, "client_cert", path, str), client_key=_get(raw, "client_key", path, str),
                ca_bundle=_get(raw, "ca_bundle", path, str), source_address=_get(raw, "source_address", path, str),
                nameservers=_strings(raw, "nameservers", path) or None, dns_port=dns_port,
                platform=_get(raw, "platform", path, str) or None,
                platform_options=dict(_get(raw, "platform_options", path, dict, {})),
                thresholds=_thresholds(_get(raw, "thresholds", path, dict, {}), path + ".thresholds"))


def parse_config(raw: t.Any) -> ExporterConfig:
    """The exporter's configuration from its JSON document."""
    if not isinstance(raw, dict):
        raise ConfigError("the configuration: expected a JSON object")
    if raw.get("schema_version") != SCHEMA_VERSION:
        raise ConfigError("schema_version: %r; this exporter reads %d" % (raw.get("schema_version"), SCHEMA_VERSION))
    listen = _get(raw, "listen", "", dict, required=True)
    port = _get(listen, "port", "listen", int, 9473)
    if not 0 <= port <= 65535:
        raise ConfigError("listen.port: %d; expected 1 to 65535 (0: any free port)" % port)
    sites = {_name(n, "sites.%s" % n): _site(n, v) for n, v in _get(raw, "sites", "", dict, required=True).items()}
    if not sites:
        raise ConfigError("sites: empty; expected at least one site to probe")
    modules = {_name(n, "modules.%s" % n): _module(n, v) for n, v in _get(raw, "modules", "", dict, {}).items()}
    modules.setdefault("default", Module(name="default"))
    default_module = _get(raw, "default_module", "", str, "default")
    if default_module not in modules:
        raise ConfigError("default_module: %r is not a configured module (%s)" % (default_module, ", ".join(modules)))
    max_connections = _get(raw, "max_connections", "", int, 32)
    if not 1 <= max_connections <= 1024:
        raise ConfigError("max_connections: %d; expected 1 to 1024" % max_connections)
    return ExporterConfig(
        listen_address=_get(listen, "address", "listen", str, required=True), listen_port=port, sites=sites,
        modules=modules, default_module=default_module,
        min_interval_s=_seconds(raw, "min_interval_s", "", 5.0, low=1.0, positive=False),
        history_s=_seconds(raw, "history_s", "", 3600.0, high=86400.0),
        timeout_offset_s=_seconds(raw, "timeout_offset_s", "", 0.5, high=10.0, positive=False),
        default_scrape_timeout_s=_seconds(raw, "default_scrape_timeout_s", "", 10.0, high=MAX_SCRAPE_TIMEOUT_S),
        max_connections=max_connections,
        background_interval_s=_seconds(raw, "background_interval_s", "", 0.0, high=3600.0, positive=False),
        web_config_file=_get(raw, "web_config_file", "", str))


def read_json(path: str, what: str) -> t.Any:
    """The JSON document at ``path``; ConfigError naming ``what`` it is when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise ConfigError("cannot read the %s %s: %s" % (what, path, exc)) from exc


def load_config(path: str) -> ExporterConfig:
    return parse_config(read_json(path, "configuration"))


# ----------------------------------------------------------------------------------------------------------
# One scrape's probe


def probe_arguments(site: Site, module: Module, budget_s: float) -> dict[str, t.Any]:
    """``run_probe``'s arguments for one scrape of ``site`` with ``module`` that must end in ``budget_s``.

    The module's timeouts are shortened to fit: DNS a quarter of the budget, a peer half of it, the SBC
    view what is left (the run is also cut off by the runner's deadline, whatever DNS does). With the
    ``management`` vantage no transport is allowed, so no peer is ever contacted: only DNS and the
    device's own view.
    """
    budget_s = max(0.3, budget_s)
    dns_timeout = min(module.dns_timeout_s, max(0.1, budget_s * 0.25))
    peer_timeout = min(module.timeout_s, max(0.1, budget_s * 0.5))
    left = max(0.1, budget_s - dns_timeout - peer_timeout)
    options = dict(site.platform_options)
    try:
        platform = get_platform(site.platform) if site.platform else None
    except UnknownPlatform:
        platform = None  # the probe reports it
    if platform is not None:  # one read of the SBC bounded by what the scrape has left
        given = platform.with_defaults(options).get(platform.read_timeout)
        options[platform.read_timeout] = min(float(given or budget_s), max(0.1, left * 0.5))
    transports = () if site.vantage == "management" else tuple(
        tr for tr in site.allowed_transports if tr in module.transports)
    settings = ProbeSettings(
        timeout_s=peer_timeout,
        resolver=ResolverSettings(nameservers=site.nameservers, port=site.dns_port, timeout_s=dns_timeout),
        client_cert=site.client_cert, client_key=site.client_key, ca_bundle=site.ca_bundle,
        source_address=site.source_address, allowed_transports=transports, concurrency=module.concurrency,
        user_agent="commsgw-probe-exporter", check_provisioning_ttl=module.check_provisioning_ttl,
        thresholds=site.thresholds)
    return {"plan": site.plan, "settings": settings, "host": site.host, "sbc_platform": site.platform,
            "platform_options": options, "sbc_settle_s": min(module.sbc_settle_s, max(0.0, left - 0.5))}
