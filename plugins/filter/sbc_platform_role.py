# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters that hand a host's SBC to its platform's role: sbc_platform_role and sbc_platform_name, documented
in sbc_platform_role.yml and sbc_platform_name.yml (two filters of one file, as ansible.builtin's core filters)."""

# Imported when a filter runs, not when the file loads: to find any one commsgw.routing filter, Ansible imports
# every filter file of the collection, in the worker it forks for each task and host (docs/rerun.md).
# pylint: disable=import-outside-toplevel


def sbc_platform_role(name):
    from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_filter import filter_platform

    return filter_platform(name).role


def sbc_platform_name(name):
    from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_filter import filter_platform

    return filter_platform(name).name


def sbc_platform_connection(name):
    from ansible_collections.commsgw.routing.plugins.plugin_utils.platform_filter import filter_platform

    return filter_platform(name).connection


class FilterModule:
    def filters(self):
        return {"sbc_platform_role": sbc_platform_role, "sbc_platform_name": sbc_platform_name,
                "sbc_platform_connection": sbc_platform_connection}
