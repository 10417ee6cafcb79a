# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/lab's lab directory wherever the checkout lives (scripts/lib/setup.sh: commsgw_lab_dir).

The lab's SBC paths go into Kamailio's configuration (validation refuses a space or a quote in them) and
hold its UNIX sockets (108 bytes at most): from a checkout whose path has a space, or is deep, the lab's
files go under /var/lib/commsgw-lab instead of the checkout's .lab."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _lab_dir(checkout: Path) -> str:
    """commsgw_lab_dir as setup.sh computes it when it lies in ``checkout``/scripts/lib."""
    (checkout / "scripts" / "lib").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "lib" / "setup.sh", checkout / "scripts" / "lib" / "setup.sh")
    proc = subprocess.run(["bash", "-c", 'source "$1" && commsgw_lab_dir', "sh",
                           str(checkout / "scripts" / "lib" / "setup.sh")],
                          capture_output=True, text=True, timeout=30, check=True)
    return proc.stdout.strip()


def test_a_short_plain_checkout_keeps_its_lab_in_dot_lab() -> None:
    short = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp"))  # pytest's tmp_path is too deep already
    try:
        assert _lab_dir(short / "clone") == str(short / "clone" / ".lab")
    finally:
        shutil.rmtree(short)


@pytest.mark.parametrize("name", ["ci space/clone", "it's/clone", "d" * 60 + "/clone"])
def test_a_checkout_that_cannot_hold_a_lab_keeps_it_under_var_lib(tmp_path: Path, name: str) -> None:
    checkout = tmp_path / name
    expected = "/var/lib/commsgw-lab/" + hashlib.sha256(str(checkout).encode()).hexdigest()[:12]
    assert _lab_dir(checkout) == expected
    # The longest socket path of the lab fits: <lab>/sbc/<host>/run/kamailio_rpc.sock (hosts of inventory/demo).
    assert len(expected + "/sbc/sbc-ams-1/run/kamailio_rpc.sock") < 108
