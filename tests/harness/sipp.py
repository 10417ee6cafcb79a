# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIPp (Debian ``sip-tester``) as ACG peers and as the operator core, for black-box tests.

* ``SippPeer``: a UAS on one address/port playing an ACG peer: answers INVITEs with 200 (a full
  dialog) or one error code (408, 503, 504, 486, 404, 500, 603, 480, 502...), answers OPTIONS
  or ignores them. "Silent" is simply a peer address with no process (UDP) or a stopped peer.
  Every message it receives is in its message log, so tests count what it actually got.
* ``SippCaller``: a UAC placing a bounded number of calls at a bounded rate, expecting one final
  code; returns SIPp's success/failure counters plus per-call outcomes from its message log.

SIPp checks reply codes when it loads a scenario, so each behaviour gets its own scenario file,
built from the templates in ``harness/sipp/``.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import typing as t
import uuid
from pathlib import Path

SIPP = shutil.which("sipp") or "/usr/bin/sipp"
SCENARIOS = Path(__file__).resolve().parent / "sipp"
REASONS = {200: "OK", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout", 414: "Request-URI Too Long",
           400: "Bad Request", 480: "Temporarily Unavailable", 486: "Busy Here", 500: "Server Internal Error",
           502: "Bad Gateway", 503: "Service Unavailable", 504: "Server Time-out", 513: "Message Too Large",
           603: "Decline"}
# SIPp's -t per transport: one socket each, so every message comes from address:port.
TRANSPORT_FLAGS = {"udp": "u1", "tcp": "t1", "tls": "l1"}
_ENTRY_RE = re.compile(r"^-{20,} (\S+[ \t]+\S+)[ \t]*$", re.MULTILINE)


def _template(name: str) -> str:
    return (SCENARIOS / name).read_text()


def uas_scenario(code: t.Optional[int], answer_options: bool = True) -> str:
    """A peer answering INVITEs with ``code`` (None: receives and never answers, a silent peer
    whose received INVITEs can still be counted)."""
    if code is None:
        answer = "  <nop next=\"end\"/>\n"
        name = "silent"
    elif code == 200:
        answer = _template("uas_trying.xml") + _template("uas_answer_200.xml")
        name = "answers 200"
    else:
        error = _template("uas_answer_error.xml").replace("@CODE@", str(code))
        answer = _template("uas_trying.xml") + error.replace("@REASON@", REASONS.get(code, "Error"))
        name = "answers %d" % code
    options = _template("uas_options_200.xml") if answer_options else "  <nop/>\n"
    return (_template("uas.xml").replace("@NAME@", name).replace("@ANSWER@", answer).replace("@OPTIONS@", options))


def uac_scenario(user: str, expect: int, hold_ms: int = 200, extra_headers: str = "",
                 contact_user: str = "caller") -> str:
    final = (_template("uac_final_200.xml").replace("@HOLD_MS@", str(hold_ms)) if expect == 200 else
             _template("uac_final_error.xml").replace("@EXPECT@", str(expect)))
    return (_template("uac.xml").replace("@FINAL@", final).replace("@USER@", user).replace("@EXPECT@", str(expect))
            .replace("@HOLD_MS@", str(hold_ms)).replace("@NAME@", "expects %d" % expect)
            .replace("@CONTACT_USER@", contact_user).replace("@EXTRA_HEADERS@", extra_headers))


@dataclasses.dataclass
class Message:
    time: float  # wall clock (SIPp's log timestamp)
    direction: str  # "sent" | "received"
    text: str

    @property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0].strip()

    def header(self, name: str) -> t.Optional[str]:
        match = re.search(r"^%s\s*:\s*(.*)$" % re.escape(name), self.text, re.MULTILINE | re.IGNORECASE)
        return match.group(1).strip() if match else None

    @property
    def call_id(self) -> t.Optional[str]:
        return self.header("Call-ID") or self.header("i")

    @property
    def cseq_method(self) -> t.Optional[str]:
        cseq = self.header("CSeq")
        return cseq.split()[-1] if cseq else None


def _timestamp(text: str) -> float:
    """SIPp writes "2026-11-29 15:24:50.393839" (local time)."""
    whole, dummy, fraction = text.replace("\t", " ").partition(".")
    try:
        return time.mktime(time.strptime(whole, "%Y-%m-%d %H:%M:%S")) + float("0." + (fraction or "0"))
    except ValueError:
        return 0.0


def parse_message_log(path: Path) -> list[Message]:
    """SIPp's -trace_msg log: entries headed by a dashed line with a timestamp."""
    if not path.exists():
        return []
    text = path.read_text(errors="replace").replace("\r\n", "\n")
    heads = list(_ENTRY_RE.finditer(text))
    messages = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        body = text[head.end():end].lstrip("\n")
        first, dummy, rest = body.partition("\n")
        direction = "sent" if " sent" in first else "received" if "received" in first else "?"
        stamp = _timestamp(head.group(1))
        messages.append(Message(stamp, direction, rest.strip("\n")))
    return messages


class _Sipp:
    def __init__(self, name: str, workdir: Path, runtime: t.Any = None) -> None:
        # Message tracing costs SIPp most of its throughput; the bench turns it off.
        self.trace = True
        # A harness.rootfs.KamailioRuntime for a SIPp other than the host's (sipp_tls_runtime: one
        # with TLS); it sees the work dir and ``binds`` (e.g. certificates) at their host paths.
        self.runtime = runtime
        self.binds: list[Path] = []
        self.name = name
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc: t.Optional[subprocess.Popen[bytes]] = None
        self.message_log = self.workdir / ("%s.messages.log" % name)
        self.stat_file = self.workdir / ("%s.stats.csv" % name)
        self.output = self.workdir / ("%s.out" % name)
        self.error_file = self.workdir / ("%s.errors.log" % name)

    def _spawn(self, args: list[str]) -> None:
        with open(self.output, "ab") as out:
            trace = ["-trace_msg", "-message_file", str(self.message_log)] if self.trace else []
            argv = [SIPP, *args, "-nostdin", *trace, "-trace_err", "-error_file", str(self.error_file)]
            if self.runtime is not None:
                # unshare + sh + chroot (+ env) all exec, so the process started here is SIPp itself.
                preload = self.runtime.preload
                argv = self.runtime.command((["/usr/bin/env", "LD_PRELOAD=%s" % preload] if preload else [])
                                            + [self.runtime.binary] + argv[1:],
                                            binds=[self.workdir, *self.binds] + ([preload] if preload else []))
            self.proc = subprocess.Popen(argv,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         cwd=str(self.workdir), start_new_session=True)

    def messages(self, direction: t.Optional[str] = None) -> list[Message]:
        return [m for m in parse_message_log(self.message_log) if direction is None or m.direction == direction]

    def received_requests(self, method: str) -> list[Message]:
        return [m for m in self.messages("received") if m.first_line.startswith(method + " ")]

    def received_invites(self) -> int:
        return len({m.call_id for m in self.received_requests("INVITE")})

    def stop(self, kill: bool = False) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        # SIGKILL makes a peer silent at once (no goodbye messages); SIGUSR1 is SIPp's soft quit.
        os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


class SippPeer(_Sipp):
    """An ACG peer on ``address``:``port`` answering INVITEs with ``code``.

    ``transport="tls"`` needs a SIPp with TLS (``runtime``, see harness.rootfs.sipp_tls_runtime) and
    ``tls``: (certificate, key, CA or None); with a CA, SIPp requires and verifies a client
    certificate (mutual TLS). SIPp does not look at SNI."""

    def __init__(self, name: str, workdir: Path, address: str, port: int = 5060, code: t.Optional[int] = 200,
                 answer_options: bool = True, transport: str = "udp", runtime: t.Any = None,
                 tls: t.Optional[tuple[Path, Path, t.Optional[Path]]] = None) -> None:
        super().__init__(name, workdir, runtime)
        self.tls = tls
        self.address = address
        self.port = port
        self.code = code
        self.answer_options = answer_options
        self.transport = transport

    def start(self) -> "SippPeer":
        scenario = self.workdir / ("%s.xml" % self.name)
        scenario.write_text(uas_scenario(self.code, self.answer_options))
        # -t u1 / t1 / l1: one socket, so every message comes from address:port (what the ACL and the
        # dispatcher see).
        tls: list[str] = []
        if self.transport == "tls":
            assert self.tls is not None, "a TLS peer needs tls=(certificate, key, CA or None)"
            cert, key, ca = self.tls
            tls = ["-tls_cert", str(cert), "-tls_key", str(key)] + (["-tls_ca", str(ca)] if ca else [])
            self.binds = sorted({Path(f).resolve().parent for f in self.tls if f is not None})
        self._spawn(["-sf", str(scenario), "-i", str(self.address), "-p", str(self.port),
                     "-t", TRANSPORT_FLAGS[self.transport], "-bind_local", "-max_socket", "100", *tls])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError("sipp peer %s exited: %s" % (self.name, self.output.read_text(errors="replace")[-2000:]))
            if self.proc is not None and _listening(self.address, self.port, self.transport, self.proc.pid):
                return self
            time.sleep(0.05)
        raise RuntimeError("sipp peer %s not listening on %s:%d" % (self.name, self.address, self.port))


def _listening(address: str, port: int, transport: str, pid: int) -> bool:
    """True once *this* process listens there (a leftover process on the address must not count)."""
    out = subprocess.run(["ss", "-H", "-l", "-n", "-p", "-u" if transport == "udp" else "-t", "src",
                          "%s:%d" % (address, port)], capture_output=True, text=True, timeout=5, check=False).stdout
    return ("pid=%d," % pid) in out


@dataclasses.dataclass
class CallResult:
    successful: int
    failed: int
    returncode: int
    # Call-ID -> (time the INVITE was sent, final code received or None)
    calls: dict[str, tuple[float, t.Optional[int]]]
    # Call-ID -> (time the BYE was first sent, final code received or None), for calls that sent one
    byes: dict[str, tuple[float, t.Optional[int]]] = dataclasses.field(default_factory=dict)

    def codes(self) -> dict[t.Optional[int], int]:
        counts: dict[t.Optional[int], int] = {}
        for dummy, code in self.calls.values():
            counts[code] = counts.get(code, 0) + 1
        return counts


class SippCaller(_Sipp):
    """The operator core: ``count`` calls to ``target`` at ``rate`` calls/s, expecting ``expect``."""

    def __init__(self, name: str, workdir: Path, address: str, target: str, user: str = "+4930123456",
                 expect: int = 200, hold_ms: int = 200, extra_headers: str = "", contact_user: str = "caller",
                 transport: str = "udp", port: int = 0) -> None:
        super().__init__(name, workdir)
        self.address = address
        self.target = target
        self.user = user
        self.expect = expect
        self.hold_ms = hold_ms
        self.extra_headers = extra_headers
        self.contact_user = contact_user
        self.transport = transport
        self.port = port

    def start(self, count: int, rate: float = 10.0, limit: int = 200, recv_timeout_ms: int = 10000,
              timeout_s: int = 60) -> "SippCaller":
        scenario = self.workdir / ("%s.xml" % self.name)
        scenario.write_text(uac_scenario(self.user, self.expect, self.hold_ms, self.extra_headers, self.contact_user))
        args = [self.target, "-sf", str(scenario), "-i", self.address, "-t", TRANSPORT_FLAGS[self.transport],
                "-m", str(count), "-r", str(rate), "-l", str(limit), "-recv_timeout", str(recv_timeout_ms),
                "-timeout", "%ds" % timeout_s, "-trace_stat", "-stf", str(self.stat_file), "-fd", "1", "-bind_local"]
        if self.port:
            args += ["-p", str(self.port)]
        self._spawn(args)
        return self

    def wait(self, timeout_s: float = 90.0) -> CallResult:
        assert self.proc is not None
        try:
            returncode = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.stop(kill=True)
            returncode = -9
        self.proc = None
        return self.result(returncode)

    def run(self, count: int, rate: float = 10.0, **kwargs: t.Any) -> CallResult:
        timeout_s = kwargs.pop("timeout_s", 60)
        return self.start(count, rate, timeout_s=timeout_s, **kwargs).wait(timeout_s + 30)

    def finish(self) -> None:
        """Place no new calls; the calls in progress run to their end, then SIPp exits (its soft quit,
        SIGUSR1). ``wait`` collects the result."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGUSR1)

    def result(self, returncode: int) -> CallResult:
        successful = failed = 0
        if self.stat_file.exists():
            rows = list(csv.reader(self.stat_file.read_text(errors="replace").splitlines(), delimiter=";"))
            if len(rows) >= 2:
                header, last = rows[0], rows[-1]
                values = dict(zip(header, last))
                successful = int(values.get("SuccessfulCall(C)", 0) or 0)
                failed = int(values.get("FailedCall(C)", 0) or 0)
        outcomes: dict[str, dict[str, tuple[float, t.Optional[int]]]] = {"INVITE": {}, "BYE": {}}
        for message in self.messages():
            call_id = message.call_id
            if call_id is None:
                continue
            for method, seen in outcomes.items():
                if message.direction == "sent" and message.first_line.startswith(method + " "):
                    seen.setdefault(call_id, (message.time, None))
                elif (message.direction == "received" and message.first_line.startswith("SIP/2.0 ")
                      and message.cseq_method == method):
                    code = int(message.first_line.split()[1])
                    if code >= 200 and call_id in seen and seen[call_id][1] is None:
                        seen[call_id] = (seen[call_id][0], code)
        return CallResult(successful, failed, returncode, outcomes["INVITE"], outcomes["BYE"])


class PeerGroup:
    """One SIPp UAS per address for one test (code None: receives and never answers), started on
    entry and killed on exit. A silent peer ignores OPTIONS too, unless listed in ``pinged``
    (alive for the dispatcher, silent to calls); addresses in ``no_options`` never answer OPTIONS
    (like MCP)."""

    def __init__(self, workdir: Path, behaviours: t.Mapping[str, t.Optional[int]],
                 no_options: t.Collection[str] = (), pinged: t.Collection[str] = ()) -> None:
        self.peers = {address: SippPeer("peer-%s" % address, workdir, address, code=code,
                                        answer_options=(code is not None or address in pinged)
                                        and address not in no_options)
                      for address, code in behaviours.items()}

    def __enter__(self) -> "PeerGroup":
        for peer in self.peers.values():
            peer.start()
        return self

    def __exit__(self, *exc: t.Any) -> None:
        for peer in self.peers.values():
            peer.stop(kill=True)

    def invites(self) -> dict[str, int]:
        return {address: peer.received_invites() for address, peer in self.peers.items()}

    def options(self, address: str) -> int:
        return len(self.peers[address].received_requests("OPTIONS"))

    def invite_times(self, address: str) -> list[float]:
        """When each call's first INVITE arrived (UDP retransmissions of the same call not counted)."""
        first: dict[t.Optional[str], float] = {}
        for message in self.peers[address].received_requests("INVITE"):
            first.setdefault(message.call_id, message.time)
        return sorted(first.values())


def udp_options(source: str, destination: str, port: int = 5060, timeout_s: float = 2.0,
                user: str = "test") -> t.Optional[str]:
    """Send one SIP OPTIONS over UDP from ``source``; the status line of the answer, or None."""
    return _udp_request(source, destination, port, timeout_s, lambda sport, cid: (
        "OPTIONS sip:%s:%d SIP/2.0\r\nVia: SIP/2.0/UDP %s:%d;branch=z9hG4bK%s\r\nMax-Forwards: 70\r\n"
        "From: <sip:%s@%s>;tag=%s\r\nTo: <sip:%s:%d>\r\nCall-ID: %s\r\nCSeq: 1 OPTIONS\r\n"
        "Content-Length: 0\r\n\r\n"
        % (destination, port, source, sport, cid, user, source, cid[:8], destination, port, cid)))


def emergency_forms(dial: str, rules: t.Optional[t.Mapping[str, str]]) -> list[str]:
    """Every way a caller may dial ``dial``: as is, with +, behind the international and the national prefix
    of number normalisation ``rules`` (00 and 0 without them) and, with the rules' country code, as an
    E.164 number of the own country (+49112, 0049112)."""
    prefixes = rules or {"international_prefix": "00", "national_prefix": "0"}
    forms = [dial, "+" + dial, prefixes["international_prefix"] + dial, prefixes["national_prefix"] + dial]
    if prefixes.get("country_code"):
        forms += ["+" + prefixes["country_code"] + dial, prefixes["international_prefix"] + prefixes["country_code"] + dial]
    return forms


def udp_invite(source: str, destination: str, user: str, port: int = 5060, timeout_s: float = 2.0) -> t.Optional[str]:
    """Send one SIP INVITE for ``user`` over UDP from ``source``; the status line of its final answer (or
    None). For requests the SBC refuses itself: nothing is ever ACKed or hung up."""
    return _udp_request(source, destination, port, timeout_s, lambda sport, cid: (
        "INVITE sip:%s@%s:%d SIP/2.0\r\nVia: SIP/2.0/UDP %s:%d;branch=z9hG4bK%s\r\nMax-Forwards: 70\r\n"
        "From: <sip:caller@%s>;tag=%s\r\nTo: <sip:%s@%s:%d>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n"
        "Contact: <sip:caller@%s:%d>\r\nContent-Length: 0\r\n\r\n"
        % (user, destination, port, source, sport, cid, source, cid[:8], user, destination, port, cid, source,
           sport)), final_only=True)


def _udp_request(source: str, destination: str, port: int, timeout_s: float, build: t.Callable[[int, str], str],
                 final_only: bool = False) -> t.Optional[str]:
    """Send the request ``build(source port, Call-ID)`` over UDP from ``source``; the status line of the first
    answer (``final_only``: of the first final one), or None within ``timeout_s``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((source, 0))
        sock.settimeout(timeout_s)
        sock.sendto(build(sock.getsockname()[1], uuid.uuid4().hex).encode(), (destination, port))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = sock.recv(65535).decode(errors="replace").splitlines()[0]
            if not (final_only and line.startswith("SIP/2.0 1")):
                return line
        return None
    except socket.timeout:
        return None
    finally:
        sock.close()
