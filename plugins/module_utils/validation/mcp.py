# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MCP rules (docs/mcp.md): an mcp_hostname in every region or none (R-18), the match criteria (R-18),
hold-down and all-failed action (R-19) and the 5xx policy with its continue next hop (R-20)."""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.commsgw.routing.plugins.module_utils.core.host_port import HostPortError, split_host_port
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import MCP_ALL_FAILED, MCP_MATCHES, MCP_POLICIES
from ansible_collections.commsgw.routing.plugins.module_utils.validation.context import RuleContext
from ansible_collections.commsgw.routing.plugins.module_utils.validation.names import fqdn_problem

# The host of a next hop (host_port.split_host_port splits off the port): IPv4 or a host name, no IPv6.
NEXT_HOP_HOST_RE = re.compile(r"^[A-Za-z0-9.-]+\Z")


class McpRules(RuleContext):
    """Rules on the ``mcp`` block and the regions' MCP hostnames."""

    def mcp(self) -> None:
        with_mcp = [r for r in self.d.service_regions if r.mcp_hostname is not None]
        if self.d.mcp_given and not with_mcp and "service_regions" not in self.bad \
                and not any(r.path + ".mcp_hostname" in self.bad for r in self.d.service_regions):
            self.f.warn("mcp", "is set but no service region has an mcp_hostname: these settings do nothing",
                        "an mcp_hostname in every service region (from the Azure portal), or no mcp block", None,
                        "R-18")
        if with_mcp and len(with_mcp) != len(self.d.service_regions):
            for region in self.d.service_regions:
                # A present but mistyped mcp_hostname was reported as such, not as missing.
                if region.mcp_hostname is None and region.path + ".mcp_hostname" not in self.bad \
                        and region.path not in self.bad:
                    self.f.error(region.path + ".mcp_hostname", "is missing while another region has MCP",
                                 "an MCP hostname for every service region (from the Azure portal)", None, "R-18")
        if self.d.mcp.policy not in MCP_POLICIES:
            self.f.error("mcp.policy", "is not an MCP 5xx policy", " or ".join(MCP_POLICIES), self.d.mcp.policy,
                         "R-20")
        hold = self.d.mcp.hold_down_s
        if isinstance(hold, int) and not 1 <= hold <= 3600:
            self.f.error("mcp.hold_down_s", "is out of range", "an integer from 1 to 3600 seconds", hold, "R-19")
        hop = self.d.mcp.continue_next_hop
        if hop is not None and not self._next_hop_ok(hop):
            self.f.error("mcp.continue_next_hop", "is not a next hop", "host or IPv4 with an optional :port", hop,
                         "R-20")
        if with_mcp and self.d.mcp.policy == "continue" and hop is None:
            self.f.error("mcp.continue_next_hop", "is missing for the 'continue' policy",
                         "where calls go without ACG, e.g. core.example.net:5060", None, "R-20")
        self._mcp_match()
        all_failed = self.d.mcp.on_all_failed
        if all_failed is not None and all_failed not in MCP_ALL_FAILED:
            self.f.error("mcp.on_all_failed", "is not an MCP all-failed action", " or ".join(MCP_ALL_FAILED),
                         all_failed, "R-19")
        elif with_mcp and all_failed == "continue" and hop is None and self.d.mcp.policy != "continue":
            # (policy continue without a next hop was reported just above)
            self.f.error("mcp.continue_next_hop", "is missing for on_all_failed: continue",
                         "where calls go without ACG, e.g. core.example.net:5060", None, "R-19")

    def _mcp_match(self) -> None:
        """How MCP-bound requests are recognised (docs/mcp.md): a non-empty list of known criteria."""
        match = self.d.mcp.match
        if not isinstance(match, list):
            return  # a wrong type was reported by the parser
        if not match and "mcp.match" not in self.bad:
            self.f.error("mcp.match", "is empty: no request would ever reach MCP",
                         "one or more of: " + ", ".join(MCP_MATCHES), [], "R-18")
        for index, value in enumerate(match):
            if value not in MCP_MATCHES:
                self.f.error("mcp.match[%d]" % index, "is not an MCP match criterion",
                             "one of: " + ", ".join(MCP_MATCHES), value, "R-18")
        self._unique((("mcp.match[%d]" % i, v) for i, v in enumerate(match) if isinstance(v, str)), "criterion")

    @staticmethod
    def _next_hop_ok(value: str) -> bool:
        try:
            host = split_host_port(value).host
        except HostPortError:
            return False
        if not NEXT_HOP_HOST_RE.match(host):
            return False
        try:
            ipaddress.IPv4Address(host)
            return True
        except ValueError:
            return fqdn_problem(host) is None
