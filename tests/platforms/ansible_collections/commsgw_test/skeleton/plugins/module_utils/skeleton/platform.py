# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The walking-skeleton platform's registration (``PLATFORM``): commsgw.routing's registry loads it by its
qualified name ``commsgw_test.skeleton.skeleton`` from this collection. A device reached only through its
management API (``connection: api``): every generic module touching it runs on the controller."""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import (
    API, TLS_DEVICE, Refresher, SbcPlatform)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.fields import abs_path

NAME = "commsgw_test.skeleton.skeleton"
FIELDS = ("api_url", "api_username", "api_ca_path")
OPTIONS: dict[str, dict[str, t.Any]] = {
    "url": {"type": "str", "required": True},
    "username": {"type": "str", "required": True},
    "password": {"type": "str", "required": True, "no_log": True},
    "ca_path": {"type": "path"},
    "validate_certs": {"type": "bool", "default": True},
    "timeout_s": {"type": "float", "default": 5.0},
}


def validate_settings(raw: t.Mapping[str, t.Any], base: str, tls: bool, findings: Findings) -> dict[str, t.Any]:
    """The skeleton's keys of ``commsgw_sbc``: where its API is and who logs in (the password is a host variable,
    ``skeleton_api_password``, kept in a vault)."""
    url = raw.get("api_url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")) or any(c.isspace() for c in url):
        findings.error(base + ".api_url", "is not an HTTP(S) URL", "the device's API, e.g. https://sbc-1.example:8443",
                       url)
        url = None
    user = raw.get("api_username")
    if not isinstance(user, str) or not user:
        findings.error(base + ".api_username", "is missing or not a string", "the API user", user)
        user = None
    return {"api_url": url, "api_username": user,
            "api_ca_path": abs_path(raw.get("api_ca_path"), base + ".api_ca_path", None, findings)}


def _hooks() -> t.Any:
    from ansible_collections.commsgw_test.skeleton.plugins.module_utils.skeleton import hooks
    return hooks


PLATFORM = SbcPlatform(
    name=NAME,
    connection=API,
    role="commsgw_test.skeleton.skeleton",
    options=OPTIONS,
    options_doc="commsgw_test.skeleton.skeleton_options",
    option_sources={"url": "commsgw_sbc.api_url", "username": "commsgw_sbc.api_username",
                    "password": "skeleton_api_password", "ca_path": "commsgw_sbc.api_ca_path"},
    read_timeout="timeout_s",
    artefact_root="",
    renderer="ansible_collections.commsgw_test.skeleton.plugins.module_utils.skeleton.render:render",
    state_artefacts=("config.json",),
    runtime_queries=("GET /config", "GET /peers"),
    tls_form=TLS_DEVICE,
    refresher=Refresher(needed=False, reason="the device resolves ACG's SRV records itself"),
    settings_fields=FIELDS,
    validate_settings=validate_settings,
    hooks=_hooks,
)
