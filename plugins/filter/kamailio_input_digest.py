# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: kamailio_input_digest
short_description: The digest of everything the controller gives one Kamailio push
version_added: 0.2.0
description:
  - sha256 over the rendered files, the variables the kamailio role's push reads and the collection's own
    code (its plugins and roles). The role records it after a push that ended well and skips the next push
    when the digest is the same and the SBC host is as recorded (C(commsgw.routing.kamailio_converged),
    C(docs/rerun.md)).
positional: variables
options:
  _input:
    description: The rendered files (name to content).
    type: dict
    required: true
  variables:
    description: The push's variables (name to templated value).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Digest this push's input
  ansible.builtin.set_fact:
    kamailio_input_digest: "{{ kamailio_files | commsgw.routing.kamailio_input_digest({'commsgw_sbc': commsgw_sbc}) }}"
"""

RETURN = r"""
_value:
  description: The hex sha256.
  type: str
"""

import os

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel

# plugins/filter/<this file> -> the collection's root
_COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kamailio_input_digest(files, variables):
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.push_input import code_digest, input_digest

    if not isinstance(files, dict) or not isinstance(variables, dict):
        raise AnsibleFilterError("kamailio_input_digest expects the rendered files and the variables as mappings")
    return input_digest(files, variables, code_digest(_COLLECTION_ROOT))


class FilterModule:
    def filters(self):
        return {"kamailio_input_digest": kamailio_input_digest}
