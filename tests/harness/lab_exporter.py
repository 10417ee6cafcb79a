# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's probe exporters (``scripts/lab``): where they answer and how they stop.

playbooks/exporter.yml runs one exporter per lab SBC in process mode (inventory/demo: configuration in
``<lab dir>/sbc/<host>/exporter-etc``, pid file ``<lab dir>/sbc/<host>/exporter.pid``); this module reads
those files, so it needs no inventory:

  python -m harness.lab_exporter --lab-dir .lab urls     one "host URL" line per running exporter
  python -m harness.lab_exporter --lab-dir .lab stop     stop them (SIGTERM, bounded wait, SIGKILL)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import typing as t
from pathlib import Path

PROGRAM = b"commsgw-probe-exporter"


def _pid(pid_file: Path) -> int:
    """The pid in ``pid_file`` when that process is a running exporter, else 0."""
    try:
        pid = int(pid_file.read_text().strip())
        return pid if PROGRAM in Path("/proc/%d/cmdline" % pid).read_bytes() else 0
    except (OSError, ValueError):
        return 0


def exporters(lab_dir: Path) -> list[tuple[str, str, int]]:
    """(host, status page URL, pid) of every exporter the lab started that is still running."""
    found = []
    for host_dir in sorted((lab_dir / "sbc").glob("*")):
        pid = _pid(host_dir / "exporter.pid")
        try:
            config = json.loads((host_dir / "exporter-etc" / "config.json").read_text())
        except (OSError, ValueError):
            continue
        listen = config["listen"]
        scheme = "https" if config.get("web_config_file") else "http"
        if pid:
            found.append((host_dir.name, "%s://%s:%d/" % (scheme, listen["address"], listen["port"]), pid))
    return found


def stop(lab_dir: Path, timeout_s: float = 10.0) -> int:
    for host, _url, pid in exporters(lab_dir):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _pid(lab_dir / "sbc" / host / "exporter.pid") == pid:
            time.sleep(0.1)
        if _pid(lab_dir / "sbc" / host / "exporter.pid") == pid:
            os.kill(pid, signal.SIGKILL)
        print("stopped the probe exporter of %s (pid %d)" % (host, pid), file=sys.stderr)
    return 0


def main(argv: t.Optional[t.Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="lab_exporter")
    parser.add_argument("--lab-dir", type=Path, required=True)
    parser.add_argument("step", choices=("urls", "stop"))
    args = parser.parse_args(argv)
    if args.step == "stop":
        return stop(args.lab_dir.resolve())
    for host, url, _pid_ in exporters(args.lab_dir.resolve()):
        print("%s %s" % (host, url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
