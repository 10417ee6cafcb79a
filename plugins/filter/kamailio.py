# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
name: kamailio_files
short_description: Render one SBC's Kamailio configuration files from its routing plan
version_added: 0.1.0
description:
  - Returns a mapping of file name to content for the SBC's configuration directory
    (C(kamailio.cfg), C(dispatcher.list), C(address.list), C(commsgw-srv.json), and C(tls.cfg) for TLS
    deployments).
  - Every routing decision comes from the plan; the host's C(commsgw_sbc) settings give sockets, paths
    and sizing. Fails with a clear message when the plan cannot be rendered (unresolved SRV records, a
    target outside the deployment's ranges, TLS on a Kamailio older than 5.7.5 without the override).
positional: settings, version, host
options:
  _input:
    description: The site's routing plan (from C(commsgw.routing.routing_plan)).
    type: dict
    required: true
  settings:
    description: The host's C(commsgw_sbc) variable (raw or already normalised).
    type: dict
    required: true
  version:
    description: The target's Kamailio version, for example C(5.6.3) or C(6.0.1).
    type: str
    required: true
  host:
    description:
      - The inventory host the files are for (normally C(inventory_hostname)); named in the files' header
        and in errors. Without it, the settings' C(host) key, else C(sbc).
    type: str
    required: false
"""

EXAMPLES = r"""
- name: Write the rendered files
  ansible.builtin.copy:
    dest: "{{ commsgw_render_dir }}/{{ inventory_hostname }}/{{ item.key }}"
    content: "{{ item.value }}"
  loop: "{{ plan | commsgw.routing.kamailio_files(commsgw_sbc, '5.6.3', inventory_hostname) | dict2items }}"
"""

RETURN = r"""
_value:
  description: File name (relative to the configuration directory) to file content.
  type: dict
"""

from ansible.errors import AnsibleFilterError

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def kamailio_files(plan, settings, version, host=None):
    from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import (
        KamailioRenderError, render_kamailio)

    if not isinstance(plan, dict) or not isinstance(settings, dict):
        raise AnsibleFilterError("kamailio_files expects a plan mapping and a settings mapping")
    try:
        return render_kamailio(plan, settings, str(version), str(host) if host else None)
    except KamailioRenderError as exc:
        raise AnsibleFilterError("kamailio_files: %s" % exc)


class FilterModule:
    def filters(self):
        return {"kamailio_files": kamailio_files}
