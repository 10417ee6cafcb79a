# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install a program's files (the SRV refresher and the libraries it imports) under a root-only directory in
one step (issue 25: one task per file cost about 7 s per SBC host on a first run or after an upgrade).

Root's directory, walked one name at a time without following a symlink and refused when another user owns or
may write any directory on the way (``core.safe_files.open_root_directory``); sub-directories 0755, files written
to a temporary name and renamed over, owned by root with the mode asked. A file is rewritten only when its
content or mode differs; names in ``remove`` (files of older releases) are removed when they are regular files.
"""

from __future__ import annotations

import os
import re
import stat
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import (
    UnsafePathError, open_root_child_directory, open_root_directory)
from ansible_collections.commsgw.routing.plugins.module_utils.host.swap import read_file, replace_file

_NAME = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z")
DIR_MODE = 0o755


def check_name(name: str) -> list[str]:
    """The path components of ``name``, a relative path of plain names (no '..', no empty or hidden part)."""
    parts = name.split("/")
    if not parts or not all(_NAME.match(part) for part in parts):
        raise UnsafePathError("%r is not a relative path of plain names" % name)
    return parts


def install(directory: str, files: t.Mapping[str, tuple[bytes, int]], remove: t.Sequence[str], check: bool,
            what: str = "the program's directory", prune: t.Sequence[str] = ()) -> dict[str, list[str]]:
    """Make ``directory`` hold ``files`` (name -> (content, mode)); ``changed``: the names written (or, with
    ``check``, that would be), ``removed``: the names of ``remove`` that were (would be) removed, and every
    ``*.py`` file under a directory of ``prune`` that is not among ``files`` (a library an older release shipped;
    bytecode caches are left alone: they follow the sources)."""
    for name in list(files) + list(remove) + list(prune):
        check_name(name)
    top = open_root_directory(directory, what, DIR_MODE, create=not check)
    if top is None:  # check mode, nothing installed yet
        return {"changed": sorted(files), "removed": []}
    opened: dict[str, t.Optional[int]] = {"": top}
    outcome: dict[str, list[str]] = {"changed": [], "removed": []}
    try:
        for name in sorted(files):
            parent = _parent(opened, name, directory, what, check)
            data, mode = files[name]
            if parent is None or _differs(parent, os.path.basename(name), data, mode):
                outcome["changed"].append(name)
                if not check and parent is not None:
                    replace_file(parent, os.path.basename(name), data, mode, owner=(0, 0))
        for name in remove:
            parent = _parent(opened, name, directory, what, True)
            if parent is not None and _remove_file(parent, os.path.basename(name), check):
                outcome["removed"].append(name)
        for name in prune:
            top_fd = _directory(opened, check_name(name), directory, what, True)
            if top_fd is not None:
                outcome["removed"].extend(_prune(top_fd, name, set(files), os.path.join(directory, name), what, check))
    finally:
        for fd in set(opened.values()):
            if fd is not None:
                os.close(fd)
    return outcome


def _parent(opened: dict[str, t.Optional[int]], name: str, directory: str, what: str, check: bool) -> t.Optional[int]:
    """The descriptor of ``name``'s directory (created 0755 unless ``check``); None when it does not exist yet."""
    return _directory(opened, check_name(name)[:-1], directory, what, check)


def _directory(opened: dict[str, t.Optional[int]], parts: list[str], directory: str, what: str,
               check: bool) -> t.Optional[int]:
    """The descriptor of the directory ``parts`` under the program's directory, opened once (``opened``)."""
    for depth in range(1, len(parts) + 1):
        key = "/".join(parts[:depth])
        if key in opened:
            continue
        parent = opened["/".join(parts[:depth - 1])]
        if parent is None:
            opened[key] = None
            continue
        shown = os.path.join(directory, key)
        child = open_root_child_directory(parent, parts[depth - 1], shown, what, None if check else DIR_MODE)
        if child is not None:
            if not check and stat.S_IMODE(os.fstat(child).st_mode) != DIR_MODE:
                os.fchmod(child, DIR_MODE)
        opened[key] = child
    return opened["/".join(parts)]


PRUNE_LIMIT = 10000  # entries walked under the pruned directories: a program's libraries, not a file system


def _prune(top: int, name: str, keep: t.AbstractSet[str], shown: str, what: str, check: bool) -> list[str]:
    """The ``*.py`` regular files or links under ``top`` (the directory ``name``) whose relative names are not in
    ``keep``, removed unless ``check``. Sub-directories are opened like the installed ones (no link followed, refused
    when another user may change them); ``__pycache__`` is not entered."""
    removed: list[str] = []
    pending = [(top, name, shown, False)]
    walked = 0
    try:
        while pending:
            fd, relative, path, owned = pending.pop()
            try:
                with os.scandir(fd) as entries:
                    listed = sorted((entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries)
                for leaf, is_dir in listed:
                    walked += 1
                    if walked > PRUNE_LIMIT:
                        raise UnsafePathError("%s: more than %d entries under %s; expected a program's libraries"
                                              % (what, PRUNE_LIMIT, shown))
                    child = relative + "/" + leaf
                    if is_dir:
                        if leaf != "__pycache__":
                            opened = open_root_child_directory(fd, leaf, os.path.join(path, leaf), what, None)
                            if opened is not None:
                                pending.append((opened, child, os.path.join(path, leaf), True))
                        continue
                    if leaf.endswith(".py") and child not in keep and _remove_file(fd, leaf, check):
                        removed.append(child)
            finally:
                if owned:  # ``top`` belongs to the caller's table of opened directories
                    os.close(fd)
    finally:
        for fd, dummy, dummy_path, owned in pending:  # left by an error
            if owned:
                os.close(fd)
    return sorted(removed)


def _remove_file(parent: int, leaf: str, check: bool) -> bool:
    """Remove ``leaf`` of ``parent`` when it is a regular file or a link (the link, never what it names), unless
    ``check``; True when it is (would be) removed. A directory or anything else stays."""
    try:
        info = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        return False
    if not check:
        os.unlink(leaf, dir_fd=parent)
    return True


def _differs(parent: int, leaf: str, data: bytes, mode: int) -> bool:
    try:
        info = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return True
    if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != mode or (info.st_uid, info.st_gid) != (0, 0):
        return True
    return read_file(parent, leaf) != data
