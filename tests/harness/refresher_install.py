# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install the SRV refresher the way the kamailio role does: the script and the libraries its
vars/main.yml lists (``kamailio_refresher_libraries``), side by side, no collection."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "kamailio"
MODULE_UTILS = ROOT / "plugins" / "module_utils"


def refresher_libraries() -> list[str]:
    with open(ROLE / "vars" / "main.yml", encoding="utf-8") as handle:
        return list(yaml.safe_load(handle)["kamailio_refresher_libraries"])


def install_refresher(where: Path) -> Path:
    """Copy the script (as ``commsgw-srv-refresh``) and its libraries into ``where``; the script's path."""
    script = where / "commsgw-srv-refresh"
    shutil.copy(ROLE / "files" / "commsgw-srv-refresh.py", script)
    for name in refresher_libraries():
        shutil.copy(MODULE_UTILS / name, where / name)
    return script
