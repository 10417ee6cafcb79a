# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start a self-daemonising program with its output appended to a log file.

AnsibleModule.run_command cannot do this: it reads the child's stdout/stderr pipes until EOF, and a
daemon's background processes inherit those pipes, so EOF never comes. Here the output goes
straight to the log file and the program gets a session of its own, detached from the module.
"""

from __future__ import annotations

import os
import subprocess
import typing as t


def start_detached(argv: t.Sequence[str], log_path: str, timeout: float) -> t.Optional[int]:
    """Run argv until its foreground process exits (a daemon's parent exits once it has forked).

    Returns that exit status, or None when it is still running after ``timeout`` seconds; the caller
    then decides from the program's own health check whether it came up.
    """
    # O_NOFOLLOW: a symlink planted at the log's path never turns into root appending to its target.
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o640)
    with os.fdopen(fd, "ab") as log:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
