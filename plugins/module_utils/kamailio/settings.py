# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's own part of ``commsgw_sbc`` (the common part: ``sbc.settings``). Same flat keys as
before the split, so existing inventories stay valid:

``config_dir``            absolute path, default /etc/kamailio: every rendered file is referenced
                          by an absolute path under it.
``run_dir``               absolute path, default /run/kamailio: jsonrpcs FIFO/socket and ctl socket.
``shared_memory_mb``      default: sized from the plan (peers, TLS, processes) and ``expected_calls_per_s``
                          (``kamailio.sizing``, docs/kamailio-sizing.md); set it to override the rule.
``private_memory_mb``     default 8 (Kamailio's own default; measured use stays far below it).
``memory_manager``        tlsf (default), qm or fm: Kamailio's memory manager for shared and private memory
                          (-x/-X). TLSF is cheaper per call than Kamailio's default qm (docs/kamailio-tls.md);
                          qm has Kamailio's memory debugging.
``expected_calls_per_s``  default 500: the busiest call rate this SBC must take (calls set up per second,
                          both directions); shared memory is sized for it.
``udp_workers``           default 4: SIP worker processes per UDP socket.
``tcp_workers``           default 2. With TLS keep it low or use ECDSA client keys (docs/kamailio-notes.md:
                          RSA signatures with several TCP workers).
``allow_tls_on_unfixed_kamailio``  default false: the documented override to render TLS for a
                          Kamailio older than 5.7.5 (memory corruption under OpenSSL 3).
``options_timeout_ms``    default min(1000, options interval / 2): how long an OPTIONS probe
                          waits (the global tm fr_timer); keeps "taken out" within window + 1 s.
``log_level``             Kamailio ``debug`` level, default 2 (notice... errors).
``secret_file``           absolute path, default /var/lib/kamailio-commsgw/secret.cfg: the SBC's own
                          secret (dialog-name MAC key, ping relay token; ``kamailio.secret``), generated
                          on the host. Never inside ``config_dir``: that directory is copied to backups and
                          candidate trees and diffed.
``rpc_group``             group of Kamailio's jsonrpcs socket (mode 0660), default none (the group Kamailio
                          creates it with). The kamailio role sets it: a dedicated group holding Kamailio's user
                          and the SRV refresher's, so that the refresher may send RPCs without Kamailio's group.
"""

from __future__ import annotations

import re
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.findings import Findings
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (
    DEFAULT_CONFIG_DIR, DEFAULT_MEMORY_MANAGER, DEFAULT_PRIVATE_MEMORY_MB, DEFAULT_RUN_DIR, DEFAULT_SECRET_FILE,
    MEMORY_MANAGERS)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.sizing import DEFAULT_EXPECTED_CALLS_PER_S
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.fields import abs_path, bool_field, int_fields

_INT_RANGES: dict[str, tuple[int, int]] = {
    "shared_memory_mb": (64, 65536),
    "private_memory_mb": (4, 1024),
    "udp_workers": (1, 64),
    "tcp_workers": (1, 64),
    "options_timeout_ms": (100, 10000),
    "log_level": (-5, 3),
    "expected_calls_per_s": (1, 100000),
}
FIELDS = ("config_dir", "run_dir", "shared_memory_mb", "private_memory_mb", "udp_workers", "tcp_workers",
          "allow_tls_on_unfixed_kamailio", "options_timeout_ms", "log_level", "secret_file", "rpc_group",
          "expected_calls_per_s", "memory_manager")
_GROUP_NAME = re.compile(r"^(?:[a-z_][a-z0-9_-]{0,31}|[0-9]{1,10})$")


def parse_kamailio_settings(raw: t.Mapping[str, t.Any], base: str, tls: bool, findings: Findings) -> dict[str, t.Any]:
    """Kamailio's keys of ``commsgw_sbc`` complete with defaults; problems under ``base``."""
    del tls  # the contract's argument; memory is sized from the plan when rendering (kamailio.sizing)
    settings: dict[str, t.Any] = {
        "config_dir": abs_path(raw.get("config_dir"), base + ".config_dir", DEFAULT_CONFIG_DIR, findings),
        "run_dir": abs_path(raw.get("run_dir"), base + ".run_dir", DEFAULT_RUN_DIR, findings),
        "shared_memory_mb": None,  # sized from the plan when rendering (kamailio.sizing)
        "private_memory_mb": DEFAULT_PRIVATE_MEMORY_MB,
        "expected_calls_per_s": DEFAULT_EXPECTED_CALLS_PER_S,
        "udp_workers": 4,
        "tcp_workers": 2,
        "options_timeout_ms": None,  # derived from the plan's OPTIONS interval when rendering
        "log_level": 2,
    }
    int_fields(raw, base, _INT_RANGES, settings, findings)
    settings["allow_tls_on_unfixed_kamailio"] = bool_field(raw, "allow_tls_on_unfixed_kamailio", base, False, findings)
    settings["secret_file"] = abs_path(raw.get("secret_file"), base + ".secret_file", DEFAULT_SECRET_FILE, findings)
    config_dir = settings["config_dir"] or ""
    if settings["secret_file"] and (settings["secret_file"] + "/").startswith(config_dir.rstrip("/") + "/"):
        findings.error(base + ".secret_file", "lies inside config_dir %s" % config_dir,
                       "a path outside the configuration directory (it is copied to backups and diffed), e.g. "
                       + DEFAULT_SECRET_FILE, raw.get("secret_file"))
        settings["secret_file"] = DEFAULT_SECRET_FILE
    manager = raw.get("memory_manager")
    settings["memory_manager"] = DEFAULT_MEMORY_MANAGER if manager is None else manager
    if settings["memory_manager"] not in MEMORY_MANAGERS:
        findings.error(base + ".memory_manager", "is not a Kamailio memory manager",
                       "one of %s (default %s)" % (", ".join(MEMORY_MANAGERS), DEFAULT_MEMORY_MANAGER),
                       settings["memory_manager"])
        settings["memory_manager"] = DEFAULT_MEMORY_MANAGER
    settings["rpc_group"] = raw.get("rpc_group") or None
    if settings["rpc_group"] is not None and not (isinstance(settings["rpc_group"], str)
                                                  and _GROUP_NAME.match(settings["rpc_group"])):
        findings.error(base + ".rpc_group", "is not a group name", "a system group name such as commsgw-rpc",
                       settings["rpc_group"])
        settings["rpc_group"] = None
    return settings
