# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry of SBC platforms, keyed by ``commsgw_sbc_platform`` (default ``kamailio``).

This is the one generic file that imports platform registrations (one import line per platform);
everything else asks it (tests/unit/sbc/test_platform_boundary.py keeps it so).
"""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.platform import KAMAILIO
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import SbcPlatform, UnknownPlatform

__all__ = ["DEFAULT_PLATFORM", "PLATFORMS", "PLATFORM_VAR", "UnknownPlatform", "get_platform", "module_platform",
           "platform_names"]

PLATFORM_VAR = "commsgw_sbc_platform"
DEFAULT_PLATFORM = "kamailio"
PLATFORMS: dict[str, SbcPlatform] = {p.name: p for p in (KAMAILIO,)}


def platform_names() -> tuple[str, ...]:
    return tuple(sorted(PLATFORMS))


def get_platform(name: t.Any) -> SbcPlatform:
    """The registered platform ``name``; UnknownPlatform names the variable and the registered ones."""
    try:
        return PLATFORMS[name]
    except (KeyError, TypeError):
        raise UnknownPlatform("%s: %r is not a registered SBC platform; registered: %s"
                              % (PLATFORM_VAR, name, ", ".join(platform_names()))) from None


def module_platform(module: t.Any, name: t.Any, hint: str = "", **result: t.Any) -> SbcPlatform:
    """``get_platform`` for a module's ``platform`` option: an unknown name fails the module (``fail_json``)
    with a message naming the option and the registered platforms; ``hint`` adds what else the option takes."""
    try:
        return get_platform(name)
    except UnknownPlatform as exc:
        module.fail_json(msg="platform: %s%s" % (exc, hint), **result)
        raise  # not reached: fail_json exits
