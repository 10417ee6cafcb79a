# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Mediant's hooks of the platform contract (``sbc.contract.HOOKS``), over its REST API from the controller.

One documented request carries everything the device tells about routing: ``GET /api/v1/files/ini``. The device
applies an incremental script at once (no reload step), so what it holds is what it runs. Its live peer
reachability is **not** read: the 7.4 REST reference documents no proxy or proxy-address status (only the CLI
command ``show voip proxy sets status`` as the equivalent of the IP Group's read-only "Proxy Set Connectivity",
with no published output format; docs/platforms/audiocodes.md, "What the API does not expose"). So the probe gets
the device's configured peers (drift), without states, and ``peer_states`` reports that it cannot tell.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import api, artefacts, backups, ini, readback
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.platform import NAME
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.render import CONTINUE_NAME
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import Rows, owned_rows
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.settings import DEFAULT_INDEX_BASE
from ansible_collections.commsgw.routing.plugins.module_utils.probe.view import SbcDestination, SbcView
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import PeerStateError
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import ReadbackError, sha256_text

INI_QUERY = "GET /api/v1/files/ini"
NO_STATUS = ("the Mediant REST API (7.4 reference) exposes no proxy-address status; the device's configured peers "
             "are compared, their reachability comes from the probe's own OPTIONS")

__all__ = ["artefact_path", "client", "configured_peers", "deployed_artefacts", "device_rows", "identity",
           "latest_backup", "local_reader", "peer_states", "presented_certificates", "probe_view", "read_state",
           "runtime_peers", "runtime_state", "state_from_artefacts", "weight_scale"]


def client(options: t.Mapping[str, t.Any]) -> api.MediantClient:
    return api.MediantClient(str(options["url"]), str(options["username"]), str(options["password"]),
                             ca_file=options.get("ca_path"), verify=bool(options.get("validate_certs", True)),
                             timeout_s=float(options.get("timeout_s") or 30.0),
                             conflict_attempts=int(options.get("conflict_attempts") or 10),
                             conflict_delay_s=float(options.get("conflict_delay_s") or 3.0))


def identity(options: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """What the device does not hold, from the inventory (platform options ``deployment``, ``deployment_type``,
    ``site``); the transport is read from the device's Proxy Addresses."""
    return {"deployment": options.get("deployment"), "site": options.get("site"),
            "type": options.get("deployment_type"), "transport": None}


def _base(options: t.Mapping[str, t.Any]) -> int:
    return int(options.get("index_base") or DEFAULT_INDEX_BASE)


def _device_ini(options: t.Mapping[str, t.Any]) -> str:
    try:
        return client(options).get_ini()
    except api.DeviceError as exc:
        raise ReadbackError(str(exc)) from exc


def artefact_path(options: t.Mapping[str, t.Any], name: str) -> str:
    return "%s/api/v1/files/ini (%s)" % (str(options.get("url") or "").rstrip("/"), name)


def deployed_artefacts(options: t.Mapping[str, t.Any], names: t.Sequence[str]) -> dict[str, t.Optional[str]]:
    texts = artefacts.deployed_texts(_device_ini(options), identity(options), _base(options))
    return {name: texts.get(name) for name in names}


def state_from_artefacts(texts: t.Mapping[str, t.Optional[str]], certificates: t.Mapping[str, t.Any]
                         ) -> t.Optional[dict[str, t.Any]]:
    return artefacts.state_from_texts(texts)


def presented_certificates(options: t.Mapping[str, t.Any], artefact_sets: t.Sequence[t.Any]) -> dict[str, t.Any]:
    return {}  # the device holds its certificates in the operator's TLS Context (tls_form device)


def weight_scale(weights: t.Sequence[int]) -> list[int]:
    return [int(w) for w in weights]  # Proxy Address 'weight' keeps the SRV weight as given


def device_rows(device_ini: str, base: int) -> Rows:
    return owned_rows(ini.rows_from_ini(device_ini), base)


def configured_peers(rows: Rows) -> list[dict[str, t.Any]]:
    """Every Proxy Address of our ACG and MCP Proxy Sets, neutral, without a state (none is exposed)."""
    names = {index[0]: row.get("proxy-name") for index, row in rows["proxy_set"].items()}
    peers = []
    for index, row in sorted(rows["proxy_ip"].items()):
        name = str(names.get(index[0]) or "")
        if not name.startswith(("CGW-ACG-", "CGW-MCP-")) or name == CONTINUE_NAME:
            continue
        host, _sep, port = str(row.get("proxy-address", "")).rpartition(":")
        transport = str(row.get("transport-type") or "udp")
        peers.append({"group": name, "uri": "sip:%s:%s;transport=%s" % (host, port, transport), "host": host,
                      "port": int(port or 0), "transport": transport, "state": None,
                      "detail": "Proxy Set %s, priority %s, weight %s (no status exposed)"
                                % (name, row.get("priority"), row.get("weight"))})
    return peers


def _answer_base(texts: t.Mapping[str, t.Optional[str]]) -> int:
    return int((artefacts.meta(texts.get(artefacts.INI)) or {}).get("index_base") or DEFAULT_INDEX_BASE)


def _runtime(rows: Rows) -> dict[str, t.Any]:
    held = readback.state_from_rows(rows, {}) if artefacts.has_rows(rows) else None
    return {"regions": held["regions"] if held else None, "acl": held["acl"] if held else None,
            "mcp": held["mcp"] if held else None, "peers": configured_peers(rows)}


def runtime_state(texts: t.Mapping[str, t.Optional[str]], answers: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The device runs what it holds (an incremental script applies at once): its running regions, ACL and MCP
    are those of its ini, its peers are the configured Proxy Addresses (state unknown)."""
    return _runtime(device_rows(str(answers.get(INI_QUERY) or ""), _answer_base(texts)))


def runtime_peers(answers: t.Mapping[str, t.Any]) -> list[SbcDestination]:
    rows = device_rows(str(answers.get(INI_QUERY) or ""), DEFAULT_INDEX_BASE)
    return [SbcDestination(**peer) for peer in configured_peers(rows)]


def read_state(options: t.Mapping[str, t.Any], runtime: bool = True) -> t.Optional[dict[str, t.Any]]:
    """One read of the device's ini: what it holds (our rows, in plan terms) and, the same rows, what it runs."""
    rows = device_rows(_device_ini(options), _base(options))
    if not artefacts.has_rows(rows):
        return None
    state = readback.state_from_rows(rows, identity(options))
    texts = artefacts.texts_of_rows(rows, identity(options), _base(options))
    state.update(platform=NAME, artefacts={name: sha256_text(text) for name, text in texts.items()}, pending=None,
                 runtime=None)
    if runtime:
        state["runtime"] = dict(_runtime(rows), source="api %s (%s)" % (options["url"], INI_QUERY), errors=[])
    return state


def probe_view(options: t.Mapping[str, t.Any]) -> SbcView:
    source = "api %s" % options.get("url")
    try:
        rows = device_rows(client(options).get_ini(), _base(options))
    except (api.DeviceError, ValueError) as exc:
        return SbcView(platform=NAME, source=source, errors=[str(exc)])
    return SbcView(platform=NAME, source=source + ", configured Proxy Addresses",
                   configured=[SbcDestination(**peer) for peer in configured_peers(rows)], no_states=NO_STATUS)


def peer_states(options: t.Mapping[str, t.Any]) -> t.Callable[[], dict[str, str]]:
    def poll() -> dict[str, str]:
        raise PeerStateError(NO_STATUS)
    return poll


def latest_backup(options: t.Mapping[str, t.Any]) -> str:
    """The newest ini this controller saved before changing the device ('' when none)."""
    return backups.latest(options)


def local_reader(options: t.Mapping[str, t.Any]) -> dict[str, list[str]]:
    return {"groups": [], "optional_groups": [], "writable_dirs": []}
