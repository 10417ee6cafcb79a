#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: srv_audit
short_description: Resolve and audit the DNS SRV records of an ACG deployment
version_added: 0.1.0
description:
  - Resolves the C(_sip._tls.<regional FQDN>) SRV record of every service region (and the MCP record where the
    deployment has MCP) and the IPv4 addresses of every target.
  - Checks that every target address lies in the /28 range(s) of its region (R-07); MCP records may point into any
    range of the deployment, since each lists the other region's MCP too (R-18).
  - NXDOMAIN, an empty answer, a timeout, SERVFAIL, the RFC 2782 C(.) target ("service not available") and targets
    without an IPv4 address are each reported as an error naming the inventory field, the record, the kind of
    failure and the nameserver asked.
  - Optionally checks that the provisioning API record C(provapi.<base_domain>) is served with a TTL of at most
    60 s (R-21).
  - Refuses to audit a deployment that does not pass offline validation (run M(commsgw.routing.validate_inventory)
    first). Runs on the controller; makes no change.
author: commsgw.routing contributors (@commsgw)
requirements:
  - dnspython >= 2.0
extends_documentation_fragment:
  - commsgw.routing.read_only
  - commsgw.routing.dns
options:
  deployment:
    description: The deployment, as written in the inventory variable C(commsgw_deployment).
    type: dict
    required: true
  dns_port:
    aliases: [port]
    description: UDP/TCP port of O(nameservers). O(port) is its deprecated old name.
  dns_timeout:
    aliases: [timeout]
    description: Seconds one DNS lookup may take in total before it is reported as a timeout. O(timeout) is its deprecated old name.
  check_provisioning_ttl:
    description: Also check that C(provapi.<base_domain>) resolves with a TTL of at most 60 s (R-21).
    type: bool
    default: true
attributes:
  check_mode:
    description: Can run in check mode; the module only reads DNS, so the result is the same.
    support: full
"""

EXAMPLES = r"""
- name: Audit the SRV records of the deployment
  commsgw.routing.srv_audit:
    deployment: "{{ commsgw_deployment }}"
  register: commsgw_srv
  delegate_to: localhost
  run_once: true

- name: Ask a given nameserver, skip the provisioning API check (lab)
  commsgw.routing.srv_audit:
    deployment: "{{ commsgw_deployment }}"
    nameservers: [192.0.2.53]
    timeout: 5
    check_provisioning_ttl: false
"""

RETURN = r"""
answers:
  description:
    - SRV name to answer, for every record that resolved; the input of O(commsgw.routing.routing_plan#module:resolved).
  returned: always
  type: dict
  sample:
    _sip._tls.pstn-region1.contoso.commsgw.azure.com:
      name: _sip._tls.pstn-region1.contoso.commsgw.azure.com
      ttl: 60
      targets:
        - priority: 10
          weight: 50
          port: 5061
          target: sbc1.pstn-region1.contoso.commsgw.azure.com
          addresses: [20.82.160.17]
findings:
  description: Every finding as a mapping (a failed audit lists its errors in RV(problems) only).
  returned: success
  type: list
  elements: dict
  sample:
    - severity: error
      path: service_regions[1].hostname
      message: "SRV lookup of _sip._tls.pstn-region2.contoso.commsgw.azure.com via 192.0.2.53: the nameserver
        answered SERVFAIL [servfail]"
      expected: an SRV record with reachable targets (R-10)
      value: servfail
      rule: R-10
errors:
  description: Every error as one readable line (none on success).
  returned: success
  type: list
  elements: str
warnings_found:
  description: Every warning as one readable line (C(warnings) is reserved by Ansible for displayed warnings).
  returned: success
  type: list
  elements: str
problems:
  description: When the audit fails, every error, one per line (listed only here, so that the play shows each once).
  returned: failure
  type: str
"""


from ansible_collections.commsgw.routing.plugins.module_utils.core.controller_module import run_outcome_module
from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import problems_result
from ansible_collections.commsgw.routing.plugins.module_utils.srv.dns_settings import nameserver_problems
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import (
    ResolverSettings, dnspython_missing, resolve_deployment)
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import deployment_label, validate_deployment


ARGUMENT_SPEC = {
    "deployment": {"type": "dict", "required": True},
    "nameservers": {"type": "list", "elements": "str"},
    "dns_port": {"type": "int", "default": 53, "aliases": ["port"],
                 "deprecated_aliases": [{"name": "port", "version": "2.0.0", "collection_name": "commsgw.routing"}]},
    "dns_timeout": {"type": "float", "default": 2.0, "aliases": ["timeout"],
                    "deprecated_aliases": [{"name": "timeout", "version": "2.0.0", "collection_name": "commsgw.routing"}]},
    "check_provisioning_ttl": {"type": "bool", "default": True},
}


def _placeholder_sbcs(raw):
    """One stand-in SBC per site: this module audits DNS, not which hosts serve which site."""
    sites = raw.get("sites") if isinstance(raw, dict) else None
    if not isinstance(sites, list):
        return []
    return [Sbc(host="srv-audit-site%d" % index, site=site.get("name"))
            for index, site in enumerate(sites) if isinstance(site, dict)]


def outcome(params):
    """(failed, result); shared with the controller-side action plugin, which runs it in the controller's own
    process (the audit always ran on the controller; as a module it cost a Python start and AnsiballZ per run).
    Ansible shows ``warnings`` once; a failed result lists each problem once, in ``problems``."""
    missing = dnspython_missing()
    if missing:
        return True, {"changed": False, "msg": missing}
    if not 0 < params["dns_port"] < 65536:
        return True, {"changed": False, "msg": "dns_port must be 1-65535, got %d" % params["dns_port"]}
    if not params["dns_timeout"] > 0:
        return True, {"changed": False, "msg": "dns_timeout must be positive, got %s" % params["dns_timeout"]}
    if params["nameservers"] is not None:
        problems = nameserver_problems(params["nameservers"], "nameservers (commsgw_dns_nameservers)")
        if problems:
            return True, {"changed": False, "msg": "; ".join(problems)}

    raw = params["deployment"]
    deployment, invalid = validate_deployment(raw, _placeholder_sbcs(raw))
    label = deployment_label(raw.get("name"))
    # Validation advice worded as validate_inventory words it.
    shown = ["deployment %s: %s" % (label, finding.render()) for finding in invalid.warnings]
    if invalid.errors:
        lines = [f.render() for f in invalid.errors]
        return True, {"changed": False, "answers": {}, "warnings": shown,
                      "msg": "deployment %s does not pass validation (%d error(s), listed once below in problems); "
                             "fix it before the SRV audit" % (label, len(lines)),
                      "problems": "".join(line + "\n" for line in lines)}

    settings = ResolverSettings(nameservers=params["nameservers"] or None, port=params["dns_port"],
                                timeout_s=params["dns_timeout"])
    answers, findings = resolve_deployment(deployment, settings,
                                           check_provisioning_ttl=params["check_provisioning_ttl"])
    errors = [f.render() for f in findings if f.severity == "error"]
    warnings = [f.render() for f in findings if f.severity == "warning"]
    shown += warnings
    if errors:
        return True, dict(problems_result("SRV audit of deployment %s: %d error(s)" % (label, len(errors)), errors),
                          answers=answers, warnings=shown)
    return False, {"changed": False, "answers": answers, "warnings": shown,
                   "msg": "SRV audit of deployment %s: %d record(s) resolved, %d warning(s)"
                          % (label, len(answers), len(warnings)),
                   "findings": [f.as_dict() for f in findings], "errors": errors, "warnings_found": warnings}


def main():
    run_outcome_module(ARGUMENT_SPEC, outcome)


if __name__ == "__main__":
    main()
