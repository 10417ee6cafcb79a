# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio, the first SBC platform: its registration in the platform contract (``sbc.contract``).

Everything generic code needs from Kamailio is named here; ``sbc.registry`` imports this file.
"""

from __future__ import annotations

import dataclasses
import os
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import readback as kb
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import runtime as kr
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.settings import FIELDS, parse_kamailio_settings
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.probe_view import (
    parse_dispatcher_rpc, read_kamailio_view, view_from_dict)
from ansible_collections.commsgw.routing.plugins.module_utils.probe.view import SbcView
from ansible_collections.commsgw.routing.plugins.module_utils.host.run_as import RunAsError, run_as
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import PeerStateError, Refresher, SbcPlatform
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import ReadbackError


def certificate_paths(files: t.Mapping[str, t.Optional[str]]) -> list[str]:
    """The certificate tls.cfg names (its content is part of the read-back state)."""
    if not files.get("tls.cfg"):
        return []
    cert = kb.parse_tls_cfg(files["tls.cfg"] or "").get("certificate")
    return [cert] if cert else []


RUNTIME_QUERIES = ("dispatcher.list", "permissions.subnetDump")


def runtime_state(files: t.Mapping[str, t.Optional[str]], answers: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The running state from the two RPC answers (None: not answered), as ``read_state`` builds it."""
    spec = kb.load_spec(files.get("commsgw-srv.json")) or {}
    return kb.runtime_state(spec, answers.get("dispatcher.list"), answers.get("permissions.subnetDump"))


def runtime_peers(answers: t.Mapping[str, t.Any]) -> list[t.Any]:
    """The probe view's running destinations from the dispatcher.list RPC answer."""
    return parse_dispatcher_rpc(answers.get("dispatcher.list"))


def _read_cfg(options: t.Mapping[str, t.Any]) -> str:
    try:
        with open(os.path.join(options["config_dir"], "kamailio.cfg"), encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise OSError("cannot read kamailio.cfg: %s" % exc) from exc


def _poll_states(options: t.Mapping[str, t.Any]) -> dict[str, str]:
    rpc = kr.JsonRpc(kr.rpc_endpoints(_read_cfg(options), options["run_dir"]), timeout_s=3.0,
                     kamailio_user=options.get("run_as_user"))
    try:
        return kb.dispatcher_states(rpc.call("dispatcher.list"))
    except kr.RpcError as exc:
        raise PeerStateError(str(exc)) from exc


def peer_states(options: t.Mapping[str, t.Any]) -> t.Callable[[], dict[str, str]]:
    """A poller of the live dispatcher states (``address:port`` -> flags such as ``AP``), each poll as
    ``run_as_user`` (Kamailio's user; see ``host.run_as``).

    Raises OSError when kamailio.cfg (which names the RPC endpoints) cannot be read; each poll
    raises PeerStateError when the RPC fails."""
    user = options.get("run_as_user")
    try:
        run_as(user, lambda: _read_cfg(options) and None)
    except RunAsError as exc:
        raise OSError(str(exc)) from exc

    def poll() -> dict[str, str]:
        try:
            return run_as(user, lambda: _poll_states(options))
        except RunAsError as exc:
            raise PeerStateError(str(exc)) from exc
    return poll


def read_state(options: t.Mapping[str, t.Any]) -> t.Optional[dict[str, t.Any]]:
    """``readback.read_state`` as ``run_as_user`` (Kamailio's user), never as root. Only the push state is read
    first, here: it lives in a root-only directory (push_state), which Kamailio's user cannot read."""
    config_dir = options.get("config_dir") or kr.DEFAULT_CONFIG_DIR
    pending = kb.read_pending(config_dir, options)
    try:
        state = run_as(options.get("run_as_user"), lambda: kb.read_state(dict(options, read_pending=False)))
    except RunAsError as exc:
        raise ReadbackError(str(exc)) from exc
    if state is not None:
        state["pending"] = pending
    return state


def deployed_files(options: t.Mapping[str, t.Any], names: t.Sequence[str]) -> dict[str, t.Optional[str]]:
    """``readback.read_files`` of ``names`` under ``config_dir``, as ``run_as_user`` (Kamailio's user), never as root."""
    config_dir = options.get("config_dir") or kr.DEFAULT_CONFIG_DIR
    try:
        return run_as(options.get("run_as_user"), lambda: kb.read_files(config_dir, names))
    except RunAsError as exc:
        raise ReadbackError(str(exc)) from exc


def probe_view(options: t.Mapping[str, t.Any]) -> SbcView:
    """``read_kamailio_view`` as ``run_as_user`` (Kamailio's user), never as root."""
    try:
        return view_from_dict(run_as(options.get("run_as_user"), lambda: dataclasses.asdict(read_kamailio_view(options))))
    except RunAsError as exc:
        return SbcView(platform="kamailio", source="nothing readable", errors=[str(exc)])


KAMAILIO = SbcPlatform(
    name="kamailio",
    role="commsgw.routing.kamailio",
    start_test="commsgw.routing.kamailio_config",
    apply="commsgw.routing.kamailio_service",
    renderer="ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render:render_kamailio",
    state_files=kb.STATE_FILES,
    state_from_files=kb.state_from_files,
    certificate_paths=certificate_paths,
    read_state=read_state,
    file_path=file_path,
    deployed_files=deployed_files,
    weight_scale=kb.WEIGHT_SCALE,
    runtime_queries=RUNTIME_QUERIES,
    runtime_state=runtime_state,
    runtime_peers=runtime_peers,
    probe_view=probe_view,
    peer_states=peer_states,
    # Kamailio cannot follow SRV itself (docs/kamailio-notes.md): kamailio/refresher.py rewrites the rows.
    refresher=Refresher(needed=True, reads=("commsgw-srv.json",), writes=("dispatcher.list",),
                        reloads=("dispatcher.reload",)),
    settings_fields=FIELDS,
    validate_settings=parse_kamailio_settings,
    # run_as_user: the account Kamailio runs as, which the readers drop to and whose replies they trust.
    defaults={"config_dir": kr.DEFAULT_CONFIG_DIR, "run_dir": kr.DEFAULT_RUN_DIR,
              "run_as_user": kr.DEFAULT_KAMAILIO_USER},
)
