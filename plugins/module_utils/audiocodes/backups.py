# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the controller keeps for each Mediant, under the platform option ``state_dir`` (default
``~/.local/state/commsgw-routing/audiocodes``), one directory per device (its API host and port):

``<UTC time>-<sha256 prefix>.ini``  the device's ini as it was before each change this controller made: what a
                                    rollback restores (``push.restore``); the newest ``KEEP`` are kept.
``hold``                            the migration hold: while it exists, only the run holding its token pushes.

The ini may carry the device's own secrets, so the directories are 0700 and the files 0600, owned by the
controller user; nothing is followed through a link (the device directory is created, never trusted, and files
are written under a temporary name and renamed).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import socket
import stat
import time
import typing as t
import urllib.parse

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.platform import DEFAULT_STATE_DIR

KEEP = 20
HOLD = "hold"
HOLD_STALE_S = 6 * 3600  # a hold older than a migration can take was left by a run that died
_BACKUP = re.compile(r"\A[0-9]{8}T[0-9]{6}Z-[0-9a-f]{12}\.ini\Z")


class HoldError(RuntimeError):
    pass


def device_dir(options: t.Mapping[str, t.Any]) -> str:
    """The device's directory (created 0700); refused when it, or ``state_dir``, is a link or not ours."""
    parsed = urllib.parse.urlsplit(str(options["url"]))
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", "%s_%s" % (parsed.hostname or "device", parsed.port or 443))
    root = os.path.expanduser(str(options.get("state_dir") or DEFAULT_STATE_DIR))
    os.makedirs(root, mode=0o700, exist_ok=True)
    path = os.path.join(root, name)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    for checked in (root, path):
        info = os.lstat(checked)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise OSError("%s is not a directory of the controller user (a link, or another user's): refusing to "
                          "keep device backups there" % checked)
    os.chmod(path, 0o700)
    return path


def _write(path: str, text: str) -> None:
    temp = "%s.%s.tmp" % (path, secrets.token_hex(4))
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)


def save(options: t.Mapping[str, t.Any], ini_text: str) -> str:
    """Keep ``ini_text`` as the newest backup of the device; its path."""
    directory = device_dir(options)
    digest = hashlib.sha256(ini_text.encode("utf-8")).hexdigest()[:12]
    path = os.path.join(directory, "%s-%s.ini" % (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()), digest))
    _write(path, ini_text)
    for old in _backups(directory)[:-KEEP]:
        os.unlink(os.path.join(directory, old))
    return path


def _backups(directory: str) -> list[str]:
    return sorted(name for name in os.listdir(directory) if _BACKUP.match(name))


def latest(options: t.Mapping[str, t.Any]) -> str:
    directory = device_dir(options)
    found = _backups(directory)
    return os.path.join(directory, found[-1]) if found else ""


def read(options: t.Mapping[str, t.Any], path: str) -> str:
    """A backup of this device, by the path ``save`` returned (nothing outside the device's directory)."""
    directory = device_dir(options)
    if os.path.dirname(os.path.abspath(path)) != directory or not _BACKUP.match(os.path.basename(path)):
        raise OSError("%s is not a backup of %s (expected a file of %s)" % (path, options["url"], directory))
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, encoding="utf-8") as handle:
        return handle.read()


def _hold_path(options: t.Mapping[str, t.Any]) -> str:
    return os.path.join(device_dir(options), HOLD)


def holder(options: t.Mapping[str, t.Any]) -> t.Optional[dict[str, t.Any]]:
    """The current hold ({token, owner, since}) or None; a hold older than HOLD_STALE_S counts as none."""
    try:
        fd = os.open(_hold_path(options), os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, encoding="utf-8") as handle:
        try:
            value = json.load(handle)
        except ValueError:
            value = {}
    if not isinstance(value, dict) or time.time() - float(value.get("since") or 0) > HOLD_STALE_S:
        return None
    return value


def hold(options: t.Mapping[str, t.Any]) -> str:
    """Take the device's hold; its token. HoldError when another run holds it."""
    current = holder(options)
    if current is not None:
        raise HoldError("%s is held for a migration by %s since %s" % (
            options["url"], current.get("owner"), time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                time.gmtime(float(current.get("since") or 0)))))
    token = secrets.token_hex(16)
    _write(_hold_path(options), json.dumps({"token": token, "owner": "%s pid %d" % (socket.gethostname(), os.getpid()),
                                            "since": time.time()}))
    return token


def check(options: t.Mapping[str, t.Any], token: t.Optional[str]) -> None:
    """HoldError unless the device is free or held with ``token``."""
    current = holder(options)
    if current is not None and current.get("token") != token:
        raise HoldError("%s is held for a migration by %s: not pushing (the migration releases it)"
                        % (options["url"], current.get("owner")))


def release(options: t.Mapping[str, t.Any], token: str) -> bool:
    current = holder(options)
    if current is None or current.get("token") != token:
        return False
    os.unlink(_hold_path(options))
    return True
