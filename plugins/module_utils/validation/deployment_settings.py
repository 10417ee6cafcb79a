# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deployment-wide settings rules: identity (name, type, base domain; R-21), ACG transport and routing
timers (R-09, R-07 advice, R-13, R-14) and emergency dial strings (R-25)."""

from __future__ import annotations

import re

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import (
    ACG_TRANSPORTS, DEPLOYMENT_TYPES, ROUTING_LIMITS)
from ansible_collections.commsgw.routing.plugins.module_utils.validation.context import RuleContext

# Every pattern ends in \Z, not $: '$' also matches before a trailing newline ("112\n").
DIAL_STRING_RE = re.compile(r"^\+?[0-9]{1,15}\Z")


class SettingsRules(RuleContext):
    """Rules on the deployment's own top-level settings."""

    def identity(self) -> None:
        self._name("name", self.d.name)
        if self.d.type is not None and self.d.type not in DEPLOYMENT_TYPES:
            self.f.error("type", "is not a deployment type", " or ".join(DEPLOYMENT_TYPES), self.d.type)
        self._fqdn("base_domain", self.d.base_domain, "R-21")

    def transport_and_routing(self) -> None:
        transport = self.d.acg_transport
        if transport not in ACG_TRANSPORTS:
            self.f.error("acg_transport", "is not a transport", " or ".join(ACG_TRANSPORTS), transport, "R-09")
        elif transport != "tls" and not self.d.allow_plain_transport:
            self.f.error("acg_transport", "is plain %s without allow_plain_transport: true" % transport.upper(),
                         "tls (plain UDP/TCP only where a lab or test deployment explicitly allows it)", transport,
                         "R-09")
        elif transport != "tls" and self.d.type == "production":
            self.f.warn("acg_transport", "is plain %s in a production-type deployment" % transport.upper(),
                        "tls: plain transport is for test rigs only, real ACG accepts TLS only", transport, "R-09")
        elif transport != "tls":
            self.f.warn("acg_transport", "is plain %s: real ACG accepts TLS only" % transport.upper(),
                        "tls outside a closed lab", transport, "R-09")
        if self.d.allow_non_public_ranges and self.d.type == "production":
            self.f.warn("allow_non_public_ranges", "is set on a production deployment",
                        "public ACG ranges in production", True, "R-07")
        for key, (low, high) in ROUTING_LIMITS.items():
            value = self.d.routing.get(key)
            if isinstance(value, int) and not low <= value <= high:
                self.f.error("routing." + key, "is out of range", "an integer from %d to %d" % (low, high), value,
                             "R-13" if key != "invite_timer_ms" else "R-14")

    def emergency(self) -> None:
        if not self.d.emergency_dial_strings:
            self.f.warn("emergency_dial_strings", "is empty: nothing keeps emergency calls off the ACG trunks",
                        "your network's emergency numbers, e.g. ['112', '999']", [], "R-25")
        for index, value in enumerate(self.d.emergency_dial_strings):
            if not isinstance(value, str) or not DIAL_STRING_RE.match(value):
                self.f.error("emergency_dial_strings[%d]" % index, "is not a dial string",
                             "digits with an optional leading '+', quoted in YAML (e.g. '112')", value, "R-25")
