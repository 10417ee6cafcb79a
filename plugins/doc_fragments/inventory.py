# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory input of the controller-side modules that validate it (validate_inventory, routing_plan,
acg_crosscheck): one name and one meaning for all of them."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  hosts:
    description:
      - Host name to that host's commsgw variables, as returned by the P(commsgw.routing.sbc_facts#filter) filter.
      - When omitted, the module (it runs in the controller's process) reads them itself from every host of the
        inventory, as C(hostvars | commsgw.routing.sbc_facts(groups['all'])) would, without templating them
        into the task's arguments (faster on large inventories).
    type: dict
"""

    # commsgw.routing.inventory.sbc_settings
    SBC_SETTINGS = r"""
options:
  require_sbc_settings:
    description:
      - Also report SBC hosts without C(commsgw_sbc) (their sockets, next hop and certificates).
      - C(commsgw_sbc) is always checked when present; it is needed to render or push, not to validate or plan.
    type: bool
    default: false
"""
