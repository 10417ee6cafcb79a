#!/usr/bin/env python
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: probe wall time for 2 regions x 6 peers (some silent), concurrent vs one after another.

Real peers on loopback: Knot serves the SRV records, each peer is a mutual-TLS front (OpenSSL) with a
SIPp UAS behind it that answers OPTIONS with 200 or never answers. The same ``run_probe`` code runs
twice per round: with ``concurrency`` = all peers, and with ``concurrency=1`` (sequential). Prints
the medians and their ratio against the target of N/2 (N = 12 peers). Asserts nothing.

What bounds the ratio: with S silent peers and timeout T, sequential costs about S*T plus the
healthy round trips, concurrent about T (a silent peer must be waited for once). The ratio is thus
about S, and reaches N/2 when half the peers are silent (the default, 3 of 6 per region).

Run: .venv/bin/python bench/probe_bench.py [--silent 3 --timeout 1.0 --rounds 3]
Addresses: regions 127.0.155.0/28 and 127.0.156.0/28, SIPp on 127.0.199.3 (the probe's block).
"""

from __future__ import annotations

import argparse
import multiprocessing
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".collections"))
sys.path.insert(0, str(ROOT / "tests"))

from ansible_collections.commsgw.routing.plugins.module_utils.probe import run as probe  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment  # noqa: E402
from harness.dns import DnsServer  # noqa: E402
from harness.pki import standard_pki  # noqa: E402
from harness.tls_front import TlsFront  # noqa: E402

BASE = "bench.p150.test"
HOSTS = ["pstn-region1." + BASE, "pstn-region2." + BASE]
NETS = ["127.0.155", "127.0.156"]
SIPP_HOST = "127.0.199.3"
SIPP_PORTS = {"200": 15180, "silent": 15181}
PEERS_PER_REGION = 6


def plan() -> dict:
    raw = {"name": "bench", "type": "production", "base_domain": BASE, "management_region": "West Europe",
           "allow_non_public_ranges": True,
           "service_regions": [{"name": "region%d" % (i + 1), "azure_region": az, "hostname": HOSTS[i],
                                "ip_ranges": ["%s.0/28" % NETS[i]]}
                               for i, az in enumerate(("westeurope", "northeurope"))],
           "sites": [{"name": "a", "service_region": "region1"}, {"name": "b", "service_region": "region2"}]}
    deployment, findings = validate_deployment(raw, [Sbc(host="sbc-a", site="a"), Sbc(host="sbc-b", site="b")])
    if findings.errors:
        raise SystemExit("bench deployment invalid: %s" % [f.render() for f in findings.errors])
    return build_site_plan(deployment, deployment.sites[0])


def serve_fronts(specs: list, stop: "multiprocessing.synchronize.Event", ready: "multiprocessing.synchronize.Event"
                 ) -> None:
    """Run the TLS fronts in a process of their own: real peers do not share the probe's CPU/GIL."""
    fronts = [TlsFront(**spec).start() for spec in specs]
    ready.set()
    stop.wait(600)
    for front in fronts:
        front.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--silent", type=int, default=3, help="silent peers per region (of 6)")
    parser.add_argument("--timeout", type=float, default=1.0, help="per-peer timeout, seconds")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    total = 2 * PEERS_PER_REGION
    work = pathlib.Path(tempfile.mkdtemp(prefix="probe-bench-"))
    pki = standard_pki(work / "pki", HOSTS)
    dns = DnsServer.start_on_free_address(work / "dns", first=190)
    sipps = [subprocess.Popen(["sipp", "-sf", str(ROOT / "tests" / "harness" / "sipp" / ("probe_options_%s.xml" % b)),
                               "-i", SIPP_HOST, "-p", str(port), "-t", "u1", "-nostdin", "-timeout", "900"],
                              cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
             for b, port in SIPP_PORTS.items()]
    specs = []
    stop, ready = multiprocessing.Event(), multiprocessing.Event()
    server = None
    try:
        srv, a = {}, {}
        for r, host in enumerate(HOSTS):
            srv["_sip._tls." + host] = []
            for i in range(1, PEERS_PER_REGION + 1):
                behaviour = "silent" if i > PEERS_PER_REGION - args.silent else "200"
                address = "%s.%d" % (NETS[r], i)
                specs.append(dict(listen=(address, 5061), backend=(SIPP_HOST, SIPP_PORTS[behaviour], "udp"),
                                  cert=pki.peers[host].chain, key=pki.peers[host].key, client_ca=pki.operator_ca.cert))
                name = "peer%d.%s" % (i, host)
                srv["_sip._tls." + host].append((10, 10, 5061, name))
                a[name] = [address]
        dns.set_records(srv=srv, a=a, ttl=60)
        server = multiprocessing.Process(target=serve_fronts, args=(specs, stop, ready), daemon=True)
        server.start()
        if not ready.wait(30):
            raise SystemExit("the TLS fronts did not start")
        time.sleep(0.3)
        site = plan()
        common = dict(timeout_s=args.timeout, client_cert=str(pki.sbc.cert), client_key=str(pki.sbc.key),
                      ca_bundle=str(pki.acg_ca.cert), check_provisioning_ttl=False,
                      resolver=ResolverSettings(nameservers=[dns.address]))
        results = {"concurrent": [], "sequential": []}
        for dummy in range(args.rounds):
            for mode, concurrency in (("concurrent", total), ("sequential", 1)):
                report = probe.run_probe(site, probe.ProbeSettings(concurrency=concurrency, **common))
                healthy = sum(g["healthy"] for g in report["regions"])
                expected = 2 * (PEERS_PER_REGION - args.silent)
                if healthy != expected:
                    raise SystemExit("%s run saw %d healthy peers, expected %d:\n%s" % (
                        mode, healthy, expected, report["reasons"]))
                results[mode].append(report["timings_ms"]["probe"] / 1000.0)
        conc, seq = statistics.median(results["concurrent"]), statistics.median(results["sequential"])
        ratio = seq / conc
        print("probe bench: 2 regions x %d peers (%d silent per region), per-peer timeout %.1f s, %d rounds"
              % (PEERS_PER_REGION, args.silent, args.timeout, args.rounds))
        print("  concurrent : median %.3f s  (runs %s)" % (conc, ", ".join("%.3f" % v for v in results["concurrent"])))
        print("  sequential : median %.3f s  (runs %s)" % (seq, ", ".join("%.3f" % v for v in results["sequential"])))
        print("  ratio sequential/concurrent = %.2fx (target >= N/2 = %.1fx for N = %d peers: %s)"
              % (ratio, total / 2.0, total, "met" if ratio >= total / 2.0 else "NOT met"))
    finally:
        stop.set()
        if server is not None:
            server.join(15)
        for proc in sipps:
            proc.terminate()
            proc.wait(5)
        dns.stop()


if __name__ == "__main__":
    main()
