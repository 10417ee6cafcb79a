# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory of one lab SBC on loopback (plain-process Kamailio, one region over UDP, no ACG probe):
the cheapest onboardable lab, shared by tests/integration/test_push.py and test_drift.py, and its stop."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import typing as t
from pathlib import Path


def lab_inventory(tmp: Path, dns_address: str, host: str, domain: str, peers: str, acg: str, core: str,
                  core_next_hop: str, extra: t.Optional[t.Mapping[str, t.Any]] = None) -> Path:
    """Write ``tmp/inventory`` (the SBC's files live under ``tmp/live``); returns its hosts.yml.
    ``extra``: more group_vars/all.yml (tests/integration/test_ansible_runner.py turns the probe on)."""
    live = tmp / "live"
    inv = tmp / "inventory"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "hosts.yml").write_text(json.dumps({"all": {"children": {"acg_lab": {"children": {"site_lab": {
        "hosts": {host: {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "commsgw_sbc": {"acg_listen": {"address": acg, "port": 5060},
                            "core_listen": {"address": core, "port": 5060, "transport": "udp"},
                            "core_next_hop": core_next_hop,
                            "config_dir": str(live / "etc"), "run_dir": str(live / "run"),
                            "shared_memory_mb": 64}}}}}}}}}))
    (inv / "group_vars" / "acg_lab.yml").write_text(json.dumps({"commsgw_deployment": {
        "name": "lab", "type": "lab", "base_domain": domain, "management_region": "West Europe",
        "allow_non_public_ranges": True, "allow_plain_transport": True,
        "acg_transport": "udp",
        "service_regions": [{"name": "region1", "azure_region": "westeurope",
                             "hostname": "pstn-region1." + domain, "ip_ranges": [peers]}],
        "sites": [{"name": "lab", "service_region": "region1"}],
        "routing": {"options_interval_s": 2, "failure_threshold": 2, "recovery_threshold": 1,
                    "invite_timer_ms": 1500}}}))
    (inv / "group_vars" / "site_lab.yml").write_text(json.dumps({"commsgw_site": "lab",
                                                                 "commsgw_sbc_platform": "kamailio"}))
    (inv / "group_vars" / "all.yml").write_text(json.dumps({
        "kamailio_service_manager": "process",
        "kamailio_log_file": str(live / "kamailio.log"),
        "kamailio_work_dir": str(live / "work"),
        "kamailio_refresher": False,  # tests/integration/test_refresher.py covers it
        "commsgw_dns_nameservers": [dns_address],
        "commsgw_onboard_probe": False,  # no ACG peers run here; tests/integration/test_probe_*.py prove the probe
        **(extra or {}),
    }))
    return inv / "hosts.yml"


def stop_kamailio(pid_file: Path, timeout_s: float = 10.0) -> None:
    """SIGTERM the Kamailio of ``pid_file`` and wait until it is gone (nothing to do when it is not running)."""
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and os.path.exists("/proc/%d" % pid):
        time.sleep(0.1)
