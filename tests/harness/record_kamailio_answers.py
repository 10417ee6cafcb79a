# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Record what a real Kamailio answers for the platform contract tests (tests/unit/sbc/test_platform_contract.py).

Starts K1's lab (harness.kamailio.AcgLab: Knot DNS, SRV resolution, plan, render, the machine's Kamailio),
asks its jsonrpcs for ``dispatcher.list`` and ``permissions.subnetDump`` and writes the plan, the rendered
files and both answers as JSON:

    cd tests && PYTHONPATH=../.collections python -m harness.record_kamailio_answers \
        data/platforms/kamailio/runtime.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from harness.kamailio import AcgLab, Topology


def record(out: Path, block: int = 152) -> None:
    with tempfile.TemporaryDirectory(prefix="record-kamailio-") as tmp:
        lab = AcgLab(Path(tmp), Topology(block=block))
        try:
            lab.start()
            assert lab.kamailio is not None
            answers = {method: lab.kamailio.rpc(method) for method in ("dispatcher.list", "permissions.subnetDump")}
            data = {"platform": "kamailio", "version": lab.version, "plan": lab.plan, "settings": lab.settings,
                    "files": lab.files, "answers": answers}
        finally:
            lab.stop()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
