# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio 6.0 for the TLS conformance scenarios, on Debian 12 as well as Debian 13.

Kamailio 5.6 (Debian 12) corrupts memory under TLS with OpenSSL 3 (see docs/kamailio-notes.md), so the
TLS scenarios always run on 6.0. On a Debian 13 machine that is the host's own ``kamailio``; on a
Debian 12 machine we build a Debian 13 (trixie) root filesystem with debootstrap, install
``kamailio`` + ``kamailio-tls-modules`` inside it, and cache it as a zstd tarball under
``/var/cache/commsgw-test/`` (outside the clone, reused between runs and clones). Kamailio then runs
from that tree with ``unshare --mount`` + bind mounts + ``chroot`` on the host's network, so it
listens on the same loopback addresses as everything else.

Usage::

    rt = kamailio6_runtime()            # raises RootfsUnavailable when the mirror is unreachable
    argv = rt.command(["kamailio", "-f", cfg, "-DD", "-E"],
                      binds=[cfg_dir, work_dir, run_dir], resolv_conf=my_resolv)
    subprocess.Popen(argv)

``command`` always returns an ``unshare --mount`` wrapper (also for the host binary) so that the
test resolv.conf is only visible to that Kamailio, never to the machine.

``sipp_tls_runtime()`` does the same for a SIPp with TLS (the TLS bench's peers): Debian 12's
sip-tester has none, so it comes from Debian 13, in a second cached tarball derived from the first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import typing as t
import urllib.error
import urllib.request
from pathlib import Path

SUITE = "trixie"
PACKAGES = ("kamailio", "kamailio-tls-modules")
# Bump when the recipe below changes so that stale caches are rebuilt instead of reused.
RECIPE_VERSION = "1"
DEFAULT_CACHE_DIR = Path(os.environ.get("COMMSGW_TEST_CACHE", "/var/cache/commsgw-test"))
TARBALL_NAME = f"kamailio6-{SUITE}-rootfs-r{RECIPE_VERSION}.tar.zst"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
BUILD_TIMEOUT_S = 900


class RootfsUnavailable(RuntimeError):
    """The Debian mirror cannot be reached, so no Kamailio 6.0 rootfs can be built (tests skip)."""


@dataclasses.dataclass(frozen=True)
class KamailioRuntime:
    """How to run a given Kamailio here: the host binary (rootfs None) or one inside a rootfs."""

    version: str
    rootfs: t.Optional[Path] = None
    binary: str = "/usr/sbin/kamailio"
    # Filled in for information / reports only.
    origin: str = "host"
    # A library the binary must run with (LD_PRELOAD), e.g. the SIPp wolfSSL fix below.
    preload: t.Optional[Path] = None

    def command(self, argv: t.Sequence[str], binds: t.Iterable[t.Union[str, Path]] = (),
                resolv_conf: t.Optional[t.Union[str, Path]] = None) -> list[str]:
        """argv wrapped to run in a private mount namespace (and the rootfs when there is one).

        ``binds`` are host paths (directories or files) made visible at the same path inside the
        rootfs: config dir, certificates, work dir, run dir. ``resolv_conf`` replaces /etc/resolv.conf
        for this process only. argv[0] "kamailio" is replaced by the runtime's binary.
        """
        argv = list(argv)
        if argv and os.path.basename(argv[0]) == "kamailio":
            argv[0] = self.binary
        script = namespace_script(argv, self.rootfs, [Path(b) for b in binds],
                                  Path(resolv_conf) if resolv_conf else None)
        return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-euc", script]

    def tool(self, name: str) -> str:
        """Path to a companion tool (kamcmd etc.) as seen inside the runtime."""
        return "/usr/sbin/" + name


def namespace_script(argv: t.Sequence[str], rootfs: t.Optional[Path], binds: t.Sequence[Path],
                     resolv_conf: t.Optional[Path]) -> str:
    """The sh script run inside ``unshare --mount``: bind mounts, then exec (via chroot if rootfs)."""
    q = shlex.quote
    lines: list[str] = []
    if rootfs is not None:
        root = rootfs.resolve()
        # Kernel interfaces Kamailio and OpenSSL need (/dev/urandom, /proc/self/...).
        for special in ("/proc", "/dev", "/sys"):
            lines.append(f"mount --rbind {q(special)} {q(str(root) + special)}")
        for b in binds:
            b = b.resolve()
            target = str(root) + str(b)
            # Mount points are created in the shared tree; harmless empty dirs/files, and the
            # mounts themselves stay private to this namespace.
            if b.is_dir():
                lines.append(f"mkdir -p {q(target)}")
            else:
                lines.append(f"mkdir -p {q(os.path.dirname(target))} && touch {q(target)}")
            lines.append(f"mount --bind {q(str(b))} {q(target)}")
        if resolv_conf is not None:
            lines.append(f"touch {q(str(root) + '/etc/resolv.conf')}")
            lines.append(f"mount --bind {q(str(resolv_conf.resolve()))} {q(str(root) + '/etc/resolv.conf')}")
        lines.append("exec chroot " + q(str(root)) + " " + " ".join(q(a) for a in argv))
    else:
        if resolv_conf is not None:
            lines.append(f"mount --bind {q(str(resolv_conf.resolve()))} /etc/resolv.conf")
        lines.append("exec " + " ".join(q(a) for a in argv))
    return "\n".join(lines)


def parse_version(text: str) -> t.Optional[str]:
    """'version: kamailio 6.0.1 (x86_64/linux) ...' -> '6.0.1'."""
    m = re.search(r"kamailio\s+(\d+\.\d+\.\d+)", text)
    return m.group(1) if m else None


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def host_kamailio_version() -> t.Optional[str]:
    binary = shutil.which("kamailio") or ("/usr/sbin/kamailio" if os.path.exists("/usr/sbin/kamailio") else None)
    if not binary:
        return None
    out = subprocess.run([binary, "-v"], capture_output=True, text=True, timeout=20, check=False)
    return parse_version(out.stdout + out.stderr)


def apt_mirror(default: str = DEFAULT_MIRROR) -> str:
    """The Debian mirror apt uses on this machine (same host for debootstrap), e.g. http://deb.debian.org/debian.

    Reads deb822 ``URIs:`` and one-line ``deb URI suite`` entries; picks the first URI whose path
    ends in /debian (not -security, not third-party repositories).
    """
    files = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*"))
    for f in files:
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        uris = re.findall(r"^\s*URIs:\s*(.+)$", text, re.M) + re.findall(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)", text, re.M)
        for line in uris:
            for uri in line.split():
                if re.match(r"^https?://[^/]+/debian/?$", uri):
                    return uri.rstrip("/")
    return default


def _mirror_reachable(mirror: str, timeout: float = 15.0) -> t.Optional[str]:
    """None when the mirror answers for the suite, else the reason."""
    url = f"{mirror}/dists/{SUITE}/Release"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - fixed http(s) mirror
            resp.read(64)
        return None
    except (urllib.error.URLError, OSError) as exc:
        return f"{url}: {exc}"


@contextlib.contextmanager
def _locked(path: Path) -> t.Iterator[None]:
    """Serialise builds/extractions between concurrently running tests (and pytest-xdist workers)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: t.Sequence[str], log: t.IO[str], timeout: float = BUILD_TIMEOUT_S, **kw: t.Any) -> None:
    log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
    log.flush()
    subprocess.run(list(cmd), stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=True, **kw)


@dataclasses.dataclass(frozen=True)
class BuildStart:
    """Where a debootstrap build of a cached tarball runs: mirror, log, a scratch dir beside the tarball."""

    mirror: str
    log_path: Path
    build_dir: Path
    started: float


def start_build(tarball: Path, what: str, prefix: str, mirror: t.Optional[str] = None,
                log_path: t.Optional[Path] = None) -> BuildStart:
    """Checks that a build can run (mirror reachable, debootstrap installed) and prepares its directories."""
    mirror = mirror or apt_mirror()
    reason = _mirror_reachable(mirror)
    if reason:
        raise RootfsUnavailable(f"Debian mirror not reachable, cannot build {what}: {reason}")
    if not shutil.which("debootstrap"):
        raise RuntimeError("debootstrap is not installed (apt-get install debootstrap)")
    tarball.parent.mkdir(parents=True, exist_ok=True)
    return BuildStart(mirror, log_path or tarball.with_suffix(".build.log"),
                      Path(tempfile.mkdtemp(prefix=prefix, dir=str(tarball.parent))), time.monotonic())


def _install_clean_pack(root: Path, packages: t.Sequence[str], tarball: Path, log: t.IO[str]) -> None:
    """apt-get install ``packages`` in the tree at ``root``, strip it to what runs, pack it as ``tarball``."""
    # Keep services from starting inside the chroot during installation.
    policy = root / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    shutil.copyfile("/etc/resolv.conf", root / "etc/resolv.conf")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive", LC_ALL="C")
    # /proc inside a private mount namespace so nothing leaks onto the host if we die.
    inner = (f"mount -t proc proc {shlex.quote(str(root / 'proc'))} && "
             f"chroot {shlex.quote(str(root))} sh -ec 'apt-get update -q && "
             f"apt-get install -y -q --no-install-recommends {' '.join(packages)} && apt-get clean'")
    _run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-ec", inner], log, env=env)
    # Clean: package lists, caches, docs, man pages, locales; the rootfs only runs kamailio.
    for rel in ("var/lib/apt/lists", "var/cache/apt", "usr/share/doc", "usr/share/man",
                "usr/share/locale", "usr/share/info", "var/log"):
        p = root / rel
        if p.exists():
            shutil.rmtree(p)
            p.mkdir(parents=True)
    (root / "etc/resolv.conf").write_text("")  # bound over at run time
    tmp_tar = tarball.with_suffix(".partial")
    _run(["tar", "--numeric-owner", "-C", str(root), "-I", "zstd -T0 -10", "-cf", str(tmp_tar), "."], log)
    os.replace(tmp_tar, tarball)


def build_tarball(tarball: Path, mirror: t.Optional[str] = None, log_path: t.Optional[Path] = None) -> dict[str, t.Any]:
    """debootstrap trixie + kamailio + tls modules, cleaned, packed as a zstd tarball. Returns figures."""
    build = start_build(tarball, "the Kamailio 6.0 rootfs", "k6-rootfs-", mirror, log_path)
    mirror, log_path, build_dir, started = build.mirror, build.log_path, build.build_dir, build.started
    root = build_dir / "root"
    try:
        with open(log_path, "w") as log:
            _run(["debootstrap", "--variant=minbase", SUITE, str(root), mirror], log)
            _install_clean_pack(root, PACKAGES, tarball, log)
        return {"build_s": round(time.monotonic() - started, 1), "tarball_bytes": tarball.stat().st_size,
                "log": str(log_path)}
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)


def build_derived_tarball(base: Path, tarball: Path, packages: t.Sequence[str], what: str,
                          log_path: t.Optional[Path] = None) -> dict[str, t.Any]:
    """``base`` (a tarball made by build_tarball) plus ``packages``, packed as ``tarball``. Returns figures."""
    build = start_build(tarball, what, "derived-rootfs-", None, log_path)
    root = build.build_dir / "root"
    try:
        with open(build.log_path, "w") as log:
            root.mkdir()
            _run(["tar", "--numeric-owner", "-C", str(root), "-I", "zstd", "-xf", str(base)], log)
            _install_clean_pack(root, packages, tarball, log)
        return {"build_s": round(time.monotonic() - build.started, 1), "tarball_bytes": tarball.stat().st_size,
                "log": str(build.log_path)}
    finally:
        shutil.rmtree(build.build_dir, ignore_errors=True)


def _extract(tarball: Path, extracted: Path, figures: dict[str, t.Any]) -> None:
    """(Re-)extract ``tarball`` into ``extracted`` unless a stamp says this very tarball is there. Call locked."""
    stamp = extracted / ".commsgw-extracted"
    figures["tarball_bytes"] = tarball.stat().st_size
    signature = f"{tarball.stat().st_size}:{int(tarball.stat().st_mtime)}"
    if not (stamp.exists() and stamp.read_text() == signature):
        started = time.monotonic()
        if extracted.exists():
            shutil.rmtree(extracted)
        extracted.mkdir(parents=True)
        subprocess.run(["tar", "--numeric-owner", "-C", str(extracted), "-I", "zstd", "-xf", str(tarball)],
                       check=True, timeout=300, capture_output=True)
        stamp.write_text(signature)
        figures["extract_s"] = round(time.monotonic() - started, 1)


def ensure_rootfs(cache_dir: Path = DEFAULT_CACHE_DIR) -> tuple[Path, dict[str, t.Any]]:
    """The extracted Kamailio 6.0 rootfs (built and cached on first use). Returns (dir, figures)."""
    tarball = cache_dir / TARBALL_NAME
    extracted = cache_dir / f"kamailio6-{SUITE}-rootfs-r{RECIPE_VERSION}"
    figures: dict[str, t.Any] = {"tarball": str(tarball), "built": False}
    with _locked(cache_dir / ".rootfs.lock"):
        if not tarball.exists():
            figures.update(build_tarball(tarball))
            figures["built"] = True
        _extract(tarball, extracted, figures)
    return extracted, figures


def rootfs_kamailio_version(root: Path) -> t.Optional[str]:
    out = subprocess.run(["chroot", str(root), "/usr/sbin/kamailio", "-v"], capture_output=True, text=True,
                         timeout=30, check=False)
    return parse_version(out.stdout + out.stderr)


def host_runtime() -> KamailioRuntime:
    """The machine's own Kamailio (whatever version it is); for the non-TLS scenarios."""
    version = host_kamailio_version()
    if version is None:
        raise RuntimeError("kamailio is not installed on this machine")
    return KamailioRuntime(version=version, rootfs=None, origin="host")


def kamailio6_runtime(cache_dir: Path = DEFAULT_CACHE_DIR) -> KamailioRuntime:
    """A Kamailio >= 6.0 with the tls module: the host's (Debian 13) or the cached trixie rootfs (Debian 12)."""
    version = host_kamailio_version()
    if version and version_tuple(version) >= (6, 0) and \
            list(Path("/usr/lib").glob("*/kamailio/modules/tls.so")) + list(Path("/usr/lib/kamailio/modules").glob("tls.so")):
        return KamailioRuntime(version=version, rootfs=None, origin="host")
    root, figures = ensure_rootfs(cache_dir)
    rversion = rootfs_kamailio_version(root)
    if rversion is None or version_tuple(rversion) < (6, 0):
        raise RuntimeError(f"rootfs {root} does not hold Kamailio >= 6.0 (got {rversion})")
    return KamailioRuntime(version=rversion, rootfs=root, origin=f"rootfs {root.name} ({figures})")


# SIPp with TLS (``-t l1``) for TLS peers that are not a bottleneck. Debian 12's sip-tester (3.6.1) is
# built without TLS, Debian 13's (3.7.3, wolfSSL) with it: on Debian 12 it runs from the Kamailio 6.0
# rootfs above plus sip-tester, cached as its own tarball beside it (the tests' rootfs is unchanged).
SIPP_TLS_PACKAGES = ("sip-tester",)
SIPP_TLS_TARBALL_NAME = f"kamailio6-sipp-{SUITE}-rootfs-r{RECIPE_VERSION}.tar.zst"


WOLFSSL_FD_SHIM_SOURCE = Path(__file__).resolve().parent / "sipp_wolfssl_fd.c"


def sipp_supports_tls(binary: str, rootfs: t.Optional[Path] = None) -> bool:
    argv = ([] if rootfs is None else ["chroot", str(rootfs)]) + [binary, "-h"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    return "l1: TLS" in out.stdout + out.stderr


def sipp_version(binary: str, rootfs: t.Optional[Path] = None) -> str:
    argv = ([] if rootfs is None else ["chroot", str(rootfs)]) + [binary, "-v"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    m = re.search(r"SIPp\s+(v\S+)", out.stdout + out.stderr)
    return m.group(1).rstrip(".") if m else "unknown"


def wolfssl_fd_shim(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """sipp_wolfssl_fd.c compiled (once, cached by its content) with the host's C compiler."""
    source = WOLFSSL_FD_SHIM_SOURCE.read_bytes()
    target = cache_dir / ("sipp-wolfssl-fd-%s.so" % hashlib.sha256(source).hexdigest()[:12])
    compiler = shutil.which("cc") or shutil.which("gcc")
    with _locked(cache_dir / ".sipp-rootfs.lock"):
        if not target.exists():
            if not compiler:
                raise RuntimeError("a C compiler is needed for the SIPp wolfSSL fix (apt-get install gcc)")
            partial = target.with_suffix(".partial")
            subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(partial), str(WOLFSSL_FD_SHIM_SOURCE)],
                           check=True, timeout=120, capture_output=True)
            os.replace(partial, target)
    return target


def _needs_wolfssl_fd_shim(binary: str, rootfs: t.Optional[Path]) -> bool:
    path = Path(str(rootfs) + binary) if rootfs is not None else Path(binary)
    return b"wolfSSL_get_fd" in path.read_bytes()


def ensure_sipp_tls_rootfs(cache_dir: Path = DEFAULT_CACHE_DIR) -> tuple[Path, dict[str, t.Any]]:
    """The extracted Kamailio 6.0 rootfs plus sip-tester (built from the cached Kamailio 6.0 tarball)."""
    ensure_rootfs(cache_dir)  # the base tarball
    tarball = cache_dir / SIPP_TLS_TARBALL_NAME
    extracted = cache_dir / f"kamailio6-sipp-{SUITE}-rootfs-r{RECIPE_VERSION}"
    figures: dict[str, t.Any] = {"tarball": str(tarball), "built": False}
    with _locked(cache_dir / ".sipp-rootfs.lock"):
        if not tarball.exists():
            figures.update(build_derived_tarball(cache_dir / TARBALL_NAME, tarball, SIPP_TLS_PACKAGES,
                                                 "the SIPp TLS rootfs"))
            figures["built"] = True
        _extract(tarball, extracted, figures)
    return extracted, figures


def sipp_tls_runtime(cache_dir: Path = DEFAULT_CACHE_DIR) -> KamailioRuntime:
    """A SIPp built with TLS: the host's (Debian 13) or sip-tester from Debian 13 in a cached rootfs
    (Debian 12). ``version`` is SIPp's; ``preload`` the wolfSSL fix when SIPp uses wolfSSL (it does
    on Debian 13). Run it with ``command([...env LD_PRELOAD..., runtime.binary, ...], binds=...)``;
    harness.sipp does that."""
    host = shutil.which("sipp")
    if host and sipp_supports_tls(host):
        root: t.Optional[Path] = None
        binary, origin = host, "host"
    else:
        root, figures = ensure_sipp_tls_rootfs(cache_dir)
        binary, origin = "/usr/bin/sipp", f"rootfs {root.name} ({figures})"
        if not sipp_supports_tls(binary, root):
            raise RuntimeError(f"SIPp in {root} has no TLS transport (-t l1)")
    preload = wolfssl_fd_shim(cache_dir) if _needs_wolfssl_fd_shim(binary, root) else None
    return KamailioRuntime(version=sipp_version(binary, root), rootfs=root, binary=binary, origin=origin,
                           preload=preload)


if __name__ == "__main__":  # manual use: python -m tests.harness.rootfs -> builds/reuses and prints figures
    import json
    import sys
    t0 = time.monotonic()
    try:
        rt = kamailio6_runtime()
    except RootfsUnavailable as exc:
        print(f"unavailable: {exc}")
        sys.exit(2)
    print(json.dumps({"version": rt.version, "rootfs": str(rt.rootfs), "origin": rt.origin,
                      "elapsed_s": round(time.monotonic() - t0, 1)}))
