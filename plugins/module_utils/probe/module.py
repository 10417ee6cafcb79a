# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe module's options and outcome (plugins/modules/probe.py), shared with its action plugin (an API
platform's probe runs on the controller) and with a platform's read that probes in the same round trip
(docs/rerun.md: the read of a converged SBC, whose push will have nothing to do, runs the probe as well)."""

from __future__ import annotations

import hashlib
import json

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

# What probes (run, report, settings, tls, the platform registry, dnspython's checks) is imported by the functions that
# probe, not here: a platform's read imports this module and probes only when it finds nothing to push
# (docs/rerun.md), and the probe task of a re-run returns that result (reusable_read_result) with the options alone.
# Ansible's module finder still ships them (it reads function bodies).

NO_VIEW_HINT = " (or none to skip the SBC's view)"
THRESHOLD_SPEC = {
    "min_healthy_peers": {"type": "int", "default": 1},
    "max_rtt_ms": {"type": "float"},
    "cert_expiry_warn_days": {"type": "int", "default": 30},
    "fail_on_drift": {"type": "bool", "default": True},
    "fail_on_state_mismatch": {"type": "bool", "default": False},
    "fail_on_out_of_range": {"type": "bool", "default": True},
    "fail_on_tls_verify": {"type": "bool", "default": True},
    "fail_on_provisioning_ttl": {"type": "bool", "default": True},
    "require_mcp_reachable": {"type": "bool", "default": True},
}


def view_platform(params, plan):
    """The platform whose view is read: the option, else this host's in the plan; None: no view."""
    if params.get("platform"):
        return None if params["platform"] == "none" else params["platform"]
    for sbc in plan.get("sbcs") or []:
        if sbc.get("host") == params.get("host"):
            return sbc.get("platform")
    return None


def _transports(params, plan):
    allowed = list(params["allowed_transports"])
    # The plan's transport passed validation, which admits plain UDP/TCP only where the deployment
    # explicitly allows it (allow_plain_transport, R-09): probe the way the SBC will talk.
    for group in plan.get("trunk_groups") or []:
        if group.get("transport") not in allowed:
            allowed.append(group["transport"])
    return tuple(allowed)


ARGUMENT_SPEC = {
    "plan": {"type": "dict", "required": True},
    "host": {"type": "str"},
    "timeout": {"type": "float", "default": 3.0},
    "nameservers": {"type": "list", "elements": "str"},
    "dns_port": {"type": "int", "default": 53},
    "dns_timeout": {"type": "float", "default": 2.0},
    "client_cert": {"type": "path"},
    "client_key": {"type": "path", "no_log": False},
    "ca_bundle": {"type": "path"},
    "source_address": {"type": "str"},
    "allowed_transports": {"type": "list", "elements": "str", "choices": ["tls", "tcp", "udp"], "default": ["tls"]},
    "concurrency": {"type": "int", "default": 64},
    "check_provisioning_ttl": {"type": "bool", "default": True},
    "platform": {"type": "str"},
    "sbc_settle_timeout": {"type": "float"},
    "platform_options": {"type": "dict", "default": {}},
    "thresholds": {"type": "dict", "default": {}, "options": THRESHOLD_SPEC},
    "report_json": {"type": "path"},
    "report_junit": {"type": "path"},
    "fail_on_verdict": {"type": "bool", "default": True},
    "result_from_read": {"type": "dict"},
}


def _problem(params):
    """Bad input named by its option, before anything is probed; None when there is none."""
    from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import dnspython_missing

    plan = params["plan"]
    missing = dnspython_missing()
    if missing:
        return missing
    if not isinstance(plan.get("trunk_groups"), list) or "site" not in plan:
        return "plan is not a routing plan (no trunk_groups/site): pass routing_plan's host_plans[inventory_hostname]"
    for name in ("timeout", "dns_timeout"):
        if not params[name] > 0:
            return "%s must be positive, got %s" % (name, params[name])
    if params["concurrency"] < 1:
        return "concurrency must be at least 1, got %d" % params["concurrency"]
    if params["sbc_settle_timeout"] is not None and params["sbc_settle_timeout"] < 0:
        return "sbc_settle_timeout must not be negative, got %s" % params["sbc_settle_timeout"]
    return None


def _settings(params, plan):
    from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import ProbeSettings, Thresholds
    from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings

    return ProbeSettings(
        timeout_s=params["timeout"],
        resolver=ResolverSettings(nameservers=params["nameservers"] or None, port=params["dns_port"],
                                  timeout_s=params["dns_timeout"]),
        client_cert=params["client_cert"], client_key=params["client_key"], ca_bundle=params["ca_bundle"],
        source_address=params["source_address"], allowed_transports=_transports(params, plan),
        concurrency=params["concurrency"], check_provisioning_ttl=params["check_provisioning_ttl"],
        thresholds=Thresholds(**(params["thresholds"] or {})))


def outcome(params, run):
    """(failed, result) of one probe; shared with the action plugin (an API platform's probe runs on the controller)."""
    from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
    from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import summary_lines, to_json, to_junit
    from ansible_collections.commsgw.routing.plugins.module_utils.probe.tls import tls_context
    from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import (
        PlatformProblem, platform_and_options)

    problem = _problem(params)
    if problem:
        return True, {"changed": False, "msg": problem}
    plan = params["plan"]
    platform = view_platform(params, plan)
    options = {}
    try:
        if platform:
            platform, options = platform_and_options(dict(params, platform=platform), run, NO_VIEW_HINT)
            platform = platform.name
    except PlatformProblem as exc:
        return True, {"changed": False, "msg": str(exc)}
    settings = _settings(params, plan)
    try:
        # Load the certificates once up front: a wrong path is a configuration error, not 12 peer failures.
        tls_context(settings, "check.invalid")
    except (OSError, ValueError) as exc:
        return True, {"changed": False, "msg": "cannot load the TLS material (client_cert/client_key/ca_bundle): %s"
                                               % exc}
    report = probe.run_probe(plan, settings, host=params["host"], sbc_platform=platform, platform_options=options,
                             sbc_settle_s=params["sbc_settle_timeout"])
    summary = summary_lines(report)
    result = {"changed": False, "verdict": report["verdict"], "summary": summary, "report": report,
              "probed_with_read": False}
    if not run.check_mode:
        try:
            # Atomically: a CI collector never reads half a file, and a symlink planted at the path is replaced,
            # never followed.
            if params["report_json"]:
                run.write_text(params["report_json"], to_json([report]))
            if params["report_junit"]:
                run.write_text(params["report_junit"], to_junit([report]))
                result["junit"] = params["report_junit"]
        except OSError as exc:
            return True, dict(result, msg="cannot write the report: %s" % exc)
    if report["verdict"] == "fail" and params["fail_on_verdict"]:
        lines = "\n".join(summary)
        return True, dict(result, msg="probe of site %s/%s failed:\n%s" % (report["deployment"], report["site"],
                                                                           lines))
    if report["verdict"] == "warn":
        result["warnings"] = list(report["reasons"])
    return False, dict(result, msg="probe of site %s/%s: %s" % (report["deployment"], report["site"],
                                                                report["verdict"]))


PROBED_WITH_READ = "probed with the read of this run, in its round trip: the push had nothing to do"
# Options that say where a report goes, not what is probed.
_NOT_PROBED = ("report_json", "report_junit", "fail_on_verdict", "result_from_read")


def options_digest(params):
    """A digest of the probe's validated options that decide what is probed and how it is judged: a result from the
    platform's read is reused only for the very same options (docs/rerun.md)."""
    probed = {key: value for key, value in params.items() if key not in _NOT_PROBED}
    text = json.dumps(probed, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def probe_with_read(options, run):
    """The probe a platform's read runs in its own round trip (docs/rerun.md): ``options`` are the probe module's
    (null values unset); None when they are not valid options or the probe raised, so that the probe task runs live
    and says why. Never fails the read and writes no report: the probe task decides with the result."""
    given = {key: value for key, value in (options or {}).items() if value is not None and key not in _NOT_PROBED}
    validation = ArgumentSpecValidator(ARGUMENT_SPEC).validate(given)
    if validation.error_messages:
        return None
    params = validation.validated_parameters
    try:
        failed, values = outcome(dict(params, fail_on_verdict=False), run)
    except Exception:  # pylint: disable=broad-exception-caught  # the live probe task meets it and reports it
        return None
    return dict(values, failed=failed, options_digest=options_digest(params))


def reusable_read_result(params):
    """The result of O(result_from_read) when this task may return it as its own (same options, a passing verdict,
    no report file asked for); else None and the probe runs live."""
    earlier = params.get("result_from_read")
    if not isinstance(earlier, dict) or earlier.get("failed") or earlier.get("verdict") not in ("pass", "warn"):
        return None
    if params.get("report_json") or params.get("report_junit"):
        return None
    if earlier.get("options_digest") != options_digest(params):
        return None
    result = {key: earlier[key] for key in ("verdict", "report", "warnings") if key in earlier}
    result.update(changed=False, failed=False, probed_with_read=True, summary=list(earlier.get("summary") or []) + [
        "  " + PROBED_WITH_READ], msg="%s (%s)" % (earlier.get("msg", ""), PROBED_WITH_READ))
    return result
