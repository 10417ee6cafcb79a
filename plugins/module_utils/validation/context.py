# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every validation rule works on: the deployment, the region catalog, the findings, and the
small reporting helpers (safe name, FQDN, repeats) that rules of several concerns share.

The rule groups (``validation.deployment_settings``, ``validation.sites``, ``validation.regions``, ``validation.mcp``)
subclass ``RuleContext``; ``validation._Rules`` combines them and runs them in contract order.
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.region_catalog import RegionCatalog
from ansible_collections.commsgw.routing.plugins.module_utils.validation.names import (
    FQDN_EXPECTED, NAME_EXPECTED, NAME_RE, fqdn_problem)


class RuleContext:
    """One deployment under validation and the helpers its rules report through."""

    def __init__(self, deployment: Deployment, catalog: RegionCatalog, findings: Findings) -> None:
        self.d = deployment
        self.catalog = catalog
        self.f = findings
        # Fields that failed to parse were already reported; rules skip checks that would only
        # repeat that fault in other words (e.g. "0 service regions" after "service_regions is missing").
        self.bad = {finding.path for finding in findings.errors}

    # -- small helpers -------------------------------------------------------------------------
    def _name(self, path: str, value: t.Any) -> bool:
        if isinstance(value, str) and not NAME_RE.match(value):
            self.f.error(path, "is not a safe name", NAME_EXPECTED, value)
            return False
        return True

    def _fqdn(self, path: str, value: t.Any, rule: str) -> bool:
        if not isinstance(value, str):
            return False
        problem = fqdn_problem(value)
        if problem:
            self.f.error(path, problem, FQDN_EXPECTED, value, rule)
            return False
        return True

    def _unique(self, items: t.Iterable[tuple[str, t.Any]], what: str, rule: str = "", fold: bool = False) -> None:
        """Report repeats; ``fold`` compares case-insensitively (names become file names and identifiers)."""
        seen: dict[t.Any, str] = {}
        for path, value in items:
            if value is None:
                continue
            key = value.lower() if fold and isinstance(value, str) else value
            if key in seen:
                self.f.error(path, "repeats the %s of %s" % (what, seen[key]), "a distinct %s" % what, value, rule)
            else:
                seen[key] = path
