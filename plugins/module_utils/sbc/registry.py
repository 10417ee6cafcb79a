# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry of SBC platforms, keyed by ``commsgw_sbc_platform`` (default ``kamailio``).

Platforms load lazily: importing this module imports no platform, and ``get_platform`` imports only the
registration of the platform it is asked for (validation of a Kamailio inventory loads Kamailio's light
registration and settings, nothing of its readers, and no other platform).

* A platform shipped in this collection has one line in ``SHIPPED``: a function that imports its
  registration inside its body. AnsiballZ finds imports nested in functions and bundles them, so a
  module running on an SBC host carries the platform it may need.
* A platform of another collection is named ``namespace.collection.name`` and loaded from
  ``ansible_collections.<namespace>.<collection>.plugins.module_utils.<name>.platform`` (attribute
  ``PLATFORM``). AnsiballZ cannot bundle it, so it must be an API platform (``connection: api``):
  everything that touches it runs on the controller.

This is the one generic file that names a platform's registration (tests/unit/sbc/test_platform_boundary.py).
"""

from __future__ import annotations

import importlib
import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import (
    API, CONNECTIONS, TLS_FORMS, SbcPlatform, UnknownPlatform)

__all__ = ["DEFAULT_PLATFORM", "PLATFORM_VAR", "SHIPPED", "UnknownPlatform", "get_platform", "is_qualified",
           "module_platform", "platform_names"]

PLATFORM_VAR = "commsgw_sbc_platform"
DEFAULT_PLATFORM = "kamailio"


def _kamailio() -> SbcPlatform:
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.platform import KAMAILIO
    return KAMAILIO


def _audiocodes() -> SbcPlatform:
    from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.platform import AUDIOCODES
    return AUDIOCODES


# The one line a shipped platform adds.
SHIPPED: dict[str, t.Callable[[], SbcPlatform]] = {
    "kamailio": _kamailio,
    "audiocodes": _audiocodes,
}

_QUALIFIED = re.compile(r"\A([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\Z")
_LOADED: dict[str, SbcPlatform] = {}


def platform_names() -> tuple[str, ...]:
    """The platforms shipped in this collection (another collection's are named by their qualified name)."""
    return tuple(sorted(SHIPPED))


def is_qualified(name: t.Any) -> bool:
    """``namespace.collection.name``: a platform of another collection."""
    return isinstance(name, str) and _QUALIFIED.match(name) is not None


def _unknown(name: t.Any, why: str = "is not a registered SBC platform") -> UnknownPlatform:
    return UnknownPlatform("%s: %r %s; registered: %s (or another collection's API platform as "
                           "namespace.collection.name)" % (PLATFORM_VAR, name, why, ", ".join(platform_names())))


def _external(name: str) -> SbcPlatform:
    namespace, collection, short = t.cast(t.Match[str], _QUALIFIED.match(name)).groups()
    module = "ansible_collections.%s.%s.plugins.module_utils.%s.platform" % (namespace, collection, short)
    try:
        platform = importlib.import_module(module).PLATFORM
    except ImportError as exc:
        raise _unknown(name, "cannot be loaded (%s: %s)" % (module, exc)) from None
    except AttributeError:
        raise _unknown(name, "cannot be loaded (%s has no PLATFORM)" % module) from None
    if not isinstance(platform, SbcPlatform) or platform.name != name:
        raise _unknown(name, "cannot be loaded (%s.PLATFORM is not an SbcPlatform named %s)" % (module, name))
    if platform.connection != API:
        # A module on an SBC host carries only what AnsiballZ bundles: this collection's module_utils.
        raise _unknown(name, "is a platform of another collection with connection %r; such a platform must be "
                             "reached through an API (connection: api), since the collection's modules cannot "
                             "carry its code to an SBC host" % platform.connection)
    return platform


def get_platform(name: t.Any) -> SbcPlatform:
    """The platform ``name`` (loaded on first use); UnknownPlatform names the variable and the registered ones."""
    if isinstance(name, str) and name in _LOADED:
        return _LOADED[name]
    if isinstance(name, str) and name in SHIPPED:
        platform = SHIPPED[name]()
    elif is_qualified(name):
        platform = _external(name)
    else:
        raise _unknown(name)
    if platform.connection not in CONNECTIONS or platform.tls_form not in TLS_FORMS:
        raise _unknown(name, "has connection %r / tls_form %r, expected one of %s / %s"
                       % (platform.connection, platform.tls_form, CONNECTIONS, TLS_FORMS))
    _LOADED[name] = platform
    return platform


def module_platform(module: t.Any, name: t.Any, hint: str = "", **result: t.Any) -> SbcPlatform:
    """``get_platform`` for a module's ``platform`` option: an unknown name fails the module (``fail_json``)
    with a message naming the option and the registered platforms; ``hint`` adds what else the option takes."""
    try:
        return get_platform(name)
    except UnknownPlatform as exc:
        module.fail_json(msg="platform: %s%s" % (exc, hint), **result)
        raise  # not reached: fail_json exits
