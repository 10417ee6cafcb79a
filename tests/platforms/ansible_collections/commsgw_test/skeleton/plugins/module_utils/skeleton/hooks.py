# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The skeleton's hooks of the platform contract (``sbc.contract.HOOKS``), over the device's management API
(tests/harness/skeleton_api.py): ``GET /config`` is what it holds and, applied at once, runs; ``GET /peers`` the
live status of each peer (the device's words up / down / checking / off -> the contract's neutral states)."""

from __future__ import annotations

import json
import typing as t

from ansible.module_utils.urls import open_url

from ansible_collections.commsgw.routing.plugins.module_utils.probe.view import SbcDestination, SbcView
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import PeerStateError
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import ReadbackError, sha256_text
from ansible_collections.commsgw_test.skeleton.plugins.module_utils.skeleton.platform import NAME
from ansible_collections.commsgw_test.skeleton.plugins.module_utils.skeleton.render import (
    ARTEFACT, state_from_artefacts)

NEUTRAL = {"up": "active", "down": "inactive", "checking": "probing", "off": "disabled"}

__all__ = ["artefact_path", "deployed_artefacts", "latest_backup", "local_reader", "peer_states",
           "presented_certificates", "probe_view", "read_state", "runtime_peers", "runtime_state",
           "state_from_artefacts", "weight_scale"]


def _get(options: t.Mapping[str, t.Any], path: str) -> t.Any:
    """One GET of the API as ``username``; OSError (ReadbackError's callers expect) when it does not answer."""
    try:
        response = open_url(options["url"].rstrip("/") + path, method="GET", url_username=options["username"],
                            url_password=options["password"], force_basic_auth=True,
                            validate_certs=options.get("validate_certs", True), ca_path=options.get("ca_path"),
                            timeout=float(options.get("timeout_s") or 5.0))
        return json.loads(response.read())
    except Exception as exc:  # noqa: BLE001 - urllib, SSL and JSON errors alike: the device did not answer
        raise OSError("GET %s%s: %s" % (options.get("url"), path, exc)) from exc


def artefact_path(options: t.Mapping[str, t.Any], name: str) -> str:
    return "%s/config (%s)" % (str(options.get("url") or "").rstrip("/"), name)


def deployed_artefacts(options: t.Mapping[str, t.Any], names: t.Sequence[str]) -> dict[str, t.Optional[str]]:
    try:
        content = _get(options, "/config").get("content")
    except OSError as exc:
        raise ReadbackError(str(exc)) from exc
    return {name: content if name == ARTEFACT else None for name in names}


def presented_certificates(options: t.Mapping[str, t.Any], artefact_sets: t.Sequence[t.Any]) -> dict[str, t.Any]:
    return {}  # the device holds its TLS material itself (tls_form device)


def weight_scale(weights: t.Sequence[int]) -> list[int]:
    return [int(w) for w in weights]  # the device keeps the plan's SRV weights as they are


def _transport(answers: t.Mapping[str, t.Any]) -> str:
    held = state_from_artefacts({ARTEFACT: (answers.get("GET /config") or {}).get("content")}) or {}
    return str(held.get("transport") or "udp")


def _peers(answers: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    """The device's live peers in the contract's neutral terms (one group: the device lists them flat)."""
    transport = _transport(answers)
    return [{"group": "device", "uri": "sip:%s:%d;transport=%s" % (p["address"], int(p["port"]), transport),
             "host": p["address"], "port": int(p["port"]), "transport": transport,
             "state": NEUTRAL.get(p.get("status")), "detail": "status %s" % p.get("status")}
            for p in (answers.get("GET /peers") or {}).get("peers") or []]


def runtime_peers(answers: t.Mapping[str, t.Any]) -> list[SbcDestination]:
    return [SbcDestination(**peer) for peer in _peers(answers)]


def runtime_state(artefacts: t.Mapping[str, t.Optional[str]], answers: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The device applies what it holds at once: its running regions are the configuration's, with the peers the
    device lists live."""
    held = state_from_artefacts({ARTEFACT: (answers.get("GET /config") or {}).get("content")}) or {}
    live = {(p["address"], int(p["port"])) for p in (answers.get("GET /peers") or {}).get("peers") or []}
    regions = {name: dict(region, peers=[p for p in region["peers"] if (p["address"], int(p["port"])) in live])
               for name, region in (held.get("regions") or {}).items()}
    return {"regions": regions if held else None, "acl": held.get("acl"), "mcp": held.get("mcp"),
            "peers": _peers(answers)}


def _answers(options: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    return {"GET /config": _get(options, "/config"), "GET /peers": _get(options, "/peers")}


def read_state(options: t.Mapping[str, t.Any], runtime: bool = True) -> t.Optional[dict[str, t.Any]]:
    try:
        answers = _answers(options)
    except OSError as exc:
        raise ReadbackError(str(exc)) from exc
    content = answers["GET /config"].get("content")
    state = state_from_artefacts({ARTEFACT: content})
    if state is None:
        return None
    state.update(platform=NAME, artefacts={ARTEFACT: sha256_text(content)}, pending=None, runtime=None)
    if runtime:
        state["runtime"] = dict(runtime_state({ARTEFACT: content}, answers), source="api %s" % options["url"],
                                errors=[])
    return state


def probe_view(options: t.Mapping[str, t.Any]) -> SbcView:
    try:
        answers = _answers(options)
    except OSError as exc:
        return SbcView(platform=NAME, source="nothing readable", errors=[str(exc)])
    return SbcView(platform=NAME, source="api %s" % options["url"], runtime=runtime_peers(answers))


def peer_states(options: t.Mapping[str, t.Any]) -> t.Callable[[], dict[str, str]]:
    def poll() -> dict[str, str]:
        try:
            peers = _get(options, "/peers").get("peers") or []
        except OSError as exc:
            raise PeerStateError(str(exc)) from exc
        return {"%s:%d" % (p["address"], int(p["port"])): NEUTRAL.get(p.get("status")) or "unknown" for p in peers}
    return poll


def latest_backup(options: t.Mapping[str, t.Any]) -> str:
    """The revision the device runs now: what a rollback restores when the migration changed nothing yet."""
    return "revision %d" % int(_get(options, "/config")["revision"])


def local_reader(options: t.Mapping[str, t.Any]) -> dict[str, list[str]]:
    return {"groups": [], "optional_groups": [], "writable_dirs": []}
