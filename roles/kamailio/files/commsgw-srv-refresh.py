#!/usr/bin/python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""commsgw-srv-refresh: keep Kamailio's dispatcher.list in step with ACG's SRV records.

Installed on the SBC host by the commsgw.routing.kamailio role next to its libraries
(kamailio/refresher.py and what it imports; the logic lives there). Modes:

  commsgw-srv-refresh --spec /etc/kamailio/commsgw-srv.json            one run (systemd timer)
  commsgw-srv-refresh --spec ... --loop [--max-runs N]                 re-run at the record TTL
  commsgw-srv-refresh --spec ... --daemon --pid-file F [--log-file L]  the loop, detached (no systemd)

A run re-resolves only the records whose TTL has expired (``--force``: all of them). Exit status 0
when every record resolved (or was not due), 1 when any lookup failed or was refused (the previous
peers were kept), 2 on a problem with the input or the reload, 3 when a run fails and the last good
run is older than ``--max-age`` seconds (stale: the unit fails). The run history is kept in the state
file (``health``), which the probe reads.

Every path the spec names (dispatcher.list, the jsonrpcs socket and FIFO) must lie in the spec's
directory or in an ``--allowed-dir`` (the run directory), else nothing is done (exit 2).
``--file-group`` gives the files it writes that group and mode 0640 (the role's units need not: the
peers directory is setgid to Kamailio's group). The pid file is opened without following a symlink.
"""

import argparse
import logging
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kamailio import refresher  # noqa: E402  (installed next to this script)

LOG = logging.getLogger("commsgw-srv-refresh")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, help="commsgw-srv.json rendered next to kamailio.cfg")
    parser.add_argument("--nameserver", action="append", help="ask this nameserver (default: /etc/resolv.conf)")
    parser.add_argument("--dns-port", type=int, default=53)
    parser.add_argument("--dns-timeout", type=float, default=3.0)
    parser.add_argument("--state-dir", help="where the last good answers are kept (default: next to the spec)")
    parser.add_argument("--allowed-dir", action="append", default=[],
                        help="besides the spec's directory, a directory the spec's paths may name (repeatable)")
    parser.add_argument("--file-group", help="group of the files written, mode 0640 (default: as the old file)")
    parser.add_argument("--kamailio-user", default=refresher.DEFAULT_KAMAILIO_USER,
                        help="the account Kamailio runs as (name or uid): only its (or root's) RPC answers count")
    parser.add_argument("--max-age", type=float, default=refresher.MAX_TTL_S,
                        help="seconds without a good run after which a failed run exits 3 (stale)")
    parser.add_argument("--force", action="store_true", help="resolve every record, due or not")
    parser.add_argument("--loop", action="store_true", help="keep running, re-resolving at each record's TTL")
    parser.add_argument("--max-runs", type=int, default=0, help="with --loop: stop after N runs (0: never)")
    parser.add_argument("--daemon", action="store_true", help="--loop, detached, with --pid-file")
    parser.add_argument("--pid-file")
    parser.add_argument("--log-file", help="log here instead of stderr")
    return parser.parse_args(argv)


def running_pid(pid_file):
    try:
        fd = os.open(pid_file, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, encoding="ascii") as handle:
            pid = int(handle.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return pid if b"commsgw-srv-refresh" in handle.read() else 0
    except (OSError, ValueError):
        return 0


def one_run(args, force):
    try:
        spec = refresher.load_spec(args.spec, args.allowed_dir)
        rpc = refresher.rpc_for(spec, kamailio_user=args.kamailio_user)
        file_gid = refresher.group_id(args.file_group) if args.file_group else None
        limits = refresher.spec_limits(spec)
    except (OSError, ValueError) as exc:
        LOG.error("cannot use %s: %s", args.spec, exc)
        return 2, refresher.RETRY_AFTER_FAILURE_S
    settings = refresher.ResolverSettings(args.nameserver, args.dns_port, args.dns_timeout)
    outcome = refresher.refresh(spec, lambda name: refresher.resolve(name, settings, limits),
                                lambda: rpc.call("dispatcher.reload"), time.time(), force=force,
                                state_dir=args.state_dir, file_gid=file_gid, max_age_s=args.max_age)
    LOG.info("run: resolved=%s refused=%s failed=%s written=%s reloaded=%s next in %.0f s",
             outcome.resolved, outcome.refused, outcome.failed, outcome.written, outcome.reloaded,
             outcome.next_due_s)
    if outcome.stale:
        LOG.error("stale: %s", outcome.stale)
        return 3, outcome.next_due_s
    if outcome.unsafe or outcome.written and not outcome.reloaded or any("reload" in e for e in outcome.errors):
        return 2, outcome.next_due_s
    return (1 if outcome.failed or outcome.refused else 0), outcome.next_due_s


def loop(args):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    runs = 0
    force = args.force
    while not stop:
        dummy, wait_s = one_run(args, force)
        force = False
        runs += 1
        if args.max_runs and runs >= args.max_runs:
            break
        deadline = time.monotonic() + max(1.0, min(wait_s, refresher.MAX_TTL_S))
        while not stop and time.monotonic() < deadline:
            time.sleep(0.2)
    return 0


def daemonize(args):
    if not args.pid_file:
        sys.exit("--daemon needs --pid-file")
    pid = running_pid(args.pid_file)
    if pid:
        print("already running (pid %d)" % pid)
        return 0
    if os.fork():
        # Parent: wait until the child has written its pid so the caller can rely on it.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not running_pid(args.pid_file):
            time.sleep(0.05)
        print("started (pid %d)" % running_pid(args.pid_file))
        return 0
    os.setsid()
    if os.fork():
        os._exit(0)
    # O_NOFOLLOW: a symlink planted at the pid file's name is refused, not written through.
    fd = os.open(args.pid_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write("%d\n" % os.getpid())
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        return loop(args)
    finally:
        if running_pid(args.pid_file) == os.getpid():
            os.unlink(args.pid_file)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s commsgw-srv-refresh[%(process)d] %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    if args.daemon:
        return daemonize(args)
    if args.loop:
        return loop(args)
    return one_run(args, args.force)[0]


if __name__ == "__main__":
    sys.exit(main())
