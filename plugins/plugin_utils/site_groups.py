# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of a host's groups set ``commsgw_site`` themselves.

A host placed in two site groups gets the ``commsgw_site`` of whichever group Ansible merges last
(alphabetical order at equal depth), silently. Hostvars only show the winner, so this reads each
group's own variables the way Ansible's variable manager does: the inventory source's variables
and its ``group_vars`` (through the vars plugins). Playbook-adjacent group_vars are not consulted.
"""

import typing as t

from ansible.vars.plugins import get_vars_from_inventory_sources

SITE_VAR = "commsgw_site"


def site_groups(hostvars: t.Any, host_name: str,
                cache: t.Optional[t.Dict[str, t.Dict[str, t.Any]]] = None) -> t.Dict[str, t.Any]:
    """Group name -> the ``commsgw_site`` that group itself sets, for every group of ``host_name`` that
    sets one. ``cache`` (group name -> its own variables) spares re-reading a group for every host.
    Empty when hostvars is not Ansible's HostVars (e.g. a plain dict in a test)."""
    inventory = getattr(hostvars, "_inventory", None)
    loader = getattr(hostvars, "_loader", None)
    sources = getattr(inventory, "_sources", None)
    if inventory is None or loader is None or sources is None:
        return {}
    host = inventory.get_host(host_name)
    if host is None:
        return {}
    cache = {} if cache is None else cache
    found = {}
    for group in host.get_groups():
        if group.name == "all":
            continue
        if group.name not in cache:
            own = dict(group.get_vars())
            for stage in ("inventory", "task"):
                own.update(get_vars_from_inventory_sources(loader, sources, [group], stage))
            cache[group.name] = own
        if SITE_VAR in cache[group.name]:
            found[group.name] = cache[group.name][SITE_VAR]
    return found
