# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC platform contract: what one SBC platform provides, stated once.

The routing plan is platform-neutral; a platform is "a renderer, a push path and a state reader"
over it. Generic code (validation, plan, probe, migration, sbc_state_info, the playbooks) asks the
registry (``sbc.registry``) for the ``SbcPlatform`` named by the host's ``commsgw_sbc_platform``
and never imports a platform's own modules. A platform registers itself in one file
(Kamailio: ``kamailio/platform.py``); docs/platforms.md lists the files a new platform adds.

This module holds types only and imports no platform.
"""

from __future__ import annotations

import dataclasses
import importlib
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings

State = t.Optional[t.Dict[str, t.Any]]
# Files: name relative to the platform's configuration directory -> text.
Files = t.Mapping[str, t.Optional[str]]


class SettingsValidator(t.Protocol):
    """Validates the platform's own part of ``commsgw_sbc`` (its ``sbc.fields``).

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


@dataclasses.dataclass(frozen=True)
class SbcPlatform:
    """One SBC platform. Every field is required; see docs/platforms.md for what each means.

    * ``role``: FQCN of the role the playbooks include to render, start-test, apply and reload
      (its entry point is ``tasks/main.yml``; the plan travels as ``<role>_plan``).
    * ``start_test`` / ``apply``: FQCNs of the modules the role runs to test-start a rendered
      configuration and to apply/reload it.
    * ``renderer``: ``"module:function"`` of the controller-side renderer
      ``(plan, settings, host=..., **platform options) -> {file name: text}``; loaded on demand
      (it may need controller-only libraries such as Jinja2), see ``render``.
    * ``state_files``: the rendered files that carry routing state; ``state_from_files(files,
      certificates)``: those files read back as a state in the plan's vocabulary (``sbc.readback``),
      None when the host was never onboarded; ``certificate_paths(files)``: certificate files the
      files name (their content is part of the state).
    * ``read_state(options)``: the running SBC's state (files and live runtime);
      ``file_path(config_dir, name)``: where the rendered file ``name`` is deployed;
      ``deployed_files(options, names)``: the deployed text of each rendered file of ``names`` (None: absent or
      unreadable), read as the SBC's own user, never by following a link another user could plant;
      ``weight_scale``: how the platform keeps the plan's SRV weights within one priority tier.
    * ``runtime_queries``: the live queries the reader and probe view make (Kamailio: RPC methods);
      ``runtime_state(files, answers)``: their answers (query -> answer) as the runtime part of the
      state; ``runtime_peers(answers)``: the same answers as the probe view's running destinations.
    * ``probe_view(options) -> probe_view.SbcView``: the runtime peer view for the probe.
    * ``peer_states(options) -> poll``: ``poll() -> {address:port: flags}``, the live peer states a
      migration waits on (OSError: cannot set up; ``PeerStateError`` from a poll: try again).
    * ``refresher``: see ``Refresher``.
    * ``sbc.fields`` / ``validate_settings``: the platform's own keys of ``commsgw_sbc`` and
      their validator (the common keys are ``sbc_settings.COMMON_FIELDS``).
    * ``defaults``: option defaults generic code passes to the reader and probe view
      (``config_dir``, ``run_dir``).
    """

    name: str
    role: str
    start_test: str
    apply: str
    renderer: str
    state_files: tuple[str, ...]
    state_from_files: t.Callable[[Files, t.Optional[t.Mapping[str, t.Optional[str]]]], State]
    certificate_paths: t.Callable[[Files], t.List[str]]
    read_state: t.Callable[[t.Mapping[str, t.Any]], State]
    file_path: t.Callable[[str, str], str]
    deployed_files: t.Callable[[t.Mapping[str, t.Any], t.Sequence[str]], t.Dict[str, t.Optional[str]]]
    weight_scale: t.Callable[[t.Sequence[int]], t.List[int]]
    runtime_queries: tuple[str, ...]
    runtime_state: t.Callable[[Files, t.Mapping[str, t.Any]], t.Dict[str, t.Any]]
    runtime_peers: t.Callable[[t.Mapping[str, t.Any]], t.List[t.Any]]
    probe_view: t.Callable[[t.Mapping[str, t.Any]], t.Any]
    peer_states: t.Callable[[t.Mapping[str, t.Any]], t.Callable[[], t.Dict[str, str]]]
    refresher: Refresher
    settings_fields: tuple[str, ...]
    validate_settings: SettingsValidator
    defaults: t.Mapping[str, t.Any] = dataclasses.field(default_factory=dict)

    def render(self, plan: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], host: t.Optional[str] = None,
               **options: t.Any) -> t.Dict[str, str]:
        """Render ``plan`` with ``settings`` for inventory host ``host`` (controller side only)."""
        module_name, func = self.renderer.split(":", 1)
        renderer = getattr(importlib.import_module(module_name), func)
        return renderer(plan, settings, host=host, **options)

    def options(self, given: t.Mapping[str, t.Any]) -> t.Dict[str, t.Any]:
        """Reader/probe-view options: the platform's defaults under what was given (None: not given)."""
        merged = dict(self.defaults)
        merged.update({k: v for k, v in given.items() if v is not None})
        return merged


class UnknownPlatform(KeyError):
    """A platform name no registration provides."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class PeerStateError(RuntimeError):
    """The platform could not report its live peer states this time (retry later)."""
