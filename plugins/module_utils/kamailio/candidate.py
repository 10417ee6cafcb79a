# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Proving that a candidate Kamailio configuration starts, without touching the live one.

``try_candidate_tree`` builds the candidate - the whole future configuration directory, the live tree with
the changed files in place - and ``try_candidate`` starts it for real (``kamailio -c`` misses fixup errors,
see docs/kamailio-notes.md) in a private network and mount namespace where the candidate tree is
bind-mounted over the live configuration directory, waits until it answers ``core.version`` and
stops it. The live Kamailio, its sockets and its files are never touched.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.defaults import (
    memory_manager_args, memory_manager_of)
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.peers_dir import PEERS_SUBDIR, file_path
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (
    DEFAULT_RUN_DIR, JsonRpc, RpcError, listen_addresses, rpc_endpoints)


@dataclasses.dataclass
class CandidateResult:
    ok: bool
    seconds: float
    detail: str
    log: str


def try_candidate(candidate_dir: str, config_dir: str, binary: str = "/usr/sbin/kamailio",
                  run_dir: str = DEFAULT_RUN_DIR, timeout_s: float = 15.0, shm_mb: int = 64, pkg_mb: int = 8,
                  cfg_name: str = "kamailio.cfg", user: t.Optional[str] = None,
                  memory_manager: t.Optional[str] = None) -> CandidateResult:
    """Start the configuration in ``candidate_dir`` as if it lived in ``config_dir``; True once it serves.

    Why namespaces: the candidate must bind the very addresses and ports the live SBC holds, read
    its files at the paths the live tree uses and open its control sockets where the live one has
    them. ``unshare --net --mount`` gives it a loopback of its own (the listen addresses are added
    to it), the candidate tree bind-mounted over the configuration directory and a scratch run
    directory over the live one, so nothing of the running SBC is disturbed.

    With ``user`` the candidate runs as that user from its first instruction, as the Debian unit
    (``User=kamailio``) runs the live one: a file only root can read fails here, not at the swap.
    """
    started = time.monotonic()
    with open(os.path.join(candidate_dir, cfg_name), encoding="utf-8") as handle:
        cfg_text = handle.read()
    scratch = tempfile.mkdtemp(prefix="commsgw-candidate-")
    cand_run = os.path.join(scratch, "run")
    os.makedirs(cand_run)
    os.makedirs(run_dir, exist_ok=True)  # the mount point must exist; harmless where it does
    log_path = os.path.join(scratch, "kamailio.log")
    addresses = [a for a in listen_addresses(cfg_text) if not ipaddress.IPv4Address(a).is_loopback]
    # The manager the candidate's kamailio.cfg names, unless the caller says (docs/kamailio-tls.md).
    manager = memory_manager or memory_manager_of(cfg_text)
    drop = extra = ""
    if user:
        # The scratch run dir is mounted over the live one; only its own mode matters to the user.
        account = pwd.getpwnam(user)
        os.chown(cand_run, account.pw_uid, account.pw_gid)
        # Kamailio answers the RPC client at its reply socket in the scratch dir (root's, searchable only),
        # by its host path: an abstract address of this network namespace is out of the candidate's reach.
        os.chmod(scratch, 0o711)
        if _is_elf(binary):
            drop = "setpriv --reuid=%d --regid=%d --init-groups " % (account.pw_uid, account.pw_gid)
        else:
            # A wrapper (kamailio_rootfs) needs root for its own mounts: Kamailio drops privileges itself.
            extra = " -u %d -g %d" % (account.pw_uid, account.pw_gid)
    script = "\n".join([
        "set -e",
        "ip link set lo up",
        *["ip addr add %s/32 dev lo" % a for a in addresses],
        "mount --bind %s %s" % (_q(candidate_dir), _q(config_dir)),
        "mount --bind %s %s" % (_q(cand_run), _q(run_dir)),
        "exec %s%s -f %s -DD -E -w %s -m %d -M %d%s%s" % (
            drop, _q(binary), _q(os.path.join(config_dir, cfg_name)), _q(run_dir), shm_mb, pkg_mb,
            "".join(" " + arg for arg in memory_manager_args(manager)) if manager else "", extra),
    ])
    endpoints = rpc_endpoints(cfg_text, run_dir).relocated(run_dir, cand_run)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(["unshare", "--net", "--mount", "--propagation", "private", "--fork",
                                 "/bin/sh", "-c", script], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    ok = False
    detail = "did not answer core.version within %.1f s" % timeout_s
    try:
        rpc = JsonRpc(endpoints, timeout_s=1.0, kamailio_user=user, reply_dir=scratch)
        deadline = started + timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                detail = "exited with status %s before serving" % proc.returncode
                break
            try:
                version = rpc.call("core.version")
                ok = True
                detail = "answered core.version: %s" % str(version).strip()
                break
            except RpcError:
                time.sleep(0.1)
    finally:
        _stop_group(proc)
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            log_text = handle.read()
        shutil.rmtree(scratch, ignore_errors=True)
    return CandidateResult(ok, round(time.monotonic() - started, 3), detail, log_text[-4000:])


def _mirror_tree(source: str, dest: str) -> None:
    """Copy the live tree into ``dest``: subdirectories, symlinks as links, modes and owners.

    The candidate sees exactly what the live Kamailio will see after the swap (certificates in
    tls/, included files, links), owned as they are, since it runs as the live user.
    """
    def ignore(directory: str, names: t.List[str]) -> t.List[str]:
        # The refresher's peers/ holds only what the push writes (the candidate gets its own list) and its
        # state: root copies nothing from a directory another user controls.
        if directory == os.path.join(source, PEERS_SUBDIR):
            return list(names)
        return [n for n in names if n.startswith(".commsgw")] if directory == source else []
    shutil.copytree(source, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    for root, dirs, names in os.walk(dest):
        for name in [""] + dirs + names:
            copy = os.path.join(root, name) if name else root
            info = os.lstat(os.path.join(source, os.path.relpath(copy, dest)))
            os.lchown(copy, info.st_uid, info.st_gid)
    shutil.copystat(source, dest)


def try_candidate_tree(config_dir: str, files: t.Mapping[str, str], prepare: t.Callable[[str], t.Any],
                       **options: t.Any) -> CandidateResult:
    """``try_candidate`` on a copy of ``config_dir`` with ``files`` in place (``prepare(path)`` gives each its
    owner and mode); ``options`` as ``try_candidate`` takes them. Raises OSError when the copy fails."""
    # A private parent (0700): the tree may hold the private key; only its mount point is seen.
    parent = tempfile.mkdtemp(prefix="commsgw-staging-")
    staging = os.path.join(parent, "config")
    try:
        _mirror_tree(config_dir, staging)
        for name, content in files.items():
            path = file_path(staging, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.lexists(path):
                os.unlink(path)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(content)
            prepare(path)
        return try_candidate(staging, config_dir, **options)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def _stop_group(proc: "subprocess.Popen[bytes]", grace_s: float = 5.0) -> None:
    """Stop the candidate and every Kamailio child (they share the session we created)."""
    # SIGTERM first while the main process lives; SIGKILL always, for children it left behind.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if sig == signal.SIGTERM and proc.poll() is not None:
            continue
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass


def _q(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"
