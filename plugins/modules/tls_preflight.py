#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: tls_preflight
short_description: Check the TLS certificate, key and CA files of an SBC host before the SBC uses them
version_added: 0.1.0
description:
  - Runs on the SBC host, before anything changes, so that a bad key or certificate fails with a clear message
    instead of a failed SBC start or refused TLS connections to Azure Communications Gateway. For an SBC platform
    whose TLS material is files on a Linux host (C(docs/platforms.md)); its role calls it.
  - Checks that every file exists and is a regular file (symlinks are followed and named), and that the user
    the SBC runs as (O(run_as_user)) can read it, judged from owner, group, mode bits and that user's groups,
    including search (x) permission on every parent directory. POSIX ACLs are not evaluated (a warning says so).
  - Checks that the private key grants nothing to other users, is not encrypted and belongs to the certificate, and
    that a key its group may read has no member in that group besides O(run_as_user), O(key_readers) (or O(key_group_leaving)).
  - Checks that the first (leaf) certificate is valid now and warns when it expires within
    O(expiry_warning_days) days.
  - Checks that O(ca_bundle) loads as a CA file and that the certificate file verifies up to a root in
    O(chain_ca), through a TLS handshake in memory.
  - Must read the files, so it normally runs with C(become). Standard library only on the host. Makes no change and
    never returns key material.
author: commsgw.routing contributors (@commsgw)
extends_documentation_fragment:
  - commsgw.routing.read_only
options:
  certificate:
    description: The SBC's certificate file (PEM), leaf first, then every intermediate.
    type: path
    required: true
  private_key:
    description: The SBC's private key file (PEM, unencrypted).
    type: path
    required: true
  ca_bundle:
    description: The CA file the SBC trusts for ACG's certificates (PEM).
    type: path
    required: true
  chain_ca:
    description:
      - A CA file (PEM) holding the root that ACG trusts for the SBC's certificate; the chain check verifies
        O(certificate) against it.
      - Defaults to O(ca_bundle).
    type: path
  run_as_user:
    description: The user the SBC runs as (the platform role's own variable); readability of every file is judged for this user.
    type: str
    required: true
  key_group_leaving:
    description:
      - Accounts the same run takes out of the private key's group before the SBC restarts; they do not count as
        other members of it (a platform role whose earlier releases put another account in the SBC's group).
    type: list
    elements: str
    default: []
  key_readers:
    description:
      - Accounts that may read the private key through its group besides O(run_as_user), because a service of their
        own needs it (the user of this collection's probe exporter, which sends its OPTIONS over mutual TLS with the
        SBC's certificate). Anyone else in the key's group is an error.
    type: list
    elements: str
    default: []
  expiry_warning_days:
    description: Warn when the certificate expires within this many days.
    type: int
    default: 30
attributes:
  check_mode:
    description: Runs in check mode too; the module only reads, so the result is the same.
    support: full
"""

EXAMPLES = r"""
- name: Check the TLS files before configuring the SBC
  commsgw.routing.tls_preflight:
    certificate: /etc/sbc/tls/sbc.crt
    private_key: /etc/sbc/tls/sbc.key
    ca_bundle: /etc/sbc/tls/acg-ca.pem
    chain_ca: /etc/sbc/tls/operator-root.pem
    run_as_user: sbc
  become: true

- name: Another layout; warn 60 days ahead
  commsgw.routing.tls_preflight:
    certificate: /etc/ssl/sbc/chain.pem
    private_key: /etc/ssl/private/sbc.key
    ca_bundle: /etc/ssl/certs/DigiCert_Global_Root_G2.pem
    run_as_user: sip
    expiry_warning_days: 60
  become: true
"""

RETURN = r"""
ok:
  description: Whether no check failed (the module fails otherwise).
  returned: always
  type: bool
errors:
  description: Every failed check as one line naming the option, the file, what is wrong and what is expected.
  returned: always
  type: list
  elements: str
  sample:
    - "private_key /etc/sbc/tls/sbc.key: user sbc (groups sbc) cannot read it (mode 0600, owner root,
      group root); expected read access for sbc, e.g. chown root:sbc /etc/sbc/tls/sbc.key &&
      chmod 0640 /etc/sbc/tls/sbc.key"
warnings_found:
  description: Every warning as one line (C(warnings) is reserved by Ansible for displayed warnings).
  returned: always
  type: list
  elements: str
certificate:
  description: The leaf certificate, when it could be decoded.
  returned: always
  type: dict
  contains:
    subject:
      description: The subject's common name.
      type: str
    san:
      description: The DNS names of the subjectAltName extension.
      type: list
      elements: str
    issuer:
      description: The issuer's common name.
      type: str
    not_before:
      description: Start of validity, ISO 8601 UTC.
      type: str
    not_after:
      description: End of validity, ISO 8601 UTC.
      type: str
    days_left:
      description: Whole days until O(certificate) expires (negative once expired).
      type: int
  sample:
    subject: sbc1.operator.example
    san: [sbc1.operator.example]
    issuer: Operator Root CA
    not_before: "2026-01-01T00:00:00Z"
    not_after: "2027-01-01T00:00:00Z"
    days_left: 180
checked:
  description:
    - What was examined, for the record; C(key_matches_certificate) and C(chain_verified) are null when the check
      could not run because an earlier one failed.
  returned: always
  type: dict
  sample:
    run_as_user: {name: sbc, uid: 107, gid: 113, groups: [sbc]}
    chain_ca: /etc/sbc/tls/operator-root.pem
    key_matches_certificate: true
    chain_verified: true
    files:
      private_key:
        path: /etc/sbc/tls/sbc.key
        resolved: /etc/sbc/tls/sbc.key
        symlink: false
        mode: "0640"
        owner: root
        group: sbc
        readable_by_run_as_user: true
"""


from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.tls.preflight import check_tls_files


def main():
    module = AnsibleModule(
        argument_spec={
            "certificate": {"type": "path", "required": True},
            "private_key": {"type": "path", "required": True},
            "ca_bundle": {"type": "path", "required": True},
            "chain_ca": {"type": "path"},
            "run_as_user": {"type": "str", "required": True},
            "expiry_warning_days": {"type": "int", "default": 30},
            # Account names, not a secret.
            "key_group_leaving": {"type": "list", "elements": "str", "default": [], "no_log": False},
            "key_readers": {"type": "list", "elements": "str", "default": [], "no_log": False},
        },
        supports_check_mode=True,
    )
    params = module.params
    if params["expiry_warning_days"] < 0:
        module.fail_json(msg="expiry_warning_days must be 0 or more, got %d" % params["expiry_warning_days"])

    found = check_tls_files(params["certificate"], params["private_key"], params["ca_bundle"],
                            chain_ca=params["chain_ca"], run_as_user=params["run_as_user"],
                            expiry_warning_days=params["expiry_warning_days"],
                            key_group_leaving=params["key_group_leaving"] + params["key_readers"]).as_dict()
    for line in found["warnings"]:
        module.warn(line)
    result = {"changed": False, "ok": found["ok"], "errors": found["errors"], "warnings_found": found["warnings"],
              "certificate": found["certificate"], "checked": found["checked"]}
    subject = "certificate %s with key %s (run as %s)" % (params["certificate"], params["private_key"],
                                                          params["run_as_user"])
    if found["errors"]:
        module.fail_json(msg="TLS preflight failed for %s: %d error(s):\n%s"
                         % (subject, len(found["errors"]), "\n".join(found["errors"])), **result)
    module.exit_json(msg="TLS preflight passed for %s: %s day(s) left, %d warning(s)"
                     % (subject, found["certificate"].get("days_left"), len(found["warnings"])), **result)


if __name__ == "__main__":
    main()
