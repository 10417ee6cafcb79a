# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options shared by the modules that start or talk to Kamailio (docs/ansible-conventions.md)."""


class ModuleDocFragment:
    # migration_wait: only reads the running Kamailio.
    RUN_DIR = r"""
options:
  run_dir:
    description:
      - Kamailio's run directory, holding the jsonrpcs socket/FIFO when kamailio.cfg names them relatively.
    type: path
    default: /run/kamailio
"""

    # kamailio_config, kamailio_service (with RUN_DIR): how Kamailio is run.
    DOCUMENTATION = r"""
options:
  binary:
    description: The Kamailio binary (the role passes its rootfs wrapper when C(kamailio_rootfs) is set).
    type: path
    default: /usr/sbin/kamailio
  shared_memory_mb:
    description: Shared memory in MB (C(-m)); TLS needs more (C(commsgw_sbc.shared_memory_mb) in the inventory).
    type: int
    default: 128
  private_memory_mb:
    description:
      - Private memory per process in MB (C(-M), Kamailio's C(pkg) memory); C(commsgw_sbc.private_memory_mb) in the
        inventory. O(pkg_memory_mb) is the same option under Kamailio's name.
    type: int
    default: 8
    aliases: [pkg_memory_mb]
  memory_manager:
    description:
      - Kamailio's memory manager for shared and private memory (C(-x) and C(-X)); C(commsgw_sbc.memory_manager) in the
        inventory. V(tlsf) costs less CPU per call than Kamailio's default V(qm) (docs/kamailio-tls.md); V(qm) has
        Kamailio's memory debugging.
      - Omitted, the configuration started decides, by the C(#memory_manager=) line the renderer writes into
        kamailio.cfg, so that a configuration restored from a backup starts under the manager it ran under. A
        configuration without that line starts under Kamailio's default.
    type: str
    choices: [tlsf, qm, fm]
  run_as_user:
    description:
      - The user Kamailio runs as (the Debian unit's C(User=kamailio)); C(-u)/C(-g) of a process started here.
      - Empty runs it as root, which nothing facing the internet should use.
    type: str
"""
