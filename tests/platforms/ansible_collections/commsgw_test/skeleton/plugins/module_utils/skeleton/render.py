# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The skeleton's one artefact, ``config.json``: the plan's routing facts as the device holds them, and back.

The document is the neutral state of the plan (``sbc.readback.plan_state``) plus the host's two sockets, so
reading it back is parsing it: the skeleton decides nothing itself (the plan decides, platforms obey).
"""

from __future__ import annotations

import json
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.readback import ReadbackError, plan_state

ARTEFACT = "config.json"
STATE_KEYS = ("deployment", "site", "type", "transport", "acg_socket", "local_region", "regions", "acl", "tls", "mcp")


def render(plan: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], host: t.Optional[str] = None
           ) -> dict[str, str]:
    """``{config.json: text}`` for inventory host ``host``."""
    document = plan_state(plan)
    listen = settings.get("acg_listen") or {}
    document["acg_socket"] = "%s:%s" % (listen.get("address"), listen.get("port")) if listen else None
    document["host"] = host
    return {ARTEFACT: json.dumps(document, indent=2, sort_keys=True) + "\n"}


def state_from_artefacts(artefacts: t.Mapping[str, t.Optional[str]],
                         certificates: t.Optional[t.Mapping[str, t.Optional[str]]] = None
                         ) -> t.Optional[dict[str, t.Any]]:
    """The neutral state ``config.json`` holds; None when the device holds none (never onboarded)."""
    text = artefacts.get(ARTEFACT)
    if not text:
        return None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ReadbackError("%s is not JSON: %s" % (ARTEFACT, exc)) from exc
    if not isinstance(document, dict) or not isinstance(document.get("regions"), dict):
        raise ReadbackError("%s holds no regions: not a commsgw.routing configuration" % ARTEFACT)
    return {key: document.get(key) for key in STATE_KEYS}
