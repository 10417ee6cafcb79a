# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The generic modules that touch an SBC (``sbc_state_info``, ``migration_diff``, ``migration_wait``, ``probe``):
their logic is one ``outcome(params, run) -> (failed, result)`` function, run either

* on the SBC host by the module (a ``host`` platform: AnsiballZ carries this collection's module_utils there), or
* in the controller's process by the module's action plugin (an ``api`` platform: nothing runs on the device,
  and another collection's platform is importable only there; plugin_utils/platform_action.py).

``Run`` is what differs between the two: check and diff mode, how secrets are masked and how a report file
is written.
"""

from __future__ import annotations

import dataclasses
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.contract import SbcPlatform, UnknownPlatform
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.options import PlatformOptionsError, validate_options
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import DEFAULT_PLATFORM, get_platform

Result = t.Dict[str, t.Any]
Outcome = t.Callable[[t.Dict[str, t.Any], "Run"], t.Tuple[bool, Result]]
PLATFORM_SPEC = {
    "platform": {"type": "str"},  # None: the registry's default platform
    "platform_options": {"type": "dict", "default": {}},
}


@dataclasses.dataclass
class Run:
    """How one call runs: ``masked`` collects the values of ``no_log`` platform options (the module hides them
    in its output); ``write_text(path, text)`` writes a file atomically without following a planted link."""

    check_mode: bool = False
    diff: bool = False
    masked: t.Set[str] = dataclasses.field(default_factory=set)
    write_text: t.Optional[t.Callable[[str, str], None]] = None


class PlatformProblem(ValueError):
    """An unknown platform or platform options that do not fit its spec; the message names the option."""


def platform_of(name: t.Any, hint: str = "") -> SbcPlatform:
    try:
        return get_platform(name or DEFAULT_PLATFORM)
    except UnknownPlatform as exc:
        raise PlatformProblem("platform: %s%s" % (exc, hint)) from None


def platform_and_options(params: t.Mapping[str, t.Any], run: Run, hint: str = "") -> tuple[SbcPlatform, dict[str, t.Any]]:
    """The platform the ``platform`` option names and its ``platform_options`` checked against its spec."""
    platform = platform_of(params.get("platform"), hint)
    try:
        options, masked = validate_options(platform, params.get("platform_options"))
    except PlatformOptionsError as exc:
        raise PlatformProblem(str(exc)) from None
    run.masked.update(masked)
    return platform, options


def main(argument_spec: dict[str, t.Any], outcome: Outcome, write_text: t.Optional[t.Callable[..., None]] = None
         ) -> None:
    """The module's ``main()``: the same outcome on the SBC host."""
    from ansible.module_utils.basic import AnsibleModule  # pylint: disable=import-outside-toplevel

    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    run = Run(check_mode=module.check_mode, diff=module._diff,  # pylint: disable=protected-access
              write_text=(lambda path, text: write_text(module, path, text)) if write_text else None)
    failed, result = outcome(module.params, run)
    module.no_log_values.update(run.masked)
    for line in result.pop("warnings", []):  # the action plugin returns them as result warnings instead
        module.warn(line)
    if failed:
        module.fail_json(**result)
    module.exit_json(**result)
