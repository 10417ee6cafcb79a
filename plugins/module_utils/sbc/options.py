# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Platform options: how a platform is reached and read, validated against the platform's argument spec.

Every generic module that touches an SBC (``sbc_state_info``, ``migration_diff``, ``migration_wait``,
``probe``) takes ``platform`` and ``platform_options`` and merges the platform's spec here, the way
community.crypto's ``get_default_argspec()`` or community.dns's ``argspec.py`` merge their providers'
options: defaults come from the spec (written once, in the platform's registration), unknown keys and
wrong types are errors naming ``platform_options.<key>``, and ``no_log`` options are reported so that the
caller masks their values.

``inventory_options`` is the other side: the values a host's inventory gives (``SbcPlatform.option_sources``),
for the filter ``commsgw.routing.sbc_platform_options`` that every playbook uses the same way.
"""

from __future__ import annotations

import os
import typing as t

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import SbcPlatform

OPTION = "platform_options"
SBC_PREFIX = "commsgw_sbc."


class PlatformOptionsError(ValueError):
    """platform_options do not fit the platform's argument spec; the message names each key."""


def validate_options(platform: SbcPlatform, given: t.Optional[t.Mapping[str, t.Any]]
                     ) -> tuple[dict[str, t.Any], set[str]]:
    """(options complete with the spec's defaults, values to mask) for ``given`` platform options."""
    spec = {OPTION: {"type": "dict", "default": {}, "options": dict(platform.options)}}
    result = ArgumentSpecValidator(spec).validate({OPTION: dict(given or {})})
    if result.error_messages:
        raise PlatformOptionsError("%s of platform %s: %s" % (OPTION, platform.name, "; ".join(result.error_messages)))
    return dict(result.validated_parameters[OPTION]), set(result._no_log_values)  # pylint: disable=protected-access


def no_log_names(platform: SbcPlatform) -> list[str]:
    return sorted(name for name, spec in platform.options.items() if spec.get("no_log"))


def inventory_options(platform: SbcPlatform, sbc_settings: t.Optional[t.Mapping[str, t.Any]],
                      host_vars: t.Optional[t.Mapping[str, t.Any]]) -> dict[str, t.Any]:
    """The platform options a host's inventory sets: each of ``option_sources`` found there (``commsgw_sbc.<key>``
    in the host's ``commsgw_sbc``, anything else a host variable or ``variable.key``); what is not set is left to the spec's default."""
    found: dict[str, t.Any] = {}
    for option, source in platform.option_sources.items():
        if source.startswith(SBC_PREFIX):
            value = (sbc_settings or {}).get(source[len(SBC_PREFIX):])
        else:  # a host variable, or a key of one (``commsgw_deployment.name``)
            name, _dot, key = source.partition(".")
            value = (host_vars or {}).get(name)
            if key:
                value = value.get(key) if isinstance(value, t.Mapping) else None
        if value is not None and value != "":
            found[option] = value
    return found


def artefact_file(platform: SbcPlatform, directory: str, name: str) -> str:
    """Where artefact ``name`` goes when a render is written into ``directory`` standing for the SBC: the
    platform's own layout (``artefact_path``) under it, or the name itself for artefacts that are not files."""
    if not platform.artefact_root:
        return os.path.join(directory, name)
    return platform.artefact_path(platform.with_defaults({platform.artefact_root: directory}), name)
