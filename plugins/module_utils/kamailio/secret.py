# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SBC's own secret (issue 21): the key of its dialog-name MACs and the token of its ping relay.

What only this Kamailio may know, so that nobody else can mint what it trusts:

* ``COMMSGW_DIALOG_HMAC_IPAD`` and ``COMMSGW_DIALOG_HMAC_OPAD``: the HMAC-SHA256 key ``K`` (256 bits) of
  the ``cgwmac`` the SBC adds next to a dialog's TLS name in its Record-Route (``cgwtls``), as HMAC's
  inner and outer keys: ``K`` padded with zeros to SHA-256's 64-byte block, XOR 0x36 and XOR 0x5c
  (hex). Kamailio has no HMAC of its own that is cheap (crypto_hmac_sha256 is OpenSSL 3's one-shot
  ``HMAC()``); with these, ``SHA-256(opad-key + SHA-256(ipad-key + message))`` is HMAC-SHA256(K,
  message) computed with its ``{s.sha256}`` (RFC 2104). A name comes back in a Route from the peer;
  it is believed only with the MAC the SBC itself computed over the name and the Call-ID
  (docs/kamailio-tls.md).
* ``COMMSGW_PING_TOKEN``: the user part of the From of the dispatcher's OPTIONS pings; the ping
  relay socket relays only OPTIONS carrying it (any local user can bind the ACG-facing address).

The file is a Kamailio preprocessor fragment, read by kamailio.cfg with ``import_file``::

    #!substdef "!COMMSGW_DIALOG_HMAC_IPAD!<128 hex digits>!"
    #!substdef "!COMMSGW_DIALOG_HMAC_OPAD!<128 hex digits>!"
    #!substdef "!COMMSGW_PING_TOKEN!<32 hex digits>!"

It is generated on the SBC host by ``commsgw.routing.kamailio_secret`` (never on the controller, never
in a rendered file, a diff or a backup), kept across restarts and pushes (dialogs outlive both) and
readable only by root and Kamailio's user (owner, mode 0400, in a root-owned directory outside the
configuration directory). ``import_file`` tolerates a missing file: a configuration rendered offline
still starts, and without the key it believes no dialog name and relays no ping.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import secrets
import stat
import typing as t

DIALOG_IPAD = "COMMSGW_DIALOG_HMAC_IPAD"
DIALOG_OPAD = "COMMSGW_DIALOG_HMAC_OPAD"
PING_TOKEN = "COMMSGW_PING_TOKEN"
DIALOG_KEY_BYTES = 32
_BLOCK_BYTES = 64  # SHA-256's block: HMAC pads its key to it
FILE_MODE = 0o400
DIR_MODE = 0o711  # Kamailio's user may open the file by its path, nobody may list or change the directory
_MAX_BYTES = 4096
_TEXT_RE = re.compile(r"\A# commsgw\.routing: [^\n]*\n#!substdef \"!%s!([0-9a-f]{128})!\"\n"
                      r"#!substdef \"!%s!([0-9a-f]{128})!\"\n#!substdef \"!%s![0-9a-f]{32}!\"\n\Z"
                      % (DIALOG_IPAD, DIALOG_OPAD, PING_TOKEN))


class SecretError(Exception):
    """The secret file or its directory is not what root may trust; the message says what and where."""


@dataclasses.dataclass
class SecretResult:
    changed: bool
    created: bool
    fixed: list[str]


def hmac_pads(key: bytes) -> tuple[bytes, bytes]:
    """HMAC-SHA256's inner and outer keys for ``key`` (RFC 2104): the key padded with zeros to the 64-byte
    block, XOR 0x36 and XOR 0x5c."""
    if len(key) > _BLOCK_BYTES:
        raise ValueError("an HMAC key longer than the block is hashed first; the dialog key never is")
    padded = key.ljust(_BLOCK_BYTES, b"\0")
    return bytes(b ^ 0x36 for b in padded), bytes(b ^ 0x5c for b in padded)


def new_secret_text() -> str:
    """A fresh secret file body: a 256-bit dialog key as HMAC's two padded keys, a 128-bit ping token, both
    from the OS's CSPRNG."""
    ipad_key, opad_key = hmac_pads(secrets.token_bytes(DIALOG_KEY_BYTES))
    return ("# commsgw.routing: this SBC's own secret, generated here; never copy it (docs/kamailio-tls.md)\n"
            "#!substdef \"!%s!%s!\"\n#!substdef \"!%s!%s!\"\n#!substdef \"!%s!%s!\"\n"
            % (DIALOG_IPAD, ipad_key.hex(), DIALOG_OPAD, opad_key.hex(), PING_TOKEN, secrets.token_hex(16)))


def dialog_key(text: str) -> t.Optional[bytes]:
    """The dialog key a secret file's text carries (its two padded keys made from one 256-bit key); None when
    the text is no valid secret file (e.g. one written before issue 25, with the key itself: replaced)."""
    match = _TEXT_RE.match(text)
    if not match:
        return None
    ipad_key = bytes.fromhex(match.group(1))
    key = bytes(b ^ 0x36 for b in ipad_key)
    if any(key[DIALOG_KEY_BYTES:]) or hmac_pads(key[:DIALOG_KEY_BYTES]) != (ipad_key, bytes.fromhex(match.group(2))):
        return None
    return key[:DIALOG_KEY_BYTES]


def is_secret_text(text: str) -> bool:
    return dialog_key(text) is not None


def ensure_secret(path: str, uid: int, check_mode: bool = False) -> SecretResult:
    """Make ``path`` a valid secret file owned by ``uid`` (group root, mode 0400) in a root-owned
    directory; an existing valid secret is kept as it is (its dialogs stay verifiable).

    Root acts only through descriptors: the directory is opened without following a symlink and must
    be root's and writable by nobody else; the file is opened with O_NOFOLLOW and fixed with
    fchown/fchmod; a new or broken one is written to a temporary name and renamed into place."""
    if not os.path.isabs(path) or path.endswith("/"):
        raise SecretError("%s: not an absolute file path" % path)
    directory, name = os.path.split(path)
    dir_fd = _open_dir(directory, check_mode)
    if dir_fd is None:  # check mode: the directory would be created, and the file in it
        return SecretResult(changed=True, created=True, fixed=[])
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except FileNotFoundError:
            if not check_mode:
                _write_new(dir_fd, name, uid)
            return SecretResult(changed=True, created=True, fixed=[])
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SecretError("%s is a symlink; remove it (the secret is never read through a link)" % path)
            raise SecretError("%s: %s" % (path, exc.strerror)) from exc
        try:
            fixed = _check_open_file(fd, path, uid)
            if "content" in fixed:
                if not check_mode:
                    _write_new(dir_fd, name, uid)
                return SecretResult(changed=True, created=False, fixed=fixed)
            if fixed and not check_mode:
                os.fchown(fd, uid, 0)
                os.fchmod(fd, FILE_MODE)
            return SecretResult(changed=bool(fixed), created=False, fixed=fixed)
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def _open_dir(directory: str, check_mode: bool) -> t.Optional[int]:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(directory, flags)
    except FileNotFoundError:
        if check_mode:
            return None
        os.mkdir(directory, DIR_MODE)  # the parent (e.g. /var/lib) is root's own
        fd = os.open(directory, flags)
        os.fchown(fd, 0, 0)
        os.fchmod(fd, DIR_MODE)
    except OSError as exc:
        raise SecretError("%s: not a directory root may use (%s)" % (directory, exc.strerror)) from exc
    info = os.fstat(fd)
    if info.st_uid != 0 or info.st_mode & 0o022:
        os.close(fd)
        raise SecretError("%s must belong to root and be writable by root only (owner uid %d, mode %04o): another "
                          "user could replace the secret" % (directory, info.st_uid, stat.S_IMODE(info.st_mode)))
    return fd


def _check_open_file(fd: int, path: str, uid: int) -> list[str]:
    """What is wrong with the open secret file: ``content`` (not a valid secret, or linked elsewhere),
    ``owner``, ``mode``; raises SecretError when it is not a regular file at all."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise SecretError("%s is not a regular file" % path)
    data = os.read(fd, _MAX_BYTES + 1)
    text = data.decode("ascii", "replace")
    fixed = []
    if info.st_nlink != 1 or len(data) > _MAX_BYTES or not is_secret_text(text):
        fixed.append("content")
    if info.st_uid != uid or info.st_gid != 0:
        fixed.append("owner")
    if stat.S_IMODE(info.st_mode) != FILE_MODE:
        fixed.append("mode")
    return fixed


def _write_new(dir_fd: int, name: str, uid: int) -> None:
    """A new secret under ``name``, written to a temporary file first and renamed over it."""
    tmp = ".%s.%s" % (name, secrets.token_hex(6))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        os.fchown(fd, uid, 0)
        os.fchmod(fd, FILE_MODE)
        os.write(fd, new_secret_text().encode("ascii"))
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(fd)
    os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.fsync(dir_fd)
