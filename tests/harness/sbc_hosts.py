# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Production-shaped Debian SBC hosts for integration tests: systemd-nspawn guests reached over SSH.

Each guest boots a real Debian (13 "trixie" with Kamailio 6.0, or 12 "bookworm" with Kamailio 5.6)
with systemd as PID 1, the distribution's ``kamailio`` package in its stock state, OpenSSH and a
non-root user ``ops`` whose ``sudo`` asks for a password: Ansible reaches it exactly like an
operator's controller reaches a production SBC (ssh + become with a password).

Golden images are built with debootstrap once per suite and recipe version, cached as
``sbc-<suite>-golden-r<N>.tar.zst`` under ``/var/cache/commsgw-test`` (``COMMSGW_TEST_CACHE``) like
:mod:`harness.rootfs`, and unpacked once under ``/var/lib/commsgw-test/sbc-images``. Every guest
runs on an overlayfs over that image (own upper/work dirs), mounted inside a private mount
namespace that only the guest's ``systemd-nspawn`` lives in, so no mount can outlive the guest.

Usage::

    with SbcHostLab([Guest("sbc1", "trixie", "10.213.0.11"), Guest("sbc2", "bookworm", "10.213.0.12")],
                    nameserver="10.213.0.53") as lab:
        lab.add_address("10.213.0.53/24")          # e.g. for a DNS server the test starts
        print(lab.ssh("sbc1", "kamailio -v").stdout)
        hostvars = lab.inventory_vars("sbc1")   # ansible_host, ansible_user=ops, become password...

See docs/sbc-host-containers.md (measured facts) for the why of the flags.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import threading
import time
import typing as t
from pathlib import Path

from harness.rootfs import DEFAULT_CACHE_DIR, _locked, _run, start_build

SUITES = ("trixie", "bookworm")
# Everything Ansible modules and the SBC role need is baked in: guests cannot reach the mirror.
PACKAGES = ("systemd", "systemd-sysv", "dbus", "openssh-server", "sudo", "kamailio", "kamailio-tls-modules",
            "kamailio-extra-modules", "python3", "python3-apt", "python3-dnspython", "netbase", "iproute2",
            "ca-certificates", "openssl")
# Bump when the recipe below changes so that stale caches are rebuilt instead of reused.
RECIPE_VERSION = "1"
STATE_DIR = Path(os.environ.get("COMMSGW_TEST_STATE", "/var/lib/commsgw-test"))
BUILD_TIMEOUT_S = 900
OPS_USER = "ops"
# Two labs on one machine (two test runs, a developer's and CI's) must not use one bridge or one guest name
# at once: a guest's veth is named after it, and a lab's start clears whatever a lab with its bridge left
# behind, a live one included. A lab holds one lock per bridge and per guest name from start to close.
LABS_LOCK_DIR = Path("/run/lock/commsgw-sbc-labs")
LABS_LOCK_WAIT_S = 3600.0


def tarball_path(suite: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    return cache_dir / f"sbc-{suite}-golden-r{RECIPE_VERSION}.tar.zst"


def _chroot_script(root: Path, script: str, log: t.IO[str]) -> None:
    """Run a sh script chrooted into root, /proc mounted in a private mount namespace (nothing leaks)."""
    inner = (f"mount -t proc proc {shlex.quote(str(root / 'proc'))} && "
             f"exec chroot {shlex.quote(str(root))} sh -euc {shlex.quote(script)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive", LC_ALL="C")
    _run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-euc", inner], log, env=env)


def build_golden_tarball(suite: str, tarball: Path, mirror: t.Optional[str] = None,
                         log_path: t.Optional[Path] = None) -> dict[str, t.Any]:
    """debootstrap one SBC golden image and pack it as tar.zst. Returns figures (build_s, bytes, log)."""
    if suite not in SUITES:
        raise ValueError(f"unsupported suite {suite!r}, expected one of {SUITES}")
    build = start_build(tarball, f"the {suite} SBC image", f"sbc-{suite}-", mirror, log_path)
    mirror, log_path, build_dir, started = build.mirror, build.log_path, build.build_dir, build.started
    root = build_dir / "root"
    try:
        with open(log_path, "w") as log:
            _run(["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES), suite, str(root), mirror],
                 log)
            # Stock package state is kept as is (kamailio.service neither masked nor disabled): the tests
            # onboard onto a freshly installed package. Only the operator access is added.
            _chroot_script(root, "\n".join([
                f"useradd --create-home --shell /bin/bash --groups sudo {OPS_USER}",
                # Locked until a guest gets its own password hash (SbcHostLab writes /etc/shadow).
                f"usermod --lock {OPS_USER}",
                "systemctl enable ssh.service systemd-networkd.service",
                "apt-get clean",
            ]), log)
            # Per-guest identity is written at boot time; none may be shared via the image.
            for key in (root / "etc/ssh").glob("ssh_host_*"):
                key.unlink()
            (root / "etc/machine-id").write_text("")
            with contextlib.suppress(FileNotFoundError):
                (root / "var/lib/dbus/machine-id").unlink()
            (root / "etc/resolv.conf").write_text("")
            (root / "etc/hostname").write_text("localhost\n")
            for rel in ("var/lib/apt/lists", "var/cache/apt/archives", "usr/share/doc", "usr/share/man",
                        "usr/share/locale", "usr/share/info"):
                p = root / rel
                if p.exists():
                    shutil.rmtree(p)
                    p.mkdir(parents=True)
            tmp_tar = tarball.with_suffix(".partial")
            _run(["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-I", "zstd -T0 -10", "-cf", str(tmp_tar),
                  "."], log)
            os.replace(tmp_tar, tarball)
        return {"build_s": round(time.monotonic() - started, 1), "tarball_bytes": tarball.stat().st_size,
                "log": str(log_path)}
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)


def ensure_golden_image(suite: str, cache_dir: Path = DEFAULT_CACHE_DIR,
                        state_dir: Path = STATE_DIR) -> tuple[Path, dict[str, t.Any]]:
    """The unpacked golden image of suite (built and cached on first use). Returns (dir, figures).

    One lock per suite so that trixie and bookworm can build side by side; the unpacked tree is reused
    as long as its stamp matches the tarball (same recipe version, same build).
    """
    tarball = tarball_path(suite, cache_dir)
    extracted = state_dir / "sbc-images" / f"{suite}-r{RECIPE_VERSION}"
    stamp = state_dir / "sbc-images" / f"{suite}-r{RECIPE_VERSION}.stamp"
    figures: dict[str, t.Any] = {"suite": suite, "tarball": str(tarball), "built": False}
    with _locked(cache_dir / f".sbc-{suite}.lock"):
        if not tarball.exists():
            figures.update(build_golden_tarball(suite, tarball))
            figures["built"] = True
        figures["tarball_bytes"] = tarball.stat().st_size
        signature = f"{tarball.stat().st_size}:{int(tarball.stat().st_mtime)}"
        # The stamp lives beside the tree: the tree is an overlay lower dir and must stay byte-identical.
        if not (extracted.is_dir() and stamp.exists() and stamp.read_text() == signature):
            started = time.monotonic()
            if extracted.exists():
                shutil.rmtree(extracted)
            extracted.mkdir(parents=True)
            subprocess.run(["tar", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-C", str(extracted),
                            "-I", "zstd", "-xf", str(tarball)], check=True, timeout=300, capture_output=True)
            stamp.write_text(signature)
            figures["extract_s"] = round(time.monotonic() - started, 1)
    return extracted, figures


# --------------------------------------------------------------------------------------------------
# The lab: a bridge, guests on overlays, SSH access.

CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_GROUP = "commsgw-sbc"
# Hierarchies a guest's nspawn is moved into before it starts: on this cgroup-v1 hybrid host without
# systemd, nspawn otherwise shares the root cgroup with everything else.
CGROUP_HIERARCHIES = ("systemd", "unified")
REBOOT_EXIT_CODE = 133  # systemd-nspawn's exit status when the guest ran `reboot`
MAX_RESTARTS = 10
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 20.0
SSH_TIMEOUT_S = 60.0


@dataclasses.dataclass(frozen=True)
class Guest:
    """One SBC host: machine name (also hostname, <= 12 chars for the host veth), suite, IPv4 address."""

    name: str
    suite: str
    address: str


class _Supervisor(threading.Thread):
    """Runs one guest's nspawn and starts it again after a guest `reboot` (exit 133), a bounded number of times."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path,
                 max_restarts: int = MAX_RESTARTS) -> None:
        super().__init__(name=f"sbc-{name}", daemon=True)
        self.argv, self.env, self.log_path, self.max_restarts = argv, env, log_path, max_restarts
        self.exit_codes: list[int] = []
        self._lock = threading.Lock()
        self._stopping = False
        self._proc: t.Optional[subprocess.Popen[bytes]] = None

    def run(self) -> None:
        with open(self.log_path, "ab") as log:
            while len(self.exit_codes) <= self.max_restarts:
                with self._lock:
                    if self._stopping:
                        return
                    # Own session: a Ctrl-C on the test's terminal must not hit the guest mid-shutdown.
                    self._proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                                  stderr=subprocess.STDOUT, start_new_session=True)
                rc = self._proc.wait()
                self.exit_codes.append(rc)
                log.write(f"\n[harness] nspawn exited with {rc}\n".encode())
                log.flush()
                if rc != REBOOT_EXIT_CODE:
                    return

    def terminate(self) -> None:
        """No more restarts; SIGTERM makes nspawn power the guest off cleanly."""
        with self._lock:
            self._stopping = True
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)

    def wait_stopped(self, deadline: float) -> None:
        """Wait for the poweroff until deadline (monotonic), then SIGKILL nspawn (clean-up kills the rest)."""
        proc = self._proc
        if proc is not None:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.join(5)


# Each guest's systemd and its services hold inotify instances of root (systemd, journald, networkd, logind...):
# Debian's default of 128 per user stops the 17th or so guest at boot ("Failed to allocate manager object: Too
# many open files"; the fleet bench boots 32). Raised, never lowered, for the machine (root's limit).
INOTIFY_INSTANCES_FILE = Path("/proc/sys/fs/inotify/max_user_instances")
INOTIFY_INSTANCES_PER_GUEST = 16
INOTIFY_INSTANCES_HOST = 256


def _raise_inotify_limit(guests: int) -> None:
    wanted = INOTIFY_INSTANCES_HOST + INOTIFY_INSTANCES_PER_GUEST * guests
    if int(INOTIFY_INSTANCES_FILE.read_text().strip()) < wanted:
        INOTIFY_INSTANCES_FILE.write_text("%d\n" % wanted)


def _sh(cmd: t.Sequence[str], check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=check)


def _cgroup_dirs(group: str) -> list[Path]:
    """Every directory of ours under every mounted cgroup hierarchy, deepest first."""
    found: list[Path] = []
    for hierarchy in sorted(CGROUP_ROOT.iterdir()):
        top = hierarchy / CGROUP_GROUP / group
        if top.is_dir():
            found.extend(Path(entry[0]) for entry in os.walk(top))
    if not found:
        return []
    # Also the shared parent, removed when it holds no other lab any more.
    found.extend(h / CGROUP_GROUP for h in CGROUP_ROOT.iterdir() if (h / CGROUP_GROUP).is_dir())
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def _cgroup_pids(dirs: t.Iterable[Path]) -> set[int]:
    pids: set[int] = set()
    for d in dirs:
        with contextlib.suppress(OSError):
            pids.update(int(p) for p in (d / "cgroup.procs").read_text().split())
    return pids


class _LabNamesLock:
    """The locks of a lab's bridge and guest names (flock, taken in sorted order, freed on close or exit)."""

    def __init__(self, bridge: str, guests: t.Iterable[str]) -> None:
        self.names = sorted({f"bridge-{bridge}"} | {f"guest-{name[:12]}" for name in guests})
        self._fds: list[int] = []

    def acquire(self, wait_s: float = LABS_LOCK_WAIT_S) -> None:
        import fcntl
        LABS_LOCK_DIR.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait_s
        for name in self.names:
            fd = os.open(str(LABS_LOCK_DIR / name), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o644)
            self._fds.append(fd)
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if time.monotonic() >= deadline:
                        self.release()
                        raise TimeoutError(f"another SBC host lab held {LABS_LOCK_DIR / name} for {wait_s:.0f} s")
                    time.sleep(1.0)

    def release(self) -> None:
        while self._fds:
            os.close(self._fds.pop())  # closing the only descriptor frees its flock


class SbcHostLab:
    """Bridge + booted guests; a context manager that always cleans up what it (or a crashed run) created.

    ``bridge`` names the lab: the cgroups (``commsgw-sbc/<bridge>/<guest>``), the state directory
    (``<state_dir>/sbc-lab-<bridge>``) and the stale-state clean-up at start all key on it, so two labs
    with different bridges and subnets can run side by side.
    """

    def __init__(self, guests: t.Sequence[Guest], *, bridge: str = "cgwbr0", subnet: str = "10.213.0.0/24",
                 host_address: t.Optional[str] = None, nameserver: t.Optional[str] = None,
                 cache_dir: Path = DEFAULT_CACHE_DIR, state_dir: Path = STATE_DIR,
                 ready_timeout: float = READY_TIMEOUT_S) -> None:
        self.network = ipaddress.ip_network(subnet)
        self.host_address = str(ipaddress.ip_address(host_address) if host_address else next(self.network.hosts()))
        self.bridge, self.nameserver, self.ready_timeout = bridge, nameserver, ready_timeout
        self.cache_dir, self.dir = cache_dir, state_dir / f"sbc-lab-{bridge}"
        self.state_root = state_dir
        self.guests = {g.name: g for g in guests}
        if len(self.guests) != len(guests):
            raise ValueError("guest names must be unique")
        if len(bridge) > 15:
            raise ValueError(f"bridge name {bridge!r} longer than an interface name may be")
        seen_veth: set[str] = set()
        for g in guests:
            # The host side of the guest's veth is "vb-" + the first 12 characters of the machine name, so
            # names must also differ from those of guests in other labs running on this machine.
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", g.name) or g.name[:12] in seen_veth:
                raise ValueError(f"guest name {g.name!r}: lower-case letters, digits, '-', unique in 12 chars")
            seen_veth.add(g.name[:12])
            if g.suite not in SUITES:
                raise ValueError(f"guest {g.name}: suite {g.suite!r} not in {SUITES}")
            if ipaddress.ip_address(g.address) not in self.network or g.address == self.host_address:
                raise ValueError(f"guest {g.name}: {g.address} not a free address in {self.network}")
        self.become_password = secrets.token_urlsafe(18)
        self.private_key = self.dir / "id_ed25519"
        self.images: dict[str, Path] = {}
        self.figures: dict[str, t.Any] = {"images": {}, "boot_to_ssh_s": {}, "ready_s": {}}
        self._supervisors: dict[str, _Supervisor] = {}
        self._addresses: list[str] = []
        self._names_lock = _LabNamesLock(bridge, self.guests)

    # -- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> "SbcHostLab":
        self._names_lock.acquire()
        try:
            self.start()
        except BaseException:  # KeyboardInterrupt too: never leave half a lab behind
            try:
                self.close()
            finally:
                self._names_lock.release()
            raise
        return self

    def __exit__(self, *exc: t.Any) -> None:
        try:
            self.close()
        finally:
            self._names_lock.release()

    def start(self) -> None:
        for suite in sorted({g.suite for g in self.guests.values()}):
            image, figures = ensure_golden_image(suite, self.cache_dir, self.state_root)
            self.images[suite], self.figures["images"][suite] = image, figures
        self.cleanup_stale()
        _raise_inotify_limit(len(self.guests))
        self.dir.mkdir(parents=True)
        _sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"harness@{self.bridge}", "-f",
             str(self.private_key)])
        self._create_bridge()
        started = time.monotonic()
        for guest in self.guests.values():
            self._prepare_upper(guest)
            self._launch(guest)
        for guest in self.guests.values():  # they boot in parallel; wait for each in turn
            self.wait_ready(guest.name, started)

    def close(self) -> None:
        """Power off guests, then remove everything of this lab (idempotent; also used for stale state)."""
        started = time.monotonic()
        for sup in self._supervisors.values():  # all power off at once, then wait for each
            sup.terminate()
        for sup in self._supervisors.values():
            sup.wait_stopped(started + STOP_TIMEOUT_S)
        if self._supervisors:
            self.figures["poweroff_s"] = round(time.monotonic() - started, 2)
        self._supervisors.clear()
        for address in self._addresses:
            _sh(["ip", "addr", "del", address, "dev", self.bridge], check=False)
        self._addresses.clear()
        self.cleanup_stale()

    def cleanup_stale(self) -> None:
        """Remove what a lab with this bridge left: processes, cgroups, mounts, bridge, state dir."""
        dirs = _cgroup_dirs(self.bridge)
        deadline = time.monotonic() + 10
        while _cgroup_pids(dirs) and time.monotonic() < deadline:
            for pid in _cgroup_pids(dirs):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        for d in dirs:  # deepest first; a parent shared with another lab stays (EBUSY)
            with contextlib.suppress(OSError):
                d.rmdir()
        # Overlays live in per-guest mount namespaces; a mount here would come from a manual run.
        prefix = str(self.dir) + "/"
        with open("/proc/self/mountinfo") as fh:
            mounts = [line.split()[4] for line in fh]
        for mnt in sorted((m for m in mounts if m.startswith(prefix)), key=len, reverse=True):
            _sh(["umount", "-l", mnt], check=False)
        if Path(f"/sys/class/net/{self.bridge}").exists():
            _sh(["ip", "neigh", "flush", "dev", self.bridge], check=False)
            _sh(["ip", "link", "del", self.bridge], check=False)
        for g in self.guests.values():
            # Same IP with a new MAC after a re-creation: a stale entry stalls SSH for ~40 s.
            _sh(["ip", "neigh", "flush", "to", g.address], check=False)
        for sub in ("locks", "propagate"):
            with contextlib.suppress(OSError):
                Path("/run/systemd/nspawn", sub).rmdir()
        with contextlib.suppress(OSError):
            Path("/run/systemd/nspawn").rmdir()
        if self.dir.exists():
            shutil.rmtree(self.dir)

    # -- set-up steps -------------------------------------------------------------------------------

    def _create_bridge(self) -> None:
        _sh(["ip", "link", "add", self.bridge, "type", "bridge"])
        _sh(["ip", "addr", "add", f"{self.host_address}/{self.network.prefixlen}", "dev", self.bridge])
        _sh(["ip", "link", "set", self.bridge, "up"])

    def _gdir(self, guest: Guest) -> Path:
        return self.dir / guest.name

    def _upper_write(self, guest: Guest, rel: str, content: t.Union[str, bytes], mode: int,
                     owner: t.Optional[tuple[int, int]] = None) -> None:
        """Write a file into the guest's overlay upper dir before boot.

        Parent directories copy mode and owner from the golden image: in a merged overlay the upper
        directory's attributes win, so a root-owned 0700 ~ops/ would lock ops out.
        """
        self._upper_mkdirs(guest, str(Path(rel).parent), owner)
        path = self._gdir(guest) / "upper" / rel
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        os.chown(path, *(owner or (0, 0)))
        os.chmod(path, mode)

    def _upper_mkdirs(self, guest: Guest, rel: str, owner: t.Optional[tuple[int, int]] = None) -> Path:
        lower, upper = self.images[guest.suite], self._gdir(guest) / "upper"
        parts = Path(rel).parts
        for i in range(1, len(parts) + 1):
            sub = Path(*parts[:i])
            if not (upper / sub).exists():
                (upper / sub).mkdir()
                if (lower / sub).is_dir():
                    st = (lower / sub).stat()
                    os.chown(upper / sub, st.st_uid, st.st_gid)
                    os.chmod(upper / sub, st.st_mode & 0o7777)
                else:  # new directory (e.g. ~/.ssh): private to the file's owner
                    os.chown(upper / sub, *(owner or (0, 0)))
                    os.chmod(upper / sub, 0o700)
        return upper / rel

    def _prepare_upper(self, guest: Guest) -> None:
        gdir, lower = self._gdir(guest), self.images[guest.suite]
        for sub in ("upper", "work", "root"):
            (gdir / sub).mkdir(parents=True)
        os.chmod(gdir / "upper", 0o755)  # the merged root's mode comes from here
        passwd = {f.split(":")[0]: f.split(":") for f in (lower / "etc/passwd").read_text().splitlines()}
        ops_ids = (int(passwd[OPS_USER][2]), int(passwd[OPS_USER][3]))
        self._upper_write(guest, "etc/hostname", guest.name + "\n", 0o644)
        self._upper_write(guest, "etc/hosts", f"127.0.0.1\tlocalhost\n127.0.1.1\t{guest.name}\n"
                          "::1\tlocalhost ip6-localhost ip6-loopback\n", 0o644)
        self._upper_write(guest, "etc/machine-id", secrets.token_hex(16) + "\n", 0o444)
        self._upper_write(guest, "etc/resolv.conf",
                          f"nameserver {self.nameserver}\n" if self.nameserver else "", 0o644)
        # Named like the stock /usr/lib file (DHCP on host0) so that it replaces it.
        self._upper_write(guest, "etc/systemd/network/80-container-host0.network", "\n".join([
            "[Match]", "Name=host0", "", "[Network]", f"Address={guest.address}/{self.network.prefixlen}",
            f"Gateway={self.host_address}", "LinkLocalAddressing=no", "IPv6AcceptRA=no", ""]), 0o644)
        # sudo asks ops for this password: the tests go through the real become path.
        hashed = subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=self.become_password,
                                capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        shadow = []
        for line in (lower / "etc/shadow").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == OPS_USER:
                fields[1] = hashed
            shadow.append(":".join(fields))
        st = (lower / "etc/shadow").stat()
        self._upper_write(guest, "etc/shadow", "\n".join(shadow) + "\n", st.st_mode & 0o7777, (st.st_uid, st.st_gid))
        pub = Path(str(self.private_key) + ".pub").read_text()
        self._upper_write(guest, f"home/{OPS_USER}/.ssh/authorized_keys", pub, 0o600, ops_ids)
        # Per-guest host keys, generated on the host (ssh-keygen -A writes under <prefix>/etc/ssh).
        # (ssh-keygen -A exits 0 even when it could not write, so check the result.)
        ssh_dir = self._upper_mkdirs(guest, "etc/ssh")
        _sh(["ssh-keygen", "-A", "-f", str(gdir / "upper")])
        if len(list(ssh_dir.glob("ssh_host_*_key"))) < 3:
            raise RuntimeError(f"ssh-keygen -A wrote no host keys into {ssh_dir}")
        for cg in self._cgroups(guest):
            cg.mkdir(parents=True, exist_ok=True)

    def _cgroups(self, guest: Guest) -> list[Path]:
        return [CGROUP_ROOT / h / CGROUP_GROUP / self.bridge / guest.name for h in CGROUP_HIERARCHIES]

    def _launch(self, guest: Guest) -> None:
        gdir, q = self._gdir(guest), shlex.quote
        nspawn = ["systemd-nspawn", "--boot", "--register=no", "--keep-unit", f"--network-bridge={self.bridge}",
                  "-M", guest.name, "-D", str(gdir / "root"), "--link-journal=no", "--resolv-conf=off",
                  "--timezone=off", "--console=read-only"]
        # Mount the overlay in a mount namespace of this guest only: it vanishes with the guest, even
        # if the harness is killed. The shell joins the guest's cgroups, then becomes nspawn (same pid).
        script = "\n".join(
            [f"mount -t overlay overlay -o lowerdir={q(str(self.images[guest.suite]))},"
             f"upperdir={q(str(gdir / 'upper'))},workdir={q(str(gdir / 'work'))} {q(str(gdir / 'root'))}"]
            + [f"echo $$ > {q(str(cg / 'cgroup.procs'))}" for cg in self._cgroups(guest)]
            + ["exec " + " ".join(q(a) for a in nspawn)])
        argv = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-euc", script]
        # The guest sees a pure cgroup v2 tree, like a production host (hybrid v1 host here).
        env = dict(os.environ, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY="1")
        sup = _Supervisor(guest.name, argv, env, gdir / "console.log")
        self._supervisors[guest.name] = sup
        sup.start()

    def wait_ready(self, name: str, started: t.Optional[float] = None) -> None:
        """Until SSH login as ops works and systemd reports running/degraded (ready_timeout after started)."""
        guest = self.guests[name]
        started = time.monotonic() if started is None else started
        deadline = started + self.ready_timeout
        last = ""
        while True:
            remaining = deadline - time.monotonic()
            sup = self._supervisors[guest.name]
            if remaining <= 0 or (not sup.is_alive() and sup.exit_codes):
                raise RuntimeError(f"guest {guest.name} not ready within {self.ready_timeout} s "
                                   f"(nspawn exits {sup.exit_codes}; last: {last!r}); console:\n"
                                   + self.console(guest.name)[-3000:])
            try:
                res = self.ssh(guest.name, "true", timeout=min(5.0, remaining), connect_timeout=2)
            except subprocess.TimeoutExpired:
                continue
            if res.returncode == 0:
                break
            last = res.stderr.strip()
            time.sleep(0.2)
        # First boot only: a reboot's figure is what reboot() returns.
        self.figures["boot_to_ssh_s"].setdefault(guest.name, round(time.monotonic() - started, 2))
        res = self.ssh(guest.name, "systemctl is-system-running --wait",
                       timeout=max(1.0, deadline - time.monotonic()))
        state = res.stdout.strip()
        if state not in ("running", "degraded"):
            raise RuntimeError(f"guest {guest.name}: systemd state {state!r}: {res.stderr}")
        self.figures["ready_s"].setdefault(guest.name, round(time.monotonic() - started, 2))
        self.figures.setdefault("system_state", {})[guest.name] = state

    # -- using the lab ---------------------------------------------------------------------------------

    def reboot(self, name: str, timeout: float = 30.0) -> float:
        """`systemctl reboot` in the guest, wait until nspawn was started again and the guest is ready.

        Returns the seconds from the reboot command to ready.
        """
        sup, started = self._supervisors[name], time.monotonic()
        runs = len(sup.exit_codes)
        with contextlib.suppress(subprocess.TimeoutExpired):  # the session may die with the guest
            self.ssh(name, "systemctl reboot", become=True, timeout=10)
        while len(sup.exit_codes) == runs:
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"guest {name} did not go down within {timeout} s of `systemctl reboot`")
            time.sleep(0.1)
        if sup.exit_codes[-1] != REBOOT_EXIT_CODE:
            raise RuntimeError(f"guest {name}: nspawn exited {sup.exit_codes[-1]} on reboot, not 133")
        self.wait_ready(name, started)
        return round(time.monotonic() - started, 2)

    def add_address(self, address: str) -> str:
        """Add an address to the bridge (for simulated peers, DNS...); without a prefix, the lab's. Removed at exit."""
        iface = ipaddress.ip_interface(address if "/" in address else f"{address}/{self.network.prefixlen}")
        _sh(["ip", "addr", "add", str(iface), "dev", self.bridge])
        self._addresses.append(str(iface))
        return str(iface.ip)

    def _ssh_base(self, connect_timeout: float = 5) -> list[str]:
        return ["ssh", "-i", str(self.private_key), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
                "-o", f"ConnectTimeout={int(connect_timeout)}"]

    def ssh(self, guest: str, command: str, become: bool = False, timeout: float = SSH_TIMEOUT_S,
            input: t.Optional[str] = None, connect_timeout: float = 5) -> subprocess.CompletedProcess[str]:
        """Run command (a shell string) as ops over SSH; become=True runs it as root via sudo + password."""
        if become:
            # sudo -S reads the password line from stdin byte by byte; the rest stays for the command.
            command = "sudo -S -p '' -- sh -c " + shlex.quote(command)
            input = self.become_password + "\n" + (input or "")
        argv = self._ssh_base(connect_timeout) + [f"{OPS_USER}@{self.guests[guest].address}", command]
        return subprocess.run(argv, input=input if input is not None else "", capture_output=True, text=True,
                              timeout=timeout, check=False)

    def copy_to(self, guest: str, local: t.Union[str, Path], remote: str, become: bool = False,
                mode: str = "0644") -> None:
        """Copy a local file to the guest over SSH (as root with become=True)."""
        data = Path(local).read_text()
        cmd = f"install -m {shlex.quote(mode)} /dev/stdin {shlex.quote(remote)}"
        res = self.ssh(guest, cmd, become=become, input=data)
        if res.returncode != 0:
            raise RuntimeError(f"copy to {guest}:{remote} failed: {res.stderr}")

    def inventory_vars(self, guest: str) -> dict[str, t.Any]:
        """Ansible connection variables for guest: ssh as ops, become (sudo) with the password."""
        return {
            "ansible_host": self.guests[guest].address,
            "ansible_user": OPS_USER,
            "ansible_become": True,
            "ansible_become_password": self.become_password,
            "ansible_ssh_private_key_file": str(self.private_key),
            "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
            "ansible_python_interpreter": "/usr/bin/python3",
        }

    def console(self, guest: str) -> str:
        """The guest's console output so far (boot messages), for failure reports."""
        path = self.dir / guest / "console.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def exit_codes(self, guest: str) -> list[int]:
        """nspawn exit codes seen so far for guest (133 = it rebooted and was started again)."""
        return list(self._supervisors[guest].exit_codes)


def _parse_guests(spec: str) -> list[Guest]:
    """'sbc1:trixie:10.213.0.11,sbc2:bookworm:10.213.0.12' -> guests."""
    guests = []
    for item in filter(None, spec.split(",")):
        name, suite, address = item.split(":")
        guests.append(Guest(name, suite, address))
    return guests


def main(argv: t.Optional[t.Sequence[str]] = None) -> int:
    """For humans: `up` boots guests and holds them (Ctrl-C ends, bounded by --hold); `down` clears a stale lab."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m harness.sbc_hosts", description=__doc__.split("\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="boot guests, print an Ansible inventory, hold until Ctrl-C or --hold")
    up.add_argument("--guests", required=True, help="name:suite:address,... e.g. sbc1:trixie:10.213.0.11")
    up.add_argument("--nameserver")
    up.add_argument("--inventory", type=Path, help="also write the inventory (JSON) to this file")
    up.add_argument("--hold", type=float, default=3600.0, help="seconds to keep the lab up (default 3600)")
    down = sub.add_parser("down", help="remove what a crashed lab on --bridge left behind")
    for p in (up, down):
        p.add_argument("--bridge", default="cgwbr0")
        p.add_argument("--subnet", default="10.213.0.0/24")
    args = parser.parse_args(argv)
    if args.cmd == "down":
        SbcHostLab([], bridge=args.bridge, subnet=args.subnet).cleanup_stale()
        return 0
    guests = _parse_guests(args.guests)
    with SbcHostLab(guests, bridge=args.bridge, subnet=args.subnet, nameserver=args.nameserver) as lab:
        inventory = {"all": {"hosts": {g.name: lab.inventory_vars(g.name) for g in guests}}}
        if args.inventory:
            args.inventory.write_text(json.dumps(inventory, indent=2) + "\n")
        print(json.dumps({"figures": lab.figures, "inventory": inventory}, indent=2), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            time.sleep(args.hold)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
