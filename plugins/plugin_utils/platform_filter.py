# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform a filter's input names, for the filters that hand a host's SBC to its platform
(sbc_platform_role, sbc_platform_name, sbc_platform_options, sbc_local_reader, sbc_artefact_files)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import SbcPlatform
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    DEFAULT_PLATFORM, UnknownPlatform, get_platform)


def filter_platform(name: object, prefix: str = "") -> SbcPlatform:
    """The platform ``name`` (a host's ``commsgw_sbc_platform``; empty or null: the default platform); an unknown
    name is an AnsibleFilterError naming ``commsgw_sbc_platform`` and the registered platforms."""
    try:
        return get_platform(name or DEFAULT_PLATFORM)
    except UnknownPlatform as exc:
        raise AnsibleFilterError("%s%s" % (prefix, exc)) from None
