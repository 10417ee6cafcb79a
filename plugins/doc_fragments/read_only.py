# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The diff-mode attribute of a module that only reads (validate_inventory, routing_plan, srv_audit, tls_preflight)."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
attributes:
  diff_mode:
    description: Makes no change, so there is nothing to diff.
    support: none
"""
