# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render one SBC's complete Kamailio configuration from its routing plan.

``render_kamailio(plan, settings, version, host)`` returns file name -> content for the files that live
in ``settings.config_dir``: kamailio.cfg, dispatcher.list, address.list, commsgw-srv.json and, for
TLS deployments, tls.cfg. The Jinja2 templates in the collection's top-level
``templates/kamailio/`` only spell out syntax; every value comes from the view built by
``module_utils.kamailio.build_view``.
"""

from __future__ import annotations

import json
import os
import typing as t

import jinja2

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import (
    KamailioViewError, address_list_text, all_dispatcher_sets, dispatcher_list_text)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.view import build_view, srv_refresh_input
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import normalise_sbc_settings

# plugins/plugin_utils/ -> collection root -> templates/kamailio
TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "templates", "kamailio")


class KamailioRenderError(ValueError):
    """The plan/settings/version cannot give a working configuration; the message says why."""


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              autoescape=False)


def plan_transport(plan: t.Mapping[str, t.Any]) -> str:
    groups = plan.get("trunk_groups") or []
    if not groups:
        raise KamailioRenderError("the plan has no trunk group")
    return str(groups[0]["transport"])


def render_view(plan: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], version: str,
                host: t.Optional[str] = None) -> dict[str, t.Any]:
    """The template view; ``host`` (the inventory host) names the host in the header and in errors."""
    try:
        normalised = normalise_sbc_settings(settings, plan_transport(plan), host)
        return build_view(plan, normalised, version)
    except KamailioViewError as exc:  # settings errors already name the host (hosts[<host>].commsgw_sbc...)
        raise KamailioRenderError("host %s: %s" % (host, exc) if host else str(exc)) from exc
    except ValueError as exc:
        raise KamailioRenderError(str(exc)) from exc


def render_kamailio(plan: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], version: str,
                    host: t.Optional[str] = None) -> dict[str, str]:
    """File name (relative to settings.config_dir) -> content, for inventory host ``host``."""
    view = render_view(plan, settings, version, host)
    env = _environment()
    files = {
        "kamailio.cfg": env.get_template("kamailio.cfg.j2").render(v=view),
        # ACG trunk-group sets, then the MCP sets (no probing flag) when the plan has MCP.
        "dispatcher.list": dispatcher_list_text(all_dispatcher_sets(view)),
        # Group 1: the ACG /28s; group 2: the core's allowed sources (when commsgw_sbc sets them); group 3:
        # the /28s the plan retired (TLS only, R-23).
        "address.list": address_list_text(list(view["acl"]["rows"]) + list(view["core_acl"]["rows"])
                                          + list(view["acl"]["retired_rows"])),
        "commsgw-srv.json": json.dumps(srv_refresh_input(plan, view), indent=2, sort_keys=True) + "\n",
    }
    if view["tls"]:
        files["tls.cfg"] = env.get_template("tls.cfg.j2").render(v=view)
    return files
