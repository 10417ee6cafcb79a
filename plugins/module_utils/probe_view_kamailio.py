# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's view of its ACG peers for the probe: runtime destinations and states over jsonrpcs
(``dispatcher.list`` RPC), configured ones from the deployed dispatcher.list.
"""

from __future__ import annotations

import os
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils import kamailio_runtime as kr
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio_dispatcher import dispatcher_rows
from ansible_collections.commsgw.routing.plugins.module_utils.probe_view import SbcDestination, SbcView, parse_sip_uri


def parse_dispatcher_list(text: str) -> list[SbcDestination]:
    """Kamailio's dispatcher.list: ``setid destination [flags [priority [attrs]]]`` per line."""
    found = []
    for row in dispatcher_rows(text):
        host, port, transport = parse_sip_uri(row["uri"])
        found.append(SbcDestination(set_id=row["set_id"], uri=row["uri"], host=host, port=port, transport=transport))
    return found


def _kamailio_state(flags: str) -> tuple[str, bool]:
    """dispatcher.list RPC flags: first letter A(ctive)/I(nactive)/D(isabled)/T(rying), then P(robing)/X."""
    first = flags[:1].upper()
    state = {"A": "active", "I": "inactive", "D": "disabled", "T": "trying"}.get(first, "unknown")
    return state, "P" in flags[1:].upper()


def parse_dispatcher_rpc(result: t.Any) -> list[SbcDestination]:
    """The ``dispatcher.list`` jsonrpc result (Kamailio 5.6 and 6.0 share its shape)."""
    found = []
    if not isinstance(result, dict):
        raise ValueError("dispatcher.list returned %r" % type(result).__name__)
    for record in result.get("RECORDS") or []:
        group = record.get("SET") or {}
        set_id = int(group.get("ID"))
        targets = group.get("TARGETS") or []
        if isinstance(targets, dict):  # a single target is sometimes not wrapped in a list
            targets = [targets]
        for entry in targets:
            dest = entry.get("DEST") or entry
            uri = str(dest.get("URI"))
            host, port, transport = parse_sip_uri(uri)
            state, probing = _kamailio_state(str(dest.get("FLAGS", "")))
            found.append(SbcDestination(set_id=set_id, uri=uri, host=host, port=port, transport=transport,
                                        state=state, probing=probing))
    return found


def read_kamailio_view(options: t.Mapping[str, t.Any]) -> SbcView:
    """Kamailio: runtime destinations and states over jsonrpcs, configured ones from dispatcher.list.

    ``options``: ``config_dir`` (default /etc/kamailio; dispatcher.list and kamailio.cfg live there),
    ``dispatcher_list`` (overrides the file), ``run_dir`` (default /run/kamailio), ``rpc_socket`` /
    ``rpc_fifo`` (override what kamailio.cfg declares), ``rpc_timeout_s``.
    """
    config_dir = options.get("config_dir") or "/etc/kamailio"
    list_path = options.get("dispatcher_list") or os.path.join(config_dir, "dispatcher.list")
    view = SbcView(platform="kamailio", source="")
    sources = []
    try:
        with open(list_path, encoding="utf-8") as handle:
            view.configured = parse_dispatcher_list(handle.read())
        sources.append("file %s" % list_path)
    except (OSError, ValueError) as exc:
        view.errors.append("cannot read %s: %s" % (list_path, exc))
    run_dir = options.get("run_dir") or kr.DEFAULT_RUN_DIR
    endpoints = kr.RpcEndpoints(socket=os.path.join(run_dir, kr.DEFAULT_SOCKET_NAME),
                                fifo=os.path.join(run_dir, kr.DEFAULT_FIFO_NAME))
    cfg = os.path.join(config_dir, "kamailio.cfg")
    if os.path.exists(cfg):
        try:
            with open(cfg, encoding="utf-8") as handle:
                endpoints = kr.rpc_endpoints(handle.read(), run_dir)
        except OSError:
            pass
    if options.get("rpc_socket") or options.get("rpc_fifo"):
        endpoints = kr.RpcEndpoints(socket=options.get("rpc_socket"), fifo=options.get("rpc_fifo"),
                                    fifo_reply_dir=endpoints.fifo_reply_dir)
    try:
        rpc = kr.JsonRpc(endpoints, timeout_s=float(options.get("rpc_timeout_s") or 3.0))
        view.runtime = parse_dispatcher_rpc(rpc.call("dispatcher.list"))
        sources.append("jsonrpc %s" % (endpoints.socket or endpoints.fifo))
    except (kr.RpcError, OSError, ValueError, TypeError) as exc:
        view.errors.append("cannot ask Kamailio for dispatcher.list: %s" % exc)
    view.source = ", ".join(sources) or "nothing readable"
    return view
