#!/usr/bin/env python
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the probe exporter (docs/monitoring.md, issue 24).

1. Scrape duration with 1, 4 and 16 targets per region (2 regions), against the same probe run by the
   probe module from a playbook (``ansible-playbook`` of one ``commsgw.routing.probe`` task, wall time
   and the module's own ``timings_ms.total``). Real peers on loopback: Knot serves the SRV records,
   each peer is a mutual-TLS front relaying to one SIPp UAS that answers OPTIONS with 200. The exporter
   is the installed one (the role's file set, ``python3 -I``, dropped to ``nobody``), scraped over HTTP;
   each scrape is a fresh probe run (``min_interval_s`` 1 s, scrapes 1.5 s apart).
2. CPU and RSS of the exporter probing two sites (3 peers per region, the simulated ACG) at one scrape per
   15 s per site, like Prometheus, for ``--minutes`` (default 3; the issue asks 10, shortened to keep the
   run short - say so when quoting), and the OPTIONS per minute per site it sent (its own counter, the
   peers' counts agree: tests/integration/test_exporter_live.py).

Run as root (the exporter drops to nobody): .venv/bin/python bench/exporter_bench.py [--minutes 3 --rounds 5]
Addresses: 127.0.127-131.x (regions 127.0.127/128, SIPp 127.0.129.1, exporter 127.0.129.2, simulator 127.0.130/131).
"""

from __future__ import annotations

import argparse
import grp
import json
import multiprocessing
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import typing as t
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".collections"))
sys.path.insert(0, str(ROOT / "tests"))

from ansible_collections.commsgw.routing.plugins.lookup.shipped_code import LookupModule  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan  # noqa: E402
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment  # noqa: E402
from harness.acg_sim import AcgSim  # noqa: E402
from harness.dns import DnsServer  # noqa: E402
from harness.pki import standard_pki  # noqa: E402
from harness.tls_front import TlsFront  # noqa: E402

BASE = "bench.exporter.test"
HOSTS = ["pstn-region1." + BASE, "pstn-region2." + BASE]
NETS = ["127.0.127", "127.0.128"]
SIPP = ("127.0.129.1", 15400)
EXPORTER = "127.0.129.2"


def _deployment(base: str, nets: t.Sequence[str], hosts: t.Sequence[str]) -> dict[str, t.Any]:
    return {"name": "bench", "type": "production", "base_domain": base, "management_region": "West Europe",
            "allow_non_public_ranges": True,
            "service_regions": [{"name": "region%d" % (i + 1), "azure_region": az, "hostname": hosts[i],
                                 # Two /28s per region: 16 targets do not fit in one.
                                 "ip_ranges": ["%s.0/28" % nets[i], "%s.16/28" % nets[i]]}
                                for i, az in enumerate(("westeurope", "northeurope"))],
            "sites": [{"name": "amsterdam", "service_region": "region1"}, {"name": "dublin", "service_region": "region2"}]}


def plans(raw: t.Mapping[str, t.Any]) -> dict[str, dict[str, t.Any]]:
    sbcs = [Sbc(host="sbc-%s" % s["name"], site=s["name"], platform="kamailio") for s in raw["sites"]]
    deployment, findings = validate_deployment(raw, sbcs)
    if findings.errors:
        raise SystemExit("bench deployment invalid: %s" % [f.render() for f in findings.errors])
    return {site.name: build_site_plan(deployment, site) for site in deployment.sites}


def addresses(net: str, count: int) -> list[str]:
    """``count`` host addresses of the region's two /28s (.1-.14, then .17-.30)."""
    return (["%s.%d" % (net, i) for i in range(1, 15)] + ["%s.%d" % (net, i) for i in range(17, 31)])[:count]


def serve_fronts(specs: list[dict[str, t.Any]], stop: t.Any, ready: t.Any) -> None:
    """The TLS fronts in a process of their own: real peers do not share the exporter's CPU."""
    fronts = [TlsFront(**spec).start() for spec in specs]
    ready.set()
    stop.wait(3600)
    for front in fronts:
        front.stop()


def install(target: pathlib.Path) -> pathlib.Path:
    """The exporter as the role installs it (tests/unit/exporter/test_exporter_shipped.py does the same)."""
    for item in LookupModule().run(["exporter.main"], layout="collection"):
        path = target / item["name"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item["content"])
    script = target / "commsgw-probe-exporter"
    shutil.copy(ROOT / "roles" / "probe_exporter" / "files" / "commsgw-probe-exporter.py", script)
    return script


class Exporter:
    def __init__(self, work: pathlib.Path, config: dict[str, t.Any]) -> None:
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        (work / "config.json").write_text(json.dumps(config))
        self.url = "http://%s:%d" % (config["listen"]["address"], config["listen"]["port"])
        script = install(work / "lib")
        with open(work / "exporter.log", "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-I", str(script), "serve", "--config", str(work / "config.json"),
                                          "--user", "nobody", "--groups", "kamailio"], stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                self.metrics()
                return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("the exporter did not start: %s" % (work / "exporter.log").read_text())

    def get(self, path: str, timeout_s: float = 10.0) -> str:
        request = urllib.request.Request(self.url + path, headers={"X-Prometheus-Scrape-Timeout-Seconds": str(timeout_s)})
        with urllib.request.urlopen(request, timeout=timeout_s + 5) as answer:
            return answer.read().decode()

    def metrics(self) -> dict[str, float]:
        values = {}
        for line in self.get("/metrics").splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def readable_by_kamailio(path: pathlib.Path) -> None:
    os.chown(path, 0, grp.getgrnam("kamailio").gr_gid)
    path.chmod(0o640)


def bench_targets(work: pathlib.Path, per_region: int, rounds: int) -> dict[str, t.Any]:
    """Scrape durations (exporter) and playbook/module durations for ``per_region`` targets per region."""
    pki = standard_pki(work / "pki", HOSTS)
    readable_by_kamailio(pki.sbc.key)
    dns = DnsServer.start_on_free_address(work / "dns", first=120)
    sipp = subprocess.Popen(["sipp", "-sf", str(ROOT / "tests/harness/sipp/probe_options_200.xml"), "-i", SIPP[0],
                             "-p", str(SIPP[1]), "-t", "u1", "-nostdin", "-timeout", "3600"], cwd=work,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop, ready = multiprocessing.Event(), multiprocessing.Event()
    specs, srv, a = [], {}, {}
    for region, host in enumerate(HOSTS):
        srv["_sip._tls." + host] = []
        for index, address in enumerate(addresses(NETS[region], per_region), start=1):
            specs.append(dict(listen=(address, 5061), backend=(SIPP[0], SIPP[1], "udp"), cert=pki.peers[host].chain,
                              key=pki.peers[host].key, client_ca=pki.operator_ca.cert))
            name = "peer%d.%s" % (index, host)
            srv["_sip._tls." + host].append((10, 10, 5061, name))
            a[name] = [address]
    dns.set_records(srv=srv, a=a, ttl=60)
    fronts = multiprocessing.Process(target=serve_fronts, args=(specs, stop, ready), daemon=True)
    fronts.start()
    exporter = None
    try:
        if not ready.wait(60):
            raise SystemExit("the TLS fronts did not start")
        plan = plans(_deployment(BASE, NETS, HOSTS))["amsterdam"]
        settings = {"nameservers": [dns.address], "client_cert": str(pki.sbc.cert), "client_key": str(pki.sbc.key),
                    "ca_bundle": str(pki.acg_ca.cert), "platform": "kamailio",
                    "platform_options": {"config_dir": str(work / "no-sbc"), "run_dir": str(work / "no-sbc")}}
        config = {"schema_version": 1, "listen": {"address": EXPORTER, "port": 9473}, "min_interval_s": 1,
                  "sites": {"amsterdam": dict(settings, plan=plan)},
                  "modules": {"default": {"check_provisioning_ttl": False}}}
        exporter = Exporter(work / "exporter", config)
        scrapes = []
        for _round in range(rounds):
            time.sleep(1.5)
            started = time.monotonic()
            text = exporter.get("/probe?target=amsterdam")
            scrapes.append(time.monotonic() - started)
            healthy = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                          if line.startswith("commsgw_region_healthy_peers{"))
            if healthy != 2 * per_region:
                raise SystemExit("scrape saw %s healthy peers, expected %d" % (healthy, 2 * per_region))
        exporter.stop()
        exporter = None
        playbook, module = run_playbook(work, plan, settings, rounds)
        return {"per_region": per_region, "scrape_s": scrapes, "playbook_s": playbook, "module_s": module}
    finally:
        if exporter is not None:
            exporter.stop()
        stop.set()
        fronts.join(15)
        sipp.terminate()
        sipp.wait(5)
        dns.stop()


def run_playbook(work: pathlib.Path, plan: dict[str, t.Any], settings: dict[str, t.Any], rounds: int
                 ) -> tuple[list[float], list[float]]:
    """``ansible-playbook`` of one commsgw.routing.probe task on localhost: wall time and the module's own."""
    (work / "plan.json").write_text(json.dumps({"bench_plan": plan}))
    (work / "probe.yml").write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": [{
        "name": "Probe", "register": "probed", "commsgw.routing.probe": {
            "plan": "{{ bench_plan }}", "nameservers": settings["nameservers"], "client_cert": settings["client_cert"],
            "client_key": settings["client_key"], "ca_bundle": settings["ca_bundle"], "check_provisioning_ttl": False,
            "platform": "kamailio", "platform_options": settings["platform_options"], "sbc_settle_timeout": 0,
            "fail_on_verdict": False}}, {
        "name": "Figures", "ansible.builtin.copy": {
            "content": "{{ probed.report.timings_ms | to_json }}", "dest": str(work / "timings.json"),
            "mode": "0600"}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    walls, module = [], []
    for _round in range(rounds):
        started = time.monotonic()
        proc = subprocess.run([str(pathlib.Path(sys.executable).parent / "ansible-playbook"), str(work / "probe.yml"),
                               "-e", "@%s" % (work / "plan.json"), "-e",
                               "ansible_python_interpreter=%s" % sys.executable],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
        walls.append(time.monotonic() - started)
        if proc.returncode != 0:
            raise SystemExit("the probe playbook failed:\n%s" % proc.stdout[-3000:])
        module.append(json.loads((work / "timings.json").read_text())["total"] / 1000.0)
    return walls, module


def bench_load(work: pathlib.Path, minutes: float) -> dict[str, t.Any]:
    """Two sites at one scrape per 15 s each for ``minutes``: CPU, RSS and OPTIONS per minute per site."""
    raw = _deployment("load." + BASE, ["127.0.130", "127.0.131"],
                      ["pstn-region1.load." + BASE, "pstn-region2.load." + BASE])
    for region in raw["service_regions"]:
        region["ip_ranges"] = region["ip_ranges"][:1]
    sim = AcgSim(raw, work / "acg-sim", peers_per_region=3).start()
    exporter = None
    try:
        assert sim.dns is not None
        pki = sim.pki_dir
        common = {"nameservers": [sim.dns.address], "client_cert": str(pki / "sbc.chain.pem"),
                  "client_key": str(pki / "sbc.key"), "ca_bundle": str(pki / "ca-bundle.pem"), "platform": "kamailio",
                  "platform_options": {"config_dir": str(work / "no-sbc"), "run_dir": str(work / "no-sbc")}}
        config = {"schema_version": 1, "listen": {"address": EXPORTER, "port": 9474},
                  "sites": {name: dict(common, plan=plan) for name, plan in plans(raw).items()}}
        exporter = Exporter(work / "load-exporter", config)
        first = exporter.metrics()
        rss, started, scrapes = [], time.monotonic(), 0
        while time.monotonic() - started < minutes * 60:
            tick = time.monotonic()
            for site in ("amsterdam", "dublin"):
                exporter.get("/probe?target=%s" % site)
                scrapes += 1
            rss.append(exporter.metrics()["process_resident_memory_bytes"])
            time.sleep(max(0.0, 15.0 - (time.monotonic() - tick)))
        elapsed = time.monotonic() - started
        last = exporter.metrics()
        cpu = last["process_cpu_seconds_total"] - first["process_cpu_seconds_total"]
        sent = {site: last['commsgw_exporter_options_sent_total{site="%s"}' % site]
                - first.get('commsgw_exporter_options_sent_total{site="%s"}' % site, 0.0)
                for site in ("amsterdam", "dublin")}
        return {"minutes": elapsed / 60, "scrapes": scrapes, "cpu_s": cpu, "cpu_percent": 100 * cpu / elapsed,
                "rss_mb_max": max(rss) / 2 ** 20, "rss_mb_last": rss[-1] / 2 ** 20,
                "options_per_min": {site: n / (elapsed / 60) for site, n in sent.items()}}
    finally:
        if exporter is not None:
            exporter.stop()
        sim.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--targets", default="1,4,16")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the exporter drops to nobody, as in the lab")
    work = pathlib.Path(tempfile.mkdtemp(prefix="exporter-bench-"))
    work.chmod(0o755)
    results = [bench_targets(work / ("t%s" % n), int(n), args.rounds) for n in args.targets.split(",")]
    print("scrape duration vs the probe module from a playbook (2 regions, median of %d, seconds):" % args.rounds)
    print("  %-18s %10s %14s %14s" % ("targets per region", "scrape", "playbook wall", "module total"))
    for r in results:
        print("  %-18d %10.3f %14.3f %14.3f" % (r["per_region"], statistics.median(r["scrape_s"]),
                                                statistics.median(r["playbook_s"]), statistics.median(r["module_s"])))
    load = bench_load(work / "load", args.minutes)
    print("load: 2 sites x 2 regions x 3 peers, one scrape per 15 s per site for %.1f min (%d scrapes):"
          % (load["minutes"], load["scrapes"]))
    print("  CPU %.2f s (%.2f %% of one core), RSS max %.1f MiB (last %.1f MiB)" % (
        load["cpu_s"], load["cpu_percent"], load["rss_mb_max"], load["rss_mb_last"]))
    print("  OPTIONS per minute sent to ACG: %s" % ", ".join(
        "%s %.1f" % kv for kv in sorted(load["options_per_min"].items())))
    (work / "results.json").write_text(json.dumps({"targets": results, "load": load}, indent=2))
    print("raw figures: %s" % (work / "results.json"))


if __name__ == "__main__":
    main()
