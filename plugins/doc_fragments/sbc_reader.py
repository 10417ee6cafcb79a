# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The account the generic readers of a running SBC read as (sbc_state_info, migration_diff, migration_wait)."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  run_as_user:
    description:
      - The account the SBC runs as (the kamailio role's C(kamailio_user)). Run as root, the module reads the SBC's files
        and, where it asks the SBC over its socket, asks as this user (a forked child drops to its uid, gid and groups),
        never as root, and only takes answers from this user or root.
      - Default is the platform's own (Kamailio - C(kamailio)).
    type: str
"""
