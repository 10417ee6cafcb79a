# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: shipped_code
short_description: The module_utils files a program shipped to SBC hosts needs
version_added: 0.1.0
description:
  - Returns one item per file, named by its path under C(plugins/module_utils) (e.g. C(srv/lookup.py)),
    the entry module first, then every module_utils module it imports, directly or not, and the
    C(__init__.py) of each package among them (found by reading the imports, see C(plugins/module_utils/sbc/shipped.py)).
  - Fails when a shipped file imports a collection module without the plain fallback import the SBC
    host needs (there is no collection there).
options:
  _terms:
    description: Entry modules under C(plugins/module_utils), dotted and without C(.py), e.g. C(exporter.main).
    type: list
    elements: str
    required: true
  layout:
    description:
      - V(module_utils) names each file by its path under C(plugins/module_utils) (C(srv/lookup.py)); every shipped
        collection import needs its plain fallback import.
      - V(collection) names each file by its path under the collection's own layout
        (C(ansible_collections/commsgw/routing/plugins/module_utils/probe/run.py)); the program puts the directory they are
        installed in first on C(sys.path) and imports them by their collection path, so no fallback is needed (the
        probe exporter ships this way).
    type: str
    choices: [module_utils, collection]
    default: module_utils
"""

EXAMPLES = r"""
- name: Install a platform's SRV refresher and its libraries (a platform role names its refresher's module)
  ansible.builtin.copy:
    content: "{{ item.content }}"
    dest: "/usr/local/lib/commsgw/{{ item.name }}"
    mode: "0644"
  loop: "{{ query('commsgw.routing.shipped_code', refresher_module) }}"
  loop_control:
    label: "{{ item.name }}"

- name: The probe exporter and the probe, under the collection layout
  ansible.builtin.debug:
    msg: "{{ query('commsgw.routing.shipped_code', 'exporter.main', layout='collection') | map(attribute='name') }}"
"""

RETURN = r"""
_raw:
  description: One mapping per file.
  type: list
  elements: dict
  contains:
    name:
      description: File name, e.g. C(srv/lookup.py).
      type: str
    content:
      description: The file's text.
      type: str
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.shipped import (
    ShippedCodeError, shipped_files, shipped_tree)


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        layout = kwargs.get("layout", "module_utils")
        if layout not in ("module_utils", "collection"):
            raise AnsibleLookupError("layout: %r; expected module_utils or collection" % (layout,))
        ship = shipped_tree if layout == "collection" else shipped_files
        items = []
        seen = set()
        for term in terms:
            try:
                files = ship(str(term))
            except ShippedCodeError as exc:
                raise AnsibleLookupError(str(exc)) from exc
            for name, content in files.items():
                if name not in seen:
                    seen.add(name)
                    items.append({"name": name, "content": content})
        return items
