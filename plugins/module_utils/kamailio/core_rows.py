# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The core-side policy (``plan.core_policy``) as Kamailio spells it: the core ACL as permissions group
``CORE_ACL_GROUP`` of address.list (reloadable with ``permissions.addressReload``, like the ACG /28 group),
and R-26 as kamailio.cfg's E.164 pattern, refusal and rewrites."""

from __future__ import annotations

import ipaddress
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.plan.core_policy import (
    E164_REGEX, E164_REPLY, implicit_core_sources, normalisation_rules)

CORE_ACL_GROUP = 2
CORE_ACL_TAG = "side=core"
CORE_HOP_TAG = "side=core;implicit=%s"


def core_acl_view(settings: t.Mapping[str, t.Any], mcp_hop: t.Optional[str]) -> dict[str, t.Any]:
    """The core ACL as kamailio.cfg and address.list spell it: group, rows, enforced or not."""
    sources = settings.get("core_allowed_sources")
    if sources is None:
        return {"group": CORE_ACL_GROUP, "enforced": False, "rows": []}
    rows = []
    for cidr in sources:
        network = ipaddress.IPv4Network(cidr)
        rows.append({"group": CORE_ACL_GROUP, "address": str(network.network_address), "mask": network.prefixlen,
                     "port": 0, "tag": CORE_ACL_TAG})
    for name, address in implicit_core_sources(settings, mcp_hop):
        rows.append({"group": CORE_ACL_GROUP, "address": address, "mask": 32, "port": 0, "tag": CORE_HOP_TAG % name})
    return {"group": CORE_ACL_GROUP, "enforced": True, "rows": rows}


def e164_view(settings: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """R-26 as kamailio.cfg spells it: the E.164 pattern, the refusal, and optional rewrites (in order)."""
    rewrites = [{"regex": "^%s[1-9][0-9]*$" % prefix, "strip": len(prefix), "prefix": replacement}
                for prefix, replacement in normalisation_rules(settings)]
    return {"regex": E164_REGEX, "reply_code": E164_REPLY[0], "reply_reason": E164_REPLY[1], "rewrites": rewrites}
