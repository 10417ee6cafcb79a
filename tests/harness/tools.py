# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The programs a real-software test needs, as one pytest mark (skips locally, fails in CI), and a
module run the way Ansible runs it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import typing as t
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The Debian package that brings each program (scripts/debian-packages.txt installs them).
PACKAGES = {"kamailio": "kamailio", "sipp": "sip-tester", "knotd": "knot", "unshare": "util-linux",
            "openssl": "openssl", "systemd-nspawn": "systemd-container", "ssh": "openssh-client",
            "debootstrap": "debootstrap", "promtool": "prometheus", "prometheus": "prometheus",
            "prometheus-alertmanager": "prometheus-alertmanager", "chromium": "chromium"}


def needs(*programs: str) -> pytest.MarkDecorator:
    missing = [name for name in programs if shutil.which(name) is None]
    return pytest.mark.skipif(bool(missing), reason="needs %s" % ", ".join(
        "%s (%s)" % (name, PACKAGES.get(name, name)) for name in missing))


def play(inventory: Path, args: t.Sequence[str], log_dir: Path, check: bool = True,
         collections: t.Sequence[Path] = (), timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """``ansible-playbook -i inventory args`` from the checkout with its ansible.cfg (``collections``: more
    collection roots after the checkout's own); the output is kept in ``log_dir``, and with ``check`` a failure is
    an AssertionError holding the output's tail."""
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory)] + list(args)
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    if collections:
        env["ANSIBLE_COLLECTIONS_PATH"] = os.pathsep.join([str(REPO / ".collections")] + [str(c) for c in collections])
    proc = subprocess.run(cmd, cwd=str(REPO), env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    (log_dir / ("play-%d.log" % time.monotonic_ns())).write_text(proc.stdout + proc.stderr)
    if check and proc.returncode != 0:
        raise AssertionError("ansible-playbook %s failed (%d):\n%s\n%s" % (
            list(args), proc.returncode, proc.stdout[-8000:], proc.stderr[-2000:]))
    return proc


def recap(output: str, host: str) -> dict[str, int]:
    """The counts of ``host``'s PLAY RECAP line in an ansible-playbook output (progress lines also start with
    "<host>:", so the line is the one with ok=)."""
    match = re.search(r"^%s\s*:\s*(ok=.*)$" % re.escape(host), output, re.MULTILINE)
    assert match, output[-3000:]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


def run_module(module: str, args: dict[str, t.Any], tmp_path: Path) -> tuple[int, dict[str, t.Any]]:
    """Run plugins/modules/<module>.py as Ansible does (a separate Python reading an args file); (rc, result)."""
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, str(REPO / "plugins" / "modules" / ("%s.py" % module)), str(args_file)],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise AssertionError("module output is not JSON:\n%s\n%s" % (proc.stdout, proc.stderr))


def module_docs(*modules: str) -> dict[str, t.Any]:
    """What ``ansible-doc --json`` shows for commsgw.routing modules (documentation fragments merged)."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".collections"), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-doc"), "--json"]
                          + ["commsgw.routing.%s" % m for m in modules], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    return {name.split(".")[-1]: entry["doc"] for name, entry in json.loads(proc.stdout).items()}


@contextlib.contextmanager
def tmpfs(path: Path, options: str) -> t.Iterator[Path]:
    """A small tmpfs mounted on ``path`` (e.g. ``size=64k`` or ``nr_inodes=8``): a filesystem that really
    runs full, for the push's ENOSPC tests. Needs root."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options + ",mode=0755", "commsgw-test", str(path)], check=True,
                   timeout=30)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, timeout=30)


# A private, empty /tmp for the command that follows (argv), the way systemd's PrivateTmp= gives a service
# one, in a mount namespace of its own. The machine's /tmp is bound at $1 (outside /tmp) while the paths
# that follow the count $2 are bound back at their places, then unmounted there: only those stay visible.
_PRIVATE_TMP_SCRIPT = """set -eu
host_tmp=$1; count=$2; shift 2
mount --bind /tmp "$host_tmp"
mount -t tmpfs -o mode=1777 commsgw-private-tmp /tmp
umask 022
while [ "$count" -gt 0 ]; do
    mkdir -p "$1"
    mount --bind "$host_tmp${1#/tmp}" "$1"
    shift; count=$((count - 1))
done
umount -l "$host_tmp"
exec "$@"
"""


def interpreter_paths_under_tmp() -> list[str]:
    """The directories this test run's Python needs (its venv, its installation) that lie under /tmp: a
    checkout cloned under /tmp has its .venv there."""
    paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
    under = sorted(p for p in paths if p.startswith("/tmp/"))
    return [p for p in under if not any(p.startswith(other + "/") for other in under)]


def private_tmp(outside: Path) -> list[str]:
    """argv prefix: what follows runs as root with a private, empty /tmp (as systemd's PrivateTmp= gives a
    service), and still finds this test run's interpreter when the checkout lives under /tmp. ``outside``: an
    empty directory outside /tmp (the machine's /tmp is bound there for a moment)."""
    keep = interpreter_paths_under_tmp()
    return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", _PRIVATE_TMP_SCRIPT, "sh",
            str(outside), str(len(keep)), *keep]


def fill(directory: Path, leave_bytes: int = 0) -> Path:
    """Fill the filesystem of ``directory`` with one file, then give ``leave_bytes`` back (whole pages)."""
    filler = directory / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - leave_bytes))
    return filler


def memory_manager_args_in(argv: t.Sequence[str]) -> list[str]:
    """The -x/-X arguments (Kamailio's memory managers) of a command line, in order, with their values."""
    return [arg for i, arg in enumerate(argv) if arg in ("-x", "-X") or (i > 0 and argv[i - 1] in ("-x", "-X"))]
