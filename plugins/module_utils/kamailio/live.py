# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's live read-back: the running SBC over jsonrpcs, and its deployed files, as a ``sbc.readback`` state.

* the ``dispatcher.list`` RPC: peers with Kamailio's flags, in the contract's neutral terms (``runtime_peers``:
  group = the dispatcher set, state = active / inactive / probing / disabled, the flags in ``detail``);
* ``permissions.subnetDump``: the /28s the running SBC admits;
* ``read_state``: the deployed files (``kamailio.readback``) plus both answers, what ``sbc_state_info`` returns.
"""

from __future__ import annotations

import os
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import state_dir_for
from ansible_collections.commsgw.routing.plugins.module_utils.host.push import pending
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import readback as kb
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import DEFAULT_CONFIG_DIR
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import runtime as kr
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.dispatcher import parse_attrs
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import (
    IN_PEERS_DIR, file_path, read_nofollow)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import (
    ReadbackError, parse_sip_uri, sha256_text)

# Kamailio's dispatcher state flag (the first letter of FLAGS) -> the contract's neutral peer state. "T" (trying:
# a ping failed, the threshold is not reached yet; the peer still gets calls) is the neutral "probing".
NEUTRAL_STATES = {"A": "active", "I": "inactive", "D": "disabled", "T": "probing"}
_WORST = ("disabled", "inactive", "probing", None, "active")  # a peer in several sets: its worst entry counts


def runtime_rows(result: t.Any) -> list[dict[str, t.Any]]:
    """The ``dispatcher.list`` RPC result (Kamailio 5.6 and 6.0 share its shape): one row per destination
    with set_id, uri, host, port, transport, flags, priority and attrs (the row's attribute string, parsed)."""
    if not isinstance(result, dict):
        raise ReadbackError("dispatcher.list returned %r" % type(result).__name__)
    found = []
    for record in result.get("RECORDS") or []:
        group = record.get("SET") or {}
        targets = group.get("TARGETS") or []
        if isinstance(targets, dict):  # a single target is sometimes not wrapped in a list
            targets = [targets]
        for entry in targets:
            dest = entry.get("DEST") or entry
            uri = str(dest.get("URI"))
            try:
                host, port, transport = parse_sip_uri(uri)
            except ValueError:
                raise ReadbackError("dispatcher destination %r is not a SIP URI" % uri) from None
            attrs = dest.get("ATTRS") or {}
            body = attrs.get("BODY", "") if isinstance(attrs, dict) else str(attrs)
            found.append({"set_id": int(group.get("ID")), "uri": uri, "host": host, "port": port,
                          "transport": transport, "flags": str(dest.get("FLAGS", "")),
                          "priority": dest.get("PRIORITY"), "attrs": parse_attrs(str(body or ""))})
    return found


def neutral_state(flags: str) -> t.Optional[str]:
    return NEUTRAL_STATES.get(flags[:1].upper())


def runtime_peers(result: t.Any) -> list[dict[str, t.Any]]:
    """The dispatcher.list RPC answer as the contract's running peers (``group``, ``uri``, ``host``, ``port``,
    ``transport``, neutral ``state``, Kamailio's set and flags in ``detail``)."""
    return [{"group": str(r["set_id"]), "uri": r["uri"], "host": r["host"], "port": r["port"],
             "transport": r["transport"], "state": neutral_state(r["flags"]),
             "detail": "set %d, flags %s" % (r["set_id"], r["flags"] or "-")} for r in runtime_rows(result)]


def peer_states(result: t.Any) -> dict[str, str]:
    """``address:port`` -> neutral state (``unknown`` for flags Kamailio does not document) from the RPC answer;
    a peer in several sets is as healthy as its worst entry."""
    states: dict[str, t.Optional[str]] = {}
    for peer in runtime_peers(result):
        key = "%s:%d" % (peer["host"], peer["port"])
        if key not in states or _WORST.index(peer["state"]) < _WORST.index(states[key]):
            states[key] = peer["state"]
    return {key: state or "unknown" for key, state in states.items()}


def subnet_rows(result: t.Any) -> list[dict[str, str]]:
    """The ``permissions.subnetDump`` RPC result (``[{id, group, item: {ip, mask, port, tag}}]``) -> the ACG
    group's rows, as ``readback.parse_address_rows``."""
    if not isinstance(result, list):
        raise ReadbackError("permissions.subnetDump returned %r" % type(result).__name__)
    rows = []
    for entry in result:
        if not isinstance(entry, dict) or not isinstance(entry.get("item"), dict):
            raise ReadbackError("permissions.subnetDump entry %r is not {group, item: {ip, mask, ...}}" % (entry,))
        item = dict(entry["item"], group=entry.get("group"))
        fields = [str(item.get(k, "")) for k in ("group", "ip", "mask", "port", "tag")]
        row = kb.acl_row(" ".join(fields), fields)
        if row is not None:
            rows.append(row)
    return rows


def runtime_state(spec: t.Mapping[str, t.Any], dispatcher: t.Any, subnets: t.Any) -> dict[str, t.Any]:
    """The running SBC's routing facts from its RPC answers (``None`` answers: not readable)."""
    out: dict[str, t.Any] = {"regions": None, "mcp": None, "acl": None, "peers": None}
    if dispatcher is not None:
        out["peers"] = runtime_peers(dispatcher)
        rows = [kb.destination_row(r["set_id"], r["uri"], r["priority"], r["attrs"]) for r in runtime_rows(dispatcher)]
        out.update({k: v for k, v in kb.routing_state(spec, rows, []).items() if k != "acl"})
    if subnets is not None:
        out["acl"] = kb.routing_state(spec, [], subnet_rows(subnets))["acl"]
    return out


# --------------------------------------------------------------------------------------------
# Reading a live SBC


def read_text(path: str, nofollow: bool = False) -> t.Optional[str]:
    """The file's text, None when unreadable; ``nofollow``: a symlink counts as unreadable (the peers dir)."""
    try:
        if nofollow:
            return read_nofollow(path)
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def read_files(config_dir: str, names: t.Iterable[str]) -> dict[str, t.Optional[str]]:
    """The deployed text of each rendered file of ``names`` at its place under ``config_dir`` (None: absent or
    unreadable); in the peers dir, which the refresher's user owns, a symlink is never followed."""
    return {name: read_text(file_path(config_dir, name), name in IN_PEERS_DIR) for name in names}


def rpc_client(options: t.Mapping[str, t.Any], cfg_text: t.Optional[str]) -> kr.JsonRpc:
    """The jsonrpcs client of the SBC: the endpoints kamailio.cfg declares, unless ``rpc_socket`` /
    ``rpc_fifo`` override them; ``run_dir``, ``rpc_timeout_s``; only answers from root or ``run_as_user``
    (the configured account, never the live run dir's owner). Defaults: the platform options'."""
    run_dir = options.get("run_dir") or kr.DEFAULT_RUN_DIR
    endpoints = kr.RpcEndpoints(socket=os.path.join(run_dir, kr.DEFAULT_SOCKET_NAME),
                                fifo=os.path.join(run_dir, kr.DEFAULT_FIFO_NAME))
    if cfg_text is not None:
        endpoints = kr.rpc_endpoints(cfg_text, run_dir)
    if options.get("rpc_socket") or options.get("rpc_fifo"):
        endpoints = kr.RpcEndpoints(socket=options.get("rpc_socket"), fifo=options.get("rpc_fifo"),
                                    fifo_reply_dir=endpoints.fifo_reply_dir)
    return kr.JsonRpc(endpoints, timeout_s=float(options.get("rpc_timeout_s") or 3.0),
                      kamailio_user=options.get("run_as_user", kr.DEFAULT_KAMAILIO_USER))


def _call(rpc: kr.JsonRpc, method: str, errors: list[str]) -> t.Any:
    try:
        return rpc.call(method)
    except (kr.RpcError, OSError, ValueError, TypeError) as exc:
        errors.append("cannot ask Kamailio for %s: %s" % (method, exc))
        return None


def read_pending(config_dir: str, options: t.Mapping[str, t.Any]) -> t.Optional[dict[str, t.Any]]:
    """A restart or reloads a push noted and the running Kamailio has not done yet (unless it restarted since)."""
    run_dir = options.get("run_dir") or kr.DEFAULT_RUN_DIR
    try:
        found = pending(state_dir_for(config_dir), os.path.join(run_dir, "kamailio.pid"), b"kamailio")
    except OSError as exc:
        return {"error": "cannot read the push state: %s" % exc}
    if found is None:
        return None
    return {"restart": found["restart"], "reload": found["reload"], "artefacts": found["files"], "since": found["since"]}


def read_state(options: t.Mapping[str, t.Any], runtime: bool = True) -> t.Optional[dict[str, t.Any]]:
    """What the Kamailio SBC runs: its files under ``config_dir`` and, with ``runtime``, its live
    peers and ACL over jsonrpcs (see ``rpc_client``). None when ``config_dir`` holds no commsgw.routing
    configuration. The push state is not read here (``pending`` None): it is root's (``hooks.read_state``)."""
    config_dir = options.get("config_dir") or DEFAULT_CONFIG_DIR
    files = read_files(config_dir, kb.READ_FILES)
    tls = kb.parse_tls_cfg(files["tls.cfg"] or "")
    certificates = {tls["certificate"]: read_text(tls["certificate"])} if tls.get("certificate") else {}
    state = kb.state_from_files(files, certificates)
    if state is None:
        return None
    state["platform"] = "kamailio"
    state["artefacts"] = {name: sha256_text(text) for name, text in files.items()}
    state["listen"] = kr.listen_addresses(files["kamailio.cfg"] or "")
    state["pending"] = None
    state["runtime"] = None
    if runtime:
        errors: list[str] = []
        rpc = rpc_client(options, files["kamailio.cfg"])
        spec = kb.load_spec(files["commsgw-srv.json"]) or {}
        dispatcher, subnets = _call(rpc, "dispatcher.list", errors), _call(rpc, "permissions.subnetDump", errors)
        try:
            running = runtime_state(spec, dispatcher, subnets)
        except ReadbackError as exc:
            errors.append("cannot read the running state back: %s" % exc)
            running = runtime_state(spec, None, None)
        state["runtime"] = dict(running, source="jsonrpc %s" % (rpc.endpoints.socket or rpc.endpoints.fifo),
                                errors=errors)
    return state
