# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One wording for the progress of a wait (what it waits for, elapsed, limit), shown while a long wait
runs (the migration_wait action plugin prints it between slices) and returned as ``progress`` lines."""

from __future__ import annotations


def progress_line(what: str, elapsed_s: float, limit_s: float, detail: str = "") -> str:
    return "waiting for %s: %.1f s of %.1f s%s" % (what, elapsed_s, limit_s, ("; " + detail) if detail else "")
