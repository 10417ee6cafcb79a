# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Talking to a running Kamailio: its RPC endpoints and a JSON-RPC client.

Standard library only (and ``kamailio.defaults``): this file is also copied to
the SBC host next to the SRV refresher (``commsgw-srv-refresh``), which runs there without Ansible.

* ``JsonRpc``: Kamailio's ``jsonrpcs`` module over its UNIX datagram socket or its FIFO, the two
  transports that need no HTTP listener (``dispatcher.reload``, ``permissions.addressReload``,
  ``core.version``).
* ``rpc_endpoints``: where a rendered ``kamailio.cfg`` puts those endpoints.

Proving that a candidate configuration starts is ``kamailio.candidate`` (controller-pushed modules only).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
import pwd
import re
import secrets
import socket
import stat
import sys
import time
import typing as t

try:  # the collection's path first, then a plain import next to the SRV refresher on the SBC host
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (
        DEFAULT_KAMAILIO_USER, DEFAULT_RUN_DIR)
except ImportError:  # pragma: no cover - on the SBC host (sbc/shipped.py ships it)
    from kamailio.defaults import DEFAULT_KAMAILIO_USER, DEFAULT_RUN_DIR  # type: ignore

# jsonrpcs defaults (both transports are on unless the cfg says otherwise).
DEFAULT_SOCKET_NAME = "kamailio_rpc.sock"
DEFAULT_FIFO_NAME = "kamailio_rpc.fifo"

_MODPARAM_RE = re.compile(r'^\s*modparam\(\s*"jsonrpcs"\s*,\s*"(?P<name>[a-z_]+)"\s*,\s*"?(?P<value>[^")]*)"?\s*\)',
                          re.MULTILINE)
_LISTEN_RE = re.compile(r'^\s*(?:listen|socket)\s*=\s*(?:(?:udp|tcp|tls|sctp):)?\[?(?P<addr>[0-9.]+)\]?(?::\d+)?',
                        re.MULTILINE)


class RpcError(Exception):
    """The RPC could not be delivered, timed out or Kamailio answered with an error."""


@dataclasses.dataclass(frozen=True)
class RpcEndpoints:
    socket: t.Optional[str]
    fifo: t.Optional[str]
    fifo_reply_dir: str = "/tmp"
    # Other names Kamailio knows its socket by (the path it bound inside its own mount namespace).
    socket_aliases: t.Tuple[str, ...] = ()

    def relocated(self, old_dir: str, new_dir: str) -> "RpcEndpoints":
        """The same endpoints with ``old_dir`` (the live run dir) replaced by ``new_dir``."""
        def move(path: t.Optional[str]) -> t.Optional[str]:
            if path and (path == old_dir or path.startswith(old_dir.rstrip("/") + "/")):
                return new_dir.rstrip("/") + path[len(old_dir.rstrip("/")):]
            return path
        aliases = self.socket_aliases + ((self.socket,) if self.socket and move(self.socket) != self.socket else ())
        return RpcEndpoints(move(self.socket), move(self.fifo), move(self.fifo_reply_dir) or "/tmp", aliases)

    def socket_names(self) -> t.Tuple[str, ...]:
        """The sender addresses a genuine reply can come from (Kamailio answers from its own socket)."""
        return ((self.socket,) if self.socket else ()) + self.socket_aliases


_DIRECTIVE_RE = re.compile(r"^\s*(?:#!|!!)(?P<word>ifdef|ifndef|else|endif|define|trydef|redefine|undef)\b"
                           r"\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)?")


def active_text(cfg_text: str, defined: t.Iterable[str] = ()) -> str:
    """The lines of a kamailio.cfg that Kamailio's preprocessor keeps (``#!ifdef`` blocks resolved).

    Why: a stock configuration (Debian's) sets jsonrpcs and ctl parameters inside blocks such as
    ``#!ifdef WITH_JSONRPC`` that are not active; reading them would point the RPC client at
    endpoints the running Kamailio never opened. ``defined`` stands for ``-A NAME`` options.
    """
    names = set(defined)
    stack: list[tuple[bool, bool]] = []  # (enclosing block active, this branch active)
    kept = []
    for line in cfg_text.splitlines():
        match = _DIRECTIVE_RE.match(line)
        active = all(branch for _outer, branch in stack)
        if not match:
            if active:
                kept.append(line)
            continue
        word, name = match.group("word"), match.group("name") or ""
        if word in ("ifdef", "ifndef"):
            stack.append((active, (name in names) == (word == "ifdef")))
        elif word == "else" and stack:
            outer, branch = stack.pop()
            stack.append((outer, not branch))
        elif word == "endif" and stack:
            stack.pop()
        elif active and word in ("define", "trydef", "redefine"):
            names.add(name)
        elif active and word == "undef":
            names.discard(name)
    return "\n".join(kept)


def rpc_endpoints(cfg_text: str, run_dir: str = DEFAULT_RUN_DIR) -> RpcEndpoints:
    """The jsonrpcs datagram socket and FIFO a configuration opens, pinned to ``run_dir``.

    ``run_dir`` is the rendered (configured) run directory, not something the live file says: a socket or FIFO
    the configuration places anywhere else is not used (the default name in ``run_dir`` is asked instead), so a
    rewritten kamailio.cfg cannot point the client at an endpoint its author owns. Relative names live in the
    run dir, as Kamailio resolves them. The FIFO's reply directory is the run dir or /tmp, nothing else.
    """
    params = {m.group("name"): m.group("value").strip() for m in _MODPARAM_RE.finditer(active_text(cfg_text))}
    try:
        transport = int(params.get("transport", "0"))
    except ValueError:
        transport = 0
    # jsonrpcs "transport": 0 = all, otherwise a bit mask (1 FIFO, 2 datagram, 4 HTTP).
    run = run_dir.rstrip("/") or "/"

    def where(value: t.Optional[str], default: str) -> str:
        value = (value or default).strip()
        if value.startswith("unix:"):
            value = value[len("unix:"):]
        path = value if value.startswith("/") else os.path.join(run, value)
        if os.path.dirname(path) != run or ".." in path.split("/"):
            return os.path.join(run, default)
        return path

    sock = where(params.get("dgram_socket"), DEFAULT_SOCKET_NAME) if transport == 0 or transport & 2 else None
    fifo = where(params.get("fifo_name"), DEFAULT_FIFO_NAME) if transport == 0 or transport & 1 else None
    reply_dir = (params.get("fifo_reply_dir") or "/tmp").rstrip("/") or "/"
    return RpcEndpoints(sock, fifo, reply_dir if reply_dir in (run, "/tmp") else "/tmp")


def listen_addresses(cfg_text: str) -> list[str]:
    """IPv4 addresses the configuration listens on (they must exist in the candidate's namespace)."""
    found = set()
    for match in _LISTEN_RE.finditer(active_text(cfg_text)):
        try:
            found.add(str(ipaddress.IPv4Address(match.group("addr"))))
        except ValueError:
            continue
    return sorted(found, key=ipaddress.IPv4Address)


class JsonRpc:
    """A jsonrpcs client; prefers the datagram socket, falls back to the FIFO.

    Only answers sent by root or by ``kamailio_user`` (the configured account Kamailio runs as, a name or a
    uid; never read from the live host) are taken, checked with the kernel's SCM_CREDENTIALS.

    The reply address of the datagram socket is an abstract one (Linux, no file: nothing a local user could
    swap for a symlink, nothing to chown); ``reply_dir`` instead binds it as a file in that directory, which
    must be the caller's own and writable by nobody else (a candidate Kamailio in another network namespace
    cannot reach an abstract address of this one).
    """

    def __init__(self, endpoints: RpcEndpoints, timeout_s: float = 5.0,
                 kamailio_user: t.Union[str, int, None] = DEFAULT_KAMAILIO_USER,
                 reply_dir: t.Optional[str] = None) -> None:
        self.endpoints = endpoints
        self.timeout_s = timeout_s
        self.kamailio_uid = account_uid(kamailio_user)
        self.reply_dir = reply_dir
        self._id = 0

    def trusted_uids(self) -> t.FrozenSet[int]:
        return frozenset({0} | ({self.kamailio_uid} if self.kamailio_uid is not None else set()))

    def call(self, method: str, params: t.Optional[list[t.Any]] = None) -> t.Any:
        self._id += 1
        request: dict[str, t.Any] = {"jsonrpc": "2.0", "method": method, "id": self._id}
        if params:
            request["params"] = params
        errors = []
        if self.endpoints.socket and os.path.lexists(self.endpoints.socket):
            try:
                _require_kind(self.endpoints.socket, stat.S_ISSOCK, "socket")
                return _result(self._dgram(request))
            except (OSError, ValueError) as exc:
                errors.append("socket %s: %s" % (self.endpoints.socket, exc))
        if self.endpoints.fifo and os.path.lexists(self.endpoints.fifo):
            try:
                _require_kind(self.endpoints.fifo, stat.S_ISFIFO, "FIFO")
                return _result(self._fifo(request))
            except (OSError, ValueError) as exc:
                errors.append("fifo %s: %s" % (self.endpoints.fifo, exc))
        if not errors:
            raise RpcError("%s: no jsonrpcs endpoint exists (%s, %s)" % (
                method, self.endpoints.socket, self.endpoints.fifo))
        raise RpcError("%s: %s" % (method, "; ".join(errors)))

    def _dgram(self, request: dict[str, t.Any]) -> dict[str, t.Any]:
        # Kamailio answers to the sender's address; it replies from its own bound socket, any other
        # sender or user is ignored (_receive).
        client = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        reply_fd = None
        name = "c-%d-%s.sock" % (os.getpid(), secrets.token_hex(8))
        try:
            if self.reply_dir is None:
                client.bind("\0commsgw-rpc-" + name)
            else:
                reply_fd = _own_directory(self.reply_dir)
                client.bind(os.path.join(self.reply_dir, name))
                # Acted on through the directory's fd, never by a path another user could redirect.
                os.chmod(name, 0o600, dir_fd=reply_fd)
                if os.geteuid() == 0 and self.kamailio_uid not in (None, 0):
                    os.chown(name, self.kamailio_uid, -1, dir_fd=reply_fd, follow_symlinks=False)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
            client.sendto(json.dumps(request).encode(), self.endpoints.socket)
            return self._receive(client, request["id"])
        finally:
            client.close()
            if reply_fd is not None:
                try:
                    os.unlink(name, dir_fd=reply_fd)
                except OSError:
                    pass
                os.close(reply_fd)

    def _receive(self, client: socket.socket, request_id: int) -> dict[str, t.Any]:
        """The first reply that comes from Kamailio's socket, from a trusted user, for this request."""
        names = self.endpoints.socket_names()
        trusted = self.trusted_uids()
        deadline = time.monotonic() + self.timeout_s
        ignored: list[str] = []  # the first few, for the error; a flood only grows the count
        count = 0
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise socket.timeout()
                client.settimeout(remaining)
                data, ancillary, _flags, sender = client.recvmsg(1 << 20, socket.CMSG_SPACE(12))
            except socket.timeout:
                raise OSError("no reply from Kamailio's socket within %.1f s%s" % (
                    self.timeout_s, "; ignored %d reply(ies) from other senders: %s" % (
                        count, ", ".join(ignored)) if count else "")) from None
            uid = _sender_uid(ancillary)
            # The same file under another spelling (/var/run -> /run) is the same socket.
            known = sender in names or (isinstance(sender, str) and sender.startswith("/")
                                        and os.path.realpath(sender) in {os.path.realpath(n) for n in names})
            reply: t.Any = None
            if not known or uid not in trusted:
                why = "%r (uid %s)" % (sender or "unnamed socket", uid)
            else:
                try:
                    reply = json.loads(data.decode())
                    why = "%r: not the answer to request %d" % (sender, request_id)
                except ValueError:
                    why = "%r: not JSON" % sender
                if isinstance(reply, dict) and reply.get("id") == request_id:
                    return t.cast("dict[str, t.Any]", reply)
            count += 1
            if len(ignored) < 5:
                ignored.append(why[:200])

    def _fifo(self, request: dict[str, t.Any]) -> dict[str, t.Any]:
        # Kamailio opens reply_name in its fifo_reply_dir (often the shared /tmp): a random name, created
        # by mkfifo (fails if the name exists), so nobody can plant or predict it.
        # Letters, digits and '_' only: jsonrpcs refuses a name with '.', '/' or '\\' ("Forbidden reply fifo
        # filename", 5.6 and 6.0), so no sub-directory and no ".fifo" suffix.
        euid = os.geteuid()
        if euid not in (0, self.kamailio_uid):
            raise OSError("a FIFO reply needs root or Kamailio's user (uid %s); this client is uid %d"
                          % (self.kamailio_uid, euid))
        reply_name = "commsgw_rpc_reply_%d_%d" % (os.getpid(), secrets.randbelow(10 ** 18))
        reply_path = os.path.join(self.endpoints.fifo_reply_dir, reply_name)
        os.mkfifo(reply_path, 0o600)
        try:
            # Opened at once without following anything, then handed over through the fd (fchown/fchmod):
            # whatever another user puts at the path later, only this FIFO changes hands.
            rfd = os.open(reply_path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            try:
                info = os.fstat(rfd)
                if not stat.S_ISFIFO(info.st_mode) or info.st_uid != euid:
                    raise OSError("%s is not the FIFO just made" % reply_path)
                os.fchmod(rfd, 0o600)
                if euid == 0 and self.kamailio_uid not in (None, 0):
                    os.fchown(rfd, self.kamailio_uid, -1)
                self._fifo_request(dict(request, reply_name=reply_name))
                return self._fifo_reply(rfd)
            finally:
                os.close(rfd)
        finally:
            try:
                os.unlink(reply_path)
            except OSError:
                pass

    def _fifo_request(self, request: dict[str, t.Any]) -> None:
        # O_NOFOLLOW plus fstat: whatever sits at the path now, only a FIFO gets the request.
        fd = os.open(str(self.endpoints.fifo), os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                raise OSError("not a FIFO")
            os.write(fd, (json.dumps(request) + "\n").encode())
        finally:
            os.close(fd)

    def _fifo_reply(self, rfd: int) -> dict[str, t.Any]:
        # Non-blocking reads plus a bounded wait: a dead reader must not hang us.
        deadline = time.monotonic() + self.timeout_s
        chunks = b""
        while time.monotonic() < deadline:
            try:
                chunk = os.read(rfd, 65536)
            except BlockingIOError:
                chunk = b""
            if chunk:
                chunks += chunk
                try:
                    return t.cast("dict[str, t.Any]", json.loads(chunks.decode()))
                except ValueError:
                    continue
            time.sleep(0.02)
        raise OSError("no reply within %.1f s" % self.timeout_s)


def _require_kind(path: str, test: t.Callable[[int], bool], kind: str) -> None:
    """Refuse an endpoint that is not what it claims (a symlink or a regular file must never get a request)."""
    if not test(os.lstat(path).st_mode):
        raise OSError("not a %s (symlinks are not followed)" % kind)


def account_uid(user: t.Union[str, int, None]) -> t.Optional[int]:
    """The uid of ``user`` (a name or a number); None for no user or an unknown name."""
    if user is None or user == "":
        return None
    if isinstance(user, int) or (isinstance(user, str) and user.isascii() and user.isdigit()):
        return int(user)
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def _own_directory(path: str) -> int:
    """An fd of ``path``, a real directory of this process's user that nobody else may write to."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        os.close(fd)
        raise OSError("reply directory %s must belong to uid %d and be writable by nobody else (owner %d, mode %04o)"
                      % (path, os.geteuid(), info.st_uid, stat.S_IMODE(info.st_mode)))
    return fd


def _sender_uid(ancillary: t.Sequence[tuple[int, int, bytes]]) -> t.Optional[int]:
    """The uid in the kernel-supplied SCM_CREDENTIALS of a datagram (struct ucred: pid, uid, gid)."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= 12:
            return int.from_bytes(data[4:8], sys.byteorder)
    return None


def _result(reply: dict[str, t.Any]) -> t.Any:
    if "error" in reply:
        raise RpcError("Kamailio answered an error: %s" % json.dumps(reply["error"]))
    return reply.get("result")
