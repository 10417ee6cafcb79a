# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files written by the collection's modules, through Ansible's own file handling.

``install_text`` writes to a random name created with O_EXCL in the target's directory
(``tempfile.mkstemp``), moves it over the target with ``AnsibleModule.atomic_move`` (SELinux context,
cross-device fallbacks, a symlink at the target replaced and never followed) and then gives it the
task's file arguments (mode, owner, group, SELinux, attributes) with ``set_fs_attributes_if_different``.
The SRV refresher runs without Ansible on the SBC and keeps ``safe_files.write_text_atomic``.

``prune_backups`` keeps the newest ``keep`` backups of a push and never the one just made.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import typing as t


def install_text(module: t.Any, path: str, text: str, file_args: t.Optional[t.Mapping[str, t.Any]] = None,
                 create_dir: bool = False) -> None:
    """Replace ``path`` with ``text`` in one step, then apply ``file_args`` (from
    ``module.load_file_common_arguments``) to it. ``create_dir``: a missing directory is created (0755)."""
    if create_dir:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o755, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".commsgw-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        module.atomic_move(tmp, path, unsafe_writes=bool(module.params.get("unsafe_writes")))
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    if file_args:
        module.set_fs_attributes_if_different(dict(file_args, path=path), False)


def prune_backups(backup_dir: str, keep: int, current: str) -> list[str]:
    """Remove all but the newest ``keep`` backups (time-stamped directory names sort by age) and never
    ``current``, the backup of this run that a rollback needs, even with ``keep`` 0. Returns the removed."""
    current_name = os.path.basename(os.path.normpath(current))
    entries = sorted(e for e in os.listdir(backup_dir) if not e.startswith(".") and e != current_name)
    # The current backup counts as one of the kept ones.
    older = entries[:len(entries) - max(keep - 1, 0)]
    for old in older:
        shutil.rmtree(os.path.join(backup_dir, old), ignore_errors=True)
    return older
