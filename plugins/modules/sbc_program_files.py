#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: sbc_program_files
short_description: Install a program's files on an SBC host in one step, under a directory only root may change
version_added: 0.2.0
description:
  - Makes O(dir) hold O(files) (the SRV refresher and the libraries it imports) in one round trip instead of
    one task per file. A file is rewritten only when its content or mode differs; O(remove) names files of
    older releases to remove.
  - O(dir) and every directory on the way must be root's and writable by root alone (walked without following
    a symlink); it is created 0755 when missing, sub-directories 0755. Files are written under a temporary name
    and renamed over, owned by root.
author: commsgw.routing contributors (@commsgw)
options:
  dir:
    description: The program's directory (absolute).
    type: path
    required: true
  files:
    description: The files, each C(name) (a relative path of plain names), C(content) (text) and C(mode) (octal string).
    type: list
    elements: dict
    required: true
  remove:
    description: Relative names to remove when present (files an older release installed).
    type: list
    elements: str
    default: []
  prune:
    description:
      - Relative directories whose C(*.py) files not among O(files) are removed (libraries an older release shipped
        and this one does not), at any depth; C(__pycache__) is not entered.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    description: Reports what would be written or removed; changes nothing.
    support: full
  diff_mode:
    description: The names written and removed (not their content).
    support: full
"""

EXAMPLES = r"""
- name: Install the refresher and its libraries
  commsgw.routing.sbc_program_files:
    dir: /usr/local/lib/commsgw-srv-refresh
    files:
      - {name: commsgw-srv-refresh, content: "{{ lookup('ansible.builtin.file', 'commsgw-srv-refresh.py') }}", mode: "0755"}
    remove: [refresher.py]
  become: true

- name: Install a program with its collection-shaped libraries, removing the ones it no longer ships
  commsgw.routing.sbc_program_files:
    dir: /usr/local/lib/commsgw-probe-exporter
    files: "{{ query('commsgw.routing.shipped_code', 'exporter.main', layout='collection') | map('combine', {'mode': '0644'}) }}"
    prune: [ansible_collections]
  become: true
"""

RETURN = r"""
changed_files:
  description: The names written (in check mode, that would be).
  returned: always
  type: list
  elements: str
removed:
  description: The names of O(remove) and the files under O(prune) removed (in check mode, that would be).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import UnsafePathError
from ansible_collections.commsgw.routing.plugins.module_utils.host.code_files import install


def main():
    module = AnsibleModule(
        argument_spec={
            "dir": {"type": "path", "required": True},
            "files": {"type": "list", "elements": "dict", "required": True},
            "remove": {"type": "list", "elements": "str", "default": []},
            "prune": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    files = {}
    for index, entry in enumerate(module.params["files"]):
        try:
            files[str(entry["name"])] = (str(entry["content"]).encode("utf-8", "surrogateescape"), int(str(entry["mode"]), 8))
        except (KeyError, TypeError, ValueError):
            module.fail_json(msg="files[%d]: expected name, content and an octal mode, got %s" % (index, sorted(entry)))
    try:
        outcome = install(module.params["dir"], files, module.params["remove"], module.check_mode,
                          prune=module.params["prune"])
    except (UnsafePathError, OSError) as exc:
        module.fail_json(msg="%s: %s" % (module.params["dir"], exc))
    changed = bool(outcome["changed"] or outcome["removed"])
    result = {"changed": changed, "changed_files": outcome["changed"], "removed": outcome["removed"]}
    if module._diff and changed:
        result["diff"] = {"before_header": module.params["dir"], "after_header": module.params["dir"],
                          "before": "".join("%s\n" % n for n in outcome["changed"] + outcome["removed"]),
                          "after": "".join("%s (new)\n" % n for n in outcome["changed"])}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
