# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The exporter's HTTP server (standard library), Prometheus' multi-target exporter pattern.

``GET /probe?target=<site>[&module=<module>]`` probes a configured site and answers its metrics;
``/metrics`` is the exporter's own health; ``/`` the status page. The server is network-facing and
everything a client sends is hostile: only GET and HEAD, a bounded URL, exactly the parameters
``target`` and ``module`` naming configured entries (anything else: 400 with a plain-text reason),
``X-Prometheus-Scrape-Timeout-Seconds`` checked and capped, at most ``max_connections`` connections
served at once (more are closed), a socket timeout for slow clients, and optional TLS and basic auth
(``web``) in front of every path.
"""

from __future__ import annotations

import http.server
import logging
import math
import socket
import socketserver
import threading
import time
import typing as t
import urllib.parse

from ansible_collections.commsgw.routing.plugins.module_utils.exporter import status_page
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.config import (
    MAX_SCRAPE_TIMEOUT_S, ExporterConfig)
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.metrics import (
    Exposition, report_metrics, site_verdict)
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.runner import ProbeRunner, Scrape
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.selfmetrics import HttpStats, exporter_metrics
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.web import WebConfig

LOG = logging.getLogger("commsgw-probe-exporter")
MAX_URL_CHARS = 512
MAX_PARAM_CHARS = 64
PROBE_PARAMS = ("target", "module")
TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
COMMON_HEADERS = (("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"),
                  ("Referrer-Policy", "no-referrer"))


class BadRequest(ValueError):
    """A request the exporter refuses; the message is the plain-text answer."""


def _shown(value: str) -> str:
    """A client's value in an error message: repr'd (no control characters) and clipped."""
    return repr(value[:MAX_PARAM_CHARS] + ("..." if len(value) > MAX_PARAM_CHARS else ""))


def probe_request(query: str, config: ExporterConfig) -> tuple[str, str]:
    """(site, module) of a /probe query; BadRequest for anything but one configured target and module."""
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, max_num_fields=len(PROBE_PARAMS) + 1,
                                       errors="strict")
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest("cannot read the query: %s; expected target=<site>[&module=<module>]" % exc) from None
    seen: dict[str, str] = {}
    for key, value in pairs:
        if key not in PROBE_PARAMS:
            raise BadRequest("unknown parameter %s; /probe takes target=<site> and module=<module>" % _shown(key))
        if key in seen:
            raise BadRequest("parameter %s given twice" % key)
        seen[key] = value
    if not seen.get("target"):
        raise BadRequest("missing target=<site>; configured sites: %s" % ", ".join(sorted(config.sites)))
    site, module = seen["target"], seen.get("module") or config.default_module
    if site not in config.sites:
        raise BadRequest("target %s is not a configured site; configured: %s"
                         % (_shown(site), ", ".join(sorted(config.sites))))
    if module not in config.modules:
        raise BadRequest("module %s is not a configured module; configured: %s"
                         % (_shown(module), ", ".join(sorted(config.modules))))
    return site, module


def scrape_budget(header: t.Optional[str], config: ExporterConfig) -> float:
    """Seconds a scrape may take: Prometheus' scrape timeout (or the default) minus the offset, capped."""
    if header is None:
        timeout = config.default_scrape_timeout_s
    else:
        try:
            timeout = float(header[:32])
        except ValueError:
            raise BadRequest("%s: %s is not a number" % (TIMEOUT_HEADER, _shown(header))) from None
        if not math.isfinite(timeout) or timeout <= 0:
            raise BadRequest("%s: %s; expected a positive number of seconds" % (TIMEOUT_HEADER, _shown(header)))
    return max(0.1, min(timeout, MAX_SCRAPE_TIMEOUT_S) - config.timeout_offset_s)


def probe_metrics(scrape: Scrape, vantage: str) -> str:
    """The /probe answer for one scrape."""
    out = Exposition()
    run = scrape.run
    if scrape.outcome == "timeout" or run.report is None:
        out.add("probe_success", 0)
        out.add("probe_duration_seconds", scrape.waited_s if scrape.outcome == "timeout" else run.duration_s or 0.0)
        out.add("commsgw_probe_timed_out", scrape.outcome == "timeout")
        out.add("commsgw_probe_cached", scrape.outcome != "fresh" and scrape.outcome != "timeout")
        return out.render()
    out.add("probe_success", site_verdict(run.report, vantage) != "fail")
    out.add("probe_duration_seconds", run.duration_s or 0.0)
    out.add("commsgw_probe_timed_out", 0)
    out.add("commsgw_probe_cached", scrape.outcome in ("coalesced", "cached"))
    out.add("commsgw_probe_timestamp_seconds", run.started_at)
    report_metrics(out, run.report, vantage)
    return out.render()


class Handler(http.server.BaseHTTPRequestHandler):
    server: "ExporterServer"
    server_version = "commsgw-probe-exporter"
    sys_version = ""
    timeout = 15.0  # reading the request (and the TLS handshake): slow clients are cut off

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._serve(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(head=True)

    def _refuse_method(self) -> None:
        self._answer(405, "only GET and HEAD\n", extra=(("Allow", "GET, HEAD"),))

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method  # noqa: N815

    def send_error(self, code: int, message: t.Optional[str] = None, explain: t.Optional[str] = None) -> None:
        """http.server's own errors (bad request line, unsupported method) as plain text, not HTML."""
        self._answer(code, "%s\n" % (message or http.server.BaseHTTPRequestHandler.responses.get(code, ("",))[0]))

    def log_message(self, format: str, *args: t.Any) -> None:  # noqa: A002 - http.server's signature
        LOG.debug("%s %s", self.client_address[0], ascii(format % args)[1:-1][:300])

    def _answer(self, code: int, body: str, content_type: str = "text/plain; charset=utf-8",
                extra: t.Sequence[tuple[str, str]] = (), head: bool = False) -> None:
        data = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in tuple(COMMON_HEADERS) + tuple(extra):
            self.send_header(name, value)
        self.end_headers()
        if not head and self.command != "HEAD":
            self.wfile.write(data)
        path = urllib.parse.urlsplit(getattr(self, "path", "") or "").path
        self.server.http_stats.count(path, code)
        if code >= 400:
            LOG.info("%s %s -> %d %s", self.client_address[0], _shown(getattr(self, "path", "") or ""), code,
                     body.strip()[:200])

    def _serve(self, head: bool) -> None:
        if len(self.path) > MAX_URL_CHARS:
            self._answer(414, "URL longer than %d characters\n" % MAX_URL_CHARS, head=head)
            return
        auth = self.server.web.auth
        if auth is not None and not auth.check(self.headers.get("Authorization")):
            self._answer(401, "authentication required\n", extra=(
                ("WWW-Authenticate", 'Basic realm="commsgw-probe-exporter", charset="UTF-8"'),), head=head)
            return
        url = urllib.parse.urlsplit(self.path)
        try:
            if url.path == "/probe":
                self._probe(url.query, head)
            elif url.path == "/metrics":
                self._answer(200, exporter_metrics(self.server.runner, self.server.http_stats), METRICS_TYPE, head=head)
            elif url.path == "/":
                self._answer(200, self._page(), "text/html; charset=utf-8", head=head,
                             extra=(("Content-Security-Policy", status_page.CONTENT_SECURITY_POLICY),))
            else:
                self._answer(404, "not found; the exporter serves /probe?target=<site>, /metrics and /\n", head=head)
        except BadRequest as exc:
            self._answer(400, "%s\n" % exc, head=head)

    def _probe(self, query: str, head: bool) -> None:
        config = self.server.config
        site, module = probe_request(query, config)
        budget = scrape_budget(self.headers.get(TIMEOUT_HEADER), config)
        scrape = self.server.runner.scrape(site, module, budget)
        self._answer(200, probe_metrics(scrape, config.sites[site].vantage), METRICS_TYPE, head=head)

    def _page(self) -> str:
        runner, config = self.server.runner, self.server.config
        verdicts = {name: (lambda report, v=site.vantage: site_verdict(report, v)) for name, site in config.sites.items()}
        return status_page.render(sorted(config.sites), runner.snapshot(),
                                  {name: runner.timeline(name) for name in config.sites}, verdicts, time.time())


class ExporterServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """One thread per connection, at most ``max_connections`` of them; TLS handshakes in those threads."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, config: ExporterConfig, runner: ProbeRunner, web: WebConfig) -> None:
        self.config, self.runner, self.web = config, runner, web
        self.http_stats = HttpStats()
        self.slots = threading.BoundedSemaphore(config.max_connections)
        family = socket.AF_INET6 if ":" in config.listen_address else socket.AF_INET
        self.address_family = family
        super().__init__((config.listen_address, config.listen_port), Handler)

    def get_request(self) -> tuple[socket.socket, t.Any]:
        sock, address = self.socket.accept()
        if self.web.context is not None:
            # The handshake happens on the first read, in the connection's thread, under Handler.timeout:
            # a client that never completes it holds one slot for that long, never the accept loop.
            sock = self.web.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def process_request(self, request: t.Any, client_address: t.Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.http_stats.reject()
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.slots.release()
            raise

    def process_request_thread(self, request: t.Any, client_address: t.Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: t.Any, client_address: t.Any) -> None:
        LOG.debug("connection from %s ended with an error", client_address, exc_info=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = "[%s]" % host if ":" in host else host
        return "%s://%s:%d/" % ("https" if self.web.context is not None else "http", host, port)
