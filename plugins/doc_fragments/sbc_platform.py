# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC platform of the generic modules that touch an SBC (sbc_state_info, migration_diff, migration_wait;
the probe has its own wording: it may skip the SBC's view)."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  platform:
    description:
      - SBC platform of this host (C(commsgw_sbc_platform)), as the collection's platform registry knows it
        (C(docs/platforms.md)), or another collection's API platform as C(namespace.collection.name). An unknown
        name fails naming the registered ones.
      - Default is the collection's default platform (C(docs/platforms.md)).
    type: str
  platform_options:
    description:
      - How the platform is reached and read, checked against the platform's own options (documented by its doc
        fragment, C(<platform>_options), C(docs/platforms.md)); an unknown key or a
        wrong type fails naming C(platform_options.<key>), secrets are not logged.
      - The filter C(commsgw.routing.sbc_platform_options) gives what the host's inventory sets; options not
        given take the platform's defaults.
    type: dict
    default: {}
"""
