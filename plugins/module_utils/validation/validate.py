# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline validation of a deployment against the ACG contract (R-01..R-28).

Every rule adds findings and carries on, so one run reports every problem. Errors break the
contract; warnings are advice. Rules read the typed model from ``model``; anything that failed to
parse is simply absent there and was already reported.

The rules live in one module per concern, all working on a ``validation_context.RuleContext``:
``validation.names`` (safe names, FQDNs, deployment labels), ``validation.deployment_settings`` (identity,
transport, routing, emergency), ``validation.sites`` (region/site counts, site and SBC pairing),
``validation.regions`` (management and Azure regions, regional FQDNs, /28 ranges) and ``validation.mcp``.
This module runs them in contract order and stays the public entry point: its names are unchanged.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment, Sbc, parse_deployment
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.region_catalog import RegionCatalog, load_catalog
from ansible_collections.commsgw.routing.plugins.module_utils.srv.bounds import check_srv_limits
from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import normalise_fqdn
from ansible_collections.commsgw.routing.plugins.module_utils.validation.mcp import NEXT_HOP_HOST_RE, McpRules
from ansible_collections.commsgw.routing.plugins.module_utils.validation.names import (
    FQDN_EXPECTED, HOST_RE, LABEL_RE, NAME_EXPECTED, NAME_RE, deployment_label, fqdn_problem)
from ansible_collections.commsgw.routing.plugins.module_utils.validation.regions import (
    AZURE_NAME_EXPECTED, AZURE_NAME_RE, RANGE_PREFIX, RegionRules)
from ansible_collections.commsgw.routing.plugins.module_utils.validation.deployment_settings import DIAL_STRING_RE, SettingsRules
from ansible_collections.commsgw.routing.plugins.module_utils.validation.sites import SiteRules

__all__ = [
    "AZURE_NAME_EXPECTED", "AZURE_NAME_RE", "DIAL_STRING_RE", "FQDN_EXPECTED", "HOST_RE", "LABEL_RE", "NAME_EXPECTED",
    "NAME_RE", "NEXT_HOP_HOST_RE", "RANGE_PREFIX", "deployment_label", "fqdn_problem", "normalise_fqdn",
    "validate_deployment",
]


class _Rules(SettingsRules, SiteRules, RegionRules, McpRules):
    """The rules for one deployment; each group covers one part of the contract."""

    def run(self) -> None:
        if "commsgw_deployment" in self.bad:
            return  # not even a mapping: nothing parsed, every rule would only restate that
        self.identity()
        self.shape()
        self.pairing()
        self.management_region()
        self.azure_regions()
        self.hostnames()
        self.ip_ranges()
        self.transport_and_routing()
        self.emergency()
        self.mcp()
        self.sbcs()


def validate_deployment(raw: t.Any, sbcs: t.Sequence[Sbc] = (),
                        catalog: t.Optional[RegionCatalog] = None) -> tuple[Deployment, Findings]:
    """Parse and check one deployment; return the model and every finding."""
    findings = Findings()
    deployment = parse_deployment(raw, sbcs, findings)
    _Rules(deployment, catalog or load_catalog(), findings).run()
    check_srv_limits(deployment, findings)  # issue 13: bounds on SRV records (srv_bounds)
    return deployment, findings
