# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's hooks of the platform contract (``sbc.contract.HOOKS``), imported on first use by its
registration (``kamailio.platform``). Artefacts are files under ``config_dir``; everything that reads the
SBC's files or asks it over jsonrpcs does so as ``run_as_user`` (Kamailio's user), never as root.
"""

from __future__ import annotations

import dataclasses
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import state_dir_for
from ansible_collections.commsgw.routing.plugins.module_utils.host.push_state import latest_backup as newest_backup
from ansible_collections.commsgw.routing.plugins.module_utils.host.run_as import RunAsError, run_as
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import live
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import readback as kb
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import DEFAULT_CONFIG_DIR
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import runtime as kr
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import file_path
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.probe_view import (
    destinations, read_kamailio_view, view_from_dict)
from ansible_collections.commsgw.routing.plugins.module_utils.probe.view import SbcView
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import PeerStateError
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import ReadbackError

weight_scale = kb.WEIGHT_SCALE
state_from_artefacts = kb.state_from_files


def _config_dir(options: t.Mapping[str, t.Any]) -> str:
    return str(options.get("config_dir") or DEFAULT_CONFIG_DIR)


def artefact_path(options: t.Mapping[str, t.Any], name: str) -> str:
    """Where the rendered file ``name`` lives (``dispatcher.list`` in the refresher's ``peers/``)."""
    return file_path(_config_dir(options), name)


def presented_certificates(options: t.Mapping[str, t.Any], artefact_sets: t.Sequence[t.Mapping[str, t.Optional[str]]]
                           ) -> dict[str, t.Optional[str]]:
    """The PEM text of the certificate each set's tls.cfg names (None: unreadable); its content is part of the
    state, so a certificate replaced under the same path is a change too."""
    paths = {kb.parse_tls_cfg(files.get("tls.cfg") or "").get("certificate") for files in artefact_sets}
    return {path: live.read_text(path) for path in sorted(p for p in paths if p)}


def runtime_state(files: t.Mapping[str, t.Optional[str]], answers: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The running state from the two RPC answers (None: not answered), as ``read_state`` builds it."""
    spec = kb.load_spec(files.get("commsgw-srv.json")) or {}
    return live.runtime_state(spec, answers.get("dispatcher.list"), answers.get("permissions.subnetDump"))


def runtime_peers(answers: t.Mapping[str, t.Any]) -> list[t.Any]:
    """The probe view's running destinations from the dispatcher.list RPC answer."""
    return destinations(live.runtime_peers(answers.get("dispatcher.list")))


def _read_cfg(options: t.Mapping[str, t.Any]) -> str:
    try:
        with open(artefact_path(options, "kamailio.cfg"), encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise OSError("cannot read kamailio.cfg: %s" % exc) from exc


def _poll_states(options: t.Mapping[str, t.Any]) -> dict[str, str]:
    rpc = live.rpc_client(options, _read_cfg(options))
    try:
        return live.peer_states(rpc.call("dispatcher.list"))
    except kr.RpcError as exc:
        raise PeerStateError(str(exc)) from exc


def peer_states(options: t.Mapping[str, t.Any]) -> t.Callable[[], dict[str, str]]:
    """A poller of the live dispatcher states (``address:port`` -> neutral state), each poll as ``run_as_user``.

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


def read_state(options: t.Mapping[str, t.Any], runtime: bool = True) -> t.Optional[dict[str, t.Any]]:
    """``live.read_state`` as ``run_as_user``, never as root. Only the push state is read first, here: it lives in a
    root-only directory (push_state), which Kamailio's user cannot read."""
    pending = live.read_pending(_config_dir(options), options)
    try:
        state = run_as(options.get("run_as_user"), lambda: live.read_state(options, runtime))
    except RunAsError as exc:
        raise ReadbackError(str(exc)) from exc
    if state is not None:
        state["pending"] = pending
    return state


def deployed_artefacts(options: t.Mapping[str, t.Any], names: t.Sequence[str]) -> dict[str, t.Optional[str]]:
    """``live.read_files`` of ``names`` under ``config_dir``, as ``run_as_user``, never as root."""
    try:
        return run_as(options.get("run_as_user"), lambda: live.read_files(_config_dir(options), names))
    except RunAsError as exc:
        raise ReadbackError(str(exc)) from exc


def probe_view(options: t.Mapping[str, t.Any]) -> SbcView:
    """``read_kamailio_view`` as ``run_as_user``, never as root."""
    try:
        return view_from_dict(run_as(options.get("run_as_user"), lambda: dataclasses.asdict(read_kamailio_view(options))))
    except RunAsError as exc:
        return SbcView(platform="kamailio", source="nothing readable", errors=[str(exc)])


def latest_backup(options: t.Mapping[str, t.Any]) -> str:
    """The newest backup of the SBC's pushes, in its root-only push state directory ('' when none)."""
    return newest_backup(state_dir_for(_config_dir(options)))


def local_reader(options: t.Mapping[str, t.Any]) -> dict[str, list[str]]:
    """An unprivileged reader of the SBC on its host (the probe exporter): Kamailio's group to read its files,
    its RPC group (where the host has one) to ask it, and the run dir, where its RPC reply sockets live."""
    return {"groups": [str(options["group"])], "optional_groups": [str(options["rpc_group"])],
            "writable_dirs": [str(options.get("run_dir") or kr.DEFAULT_RUN_DIR)]}
