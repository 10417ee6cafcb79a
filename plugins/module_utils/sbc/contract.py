# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC platform contract: what one SBC platform provides, stated once (docs/platforms.md).

The routing plan is platform-neutral; a platform renders it into *artefacts* (files on a Linux host; for an
API platform a CLI script, a JSON document...), applies them, and reads what the SBC runs back as a
neutral *state* (``sbc.readback``). Generic code asks the registry (``sbc.registry``) for the
``SbcPlatform`` named by the host's ``commsgw_sbc_platform`` and never imports a platform.

A platform has two parts:

* its registration, ``SbcPlatform``: plain data and the settings validator, light to import (the
  registry loads it when a host names the platform; validation needs nothing more);
* its hooks (``HOOKS``): functions in a module of its own that ``SbcPlatform.hooks()`` imports on first
  use (readers, RPC or API clients). The methods of ``SbcPlatform`` with the same names call them.

This module holds types only and imports no platform.
"""

from __future__ import annotations

import dataclasses
import importlib
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings

State = t.Optional[t.Dict[str, t.Any]]
# Artefacts: what the renderer makes of a plan, name -> text (None: absent).
Artefacts = t.Mapping[str, t.Optional[str]]
Options = t.Mapping[str, t.Any]

# How generic work reaches the SBC (docs/platforms.md, "Connection").
HOST = "host"  # a Linux host over Ansible's connection: modules run on it (files, a local control socket)
API = "api"    # a management API reached from the controller: generic work runs on the controller
CONNECTIONS = (HOST, API)
# Where the TLS material the SBC presents and trusts lives.
TLS_FILES = "files"    # files on the SBC host, named by commsgw_sbc.tls (certificate, private_key, ca_bundle)
TLS_DEVICE = "device"  # held by the device, named by the platform's own keys of commsgw_sbc
TLS_FORMS = (TLS_FILES, TLS_DEVICE)
# The neutral runtime state of a peer, whatever the platform calls it (its own words go to ``detail``).
PEER_STATES = ("active", "inactive", "probing", "disabled")


class SettingsValidator(t.Protocol):
    """Validates the platform's own part of ``commsgw_sbc`` (its ``settings_fields``).

    ``raw``: the host's ``commsgw_sbc`` mapping; ``base``: the path findings start with
    (``hosts[<host>].commsgw_sbc``); ``tls``: whether the deployment uses TLS. Returns the
    platform's settings complete with defaults (merged into the host's settings)."""

    def __call__(self, raw: t.Mapping[str, t.Any], base: str, tls: bool, findings: Findings) -> dict[str, t.Any]:
        ...


@dataclasses.dataclass(frozen=True)
class Refresher:
    """What the SRV refresher on the SBC host does for this platform.

    ``needed`` false: the platform resolves ACG's SRV records itself (``reason`` says how).
    Otherwise it reads ``reads`` (rendered next to the configuration), rewrites ``writes`` and
    then runs ``reloads`` (runtime commands, in order)."""

    needed: bool
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    reloads: tuple[str, ...] = ()
    reason: str = ""


# The functions a platform's hooks module provides; ``options`` are the platform options, validated
# against ``SbcPlatform.options`` (defaults filled in). docs/platforms.md has the table of who calls each.
HOOKS: t.Dict[str, str] = {
    "read_state": "(options, runtime) -> state or None: what the SBC holds and, with ``runtime``, runs "
                  "(sbc.readback's vocabulary; runtime peers with a neutral state), None when it was never onboarded",
    "deployed_artefacts": "(options, names) -> {name: text or None}: the deployed form of each rendered artefact, "
                          "read as the SBC's own user, never through a link another user could plant",
    "artefact_path": "(options, name) -> str: where artefact ``name`` lives on the SBC (diff headers, "
                     "offline renders)",
    "state_from_artefacts": "(artefacts, certificates) -> state or None: rendered or deployed artefacts read back; "
                            "``certificates`` maps what the artefacts name as presented certificate to its PEM text",
    "presented_certificates": "(options, artefact_sets) -> {reference: PEM text or None}: the certificates the "
                              "artefacts name as what the SBC presents",
    "weight_scale": "(weights) -> weights: how the platform keeps the plan's SRV weights of one priority tier",
    "runtime_state": "(artefacts, answers) -> the runtime part of a state from the answers to runtime_queries",
    "runtime_peers": "(answers) -> [probe.view.SbcDestination]: the same answers as the probe's running peers",
    "probe_view": "(options) -> probe.view.SbcView: the SBC's own view of its peers for the probe",
    "peer_states": "(options) -> poll, poll() -> {address:port: neutral state}: the live states a migration "
                   "waits on (OSError: cannot set up; PeerStateError from a poll: try again)",
    "latest_backup": "(options) -> str: the newest backup a rollback can restore ('' when none)",
    "local_reader": "(options) -> {groups, optional_groups, writable_dirs}: what an unprivileged reader of the "
                    "SBC's state on its host needs (the probe exporter); empty for an API platform",
}


@dataclasses.dataclass(frozen=True)
class SbcPlatform:
    """One SBC platform's registration. docs/platforms.md says what each field means and who uses it.

    * ``name``: the value of ``commsgw_sbc_platform`` (a platform of another collection: ``ns.collection.name``).
    * ``connection``: ``host`` or ``api`` (``CONNECTIONS``).
    * ``role``: FQCN of the role with the entry points (tasks files) the playbooks include: ``render``,
      ``main`` (apply), ``settle``, ``rollback``, ``hold`` and ``release``; the plan travels as ``commsgw_sbc_plan``.
    * ``options``: the argument spec of the platform options (how it is reached and read); generic modules
      take them as ``platform_options`` and validate them against it. ``options_doc``: the doc fragment
      documenting them. ``option_sources``: option -> where its value comes from in the inventory
      (``commsgw_sbc.<key>``, a host variable or ``variable.key``), for the filter
      ``commsgw.routing.sbc_platform_options``.
      ``read_timeout``: the option (seconds) bounding one read of the SBC (the probe exporter shortens it to
      fit a scrape). ``artefact_root``: the option naming the directory the artefacts are files under
      (a configuration directory), '' when they are not files (an offline render then writes them by name).
    * ``renderer``: ``"module:function"``, ``(plan, settings, host=..., **render options) -> artefacts``,
      controller side, imported on first use (it may need Jinja2).
    * ``state_artefacts``: the artefacts that carry routing state; ``runtime_queries``: the live queries the
      reader and probe view make (RPC methods, API requests), the keys of ``runtime_state``'s answers.
    * ``tls_form``: where the TLS material lives (``TLS_FORMS``).
    * ``refresher``: see ``Refresher``.
    * ``settings_fields`` / ``validate_settings``: the platform's own keys of ``commsgw_sbc`` and their
      validator (the common keys are ``sbc.settings.COMMON_FIELDS``).
    * ``hooks``: returns the platform's hooks module (``HOOKS``), importing it on first use.
    * ``routing_limits``: the deployment's routing knobs (``commsgw_deployment.routing.<key>``) the platform can
      take only within a narrower range than the inventory allows, ``{key: (low, high)}``; the inventory
      validation names a host of the platform whose deployment is outside it.
    """

    name: str
    connection: str
    role: str
    options: t.Mapping[str, t.Mapping[str, t.Any]]
    options_doc: str
    option_sources: t.Mapping[str, str]
    read_timeout: str
    artefact_root: str
    renderer: str
    state_artefacts: tuple[str, ...]
    runtime_queries: tuple[str, ...]
    tls_form: str
    refresher: Refresher
    settings_fields: tuple[str, ...]
    validate_settings: SettingsValidator
    hooks: t.Callable[[], t.Any]
    routing_limits: t.Mapping[str, t.Tuple[int, int]] = dataclasses.field(default_factory=dict)

    def render(self, plan: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], host: t.Optional[str] = None,
               **options: t.Any) -> t.Dict[str, str]:
        """Render ``plan`` with ``settings`` for inventory host ``host`` (controller side only)."""
        module_name, func = self.renderer.split(":", 1)
        renderer = getattr(importlib.import_module(module_name), func)
        return renderer(plan, settings, host=host, **options)

    def with_defaults(self, given: t.Optional[Options]) -> t.Dict[str, t.Any]:
        """``given`` platform options over the spec's defaults (not validated: ``sbc.options`` does that)."""
        merged = {key: spec["default"] for key, spec in self.options.items() if "default" in spec}
        merged.update({key: value for key, value in (given or {}).items() if value is not None})
        return merged

    def _hook(self, name: str) -> t.Callable[..., t.Any]:
        return t.cast(t.Callable[..., t.Any], getattr(self.hooks(), name))

    def read_state(self, options: Options, runtime: bool = True) -> State:
        return t.cast(State, self._hook("read_state")(options, runtime))

    def deployed_artefacts(self, options: Options, names: t.Sequence[str]) -> t.Dict[str, t.Optional[str]]:
        return t.cast(t.Dict[str, t.Optional[str]], self._hook("deployed_artefacts")(options, names))

    def artefact_path(self, options: Options, name: str) -> str:
        return str(self._hook("artefact_path")(options, name))

    def state_from_artefacts(self, artefacts: Artefacts, certificates: t.Mapping[str, t.Optional[str]]) -> State:
        return t.cast(State, self._hook("state_from_artefacts")(artefacts, certificates))

    def presented_certificates(self, options: Options, artefact_sets: t.Sequence[Artefacts]
                               ) -> t.Dict[str, t.Optional[str]]:
        return t.cast(t.Dict[str, t.Optional[str]], self._hook("presented_certificates")(options, artefact_sets))

    def weight_scale(self, weights: t.Sequence[int]) -> t.List[int]:
        return list(self._hook("weight_scale")(weights))

    def runtime_state(self, artefacts: Artefacts, answers: t.Mapping[str, t.Any]) -> t.Dict[str, t.Any]:
        return t.cast(t.Dict[str, t.Any], self._hook("runtime_state")(artefacts, answers))

    def runtime_peers(self, answers: t.Mapping[str, t.Any]) -> t.List[t.Any]:
        return list(self._hook("runtime_peers")(answers))

    def probe_view(self, options: Options) -> t.Any:
        return self._hook("probe_view")(options)

    def peer_states(self, options: Options) -> t.Callable[[], t.Dict[str, str]]:
        return t.cast(t.Callable[[], t.Dict[str, str]], self._hook("peer_states")(options))

    def latest_backup(self, options: Options) -> str:
        return str(self._hook("latest_backup")(options) or "")

    def local_reader(self, options: Options) -> t.Dict[str, t.List[str]]:
        return t.cast(t.Dict[str, t.List[str]], self._hook("local_reader")(options))


class UnknownPlatform(KeyError):
    """A platform name no registration provides."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class PeerStateError(RuntimeError):
    """The platform could not report its live peer states this time (retry later)."""
