# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The exporter's real probe against the simulated ACG (Knot DNS, SIPp peers behind mutual-TLS fronts that
demand SNI, MCP fronts; tests/harness/acg_sim.py) on loopback block 127.0.124-126, the exporter's HTTP
server in this process: what a scrape reports, how many OPTIONS the peers really receive however often it
is scraped (the rate cap), a silent region within the scrape timeout, hostile scrapes that send nothing."""

from __future__ import annotations

import http.client
import math
import subprocess
import threading
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.exporter import config as cfg
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.runner import ProbeRunner
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.server import ExporterServer
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.web import WebConfig
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from harness.acg_sim import AcgSim
from harness.tools import needs

pytestmark = [pytest.mark.integration, needs("sipp", "knotd", "openssl", "promtool")]

DOMAIN = "acg-live.commsgw.test"
DEPLOYMENT: dict[str, t.Any] = {
    "name": "live", "type": "production", "base_domain": DOMAIN, "management_region": "West Europe",
    "allow_non_public_ranges": True, "acg_transport": "tls",
    "service_regions": [
        {"name": "region1", "azure_region": "westeurope", "hostname": "pstn-region1." + DOMAIN,
         "ip_ranges": ["127.0.124.0/28"], "mcp_hostname": "mcp-region1." + DOMAIN},
        {"name": "region2", "azure_region": "northeurope", "hostname": "pstn-region2." + DOMAIN,
         "ip_ranges": ["127.0.125.0/28"], "mcp_hostname": "mcp-region2." + DOMAIN}],
    "sites": [{"name": "amsterdam", "service_region": "region1"}, {"name": "dublin", "service_region": "region2"}],
}
MIN_INTERVAL_S = 1.0


def site_plan() -> dict[str, t.Any]:
    sbcs = [Sbc(host="sbc-%s-1" % site["name"][:3], site=site["name"], platform="kamailio") for site in DEPLOYMENT["sites"]]
    deployment, findings = validate_deployment(DEPLOYMENT, sbcs)
    assert not findings.errors, [f.render() for f in findings.errors]
    return build_site_plan(deployment, deployment.sites[0])


class Live:
    def __init__(self, sim: AcgSim, **config: t.Any) -> None:
        assert sim.dns is not None
        pki = sim.pki_dir
        raw = {"schema_version": 1, "listen": {"address": "127.0.126.1", "port": 0}, "min_interval_s": MIN_INTERVAL_S,
               "sites": {"amsterdam": {"plan": site_plan(), "host": "sbc-ams-1", "nameservers": [sim.dns.address],
                                       "client_cert": str(pki / "sbc.chain.pem"), "client_key": str(pki / "sbc.key"),
                                       "ca_bundle": str(pki / "ca-bundle.pem")}},
               "modules": {"default": {"timeout_s": 2.0}}}
        raw.update(config)
        self.runner = ProbeRunner(cfg.parse_config(raw))
        self.server = ExporterServer(self.runner.config, self.runner, WebConfig(None, None))
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()

    def get(self, path: str, timeout_header: t.Optional[str] = "10") -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.126.1", self.port, timeout=30)
        try:
            conn.request("GET", path, headers={"X-Prometheus-Scrape-Timeout-Seconds": timeout_header}
                         if timeout_header else {})
            answer = conn.getresponse()
            return answer.status, answer.read().decode()
        finally:
            conn.close()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[AcgSim]:
    simulator = AcgSim(DEPLOYMENT, tmp_path_factory.mktemp("exporter-live") / "acg-sim", peers_per_region=3).start()
    try:
        yield simulator
    finally:
        simulator.stop()


@pytest.fixture
def live(sim: AcgSim) -> t.Iterator[Live]:
    for peer in sim.peers:
        sim.set_peer(peer.address, "200")
    exporter = Live(sim)
    yield exporter
    exporter.stop()


def options(sim: AcgSim) -> dict[str, int]:
    return {p.address: p.counts().get("OPTIONS", 0) for p in sim.peers}


def test_a_scrape_reports_the_lab(live: Live, tmp_path: Path) -> None:
    status, text = live.get("/probe?target=amsterdam")
    assert status == 200
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30,
                           check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "probe_success 1" in text
    assert 'commsgw_region_healthy_peers{deployment="live",site="amsterdam",region="region1",role="local"} 3' in text
    # Each region's MCP record lists its own MCP first (reachable) and the other region's, whose
    # certificate names the other MCP hostname.
    assert 'commsgw_mcp_reachable_targets{deployment="live",site="amsterdam",region="region1",role="local"} 1' in text
    assert 'commsgw_provisioning_api_ttl_seconds{deployment="live",site="amsterdam",hostname="provapi.%s"} 60' % DOMAIN in text
    assert 'class="none"} 1' in text and "commsgw_peer_rtt_seconds{" in text
    expiry = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
              if line.startswith("commsgw_peer_cert_expiry_timestamp_seconds{")]
    assert len(expiry) >= 6 and min(expiry) > time.time() + 300 * 86400  # the lab's certificates: a year


def test_the_peers_receive_one_options_per_min_interval_however_often_scraped(live: Live, sim: AcgSim) -> None:
    """Forty clients scraping as fast as they can for 3 s: each peer receives at most one OPTIONS per
    min_interval_s (1 s here), and the exporter's own counter says exactly what the peers received."""
    time.sleep(MIN_INTERVAL_S)
    before = options(sim)
    scrapes: list[int] = []
    stop = time.monotonic() + 3.0

    def client() -> None:
        while time.monotonic() < stop:
            try:
                scrapes.append(live.get("/probe?target=amsterdam")[0])
            except (http.client.RemoteDisconnected, ConnectionResetError):
                scrapes.append(0)  # beyond max_connections (32): closed unanswered

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _client in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    elapsed = time.monotonic() - started
    time.sleep(0.5)  # replies in flight reach the peers' counters
    received = {a: n - before[a] for a, n in options(sim).items()}
    runs = live.runner.stats.runs["amsterdam"]
    bound = math.ceil(elapsed / MIN_INTERVAL_S) + 1
    print("%d scrapes (%d closed beyond max_connections) in %.1f s -> %d probe runs, OPTIONS per peer %s"
          % (len(scrapes), scrapes.count(0), elapsed, runs, received))
    assert set(scrapes) <= {200, 0} and scrapes.count(200) >= 40
    assert runs <= bound
    assert all(count <= runs for count in received.values()), received
    assert sum(received.values()) == live.runner.stats.options["amsterdam"]  # MCP never gets one


def test_a_silent_region_within_the_scrape_timeout(live: Live, sim: AcgSim) -> None:
    sim.set_region("region1", up=False, mode="silent")
    try:
        time.sleep(MIN_INTERVAL_S)
        started = time.monotonic()
        status, text = live.get("/probe?target=amsterdam", timeout_header="2")
        took = time.monotonic() - started
    finally:
        sim.set_region("region1", up=True)
    assert status == 200 and took < 2.0, took
    if "commsgw_probe_timed_out 0" in text:
        assert 'commsgw_region_healthy_peers{deployment="live",site="amsterdam",region="region1",role="local"} 0' in text
        assert text.count('class="no_reply"} 1') == 3
    else:
        assert "commsgw_probe_timed_out 1" in text and "probe_success 0" in text


def test_hostile_scrapes_send_nothing_to_acg(live: Live, sim: AcgSim) -> None:
    time.sleep(MIN_INTERVAL_S)
    before = options(sim)
    for query in ("target=dublin", "target=amsterdam&target=amsterdam", "target=amsterdam&module=x",
                  "target=amsterdam&nameserver=198.51.100.1", "target=127.0.124.1", "target=" + "a" * 400):
        assert live.get("/probe?" + query)[0] in (400, 414), query
    time.sleep(0.5)
    assert options(sim) == before
    assert live.runner.stats.runs["amsterdam"] == 0
