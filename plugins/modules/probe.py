#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: probe
short_description: Probe ACG live from an SBC host - DNS, SIP OPTIONS over mutual TLS and the SBC's own view
version_added: 0.1.0
description:
  - Checks one operator site against Azure Communications Gateway for real, from the site's routing plan
    (RV(commsgw.routing.routing_plan#module:host_plans)); no routing fact is recomputed from the inventory.
  - "DNS: resolves each region's C(_sip._tls) SRV record (and the MCP records when the deployment has MCP) live, checks
    that every target address lies in the region's /28 range(s) (R-07) and that the provisioning API record has a
    TTL of at most 60 s (R-21)."
  - "SIP: sends one OPTIONS to B(every) SRV target address at once, over TLS 1.2 or later with the SBC's client
    certificate, SNI set to the regional hostname and the peer certificate verified against the regional hostname,
    not the SRV target (R-09, R-24). Reports per peer the reply code, round-trip time, TLS version and cipher,
    certificate subject/SAN and days to expiry, or the failure class: C(dns), C(connect_refused),
    C(connect_timeout), C(connect_error), C(tls_unknown_ca), C(tls_hostname_mismatch), C(tls_expired),
    C(tls_protocol), C(tls_client_rejected), C(tls_handshake), C(no_reply), C(malformed_reply),
    C(wrong_transaction), C(non_2xx) (with the code), C(transport_not_allowed), C(out_of_range) or
    C(tls_sbc_host_check)."
  - "A target whose address is outside the region's /28 range(s) is never contacted (no TLS with the SBC's
    certificate, no OPTIONS): C(out_of_range), with the address and the ranges. At most 16 targets per SRV record
    are probed (the rest is reported as a region warning). After a failed verification the probe connects once
    more without verification, only to describe the certificate, and never presents the client certificate on
    that connection. Reflected text (reason phrase, Server header, Call-ID, certificate names) is cut at 160
    characters with a marker, and at most 10 stray replies are kept per peer (C(stray_count) counts them all)."
  - "C(tls_sbc_host_check): the certificate verified, but the regional hostname is not its first DNS
    subjectAltName (or is only its CN while it has DNS subjectAltNames). The SBC's own host check (Kamailio) sees
    only the first DNS subjectAltName and the CN, so it would refuse this peer (or accept it only through the CN,
    which RFC 6125 does not use): a total outage at the first call, caught at onboarding instead."
  - "MCP targets are never sent OPTIONS (they do not answer it, R-19): DNS, TCP/TLS reachability and the
    certificate only."
  - "The SBC's own view, through its platform (what it deployed and what it runs, C(docs/platforms.md)): drift
    against the SRV answers (missing, extra, stale) and peer states against what the probe saw. Only C(active)
    counts as in service: an ACG peer the SBC shows C(probing), C(inactive), C(disabled) or without a state is a
    warning naming the peer and its state, and no active peer in the local trunk group, or
    none at all, fails the site (the SBC cannot send calls there). MCP targets are never judged by their state
    (they are not pinged, R-19)."
  - "Right after a push or restart the SBC's states are not settled yet: while ACG peers the probe reached are not
    active in the SBC's view, the view is read again every 0.5 s, for at most O(sbc_settle_timeout) seconds. The
    report says how long it waited (C(sbc_view.settle))."
  - "Every wait is bounded: all peers are probed concurrently, so the wall time is about the slowest healthy
    round trip plus one O(timeout), never the sum."
  - Runs on the SBC host by default (ACG only accepts signalling from the operator's declared ranges), needing only
    Python and dnspython there; can run on the controller for labs (C(delegate_to)).
author: commsgw.routing contributors (@commsgw)
requirements:
  - dnspython >= 2.0
extends_documentation_fragment:
  - commsgw.routing.dns
  # platform_options; this module documents its own platform option (it takes none too).
  - commsgw.routing.sbc_platform
options:
  plan:
    description: The routing plan of this host's site, from RV(commsgw.routing.routing_plan#module:host_plans).
    type: dict
    required: true
  host:
    description: The SBC host name, for the report.
    type: str
  timeout:
    description: Seconds one peer may take in total (TCP connect, TLS handshake and the OPTIONS reply).
    type: float
    default: 3.0
  client_cert:
    description: The SBC's client certificate (PEM, may include the chain) presented to ACG (mutual TLS, R-24).
    type: path
  client_key:
    description: The private key of O(client_cert) (when not in the same file).
    type: path
  ca_bundle:
    description: Trust anchors for ACG's certificate (DigiCert Global Root G2 in production). Default is the
      system store.
    type: path
  source_address:
    description: Local address to probe from, normally the SBC's ACG-facing address.
    type: str
  allowed_transports:
    description:
      - Transports the probe may use. TLS always; the plan's own transport is added automatically (validation
        admits plain UDP/TCP only where the deployment sets C(allow_plain_transport)). A target whose transport is
        not allowed fails with C(transport_not_allowed).
    type: list
    elements: str
    choices: [tls, tcp, udp]
    default: [tls]
  concurrency:
    description: Peers probed at the same time; 1 probes one after another.
    type: int
    default: 64
  check_provisioning_ttl:
    description: Check the TTL of the provisioning API record (R-21).
    type: bool
    default: true
  platform:
    description:
      - SBC platform whose own view is read and compared (C(none) to skip). Default is this host's platform
        from the plan's C(sbcs) list.
      - A platform the collection's platform registry knows (C(docs/platforms.md)), or another collection's API
        platform as C(namespace.collection.name); another name fails naming the registered ones.
      - For a platform reached through an API (C(connection=api)) the action plugin runs the probe on the
        controller; otherwise the module runs where the task runs (the SBC host, or the controller with
        C(delegate_to)).
    type: str
  sbc_settle_timeout:
    description:
      - Seconds the SBC-view step may wait for peers the probe reached to become active in the SBC's own view
        (re-read every 0.5 s). C(0) reads the view once.
      - Default is the plan's health window (C(health.window_s)) plus one OPTIONS interval (C(health.interval_s))
        plus 1 s, at most 15 s.
    type: float
  thresholds:
    description: When verdicts turn to warn or fail.
    type: dict
    default: {}
    suboptions:
      min_healthy_peers:
        description: Healthy peers each region needs; fewer fails the region.
        type: int
        default: 1
      max_rtt_ms:
        description: A healthy peer slower than this is a warning.
        type: float
      cert_expiry_warn_days:
        description: A peer certificate expiring in fewer days is a warning.
        type: int
        default: 30
      fail_on_drift:
        description: Fail when the SBC's peer list drifts from DNS (otherwise warn).
        type: bool
        default: true
      fail_on_state_mismatch:
        description:
          - Fail when the SBC's peer states disagree with the probe (otherwise warn).
          - Independent of this, a peer the SBC does not see active is always at least a warning, and no active
            peer in the local trunk group (or none at all) always fails.
        type: bool
        default: false
      fail_on_out_of_range:
        description: Fail when an SRV target lies outside its region's /28 range(s) (otherwise warn).
        type: bool
        default: true
      fail_on_tls_verify:
        description: Fail when a peer certificate does not verify (otherwise warn).
        type: bool
        default: true
      fail_on_provisioning_ttl:
        description: Fail when the provisioning API TTL is above 60 s (otherwise warn).
        type: bool
        default: true
      require_mcp_reachable:
        description: Fail when no target of an MCP record is reachable (otherwise warn).
        type: bool
        default: true
  report_json:
    description: Write the report as JSON to this path (on the host the module runs on). Not written in check mode.
    type: path
  report_junit:
    description: Write a JUnit XML file to this path (one test suite per SRV record). Not written in check mode.
    type: path
  fail_on_verdict:
    description: Fail the task when the site verdict is C(fail). Set to false to print the summary first.
    type: bool
    default: true
attributes:
  action:
    description: Runs on the controller for an API platform, where the task runs otherwise.
    support: full
  check_mode:
    description: Probing only reads; in check mode the report files are not written.
    support: full
  diff_mode:
    description: Makes no change.
    support: none
notes:
  - The probe opens one TLS connection per peer and sends one OPTIONS; it never sends calls.
"""

EXAMPLES = r"""
- name: Build the routing plans
  commsgw.routing.routing_plan:
    hosts: "{{ hostvars | commsgw.routing.sbc_facts(groups['all']) }}"
  delegate_to: localhost
  run_once: true
  register: commsgw_plans

- name: Probe ACG from this SBC
  commsgw.routing.probe:
    plan: "{{ commsgw_plans.host_plans[inventory_hostname] }}"
    host: "{{ inventory_hostname }}"
    client_cert: /etc/sbc/tls/sbc.crt
    client_key: /etc/sbc/tls/sbc.key
    ca_bundle: /etc/sbc/tls/acg-ca.pem
    source_address: 203.0.113.10
    report_json: /var/tmp/commsgw-probe.json
    report_junit: /var/tmp/commsgw-probe.xml
  register: commsgw_probe

- name: Show the summary
  ansible.builtin.debug:
    msg: "{{ commsgw_probe.summary }}"
"""

RETURN = r"""
verdict:
  description: Site verdict, C(pass), C(warn) or C(fail).
  returned: always
  type: str
  sample: warn
summary:
  description: The short human summary, one line per site, region and peer, then the reasons.
  returned: always
  type: list
  elements: str
report:
  description:
    - The full report. Keys C(regions) and C(mcp) (one entry per SRV record with C(dns), C(peers), C(healthy),
      C(verdict), C(reasons)), C(provisioning_api), C(sbc_view) (C(destinations), C(missing), C(extra), C(stale),
      C(not_active), C(active_peers), C(state_mismatch), C(settle)), C(timings_ms), C(verdict), C(reasons).
  returned: always
  type: dict
junit:
  description: Path of the JUnit XML file, when written.
  returned: when O(report_junit) is set and not in check mode
  type: str
"""


from ansible_collections.commsgw.routing.plugins.module_utils.core.module_files import install_text
from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe
from ansible_collections.commsgw.routing.plugins.module_utils.probe.report import summary_lines, to_json, to_junit
from ansible_collections.commsgw.routing.plugins.module_utils.probe.settings import ProbeSettings, Thresholds
from ansible_collections.commsgw.routing.plugins.module_utils.probe.tls import tls_context
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import (
    PlatformProblem, main as generic_main, platform_and_options)
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import (
    ResolverSettings, dnspython_missing)

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
}


def _problem(params):
    """Bad input named by its option, before anything is probed; None when there is none."""
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
    result = {"changed": False, "verdict": report["verdict"], "summary": summary, "report": report}
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


def main():
    generic_main(ARGUMENT_SPEC, outcome, lambda module, path, text: install_text(module, path, text, create_dir=True))


if __name__ == "__main__":
    main()
