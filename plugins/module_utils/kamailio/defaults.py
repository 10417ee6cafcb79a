# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's defaults, each written once: the settings validator, the platform options, the RPC client,
the modules and the SRV refresher on the SBC host (shipped: standard library only) all take them from here."""

from __future__ import annotations

import re
import typing as t

DEFAULT_CONFIG_DIR = "/etc/kamailio"  # the one default of commsgw_sbc.config_dir and the modules' config_dir
DEFAULT_RUN_DIR = "/run/kamailio"
# The account Kamailio runs as (Debian's unit: User=kamailio); kamailio_user / run_as_user everywhere.
DEFAULT_KAMAILIO_USER = "kamailio"
DEFAULT_KAMAILIO_GROUP = "kamailio"
# Kamailio's memory (-m / -M, MiB): commsgw_sbc's defaults and the modules' (kamailio_config, kamailio_service).
DEFAULT_SHARED_MEMORY_MB = 128  # the modules' default; the role passes the figure sized from the plan (kamailio.sizing)
DEFAULT_PRIVATE_MEMORY_MB = 8  # Kamailio's own default
# Kamailio's memory manager (-x shared, -X private): TLSF, not Kamailio's default qm, whose search of its free
# lists (qm_malloc) took 13 % of the generated configuration's CPU under TLS calls (perf); under TLSF it costs
# 0.77x to 0.86x its CPU per call under qm (issue 25, docs/kamailio-tls.md). qm keeps Kamailio's memory debugging.
MEMORY_MANAGERS = ("tlsf", "qm", "fm")
DEFAULT_MEMORY_MANAGER = "tlsf"

DEFAULT_RPC_TIMEOUT_S = 3.0
# The SBC's own secret (kamailio.secret), never inside config_dir.
DEFAULT_SECRET_FILE = "/var/lib/kamailio-commsgw/secret.cfg"


def memory_manager_args(manager: str) -> list[str]:
    """Kamailio's arguments for ``manager``: -x (shared memory) and -X (private memory), both set so that
    neither depends on the other's default."""
    if manager not in MEMORY_MANAGERS:
        raise ValueError("unknown Kamailio memory manager %r (known: %s)" % (manager, ", ".join(MEMORY_MANAGERS)))
    return ["-x", manager, "-X", manager]


# The line the renderer writes into kamailio.cfg (templates/kamailio/kamailio.cfg.j2) from commsgw_sbc.memory_manager.
_MEMORY_MANAGER_LINE = re.compile(r"^#memory_manager=([a-z]+)[ \t]*$", re.M)


def memory_manager_of(cfg_text: str) -> t.Optional[str]:
    """The memory manager a rendered kamailio.cfg names on its ``#memory_manager=`` line, so that a configuration
    starts under the manager it was rendered for wherever it is started (push, candidate, rollback to a backup);
    None when it names none (rendered before issue 25: it ran under Kamailio's default) or an unknown one."""
    found = _MEMORY_MANAGER_LINE.findall(cfg_text)
    return found[0] if len(found) == 1 and found[0] in MEMORY_MANAGERS else None
