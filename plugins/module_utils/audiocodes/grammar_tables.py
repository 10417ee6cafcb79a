# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Mediant CLI/ini grammar the renderer may emit, as data (every entry carries its reference).

A table: the CLI mode it lives in and the command that enters a row, the ini table and index columns
(the same row as ``GET /api/v1/files/ini`` lists it), and its parameters. A parameter: CLI keyword,
ini column, value kind and range (enum keywords with their ini numbers), the reference key
(``references.py``) and ``basis``: ``documented`` (keyword and values read on the referenced page) or
``derived`` (the referenced page documents the parameter and its values by Web/ini name; the CLI
keyword is derived from them and is confirmed by the lab acceptance run, docs/platforms/audiocodes.md).

Nothing outside these tables is ever emitted: ``grammar.validate_script`` refuses it, and the
stand-in device (tests/harness/mediant_sim.py) answers 400 for it, as the device does.
"""

from __future__ import annotations

import dataclasses
import typing as t


@dataclasses.dataclass(frozen=True)
class Param:
    cli: str
    ini: str
    kind: str                       # name, fqdn, ipv4, host_port, ip_pattern, dial, prefix, int, enum, codes, action
    ref: str
    basis: str = "documented"
    low: int = 0                    # int kinds: inclusive range
    high: int = 0
    enum: tuple[tuple[str, int], ...] = ()   # enum kinds: (CLI keyword, ini value)
    max_len: int = 0                # string kinds: longest value
    may_be_empty: bool = False      # "" allowed: unsets a reference in a partly-owned row (rollback)


@dataclasses.dataclass(frozen=True)
class Table:
    key: str                        # our short name
    mode: str                       # CLI mode the row command is typed in: network, voip, or a parent table key
    command: str                    # e.g. "proxy-set", "sbc routing ip2ip-routing"
    ini: str                        # ini table name
    index_columns: tuple[str, ...]  # ini columns of the index parts after the row number (child tables)
    params: tuple[Param, ...]
    ref: str
    basis: str = "documented"
    index_arity: int = 1            # 2: "<parent>/<row>" (child tables)
    max_rows: int = 0               # documented row limit that matters here (0: none recorded)

    def param(self, cli: str) -> t.Optional[Param]:
        return next((p for p in self.params if p.cli == cli), None)


def _e(*pairs: tuple[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(pairs)


DISABLE_ENABLE = _e(("disable", 0), ("enable", 1))
REL_CAUSES = _e(("408-req-timeout", 408), ("503-service-unavail", 503), ("504-server-timeout", 504),
                ("5xx", 5))

TABLES: tuple[Table, ...] = (
    Table("dns", "network", "dns dns-to-ip", "Dns2Ip", (), ref="internal-dns", max_rows=20, params=(
        Param("domain-name", "Dns2Ip_DomainName", "fqdn", "internal-dns", max_len=255),
        Param("first-ip-address", "Dns2Ip_FirstIpAddress", "ipv4", "internal-dns", "derived"),
        Param("second-ip-address", "Dns2Ip_SecondIpAddress", "ipv4", "internal-dns", "derived"),
        Param("third-ip-address", "Dns2Ip_ThirdIpAddress", "ipv4", "internal-dns", "derived"),
    )),
    Table("message_policy", "voip", "message-policy", "MessagePolicy", (), ref="message-policy", basis="derived",
          params=(
        Param("name", "MessagePolicy_Name", "name", "message-policy", max_len=40),
        Param("max-message-length", "MessagePolicy_MaxMessageLength", "int", "message-policy", low=1,
              high=32768),
        Param("send-rejection", "MessagePolicy_SendRejection", "enum", "message-policy", "derived",
              enum=_e(("policy-reject", 0), ("policy-drop", 1),)),
    )),
    Table("proxy_set", "voip", "proxy-set", "ProxySet", (), ref="proxy-sets", params=(
        Param("proxy-name", "ProxySet_ProxyName", "name", "proxy-keepalive", max_len=40),
        Param("sbcipv4-sip-int-name", "ProxySet_SBCIPv4SIPInterfaceName", "name", "proxy-sets", max_len=40),
        Param("proxy-enable-keep-alive", "ProxySet_EnableProxyKeepAlive", "enum", "proxy-keepalive", "derived",
              enum=_e(("disable", 0), ("using-options", 1),)),
        Param("proxy-keep-alive-time", "ProxySet_ProxyKeepAliveTime", "int", "proxy-keepalive-time", low=5,
              high=2000000),
        Param("keepalive-fail-resp", "ProxySet_KeepAliveFailureResp", "codes", "proxy-keepalive-time", max_len=3),
        Param("success-detect-retries", "ProxySet_SuccessDetectionRetries", "int", "proxy-detect", low=1, high=100),
        Param("success-detect-int", "ProxySet_SuccessDetectionInterval", "int", "proxy-detect", low=1, high=200),
        Param("is-proxy-hot-swap", "ProxySet_IsProxyHotSwap", "enum", "proxy-hotswap", "derived",
              enum=DISABLE_ENABLE),
        Param("proxy-load-balancing-method", "ProxySet_ProxyLoadBalancingMethod", "enum", "proxy-hotswap",
              "derived", enum=_e(("disable", 0), ("round-robin", 1), ("random-weights", 2),)),
        Param("tls-context-name", "ProxySet_TLSContextName", "name", "proxy-sets", "derived", max_len=40),
    )),
    Table("proxy_ip", "voip", "proxy-ip", "ProxyIp", ("ProxyIp_ProxySetId", "ProxyIp_ProxyIpIndex"),
          ref="proxy-address", basis="derived", index_arity=2, max_rows=10, params=(
              Param("proxy-address", "ProxyIp_IpAddress", "host_port", "proxy-address"),
              Param("transport-type", "ProxyIp_TransportType", "enum", "proxy-address",
                    enum=_e(("udp", 0), ("tcp", 1), ("tls", 2),)),
              Param("priority", "ProxyIp_Priority", "int", "proxy-address", low=0, high=65535),
              Param("weight", "ProxyIp_Weight", "int", "proxy-address", "derived", low=0, high=65535),)),
    Table("alt_set", "voip", "sbc routing alt-route-reasons-set", "AltRouteReasonsSet", (), ref="cli-alt-rules",
          params=(Param("name", "AltRouteReasonsSet_Name", "name", "alt-reasons", "derived", max_len=40),)),
    Table("alt_rule", "alt_set", "alt-route-reasons-rules", "AltRouteReasonsRules",
          ("AltRouteReasonsRules_AltRouteReasonsSetId", "AltRouteReasonsRules_AltRouteReasonsRulesIndex"),
          ref="cli-alt-rules", index_arity=2, max_rows=20, params=(
              Param("rel-cause-code", "AltRouteReasonsRules_ReleaseCause", "enum", "cli-alt-rules",
                    enum=REL_CAUSES),)),
    Table("ip_group", "voip", "ip-group", "IPGroup", (), ref="cli-ip-group", params=(
        Param("name", "IPGroup_Name", "name", "ip-group-params", max_len=40),
        Param("type", "IPGroup_Type", "enum", "ip-group-params", "derived", enum=_e(("server", 0),)),
        Param("proxy-set-name", "IPGroup_ProxySetName", "name", "ip-group-params", max_len=40),
        Param("sip-group-name", "IPGroup_SIPGroupName", "fqdn", "ip-group-params", "derived", max_len=100),
        Param("classify-by-proxy-set", "IPGroup_ClassifyByProxySet", "enum", "cli-ip-group", enum=DISABLE_ENABLE),
        Param("sbc-alt-route-reasons-set", "IPGroup_SBCAltRouteReasonsSetName", "name", "alt-reasons", "derived",
              max_len=40),
    )),
    Table("classification", "voip", "sbc classification", "Classification", (), ref="classification",
          basis="derived", params=(
              Param("classification-name", "Classification_ClassificationName", "name", "classification",
                    "derived", max_len=40),
              Param("src-sip-interface-name", "Classification_SrcSIPInterfaceName", "name", "classification",
                    "derived", max_len=40),
              Param("src-ip-address", "Classification_SrcAddress", "ip_pattern", "classification"),
              Param("src-ip-group-name", "Classification_SrcIPGroupName", "name", "classification", "derived",
                    max_len=40),
              Param("action-type", "Classification_ActionType", "enum", "classification-action", "derived",
                    enum=_e(("deny", 0), ("allow", 1))),)),
    Table("inbound_manipulation", "voip", "sbc manipulation ip-inbound-manipulation", "IPInboundManipulation", (),
          ref="inbound-manipulation", params=(
              Param("manipulation-name", "IPInboundManipulation_ManipulationName", "name", "inbound-manipulation",
                    "derived", max_len=40),
              Param("src-ip-group-name", "IPInboundManipulation_SrcIPGroupName", "name", "inbound-manipulation",
                    "derived", max_len=40),
              Param("dst-user-name-prefix", "IPInboundManipulation_DestUsernamePrefix", "dial",
                    "inbound-manipulation", max_len=50),
              Param("manipulated-uri", "IPInboundManipulation_ManipulatedURI", "enum", "inbound-manipulation",
                    enum=_e(("source", 0), ("destination", 1),)),
              Param("remove-from-left", "IPInboundManipulation_RemoveFromLeft", "int", "inbound-manipulation",
                    low=0, high=255),
              Param("prefix-to-add", "IPInboundManipulation_Prefix2Add", "prefix", "inbound-manipulation",
                    max_len=16),)),
    Table("ip2ip", "voip", "sbc routing ip2ip-routing", "IP2IPRouting", (), ref="ip2ip-alt", params=(
        Param("route-name", "IP2IPRouting_RouteName", "name", "ip2ip-alt", max_len=20),
        Param("src-ip-group-name", "IP2IPRouting_SrcIPGroupName", "name", "ip2ip-internal", "derived", max_len=40),
        Param("dst-user-name-prefix", "IP2IPRouting_DestUsernamePrefix", "dial", "ip2ip-internal", "derived",
              max_len=50),
        Param("dst-type", "IP2IPRouting_DestType", "enum", "ip2ip-internal", "derived",
              enum=_e(("ip-group", 0), ("internal", 13),)),
        Param("dst-ip-group-name", "IP2IPRouting_DestIPGroupName", "name", "ip2ip-internal", max_len=40),
        Param("alt-route-options", "IP2IPRouting_AltRouteOptions", "enum", "ip2ip-alt", "derived",
              enum=_e(("route-row", 0), ("alt-route-ignore-inputs", 1), ("alt-route-consider-inputs", 2),)),
        Param("dst-host", "IP2IPRouting_DestHost", "fqdn", "ip2ip-internal", "derived", max_len=100),
        Param("internal-action", "IP2IPRouting_InternalAction", "action", "internal-action", max_len=40),
    )),
    Table("sip_interface", "voip", "sip-interface", "SIPInterface", (), ref="sip-interface-tls", basis="derived",
          params=(Param("message-policy-name", "SIPInterface_MessagePolicyName", "name", "message-policy",
                        "derived", max_len=40, may_be_empty=True),)),
)

BY_KEY = {table.key: table for table in TABLES}
BY_INI = {table.ini.lower(): table for table in TABLES}
# Commands that open a mode (typed at the root) and the mode they open.
CONFIGURE = {"configure network": "network", "configure voip": "voip"}
