# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a push or a rollback finds deployed on the SBC host (commsgw.routing.kamailio_config), read by
directory descriptor: the peer list from the refresher's peers/ directory, reached without following a
link, since the refresher's user owns that directory and may plant one there."""

from __future__ import annotations

import os
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import read_file
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import IN_PEERS_DIR, PEERS_SUBDIR


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def _open_dir(path: str, dir_fd: t.Optional[int] = None) -> t.Optional[int]:
    """A descriptor of the configuration directory, or of its subdirectory ``path`` through ``dir_fd`` without
    following a link (None when it does not exist yet)."""
    try:
        if dir_fd is None:
            return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


def read_deployed(config_dir: str, names: t.Iterable[str],
                  check: t.Iterable[str] = ()) -> tuple[dict[str, t.Optional[bytes]], list[str]]:
    """({name: bytes or None} of the deployed ``names``, the names of ``check`` that exist at all)."""
    config_fd = _open_dir(config_dir)
    peers_fd = _open_dir(PEERS_SUBDIR, config_fd) if config_fd is not None else None

    def fd_of(name: str) -> t.Optional[int]:
        return peers_fd if name in IN_PEERS_DIR else config_fd

    try:
        data = {}
        for name in names:
            fd = fd_of(name)
            data[name] = read_file(fd, name) if fd is not None else None
        present = []
        for name in check:
            fd = fd_of(name)
            if fd is not None and _exists(fd, name):
                present.append(name)
        return data, present
    finally:
        for fd in (peers_fd, config_fd):
            if fd is not None:
                os.close(fd)
