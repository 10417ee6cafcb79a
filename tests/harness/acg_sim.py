# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A simulated Azure Communications Gateway on loopback, built from an inventory's facts (R-28).

Made of the harness's real pieces, nothing re-implemented here:

* DNS: Knot (``harness.dns.DnsServer``) on a 127.0.53.x address, answering for every service region
  the ``_sip._tls.<regional hostname>`` SRV record (priorities and weights), the A record of each
  target, the MCP SRV records when the deployment has MCP hostnames, and the provisioning API name
  (``provapi.<base domain>``, TTL 60 s, R-21). Names come from the collection's plan module.
* Peers: for each region, N SIP peers on addresses .1, .2, ... of the region's first /28, port 5061,
  each a real TLS server (``harness.tls_front.TlsFront``: TLS >= 1.2, client certificate required,
  SNI required like ACG) relaying to a SIPp UAS (``harness.sipp.SippPeer``) on the same address,
  port 15061/UDP. Every peer is switchable at run time (``set_peer``): ``200`` (answers calls),
  ``408``/``503``/``504``/``486`` (answers INVITEs with that code), ``silent`` (TLS accepted,
  nothing ever answered), ``no-options`` (answers calls but ignores OPTIONS), ``down`` (nothing
  listens: connections refused). ``set_region(name, up=False)`` takes a whole region off: by default
  silent (connections accepted, nothing answered: a region whose packets go nowhere), or ``down``
  (connections refused); ``up=True`` puts each peer back to its own behaviour.
  ``set_close_after_response(True)`` makes every front close its connection after each final
  response (ACG closing idle or used connections: every transaction needs a new handshake).
* Region migration (R-23): ``migrate_region(name, hostname, ip_range)`` moves a region to a new
  regional hostname and /28: new peers there with certificates for the new name only, the new SRV
  and A records; the old peers keep running with their old name and records.
* PKI (``harness.pki``): an "ACG" test root signs each peer's certificate for its regional hostname
  (the SBC's ``ca_bundle``); an "operator" test root signs the SBC client certificate (ECDSA P-256)
  the peers require. ``<state dir>/pki/{ca-bundle.pem,sbc.chain.pem,sbc.key}`` are what an
  inventory points its ``commsgw_sbc.tls`` at.

The code: ``acg_sim_model`` (DNS, PKI, peers), ``acg_sim_inventory`` (reading the inventory),
``acg_sim_daemon`` (daemon, control socket, test calls); this module is the CLI and re-exports them.

Run as a daemon by ``scripts/acg-sim`` (``python -m harness.acg_sim``): ``up`` starts ``serve`` in
the background and waits until it is ready, the other commands talk to it over a UNIX socket in the
state directory (default ``.lab/acg-sim``): one JSON request per connection, one JSON answer.
Everything is bounded: start/stop timeouts, a lifetime (``--ttl``, default 2 h) after which the
daemon stops by itself, and ``down`` kills whatever a dead daemon left behind (pids are recorded).
Loopback only: every address is checked to lie in 127.0.0.0/8. See docs/lab.md.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys
import typing as t
from pathlib import Path

# The facade: importers use harness.acg_sim.<name> for everything the three modules hold.
from harness.acg_sim_daemon import (  # noqa: F401  # pylint: disable=unused-import
    _alive, control_path, down, place_calls, request, serve, up)
from harness.acg_sim_inventory import _check_inventory_paths, read_inventory  # noqa: F401  # pylint: disable=unused-import
from harness.acg_sim_model import (  # noqa: F401  # pylint: disable=unused-import
    BEHAVIOURS, DEFAULT_PEER_SRV, DEFAULT_STATE_DIR, DEFAULT_TTL_S, REGION_OUTAGES, REPO, AcgSim, SimError, SimPeer)


def format_status(status: t.Mapping[str, t.Any]) -> str:
    lines = ["deployment %s, DNS %s:53 (TTL %s s), uptime %s s" % (
        status["deployment"], status["dns"]["address"], status["dns"]["records"]["ttl"], status["uptime_s"])]
    lines.append("%-8s %-14s %-5s %-40s %-4s %-6s %-11s %7s %7s %8s" % (
        "region", "address", "port", "SRV target", "prio", "weight", "state", "INVITEs", "OPTIONS", "answered"))
    for p in status["peers"]:
        lines.append("%-8s %-14s %-5d %-40s %-4d %-6d %-11s %7d %7d %8d" % (
            p["region"], p["address"], p["port"], p["target"], p["priority"], p["weight"], p["state"],
            p["received"].get("INVITE", 0), p["received"].get("OPTIONS", 0), p["received"].get("ANSWERED", 0)))
    for m in status.get("mcp", []):
        lines.append("MCP      %-14s %-5d" % (m["address"], m["port"]))
    lines.append("SBC files: ca_bundle %s, certificate %s, private_key %s" % (
        status["pki"]["ca_bundle"], status["pki"]["certificate"], status["pki"]["private_key"]))
    return "\n".join(lines)


def main(argv: t.Optional[t.Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="acg-sim", description="Simulated Azure Communications Gateway on loopback "
                                     "(docs/lab.md).")
    parser.add_argument("--state-dir", type=Path, default=Path(os.environ.get("COMMSGW_ACG_SIM_DIR", DEFAULT_STATE_DIR)),
                        help="state directory (default .lab/acg-sim, or $COMMSGW_ACG_SIM_DIR)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    sub = parser.add_subparsers(dest="command", required=True)

    def inventory_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--inventory", "-i", type=Path, default=REPO / "inventory" / "demo")
        p.add_argument("--deployment", help="deployment name when the inventory holds several")
        p.add_argument("--peers", type=int, default=3, help="SIP peers per region (default 3)")
        p.add_argument("--ttl", type=float, default=DEFAULT_TTL_S, help="lifetime in seconds (default 7200)")
        p.add_argument("--extra-vars", "-e", default="{}", help="JSON variables applied over the inventory's")

    inventory_args(sub.add_parser("up", help="start the simulator for an inventory (background) and wait until ready"))
    inventory_args(sub.add_parser("serve", help="run the simulator in the foreground (what 'up' starts)"))
    sub.add_parser("down", help="stop the simulator and everything it started")
    sub.add_parser("status", help="peers, states and what each received")
    p_set = sub.add_parser("set-peer", help="switch one peer's behaviour")
    p_set.add_argument("peer", help="peer address (e.g. 127.0.60.1) or SRV target name")
    p_set.add_argument("behaviour", choices=BEHAVIOURS)
    for name in ("region-down", "region-up"):
        what = "down" if name.endswith("down") else "back up"
        p_region = sub.add_parser(name, help="take every peer of a region %s" % what)
        p_region.add_argument("region", help="service region name as in the inventory (e.g. region1)")
        if name == "region-down":
            p_region.add_argument("--mode", choices=REGION_OUTAGES, default="silent",
                                  help="silent (default): TLS accepted, nothing answered; down: connections refused")
    p_call = sub.add_parser("call", help="place test calls as the operator core (SIPp UAC) through an SBC")
    p_call.add_argument("target", help="the SBC's core-side address:port, e.g. 127.0.80.1:5060")
    p_call.add_argument("--source", default="127.0.81.2", help="caller address (loopback)")
    p_call.add_argument("--count", type=int, default=5)
    p_call.add_argument("--rate", type=float, default=5.0)
    p_call.add_argument("--name", default="calls")
    args = parser.parse_args(argv)
    state_dir: Path = args.state_dir.resolve()

    try:
        if args.command == "serve":
            extra = json.loads(args.extra_vars)
            facts = read_inventory(args.inventory, extra, args.deployment)
            lock = open(state_dir / "acg-sim.lock", "a")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise SimError("another simulator holds %s" % state_dir)
            sbc_names = sorted("%s.operator.test" % h for h in facts["hosts"]) or ["sbc.operator.test"]
            sim = AcgSim(facts["deployment"], state_dir, peers_per_region=args.peers,
                         dns_address=(facts["nameservers"] or [None])[0], sbc_names=sbc_names)
            _check_inventory_paths(facts, state_dir)
            serve(sim, state_dir, args.ttl)
            return 0
        if args.command == "up":
            status = up(args.inventory, state_dir, args.peers, args.ttl, args.deployment, json.loads(args.extra_vars))
            print(json.dumps(status, indent=2) if args.json else format_status(status))
            if not os.environ.get("COMMSGW_LAB_MANAGED"):  # scripts/lab stops it itself
                hint = "" if state_dir == DEFAULT_STATE_DIR.resolve() else " --state-dir %s" % state_dir
                print("stop it with: scripts/acg-sim%s down" % hint, file=sys.stderr)
            return 0
        if args.command == "down":
            print("stopped" if down(state_dir) else "nothing was running")
            return 0
        if args.command == "status":
            status = request(state_dir, {"command": "status"})["status"]
        elif args.command == "set-peer":
            status = request(state_dir, {"command": "set-peer", "peer": args.peer, "behaviour": args.behaviour})["status"]
        elif args.command in ("region-down", "region-up"):
            status = request(state_dir, {"command": args.command, "region": args.region,
                                         "mode": getattr(args, "mode", "silent")})["status"]
        elif args.command == "call":
            result = place_calls(state_dir, args.target, args.source, args.count, args.rate, args.name)
            print(json.dumps(result, indent=2) if args.json else
                  "%d calls: %s" % (args.count, ", ".join("%s x%d" % (k, v) for k, v in sorted(result["codes"].items()))))
            return 0 if result["codes"].get("200", 0) == args.count else 1
        else:  # pragma: no cover - argparse enforces the choices
            return 2
        print(json.dumps(status, indent=2) if args.json else format_status(status))
        return 0
    except SimError as exc:
        print("acg-sim: %s" % exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
