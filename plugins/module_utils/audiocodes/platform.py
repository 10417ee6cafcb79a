# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AudioCodes Mediant's registration in the platform contract (docs/platforms.md): a device reached through
its REST API from the controller (``connection: api``), rendered from the plan by ``audiocodes.artefacts`` and
pushed by ``audiocodes.push`` through the role ``commsgw.routing.audiocodes``. Light to import: no client, no
reader (those are in ``hooks``)."""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.settings import (
    DEFAULT_INDEX_BASE, FIELDS, validate_settings)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import (
    API, TLS_DEVICE, Refresher, SbcPlatform)

NAME = "audiocodes"
DEFAULT_STATE_DIR = "~/.local/state/commsgw-routing/audiocodes"
OPTIONS: dict[str, dict[str, t.Any]] = {
    "url": {"type": "str", "required": True},
    "username": {"type": "str", "required": True},
    "password": {"type": "str", "required": True, "no_log": True},
    "ca_path": {"type": "path"},
    "validate_certs": {"type": "bool", "default": True},
    "timeout_s": {"type": "float", "default": 30.0},
    "conflict_attempts": {"type": "int", "default": 10},
    "conflict_delay_s": {"type": "float", "default": 3.0},
    "index_base": {"type": "int", "default": DEFAULT_INDEX_BASE},
    "deployment": {"type": "str"},
    "deployment_type": {"type": "str"},
    "site": {"type": "str"},
    "state_dir": {"type": "str", "default": DEFAULT_STATE_DIR},  # str: "~" expands on the controller, not here
}
OPTION_SOURCES = {
    "url": "commsgw_sbc.api_url", "username": "commsgw_sbc.api_username", "password": "audiocodes_api_password",
    "ca_path": "commsgw_sbc.api_ca_path", "validate_certs": "commsgw_sbc.api_validate_certs",
    "index_base": "commsgw_sbc.index_base",
    # The device holds no deployment or site name: the read-back takes them from the inventory.
    "deployment": "commsgw_deployment.name", "deployment_type": "commsgw_deployment.type", "site": "commsgw_site",
    "state_dir": "audiocodes_state_dir",
}


def _hooks() -> t.Any:
    from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import hooks
    return hooks


AUDIOCODES = SbcPlatform(
    name=NAME,
    connection=API,
    role="commsgw.routing.audiocodes",
    options=OPTIONS,
    options_doc="commsgw.routing.audiocodes_options",
    option_sources=OPTION_SOURCES,
    read_timeout="timeout_s",
    artefact_root="",
    renderer="ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.artefacts:render_artefacts",
    state_artefacts=("commsgw.ini",),
    runtime_queries=("GET /api/v1/files/ini",),
    tls_form=TLS_DEVICE,
    # Explicit Proxy Addresses from the plan (docs/platforms/audiocodes.md, "Decision"): the device does not follow
    # SRV; a scheduled re-plan and apply on the controller does, and nothing runs on the device.
    refresher=Refresher(needed=False, reason="the Mediant gets the plan's resolved peers as explicit Proxy "
                                             "Addresses; an SRV change reaches it by a scheduled re-plan and apply "
                                             "from the controller (onboard.yml on a timer or AWX schedule)"),
    settings_fields=FIELDS,
    validate_settings=validate_settings,
    hooks=_hooks,
    # The OPTIONS keep-alive period, proxy-keep-alive-time, is 5..2,000,000 s (docs/platforms/audiocodes.md).
    routing_limits={"options_interval_s": (5, 300)},
)
