# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: audiocodes_render
short_description: Render an AudioCodes Mediant's routing rows from its site's routing plan
version_added: 0.2.0
description:
  - Returns C({commsgw.ini - text, incremental.cli - text}) for the site plan O(_input) and the host's
    C(commsgw_sbc) (validated by the inventory validation first). C(commsgw.ini) holds the rows this collection
    owns on the device as its ini tables, under a header naming the deployment, the site and the plan facts the
    device cannot enforce; C(incremental.cli) is the script creating them (C(docs/platforms/audiocodes.md)).
  - Every command and parameter comes from the documented grammar table; a value that does not fit it fails with
    the plan or inventory field that holds it.
positional: settings, host
options:
  _input:
    description: The site's routing plan, with resolved SRV records (the Mediant gets explicit addresses).
    type: dict
    required: true
  settings:
    description: The host's C(commsgw_sbc), as the validation returned it.
    type: dict
    required: true
  host:
    description: The inventory host (named in error messages).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Render the Mediant's rows
  ansible.builtin.set_fact:
    commsgw_sbc_artefacts: "{{ commsgw_sbc_plan | commsgw.routing.audiocodes_render(commsgw_sbc, inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: Artefact name to text.
  type: dict
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def audiocodes_render(plan, settings, host):
    from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.platform import AUDIOCODES
    from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import RenderError

    if not isinstance(plan, dict) or not isinstance(settings, dict):
        raise AnsibleFilterError("audiocodes_render expects the site plan and the host's commsgw_sbc as mappings")
    try:
        return AUDIOCODES.render(plan, settings, host=str(host))
    except RenderError as exc:
        raise AnsibleFilterError("cannot render %s for the Mediant: %s" % (host, exc)) from None


class FilterModule:
    def filters(self):
        return {"audiocodes_render": audiocodes_render}
