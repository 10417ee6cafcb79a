# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AudioCodes pages the Mediant grammar and behaviour are modelled from, one key per page.

Each entry: the address read (None where the search index held the page without its address; the
title then names it within AudioCodes' 7.4 documentation), the document and version it belongs to,
and what was read there. docs/platforms/audiocodes.md prints this list; tests check it is current.
Pages of another version than 7.40A are marked so: the lab acceptance run confirms them on a device.
"""

from __future__ import annotations

import typing as t

_TD = "https://techdocs.audiocodes.com/session-border-controller-sbc"
_EM = "https://www.easymanua.ls/audiocodes"
_MH = "https://manualshive.com/en/manual/audiocodes/mediant-4000-sbc/3011146?page="

# key: (address or None, document and version, what it documents)
REFERENCES: dict[str, tuple[t.Optional[str], str, str]] = {
    "rest-cli": (_TD + "/rest-api/version-740/Content/REST-API/Incremental%20CLI%20Script.htm",
                 "REST API 7.4, Incremental CLI Script",
                 "PUT /api/v1/files/cliScript/incremental, multipart field 'file', no reset; configuration and "
                 "show commands; 200 with description and output; 400 script incorrect; 409 HA synchronisation"),
    "rest-ini": (_TD + "/rest-api/version-740/Content/REST-API/Full%20INI%20File.htm",
                 "REST API 7.4, Full INI File",
                 "GET /api/v1/files/ini returns the ini file; PUT uploads one and resets the device; 409 body "
                 "'Device is currently performing HA synchronization'; the device rewrites uploaded files"),
    "rest-status": (_TD + "/rest-api/version-740/Content/REST-API/Status.htm",
                    "REST API 7.4, Status",
                    "GET /api/v1/status: device-level fields only (operationalState, highAvailability, versionID, "
                    "saveNeeded, resetNeeded...); nothing per Proxy Set or IP Group"),
    "proxy-connectivity": (_EM + "/e-sbc/manual?p=387",
                           "Mediant 1000 Gateway & E-SBC User's Manual (7.x), Core Entities",
                           "'Proxy Set Connectivity', CLI show voip proxy sets status [IPGroup_ProxySetConnectivity]: "
                           "read-only connectivity status of Server-type IP Groups; its values and the command's "
                           "output format are not shown"),
    "rest-auth": (None, "REST API 7.4, Authentication and Session Establishment",
                  "prefix /api/v1; every request HTTP Basic authentication of a device user; HTTPS recommended; "
                  "GET /api/v1/status example"),
    "rest-kpi": (_TD + "/rest-api/version-740/Content/REST-API/Discovery%20of%20Performance%20Monitoring.htm",
                 "REST API 7.4, Discovery of Performance Monitoring Entity",
                 "/api/v1/kpi/current/<app>/<group>/<entity>/<id>; the example entity is ipGroup call "
                 "statistics; no proxy-address reachability entity is named"),
    "proxy-sets": ("https://techdocs.audiocodes.com/multi-service-business-routers/mediant-500-msbr/user-manual/"
                   "version-720/Content/UM/Configuring%20Proxy%20Sets.htm",
                   "Mediant 500 MSBR User's Manual 7.2, Configuring Proxy Sets",
                   "Proxy Set = address(es) of an IP Group; OPTIONS keep-alive marks proxies online/offline; "
                   "TLS Context per Proxy Set; SRV answers up to 50 host names; per-set address limits"),
    "proxy-keepalive": (_EM + "/e-sbc/manual?p=408", "Mediant 1000 Gateway & E-SBC User's Manual (7.x)",
                        "proxy-enable-keep-alive [ProxySet_EnableProxyKeepAlive]: 0 disable, 1 using OPTIONS"),
    "proxy-keepalive-time": (_EM + "/mediant-1000b/manual?p=372", "Mediant 1000B User's Manual 7.2",
                             "proxy-keep-alive-time 5..2,000,000 s; keepalive-fail-resp up to three codes, "
                             "comma-separated, 200 not supported; success-detect-retries 1..100; "
                             "success-detect-int 1..200"),
    "proxy-detect": (_EM + "/mediant-4000-sbc/manual?p=405", "Mediant 4000 SBC User's Manual (7.x)",
                     "success-detect-retries 1..100, success-detect-int 1..200 s, fail-detect-rtx -1..255 "
                     "(UDP retransmissions only)"),
    "proxy-hotswap": (_EM + "/e-sbc/manual?p=411", "Mediant 1000 Gateway & E-SBC User's Manual (7.x)",
                      "is-proxy-hot-swap: next proxy on no response (HotSwapRtx, device answers 408 itself) or "
                      "on an Alternative Routing Reasons code, then the IP-to-IP alternative rule; "
                      "proxy-load-balancing-method 0 disable, 1 round robin (order and priority), 2 random weights"),
    "proxy-address": (_EM + "/e-sbc/manual?p=415", "Mediant 1000 Gateway & E-SBC User's Manual (7.x)",
                      "Proxy Address table: transport-type 0 UDP, 1 TCP, 2 TLS; priority 0..65535 (0 highest); "
                      "priority and weight are configured together; offline proxy -> online proxy of highest "
                      "priority"),
    "random-weights": (_EM + "/mediant-500l-msbr/manual?p=301", "Mediant 500L MSBR User's Manual 6.8",
                       "Random Weights load balancing (weights from DNS SRV) is not used when the SRV response "
                       "includes records with different Priority values (also 5.8, 6.2, 6.6 manuals)"),
    "ip-groups": (_TD + "/mediant-500-sbc/user-manual/version-740/Content/UM/Configuring%20IP%20Groups.htm",
                  "Mediant 500 SBC User's Manual 7.4, Configuring IP Groups",
                  "IP Group = a SIP entity; Server type addressed by its Proxy Set; 'Classify by Proxy Set'"),
    "ip-group-params": (_MH + "381", "Mediant 4000 SBC User's Manual 7.2",
                        "name [IPGroup_Name] up to 40 characters, no '/'; type 0 Server; proxy-set-name"),
    "cli-ip-group": (None, "CLI Reference Guide (SBC), command ip-group",
                     "(config-voip)# ip-group <Index>; classify-by-proxy-set {disable|enable}"),
    "alt-reasons": (None, "SBC User's Manual 7.4, Configuring SIP Response Codes for Alternative Routing Reasons",
                    "Alternative Reasons Set (parent) and Rules (child, up to 20 per set); assigned to the IP "
                    "Group ('SBC Alternative Routing Reasons Set'); needs Proxy Hot Swap and an alternative "
                    "IP-to-IP rule"),
    "cli-alt-rules": ("https://techdocs.audiocodes.com/multi-service-business-routers/command-line-interface/"
                      "version-720/Content/CLI/alt-route-reasons-rules.htm", "CLI Reference Guide 7.2",
                      "(config-voip)# sbc routing alt-route-reasons-set <i>, then alt-route-reasons-rules <i>, "
                      "rel-cause-code {...408-req-timeout|...|503-service-unavail|504-server-timeout|...}"),
    "alt-always": (_EM + "/msbg-series/manual?p=669", "Mediant 1000B User's Manual 7.2",
                   "408, an ICMP message or no response always trigger alternative routing, listed or not"),
    "ip2ip-alt": (_EM + "/mediant-1000b/manual?p=700", "Mediant 1000B User's Manual 7.2",
                  "route-name; alt-route-options 0 route row, 1 alternative ignore inputs, 2 alternative consider "
                  "inputs; the alternative rule is the next index directly below its main rule"),
    "ip2ip-internal": (_EM + "/mediant-800b/manual?p=719", "Mediant 800B User's Manual 7.2",
                       "dst-type 0 IP Group, 13 Internal (the device replies itself, 'Internal Action'); "
                       "dst-ip-group-name"),
    "internal-action": (_MH + "592", "Mediant 4000 SBC User's Manual 7.2",
                        "internal-action syntax reply(response='<code>')"),
    "classification": ("https://www.manualslib.com/manual/1272709/Audiocodes-Mediant-4000-Sbc.html?page=460",
                       "Mediant 4000 SBC User's Manual", "src-ip-address: dotted address with 'x' (one digit) "
                       "and '*' (0..255) wildcards, no CIDR"),
    "classification-action": (_EM + "/mediant-8000/manual?p=743", "Mediant 8000 Manual 6.6",
                              "Classification 'Action Type' Deny/Allow: SIP-level white and black lists"),
    "firewall": ("https://manualshive.com/ru/manual/audiocodes/mediant-4000-sbc/3011146?page=172",
                 "Mediant 4000 SBC User's Manual 7.2, Firewall table",
                 "AccessList source-ip, prefixLen: applying a firewall rule needs a reset with save-to-flash"),
    "message-policy": (_MH.replace("/en/", "/ru/") + "520", "Mediant 4000 SBC User's Manual 7.2",
                       "MessagePolicy name (40 chars, no '/'), max-message-length up to 32,768, max-header-length "
                       "up to 512, send-rejection 0 reject (400) / 1 drop"),
    "inbound-manipulation": (_EM + "/media-800-msbr/manual?p=480", "Mediant 800 MSBR User's Manual 6.6",
                             "ip-inbound-manipulation: manipulated-uri 0 source / 1 destination, "
                             "remove-from-left, prefix-to-add; CLI configure voip > sbc manipulations "
                             "ip-inbound-manipulation (p=478)"),
    "dial-plan": (_EM + "/mediant-500l-msbr/manual?p=777", "Mediant 500L MSBR User's Manual 6.8",
                  "Dial plan notation: x, [n-m] range of numbers, '#' end of number, '*' any, '$' empty"),
    "internal-dns": (_TD + "/mediant-software-sbc/user-manual/version-740/content/um/"
                     "Configuring%20the%20Internal%20DNS%20Table.htm",
                     "Mediant Software SBC User's Manual 7.4, Configuring the Internal DNS Table",
                     "up to 20 host names, up to three addresses each; checked before external DNS; CLI "
                     "configure network > dns dns-to-ip; ini [DNS2IP]"),
    "tls-contexts": (None, "SBC User's Manual 7.4, Configuring TLS Certificate Contexts",
                     "TLS Context: TLS 1.0..1.3 selectable, cipher suites per role, certificates; default "
                     "context #0"),
    "tls-selection": (_EM + "/mediant-500l-msbr/manual?p=118", "Mediant 500L MSBR User's Manual 6.8",
                      "outgoing TLS uses the Proxy Set's TLS Context, else the SIP Interface's, else #0"),
    "sip-interface-tls": (_MH + "376", "Mediant 4000 SBC User's Manual 7.2",
                          "SIP Interface tls-context-name; the Proxy Set's context wins when set"),
    "peer-hostname": (_EM + "/mediant-600/manual?p=573", "Mediant 600 SIP User's Manual 6.4",
                      "PeerHostNameVerificationMode 0/1/2 and SIPSRequireClientCertificate (global)"),
    "ini-format": ("https://easymanua.ls/audiocodes/mediapack-mp-118/manual?p=91", "MP-11x User's Manual 6.6",
                   "ini table syntax: [ Table ], FORMAT line, indexed rows, [ \\Table ]; ';' comments; names "
                   "case-insensitive; string values quoted"),
}


def reference(key: str) -> tuple[t.Optional[str], str, str]:
    return REFERENCES[key]


def cite(key: str) -> str:
    """``address`` or ``title (address not recorded)`` for one reference key."""
    address, title, _what = REFERENCES[key]
    return address or "%s (address not recorded by the search index)" % title
