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
  result_from_read:
    description:
      - The probe that the SBC platform's read ran in this run, in the same round trip, because it found the SBC as
        its last push left it (C(commsgw_sbc_probe_of_read), set by the platform's render step and emptied by its
        apply step when it pushes; C(docs/rerun.md)).
      - Returned as this task's result, without contacting the SBC again, when it was run with the same options
        (its C(options_digest)), passed (C(pass) or C(warn)), and no report file is asked for. Otherwise the probe
        runs live as without it.
    type: dict
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
probed_with_read:
  description: True when the result is O(result_from_read)'s, the probe the platform's read ran in this run.
  returned: always
  type: bool
junit:
  description: Path of the JUnit XML file, when written.
  returned: when O(report_junit) is set and not in check mode
  type: str
"""


from ansible_collections.commsgw.routing.plugins.module_utils.core.module_files import install_text
from ansible_collections.commsgw.routing.plugins.module_utils.probe.module import ARGUMENT_SPEC, outcome
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.generic_module import main as generic_main


def main():
    generic_main(ARGUMENT_SPEC, outcome, lambda module, path, text: install_text(module, path, text, create_dir=True))


if __name__ == "__main__":
    main()
