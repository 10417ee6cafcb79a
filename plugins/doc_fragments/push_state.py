# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options of the modules that change an SBC under its push lease (docs/production-hosts.md, issue 21)."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  state_dir:
    description:
      - The SBC's push state directory - backups, the restart or reloads still pending; the push lease is the
        file next to it named C(<state_dir>.lease). Root's, C(0700), and every directory above it root's and
        writable by nobody else, else the module fails naming it.
      - Default C(/var/lib/commsgw-routing/) followed by the configuration directory escaped as
        C(systemd-escape --path) does (C(/var/lib/commsgw-routing/etc-sbc) for C(/etc/sbc)), which is
        where every module of the collection and the SRV refresher look; set it only for tests.
    type: path
"""

    # The push modules of a host platform: a step of a push.
    LEASE = r"""
options:
  lease:
    description:
      - The run id of the push lease this step belongs to (RV(commsgw.routing.sbc_push_lease#module:run_id)); the
        lease is renewed. Without it the step runs only while no other run holds the lease.
      - Either way the step fails, naming the holder, while another run holds the lease.
    type: str
"""
