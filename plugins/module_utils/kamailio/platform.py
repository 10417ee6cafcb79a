# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio, the first SBC platform: its registration in the platform contract (``sbc.contract``).

Light on purpose: the registry imports this file when a host names Kamailio (validation needs no more than
this and ``kamailio.settings``). The readers, the RPC client and the probe view are the hooks
(``kamailio.hooks``), imported on first use; the renderer (Jinja2) is named, not imported.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (
    DEFAULT_CONFIG_DIR, DEFAULT_KAMAILIO_GROUP, DEFAULT_KAMAILIO_USER, DEFAULT_RPC_TIMEOUT_S, DEFAULT_RUN_DIR)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.settings import FIELDS, parse_kamailio_settings
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import HOST, TLS_FILES, Refresher, SbcPlatform

# The platform options (documented by the doc fragment commsgw.routing.kamailio_options): how a generic module
# reaches and reads a Kamailio SBC on its host.
OPTIONS: dict[str, dict[str, t.Any]] = {
    "config_dir": {"type": "path", "default": DEFAULT_CONFIG_DIR},
    "run_dir": {"type": "path", "default": DEFAULT_RUN_DIR},
    # The account Kamailio runs as: the readers drop to it and trust only its (or root's) RPC answers.
    "run_as_user": {"type": "str", "default": DEFAULT_KAMAILIO_USER},
    "group": {"type": "str", "default": DEFAULT_KAMAILIO_GROUP},
    "rpc_group": {"type": "str", "default": "commsgw-rpc"},
    "rpc_socket": {"type": "path"},
    "rpc_fifo": {"type": "path"},
    "rpc_timeout_s": {"type": "float", "default": DEFAULT_RPC_TIMEOUT_S},
}
# Where the inventory sets them: the host's commsgw_sbc, or the kamailio role's variables.
OPTION_SOURCES = {"config_dir": "commsgw_sbc.config_dir", "run_dir": "commsgw_sbc.run_dir",
                  "run_as_user": "kamailio_user", "group": "kamailio_group", "rpc_group": "kamailio_rpc_group"}
STATE_ARTEFACTS = ("commsgw-srv.json", "dispatcher.list", "address.list", "tls.cfg")
RUNTIME_QUERIES = ("dispatcher.list", "permissions.subnetDump")


def _hooks() -> t.Any:
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio import hooks
    return hooks


KAMAILIO = SbcPlatform(
    name="kamailio",
    connection=HOST,
    role="commsgw.routing.kamailio",
    options=OPTIONS,
    options_doc="commsgw.routing.kamailio_options",
    option_sources=OPTION_SOURCES,
    read_timeout="rpc_timeout_s",
    artefact_root="config_dir",
    renderer="ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render:render_kamailio",
    state_artefacts=STATE_ARTEFACTS,
    runtime_queries=RUNTIME_QUERIES,
    tls_form=TLS_FILES,
    # Kamailio cannot follow SRV itself (docs/kamailio-notes.md): kamailio/refresher.py rewrites the rows.
    refresher=Refresher(needed=True, reads=("commsgw-srv.json",), writes=("dispatcher.list",),
                        reloads=("dispatcher.reload",)),
    settings_fields=FIELDS,
    validate_settings=parse_kamailio_settings,
    hooks=_hooks,
)
