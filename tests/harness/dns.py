# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real authoritative DNS server on loopback for tests: Knot DNS (Debian package ``knot``).

Why Knot and not dnsmasq: dnsmasq cannot give an SRV record its own TTL and has no way to answer
SERVFAIL for a chosen name (a dead upstream gives a timeout, a refusing one REFUSED). Knot serves
per-record TTLs from a zone file and answers SERVFAIL for a configured zone whose file does not
load, which is exactly the SERVFAIL case tests need.

Layout: one root zone "." holds every record, so any test name works and unknown names get an
authoritative NXDOMAIN; a name with records of another type gives NOERROR with an empty answer
(no_answer). Each name passed as ``servfail=`` becomes its own zone with a deliberately broken
file, so every query at or below it gets SERVFAIL.

Timeouts: use ``SilentNameserver(address)``: it binds UDP and TCP port 53 on a loopback address
and never answers, so both dnspython and libc's resolver wait out their timeout (an address where
nothing is bound would not do for libc, which gets ICMP "port unreachable" and gives up at once).

Usage::

    with DnsServer(tmp_path, address="127.0.53.7") as dns:
        dns.set_records(srv={"_sip._tls.r1.example.test": [(10, 60, 5061, "pa.example.test")]},
                        a={"pa.example.test": ["198.51.100.1"]}, ttl=60)
        ...  # query 127.0.53.7:53, or mount dns.resolv_conf over /etc/resolv.conf for Kamailio
        dns.set_records(...)  # while running: reloads and waits until the new zone is served

Port 53 on a 127.0.53.x address is the default because Kamailio uses libc's resolver, which only
speaks to port 53. Addresses are leased with a lock file in ``LOCK_DIR`` so concurrent test runs on
one machine never share a server; ``DnsServer.start_on_free_address`` picks a free one.
"""

from __future__ import annotations

import errno
import fcntl
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import time
import typing as t
from pathlib import Path

import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

KNOTD = shutil.which("knotd") or "/usr/sbin/knotd"
KNOTC = shutil.which("knotc") or "/usr/sbin/knotc"
LOCK_DIR = Path("/tmp/commsgw-dns-harness")
ADDRESS_POOL = [str(ipaddress.IPv4Address("127.0.53.0") + n) for n in range(1, 255)]
START_TIMEOUT_S = 10.0
RELOAD_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0

SrvRecord = t.Tuple[int, int, int, str]


class AddressBusy(RuntimeError):
    """The address is leased by another test or port 53 on it is taken by another program."""


class _Lease:
    """An exclusive, process-wide claim on one loopback address (released on close or process exit)."""

    def __init__(self, address: str, port: int) -> None:
        LOCK_DIR.mkdir(parents=True, exist_ok=True)
        self.path = LOCK_DIR / ("%s.%d.lock" % (address, port))
        self._fd = os.open(str(self.path), os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise AddressBusy("%s port %d is leased by another test process" % (address, port))
        # Something outside this harness (a stray dnsmasq, another test's knotd) may hold the port.
        for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            probe = socket.socket(socket.AF_INET, kind)
            try:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
                probe.bind((address, port))
            except OSError as exc:
                self.close()
                if exc.errno == errno.EADDRINUSE:
                    raise AddressBusy("%s port %d is already in use" % (address, port))
                raise
            finally:
                probe.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = -1


def _fqdn(name: str) -> str:
    name = name.strip().lower().rstrip(".")
    if not name or any(ch.isspace() for ch in name):
        raise ValueError("not a DNS name: %r" % name)
    return name + "."


class DnsServer:
    """Knot DNS serving test records on ``address``:``port`` (UDP and TCP)."""

    def __init__(self, workdir: Path, address: str = "127.0.53.1", port: int = 53) -> None:
        self.workdir = Path(workdir)
        self.address = address
        self.port = port
        self._serial = 0
        self._srv: dict[str, list[SrvRecord]] = {}
        self._a: dict[str, list[str]] = {}
        self._ttl = 60
        self._ttl_overrides: dict[str, int] = {}
        self._servfail: list[str] = []
        self._extra: list[str] = []
        self._proc: t.Optional[subprocess.Popen[bytes]] = None
        self._lease: t.Optional[_Lease] = None
        self._log: t.Optional[t.BinaryIO] = None

    # -- records -------------------------------------------------------------------------------
    def set_records(self, srv: t.Optional[t.Mapping[str, t.Sequence[SrvRecord]]] = None,
                    a: t.Optional[t.Mapping[str, t.Sequence[str]]] = None, ttl: int = 60,
                    ttl_overrides: t.Optional[t.Mapping[str, int]] = None,
                    servfail: t.Iterable[str] = (), extra: t.Sequence[str] = ()) -> None:
        """Replace every record. A target "." gives the RFC 2782 "no service" record.

        ``extra``: zone-file lines served as written (absolute names), for records the helpers cannot
        spell: CNAMEs, escaped labels such as ``x\\;obproxy=sip:evil`` or ``\\208\\176`` (hostile DNS tests).

        ``ttl_overrides`` sets the TTL of one name's records (SRV or A); ``servfail`` names answer
        SERVFAIL for themselves and everything below. Running servers are reloaded and this call
        returns only once the new records are served (bounded by RELOAD_TIMEOUT_S).
        """
        self._srv = {_fqdn(name): [(int(p), int(w), int(port), target) for p, w, port, target in records]
                     for name, records in (srv or {}).items()}
        self._a = {_fqdn(name): [str(ipaddress.IPv4Address(ip)) for ip in ips] for name, ips in (a or {}).items()}
        self._ttl = int(ttl)
        self._ttl_overrides = {_fqdn(name): int(value) for name, value in (ttl_overrides or {}).items()}
        self._servfail = sorted({_fqdn(name) for name in servfail})
        self._extra = [str(line) for line in extra]
        if self.running:
            self._write_files()
            self._knotc("reload")
            self._wait_for_serial(self._serial, RELOAD_TIMEOUT_S)

    @property
    def resolv_conf(self) -> Path:
        """A resolv.conf naming only this server (for a private mount namespace, never /etc)."""
        path = self.workdir / "resolv.conf"
        if self.port != 53:
            raise ValueError("libc's resolver only speaks to port 53; this server is on port %d" % self.port)
        text = "nameserver %s\n" % self.address
        if not path.exists() or path.read_text() != text:
            self.workdir.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return path

    @property
    def nameservers(self) -> list[str]:
        return [self.address]

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- files ---------------------------------------------------------------------------------
    @property
    def _zones(self) -> Path:
        return self.workdir / "zones"

    @property
    def _control_socket(self) -> Path:
        # Unix socket paths are limited to 107 bytes; pytest's tmp paths can be longer.
        return LOCK_DIR / ("%s.%d.sock" % (self.address, self.port))

    def _zone_text(self) -> str:
        self._serial += 1
        lines = ["$ORIGIN .",
                 ". 60 IN SOA ns.harness.invalid. hostmaster.harness.invalid. %d 60 60 600 60" % self._serial,
                 ". 60 IN NS ns.harness.invalid."]
        for name in sorted(self._srv):
            ttl = self._ttl_overrides.get(name, self._ttl)
            for priority, weight, port, target in self._srv[name]:
                target = "." if target.strip() in (".", "") else _fqdn(target)
                lines.append("%s %d IN SRV %d %d %d %s" % (name, ttl, priority, weight, port, target))
        for name in sorted(self._a):
            ttl = self._ttl_overrides.get(name, self._ttl)
            lines.extend("%s %d IN A %s" % (name, ttl, ip) for ip in self._a[name])
        lines.extend(self._extra)
        return "\n".join(lines) + "\n"

    def _write_files(self) -> None:
        self._zones.mkdir(parents=True, exist_ok=True)
        (self.workdir / "db").mkdir(exist_ok=True)
        zone_file = self._zones / "root.zone"
        tmp = zone_file.with_suffix(".tmp")
        tmp.write_text(self._zone_text())
        tmp.replace(zone_file)  # knotd must never read a half-written zone
        zones = ['  - domain: "."\n    file: "root.zone"\n']
        for index, name in enumerate(self._servfail):
            broken = self._zones / ("servfail%d.zone" % index)
            # Not zone-file syntax: Knot refuses to load it and answers SERVFAIL for the zone.
            broken.write_text("this zone is broken on purpose by the test harness\n")
            zones.append('  - domain: "%s"\n    file: "%s"\n' % (name, broken.name))
        config = (
            "server:\n"
            "    rundir: \"%(run)s\"\n"
            "    listen: %(address)s@%(port)d\n"
            "    udp-workers: 1\n"
            "    tcp-workers: 1\n"
            "    background-workers: 1\n"
            "database:\n"
            "    storage: \"%(db)s\"\n"
            "log:\n"
            "  - target: stderr\n"
            "    any: info\n"
            "control:\n"
            "    listen: \"%(sock)s\"\n"
            "template:\n"
            "  - id: default\n"
            "    storage: \"%(zones)s\"\n"
            # Serve the files as written: no journal, no write-back, no DNSSEC or semantic checks.
            "    zonefile-sync: -1\n"
            "    zonefile-load: whole\n"
            "    journal-content: none\n"
            "    semantic-checks: off\n"
            "zone:\n%(zone_list)s"
        ) % {"run": self.workdir / "db", "address": self.address, "port": self.port, "db": self.workdir / "db",
             "sock": self._control_socket, "zones": self._zones, "zone_list": "".join(zones)}
        (self.workdir / "knot.conf").write_text(config)

    # -- process -------------------------------------------------------------------------------
    def start(self) -> "DnsServer":
        if self.running:
            return self
        if not os.path.exists(KNOTD):
            raise RuntimeError("knotd not found: install the Debian package 'knot'")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._lease = _Lease(self.address, self.port)
        try:
            self._write_files()
            if self._control_socket.exists():
                self._control_socket.unlink()  # left over by a killed run holding the same lease
            self._log = open(self.workdir / "knot.log", "ab")
            self._proc = subprocess.Popen([KNOTD, "-c", str(self.workdir / "knot.conf")], stdin=subprocess.DEVNULL,
                                          stdout=self._log, stderr=subprocess.STDOUT)
            self._wait_for_serial(self._serial, START_TIMEOUT_S)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=STOP_TIMEOUT_S)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._lease is not None:
            self._lease.close()
            self._lease = None

    def __enter__(self) -> "DnsServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @classmethod
    def start_on_free_address(cls, workdir: Path, first: int = 0) -> "DnsServer":
        """Start on the first 127.0.53.x (from pool index ``first``) no other test or program uses."""
        pool = ADDRESS_POOL[first:] + ADDRESS_POOL[:first]
        for address in pool:
            server = cls(Path(workdir), address=address)
            try:
                return server.start()
            except AddressBusy:
                continue
        raise AddressBusy("every address of 127.0.53.1-254 is in use")

    def log_text(self) -> str:
        path = self.workdir / "knot.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _knotc(self, *args: str) -> None:
        result = subprocess.run([KNOTC, "-s", str(self._control_socket), "-t", "5", *args],
                                capture_output=True, text=True, timeout=15, check=False)
        if result.returncode != 0:
            raise RuntimeError("knotc %s failed: %s%s" % (" ".join(args), result.stdout, result.stderr))

    def query(self, name: str, rdtype: str = "A", timeout: float = 1.0) -> "dns.message.Message":
        """Ask this server directly (no resolver logic in between)."""
        request = dns.message.make_query("." if name == "." else _fqdn(name), dns.rdatatype.from_text(rdtype))
        return dns.query.udp(request, self.address, port=self.port, timeout=timeout)

    def _wait_for_serial(self, serial: int, limit_s: float) -> None:
        """Bounded wait until the root zone with ``serial`` is what the server answers from."""
        deadline = time.monotonic() + limit_s
        last: object = None
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                raise RuntimeError("knotd exited (code %s); log:\n%s" % (
                    None if self._proc is None else self._proc.returncode, self.log_text()[-3000:]))
            try:
                reply = self.query(".", "SOA", timeout=0.3)
                if reply.rcode() == dns.rcode.NOERROR and reply.answer and reply.answer[0][0].serial == serial:
                    return
                last = reply
            except (OSError, dns.exception.Timeout) as exc:
                last = exc
            time.sleep(0.05)
        raise RuntimeError("knotd on %s:%d did not serve serial %d within %.0f s (last: %s); log:\n%s" % (
            self.address, self.port, serial, limit_s, last, self.log_text()[-3000:]))


class SilentNameserver:
    """Binds UDP and TCP port 53 on ``address`` and never answers: a nameserver that times out."""

    def __init__(self, address: str, port: int = 53) -> None:
        self.address = address
        self.port = port
        self._sockets: list[socket.socket] = []
        self._lease: t.Optional[_Lease] = None

    def start(self) -> "SilentNameserver":
        self._lease = _Lease(self.address, self.port)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind((self.address, self.port))
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind((self.address, self.port))
        tcp.listen(8)  # connections complete in the kernel, but nothing is ever read or sent
        self._sockets = [udp, tcp]
        return self

    def stop(self) -> None:
        for sock in self._sockets:
            sock.close()
        self._sockets = []
        if self._lease is not None:
            self._lease.close()
            self._lease = None

    def was_asked(self) -> bool:
        """Whether anything reached it: a UDP query waiting, or a TCP connection waiting to be accepted."""
        udp, tcp = self._sockets
        udp.setblocking(False)
        tcp.setblocking(False)
        try:
            udp.recv(4096, socket.MSG_PEEK)
            return True
        except BlockingIOError:
            pass
        try:
            tcp.accept()[0].close()
            return True
        except BlockingIOError:
            return False

    def __enter__(self) -> "SilentNameserver":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @classmethod
    def start_on_free_address(cls, first: int = 0) -> "SilentNameserver":
        pool = ADDRESS_POOL[first:] + ADDRESS_POOL[:first]
        for address in pool:
            try:
                return cls(address).start()
            except AddressBusy:
                continue
        raise AddressBusy("every address of 127.0.53.1-254 is in use")
