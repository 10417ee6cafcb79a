# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command line of commsgw-probe-exporter (installed on the SBC host by the probe_exporter role).

  commsgw-probe-exporter serve --config /etc/commsgw-probe-exporter/config.json
  commsgw-probe-exporter serve ... --daemon --pid-file F --log-file L --user U --groups G   (no systemd)
  commsgw-probe-exporter check-config --config ...        exit 0 when the configuration is usable
  commsgw-probe-exporter hash-password < password         a basic_auth_users hash for the web config

The exporter never runs as root: started as root (process mode) it drops to ``--user`` with the
supplementary ``--groups`` (the group that may read the SBC's key and state) before it opens any
socket or reads any key; started as root without ``--user`` it refuses to start. Under systemd the unit's
``User=`` does that and no flag is needed.
"""

from __future__ import annotations

import argparse
import grp
import importlib
import logging
import os
import pwd
import signal
import sys
import threading
import time
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.exporter.config import (
    ConfigError, ExporterConfig, load_config)
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.runner import ProbeRunner
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.server import ExporterServer
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.web import hash_password, load_web_config
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.registry import (
    DEFAULT_PLATFORM, UnknownPlatform, get_platform)

LOG = logging.getLogger("commsgw-probe-exporter")
PROGRAM = "commsgw-probe-exporter"


class StartError(RuntimeError):
    pass


def _say(text: str, stream: t.Optional[t.TextIO] = None) -> None:
    """A line for whoever started the command (the role reads "started" and "already running")."""
    stream = stream or sys.stdout
    stream.write(text + "\n")
    stream.flush()


def parse_args(argv: t.Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROGRAM, description="ACG reachability for Prometheus: the commsgw.routing "
                                     "live probe per scrape (docs/monitoring.md).")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the exporter")
    check = sub.add_parser("check-config", help="read the configuration and the web configuration, then exit")
    for p in (serve, check):
        p.add_argument("--config", required=True, help="the exporter's JSON configuration")
        p.add_argument("--web.config.file", dest="web_config", help="TLS and basic auth (exporter-toolkit keys, JSON); "
                       "default: the configuration's web_config_file")
    serve.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    serve.add_argument("--log-file", help="append the log here (default stderr)")
    serve.add_argument("--daemon", action="store_true", help="detach (process mode, with --pid-file)")
    serve.add_argument("--pid-file", help="with --daemon: written before the privileges are dropped")
    serve.add_argument("--user", help="started as root: the user to run as (required then)")
    serve.add_argument("--groups", default="", help="started as root: supplementary groups, comma-separated")
    sub.add_parser("hash-password", help="read a password on stdin, print its basic_auth_users hash")
    return parser.parse_args(argv)


def running_pid(pid_file: str) -> int:
    """The pid in ``pid_file`` when that process is a running exporter, else 0."""
    try:
        with open(pid_file, encoding="ascii") as handle:
            pid = int(handle.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return pid if PROGRAM.encode() in handle.read() else 0
    except (OSError, ValueError):
        return 0


def drop_privileges(user: t.Optional[str], groups: str) -> None:
    """As root: become ``user`` with exactly ``groups`` as supplementary groups. Never stay root."""
    if os.geteuid() != 0:
        if user and pwd.getpwuid(os.geteuid()).pw_name != user:
            raise StartError("--user %s needs a start as root (running as %s)" % (user, pwd.getpwuid(os.geteuid()).pw_name))
        return
    if not user:
        raise StartError("refusing to run as root: the exporter answers the network; start it as its own user "
                         "(systemd User=) or pass --user")
    try:
        account = pwd.getpwnam(user)
        gids = [grp.getgrnam(name).gr_gid for name in groups.split(",") if name]
    except KeyError as exc:
        raise StartError("no such user or group: %s" % exc) from None
    if account.pw_uid == 0 or account.pw_gid == 0 or 0 in gids:
        raise StartError("refusing to run as root or with group root (--user %s --groups %s)" % (user, groups))
    os.setgroups(gids)
    os.setgid(account.pw_gid)
    os.setuid(account.pw_uid)
    if os.getuid() == 0 or os.geteuid() == 0 or 0 in os.getgroups():
        raise StartError("still root after dropping privileges")


# Imported on first use by the standard library and dnspython: loaded before the privileges are dropped, since
# the interpreter's own files may not be readable by the exporter's user (a lab's pyenv under /root).
LAZY_MODULES = ("encodings.idna", "encodings.unicode_escape", "encodings.ascii", "encodings.latin_1", "_strptime",
                "concurrent.futures.thread", "dns.rdtypes.IN.SRV", "dns.rdtypes.IN.A", "dns.rdtypes.IN.AAAA",
                "dns.rdtypes.ANY.CNAME", "dns.rdtypes.ANY.SOA", "dns.rdtypes.ANY.PTR")


def preload(config: ExporterConfig) -> None:
    for name in LAZY_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # dnspython missing: the probe reports it per run
    # A platform's hooks (its readers and RPC client, and what they import: fcntl...) load on first use
    # (sbc.registry): here, for every site's platform, while the interpreter's files are still readable.
    for site in config.sites.values():
        try:
            get_platform(site.platform or DEFAULT_PLATFORM).hooks()
        except UnknownPlatform:
            pass  # the probe reports it per run


def _daemonize(pid_file: str) -> bool:
    """Detach twice; the original process returns True once the daemon wrote its pid (the caller exits), the
    daemon returns False."""
    if os.fork():
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and not running_pid(pid_file):
            time.sleep(0.05)
        _say("started (pid %d)" % running_pid(pid_file))
        return True
    os.setsid()
    if os.fork():
        os._exit(0)  # pylint: disable=protected-access
    fd = os.open(pid_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write("%d\n" % os.getpid())
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    return False


def _logging(args: argparse.Namespace) -> None:
    handler: logging.Handler = logging.StreamHandler()
    if args.log_file:
        # Opened before the daemon detaches and drops privileges; O_NOFOLLOW: never through a planted link.
        fd = os.open(args.log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o640)
        handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
    handler.setFormatter(logging.Formatter("%(asctime)s " + PROGRAM + "[%(process)d] %(levelname)s %(message)s"))
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler])


def _configs(args: argparse.Namespace) -> tuple[ExporterConfig, t.Any]:
    config = load_config(args.config)
    return config, load_web_config(args.web_config or config.web_config_file)


def serve(args: argparse.Namespace) -> int:
    _logging(args)
    config, web = _configs(args)  # as started: the configuration may be readable by root only
    if args.daemon:
        if not args.pid_file:
            raise StartError("--daemon needs --pid-file")
        if running_pid(args.pid_file):
            _say("already running (pid %d)" % running_pid(args.pid_file))
            return 0
        if _daemonize(args.pid_file):
            return 0
    preload(config)
    drop_privileges(args.user, args.groups)
    runner = ProbeRunner(config)
    server = ExporterServer(config, runner, web)
    stop = threading.Event()

    def on_signal(signum: int, _frame: t.Any) -> None:
        LOG.info("signal %d: stopping", signum)
        stop.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threading.Thread(target=runner.background, args=(stop,), name="background", daemon=True).start()
    LOG.info("listening on %s for site(s) %s as uid %d", server.url, ", ".join(sorted(config.sites)), os.getuid())
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
    return 0


def main(argv: t.Optional[t.Sequence[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == "hash-password":
            password = sys.stdin.readline().rstrip("\n")
            if not password:
                raise StartError("no password on stdin")
            _say(hash_password(password))
            return 0
        if args.command == "check-config":
            config, web = _configs(args)
            _say("ok: %d site(s) %s, module(s) %s, %s%s" % (
                len(config.sites), ", ".join(sorted(config.sites)), ", ".join(sorted(config.modules)),
                "TLS" if web.context else "plain HTTP", ", basic auth" if web.auth else ""))
            return 0
        return serve(args)
    except (ConfigError, StartError, OSError) as exc:
        LOG.error("%s", exc)  # a daemon's stderr is gone: its log file says why it stopped
        _say("%s: %s" % (PROGRAM, exc), sys.stderr)
        return 2
