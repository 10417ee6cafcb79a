# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's view of its ACG peers for the probe: runtime destinations and states over jsonrpcs
(``dispatcher.list`` RPC), configured ones from the deployed dispatcher.list, in the view's neutral terms.
The parsers are the read-back's (``kamailio.readback``, ``kamailio.live``), which migration and
``sbc_state_info`` use too.
"""

from __future__ import annotations

import json
import os
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import live
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import readback as kb
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import (
    PEERS_SUBDIR, file_path, read_nofollow)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.refresher_health import STATE_NAME, stale
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import DEFAULT_CONFIG_DIR
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import RpcError
from ansible_collections.commsgw.routing.plugins.module_utils.probe.view import SbcDestination, SbcView


def destinations(rows: t.Iterable[t.Mapping[str, t.Any]]) -> list[SbcDestination]:
    return [SbcDestination(**row) for row in rows]


def parse_dispatcher_list(text: str) -> list[SbcDestination]:
    """Kamailio's dispatcher.list: ``setid destination [flags [priority [attrs]]]`` per line."""
    return destinations(kb.destination_rows(text))


def parse_dispatcher_rpc(result: t.Any) -> list[SbcDestination]:
    """The ``dispatcher.list`` jsonrpc result (Kamailio 5.6 and 6.0 share its shape)."""
    return destinations(live.runtime_peers(result))


def refresher_health(config_dir: str, now: float) -> t.Optional[dict[str, t.Any]]:
    """The SRV refresher's run history from its state file in the peers dir (None: no refresher ran here),
    with ``stale``: why it counts as stale, or None."""
    try:
        text = read_nofollow(os.path.join(config_dir, PEERS_SUBDIR, STATE_NAME))
        health = json.loads(text)["health"] if text else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(health, dict):
        return None
    return dict(health, stale=stale(health, now))


def view_from_dict(data: t.Mapping[str, t.Any]) -> SbcView:
    """An SbcView from its ``dataclasses.asdict`` form (the view read as Kamailio's user comes back as JSON)."""
    def rows(items: t.Optional[t.Sequence[t.Mapping[str, t.Any]]]) -> t.Optional[list[SbcDestination]]:
        return None if items is None else [SbcDestination(**item) for item in items]
    return SbcView(platform=data["platform"], source=data["source"], runtime=rows(data.get("runtime")),
                   configured=rows(data.get("configured")), errors=list(data.get("errors") or []),
                   refresher=data.get("refresher"))


def read_kamailio_view(options: t.Mapping[str, t.Any]) -> SbcView:
    """Kamailio: runtime destinations and states over jsonrpcs, configured ones from dispatcher.list.

    ``options``: the platform options (``kamailio.platform.OPTIONS``): ``config_dir`` (kamailio.cfg there,
    dispatcher.list in its peers/), ``run_dir``, ``rpc_socket`` / ``rpc_fifo`` (override what kamailio.cfg
    declares), ``rpc_timeout_s``, ``run_as_user``.
    """
    config_dir = options.get("config_dir") or DEFAULT_CONFIG_DIR
    list_path = file_path(config_dir, "dispatcher.list")
    view = SbcView(platform="kamailio", source="")
    sources = []
    try:
        text = read_nofollow(list_path)
        if text is None:
            raise OSError("no such file")
        view.configured = parse_dispatcher_list(text)
        sources.append("file %s" % list_path)
    except (OSError, ValueError) as exc:
        view.errors.append("cannot read %s: %s" % (list_path, exc))
    cfg_text = None
    cfg = os.path.join(config_dir, "kamailio.cfg")
    if os.path.exists(cfg):
        try:
            with open(cfg, encoding="utf-8") as handle:
                cfg_text = handle.read()
        except OSError:
            pass
    try:
        rpc = live.rpc_client(options, cfg_text)
        view.runtime = parse_dispatcher_rpc(rpc.call("dispatcher.list"))
        sources.append("jsonrpc %s" % (rpc.endpoints.socket or rpc.endpoints.fifo))
    except (RpcError, OSError, ValueError, TypeError) as exc:
        view.errors.append("cannot ask Kamailio for dispatcher.list: %s" % exc)
    view.refresher = refresher_health(config_dir, time.time())
    view.source = ", ".join(sources) or "nothing readable"
    return view
