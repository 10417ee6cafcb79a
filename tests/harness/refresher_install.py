# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install the SRV refresher the way the kamailio role does: the script and the libraries
module_utils/shipped.py assembles (the role's lookup commsgw.routing.shipped_code), side by side,
no collection."""

from __future__ import annotations

import shutil
from pathlib import Path

from ansible_collections.commsgw.routing.plugins.module_utils.sbc.shipped import shipped_files

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "kamailio"


def refresher_libraries() -> list[str]:
    """File names of the refresher's libraries, as the role installs them."""
    return list(shipped_files("kamailio.refresher"))


def install_refresher(where: Path) -> Path:
    """Write the script (as ``commsgw-srv-refresh``) and its libraries into ``where``; the script's path."""
    script = where / "commsgw-srv-refresh"
    shutil.copy(ROLE / "files" / "commsgw-srv-refresh.py", script)
    for name, text in shipped_files("kamailio.refresher").items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text, encoding="utf-8")
    return script
