# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rows of Kamailio's dispatcher.list and address.list, written from the plan's trunk groups and ACL.

* dispatcher sets: one per (trunk group, SRV priority tier), in the plan's order, so that serial
  failover (``ds_select_routes`` + ``ds_next_dst``) walks local best tier -> local next tiers ->
  the other region. Set id = group order * 100 + tier index (101, 102, 201...), stable and readable.
  Dispatcher priority runs the other way from SRV priority (higher first): 65535 - SRV priority.
  ``rweight`` (algorithm 11, relative weight, 1..100) is the SRV weight scaled to the tier's largest
  weight; SRV weight 0 becomes 1 because Kamailio ignores rweight 0 (RFC 2782 gives it a small
  chance too).
* permissions address rows: every /28 of the plan's ACL (R-08); over TLS also the /28s the plan
  retired (``acl.retired``, group ``RETIRED_GROUP``), whose peers may still end their dialogs until
  ``until`` (R-23, issue 21).

The renderer (``kamailio.view``) and the SRV refresher on the SBC host (``kamailio.refresher``) both
write rows through this module, so both produce identical rows. Shipped to SBC hosts with the
refresher (module_utils/shipped.py): imports of the collection fall back to plain imports there.
"""

from __future__ import annotations

import ipaddress
import typing as t

try:  # the collection's path first, then a plain import next to the SRV refresher on the SBC host
    from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import host_name_problem
except ImportError:  # pragma: no cover - on the SBC host (module_utils/shipped.py ships them)
    from srv.lookup import host_name_problem  # type: ignore

DS_ALG_RELATIVE_WEIGHT = 11
DS_FLAG_PROBING = 8  # dispatcher "probing" flag: only ACG peers get it (ds_probing_mode 3)
# MCP (R-18..R-20, docs/mcp.md): MCP targets are dispatcher rows *without* the probing flag, so they are
# never sent OPTIONS; set ids 1000 + record order * 100 + tier (1101, 1102, 1201...).
MCP_SET_BASE = 1000
MCP_FLAGS = 0
ACL_GROUP = 1
# Group 2 is the core side's (core_rows.CORE_ACL_GROUP); group 3 the ACG /28s a narrowing retired.
RETIRED_GROUP = 3


class KamailioViewError(ValueError):
    """The plan cannot be expressed as a working Kamailio configuration (e.g. unresolved peers)."""


def scale_rweights(weights: t.Sequence[int]) -> list[int]:
    """SRV weights of one tier -> dispatcher rweight 1..100 keeping the ratios."""
    top = max(weights) if weights else 0
    if top <= 0:
        return [1] * len(weights)
    return [max(1, min(100, int(round(100.0 * w / top)))) for w in weights]


def sip_socket(proto: str, address: str, port: int) -> str:
    return "%s:%s:%d" % (proto, address, port)


def ping_relay_uri(acg_socket: str) -> str:
    """Where the dispatcher sends its OPTIONS pings over TLS: the SBC's own UDP socket on the ACG-facing
    address (``obproxy``), from which kamailio.cfg relays each ping to its peer with SNI (route
    COMMSGW_TLS_PING). Kamailio gives SNI only to requests relayed by the script, never to tm's own
    pings, and ACG drops handshakes without SNI."""
    dummy, address, port = acg_socket.split(":")
    return "sip:%s:%s" % (address, port)


def dispatcher_sets(trunk_groups: t.Sequence[t.Mapping[str, t.Any]], acg_socket: str, transport: str,
                    flags: int = DS_FLAG_PROBING, id_base: int = 0) -> list[dict[str, t.Any]]:
    """The dispatcher sets of the plan's trunk groups, in failover order.

    Also used by the SRV refresher with freshly resolved peers, so both produce identical rows.
    ``flags``/``id_base`` differ for MCP records only (``mcp_dispatcher_sets``). Over TLS each row
    carries its peer's TLS name (``tls=``: the group's regional hostname, or the peer's own
    ``hostname`` where a migration keeps an old peer) and, for pinged rows, the ping relay
    (``obproxy=``), so that a region migration changes only reloadable data.
    """
    sets: list[dict[str, t.Any]] = []
    for group in sorted(trunk_groups, key=lambda g: g["order"]):
        peers = group.get("peers")
        if peers is None:
            raise KamailioViewError("trunk group %s (%s): SRV record %s was not resolved; render needs resolved "
                                    "peers" % (group["order"], group["region"], group["srv_name"]))
        networks = [ipaddress.IPv4Network(n) for n in group.get("ip_ranges", [])]
        tiers = sorted({int(p["priority"]) for p in peers})
        for tier_index, priority in enumerate(tiers, start=1):
            tier = [p for p in peers if int(p["priority"]) == priority]
            rweights = scale_rweights([int(p["weight"]) for p in tier])
            destinations = []
            for peer, rweight in zip(tier, rweights):
                addresses = list(peer.get("addresses") or [])
                if not addresses:
                    raise KamailioViewError("%s target %s has no IPv4 address; dispatcher rows need addresses"
                                            % (group["srv_name"], peer["target"]))
                for address in addresses:
                    if networks and not any(ipaddress.IPv4Address(address) in n for n in networks):
                        # an SRV target outside the region's /28s is never a peer.
                        raise KamailioViewError("%s target %s resolves to %s, outside %s" % (
                            group["srv_name"], peer["target"], address, ", ".join(group["ip_ranges"])))
                    attrs = "rweight=%d;socket=%s" % (rweight, acg_socket)
                    _attr_name(group["srv_name"], "target", peer["target"])
                    if transport == "tls":
                        attrs += ";tls=%s" % _attr_name(group["srv_name"], "TLS name",
                                                        peer.get("hostname") or group["hostname"])
                        if flags & DS_FLAG_PROBING:
                            attrs += ";obproxy=%s" % ping_relay_uri(acg_socket)
                    destinations.append({
                        "uri": "sip:%s:%d;transport=%s" % (address, int(peer["port"]), transport),
                        "flags": flags,
                        "priority": 65535 - priority,
                        "rweight": rweight,
                        # srvweight: the plan's weight of the destination, so that reading the file back
                        # (migration's widen step) keeps the plan's weights, not the tier-scaled rweight.
                        "attrs": "%s;srvweight=%d;target=%s" % (attrs, int(peer["weight"]), peer["target"]),
                        "target": peer["target"],
                        "address": address,
                        "port": int(peer["port"]),
                        "srv_priority": priority,
                        "srv_weight": int(peer["weight"]),
                    })
            sets.append({
                "id": id_base + int(group["order"]) * 100 + tier_index,
                "group_order": int(group["order"]),
                "role": group["role"],
                "region": group["region"],
                "hostname": group["hostname"],
                "srv_name": group["srv_name"],
                "srv_priority": priority,
                "destinations": destinations,
            })
    return sets


def _attr_name(srv_name: str, what: str, value: t.Any) -> str:
    """``value`` if it is a host name that can go into a dispatcher attribute string as is; else
    KamailioViewError (the refresher keeps the previous file then): a name such as
    ``x;obproxy=sip:evil`` would add attributes of its own to the row."""
    # The SRV lookup's own RFC 1123 check; names in the plan are lower case (normalise_fqdn). A dispatcher
    # attribute string is split on ';' and '=' and its parser ignores backslashes.
    if not isinstance(value, str) or value != value.lower() or \
            host_name_problem([label.encode() for label in value.split(".")]) is not None:
        raise KamailioViewError("%s %s %s is not an RFC 1123 host name; it cannot go into dispatcher.list"
                                % (srv_name, what, ascii(value)))
    return value


def mcp_dispatcher_sets(records: t.Sequence[t.Mapping[str, t.Any]], acg_socket: str, transport: str
                        ) -> list[dict[str, t.Any]]:
    """Dispatcher sets of the plan's MCP records: no probing flag (R-19), set ids from MCP_SET_BASE.

    ``records`` carry ``ip_ranges`` (every /28 of the deployment: an MCP record also lists the other
    region's MCP, R-18); the refresher calls this with fresh answers, so both write identical rows.
    """
    return dispatcher_sets(records, acg_socket, transport, flags=MCP_FLAGS, id_base=MCP_SET_BASE)


def all_dispatcher_sets(view: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    """Every row of dispatcher.list: the ACG trunk groups' sets, then the MCP sets (if any)."""
    return list(view["dispatcher"]["sets"]) + list((view.get("mcp") or {}).get("sets") or [])


def dispatcher_list_text(sets: t.Sequence[t.Mapping[str, t.Any]]) -> str:
    """The dispatcher.list file body (setid destination flags priority attrs)."""
    lines = ["# setid destination flags priority attrs -- generated by commsgw.routing, do not edit"]
    for ds_set in sets:
        lines.append("# set %d: %s %s (%s) SRV priority %d" % (
            ds_set["id"], ds_set["role"], ds_set["region"], ds_set["srv_name"], ds_set["srv_priority"]))
        for dst in ds_set["destinations"]:
            lines.append("%d %s %d %d %s" % (ds_set["id"], dst["uri"], dst["flags"], dst["priority"], dst["attrs"]))
    return "\n".join(lines) + "\n"


def acl_tag(region: str, hostname: str) -> str:
    """The permissions tag of an ACL row: ``region=<name>;tls=<regional hostname>``. kamailio.cfg reads
    the TLS name of a peer address from it (SNI, certificate host name), so it reloads with the ACL."""
    return "region=%s;tls=%s" % (region, hostname)


def parse_acl_tag(tag: str) -> dict[str, str]:
    """``acl_tag`` read back (``until`` of a retired row too); a bare region name is what versions before the
    tag carried names wrote."""
    if "=" not in tag:
        return {"region": tag, "tls": "", "until": ""}
    fields = dict(part.partition("=")[::2] for part in tag.split(";") if part)
    return {"region": fields.get("region", ""), "tls": fields.get("tls", ""), "until": fields.get("until", "")}


def acl_rows(plan: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    rows = []
    for entry in plan["acl"]["ranges"]:
        network = ipaddress.IPv4Network(entry["network"])
        rows.append({"group": ACL_GROUP, "address": str(network.network_address), "mask": network.prefixlen,
                     "port": 0, "tag": acl_tag(entry["region"], entry["hostname"])})
    return rows


def retired_acl_rows(plan: t.Mapping[str, t.Any]) -> list[dict[str, t.Any]]:
    """Rows of the /28s the plan retired (``acl.retired``): no ACL, only the in-dialog requests of the
    dialogs a peer there set up with the range's old TLS name, until ``until`` (unix time)."""
    rows = []
    for entry in plan["acl"].get("retired") or []:
        network = ipaddress.IPv4Network(entry["network"])
        rows.append({"group": RETIRED_GROUP, "address": str(network.network_address), "mask": network.prefixlen,
                     "port": 0, "tag": "%s;until=%d" % (acl_tag(entry["region"], entry["hostname"]),
                                                        int(entry["until"]))})
    return rows


def address_list_text(rows: t.Sequence[t.Mapping[str, t.Any]]) -> str:
    lines = ["# group address mask port tag -- group %d: ACG /28 ranges (R-08), group 2: core sources "
             "(commsgw_sbc.core_allowed_sources); generated by commsgw.routing" % ACL_GROUP]
    for row in rows:
        if row["group"] == RETIRED_GROUP and not lines[-1].startswith("%d " % RETIRED_GROUP):
            lines.append("# group %d: ACG /28s a narrowing retired: no ACL, only in-dialog requests of their old "
                         "dialogs over TLS, until the unix time in the tag (R-23)" % RETIRED_GROUP)
        lines.append("%d %s %d %d %s" % (row["group"], row["address"], row["mask"], row["port"], row["tag"]))
    return "\n".join(lines) + "\n"
