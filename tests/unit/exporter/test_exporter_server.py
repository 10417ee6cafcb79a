# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The exporter's HTTP server (exporter/server.py) on a real socket, as a hostile client meets it: bad
queries never start a probe, the scrape timeout is honoured, connections are capped, basic auth and TLS
(exporter/web.py) guard every path, the status page escapes what peers send, root is refused."""

from __future__ import annotations

import base64
import http.client
import os
import socket
import ssl
import threading
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.exporter import main as exporter_main
from ansible_collections.commsgw.routing.plugins.module_utils.exporter import status_page
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.config import ConfigError
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.runner import ProbeRunner
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.server import ExporterServer
from ansible_collections.commsgw.routing.plugins.module_utils.exporter.web import (
    WebConfig, hash_password, parse_web_config)
from ansible_collections.commsgw.routing.tests.unit.exporter.exporter_fakes import R1, CountingProbe, exporter_config
from harness.pki import TestCA
from harness.tools import needs


class Running:
    """An exporter server in a thread, with a counting fake probe."""

    def __init__(self, probe: CountingProbe, web: t.Optional[WebConfig] = None, **config: t.Any) -> None:
        self.probe = probe
        self.runner = ProbeRunner(exporter_config(**config), probe_fn=probe)
        self.server = ExporterServer(self.runner.config, self.runner, web or WebConfig(None, None))
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def get(self, path: str, headers: t.Optional[dict[str, str]] = None, method: str = "GET",
            timeout: float = 10.0) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, headers=headers or {})
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
        finally:
            conn.close()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def running() -> t.Iterator[Running]:
    server = Running(CountingProbe())
    yield server
    server.stop()


def test_probe_answers_metrics(running: Running) -> None:
    status, headers, body = running.get("/probe?target=s", {"X-Prometheus-Scrape-Timeout-Seconds": "10"})
    assert status == 200, body
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "probe_success 1" in body and 'commsgw_region_healthy_peers{deployment="d",site="s"' in body
    assert running.get("/probe?target=s&module=quick")[0] == 200
    assert running.probe.calls == 2


@pytest.mark.parametrize("query, message", [
    ("", "missing target=<site>; configured sites: s"),
    ("target=", "missing target=<site>"),
    ("target=nowhere", "target 'nowhere' is not a configured site; configured: s"),
    ("target=%s" % ("s" * 300), "is not a configured site"),
    ("target=s&module=fast", "module 'fast' is not a configured module; configured: default, quick"),
    ("target=s&target=s", "parameter target given twice"),
    ("target=s&debug=1", "unknown parameter 'debug'; /probe takes target=<site> and module=<module>"),
    ("target=s&a=1&b=2&c=3", "cannot read the query"),
    ("target=%ff", "cannot read the query"),
    ("target=s%0d%0aX-Injected:%201", "is not a configured site"),
    ("target=../../etc/passwd", "is not a configured site"),
])
def test_bad_queries_are_refused_and_never_probe(running: Running, query: str, message: str) -> None:
    status, headers, body = running.get("/probe?" + query)
    assert status == 400, body
    assert message in body
    assert headers["content-type"] == "text/plain; charset=utf-8" and headers["x-content-type-options"] == "nosniff"
    assert "x-injected" not in headers and "\r" not in body and len(body) < 400
    assert running.probe.calls == 0


@pytest.mark.parametrize("value", ["abc", "-1", "0", "nan", "inf", "1e999"])
def test_a_bad_scrape_timeout_header_is_refused(running: Running, value: str) -> None:
    status, _headers, body = running.get("/probe?target=s", {"X-Prometheus-Scrape-Timeout-Seconds": value})
    assert status == 400 and "X-Prometheus-Scrape-Timeout-Seconds" in body
    assert running.probe.calls == 0


def test_methods_paths_and_long_urls(running: Running) -> None:
    assert running.get("/probe?target=s", method="POST")[0] == 405
    assert running.get("/probe?target=s", method="DELETE")[0] == 405
    assert running.get("/nothing")[0] == 404
    assert running.get("/probe?target=" + "a" * 600)[0] == 414
    assert running.get("/", method="HEAD")[2] == ""
    assert running.probe.calls == 0
    status, _h, body = running.get("/metrics")
    assert status == 200
    assert 'commsgw_exporter_http_requests_total{handler="/probe",code="405"} 2' in body


def test_the_scrape_timeout_header_is_honoured() -> None:
    server = Running(CountingProbe(delay_s=3.0), timeout_offset_s=0.5)
    try:
        started = time.monotonic()
        status, _h, body = server.get("/probe?target=s", {"X-Prometheus-Scrape-Timeout-Seconds": "1"})
        took = time.monotonic() - started
        assert status == 200 and "commsgw_probe_timed_out 1" in body and "probe_success 0" in body
        assert took < 1.0, took
    finally:
        server.stop()


def test_connections_beyond_max_connections_are_closed() -> None:
    server = Running(CountingProbe(), max_connections=2)
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _slot in range(2)]
    try:
        time.sleep(0.3)
        third = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        third.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        assert third.recv(100) == b""  # closed unanswered while two slow clients hold both slots
        third.close()
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.3)
    status, _h, body = server.get("/metrics")
    server.stop()
    assert status == 200 and "commsgw_exporter_rejected_connections_total 1" in body


def test_basic_auth_guards_every_path() -> None:
    web = parse_web_config({"basic_auth_users": {"prometheus": hash_password("s3cret pass")}})
    server = Running(CountingProbe(), web=web)
    good = "Basic " + base64.b64encode(b"prometheus:s3cret pass").decode()
    try:
        for path in ("/probe?target=s", "/metrics", "/", "/probe?target=nowhere"):
            status, headers, _body = server.get(path)
            assert status == 401 and headers["www-authenticate"].startswith("Basic "), path
        for header in ("Basic " + base64.b64encode(b"prometheus:wrong").decode(),
                       "Basic " + base64.b64encode(b"nobody:s3cret pass").decode(), "Basic !!!", "Bearer x",
                       "Basic " + "A" * 2000):
            assert server.get("/metrics", {"Authorization": header})[0] == 401, header
        assert server.probe.calls == 0
        assert server.get("/probe?target=s", {"Authorization": good})[0] == 200
        assert server.get("/metrics", {"Authorization": good})[0] == 200
    finally:
        server.stop()


@needs("openssl")
def test_tls_with_client_certificates(tmp_path: Path) -> None:
    ca = TestCA(tmp_path / "ca", name="Exporter Test Root")
    cert = ca.issue_server("exporter", dns=["exporter.test"])
    client = ca.issue_client("prometheus", dns=["prometheus.test"])
    web = parse_web_config({"tls_server_config": {"cert_file": str(cert.chain), "key_file": str(cert.key),
                                                  "client_ca_file": str(ca.cert)}})
    server = Running(CountingProbe(), web=web)

    def fetch(with_client_cert: bool) -> bytes:
        context = ssl.create_default_context(cafile=str(ca.cert))
        if with_client_cert:
            context.load_cert_chain(str(client.chain), str(client.key))
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            with context.wrap_socket(raw, server_hostname="exporter.test") as tls:
                tls.sendall(b"GET /metrics HTTP/1.0\r\nHost: exporter.test\r\n\r\n")
                data = b""
                while True:
                    chunk = tls.recv(65536)
                    if not chunk:
                        return data
                    data += chunk

    try:
        assert fetch(True).startswith(b"HTTP/1.0 200")
        with pytest.raises((ssl.SSLError, ConnectionResetError, BrokenPipeError)):
            fetch(False)  # TLS 1.3 says so at the first read
        plain = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        plain.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        assert not plain.recv(100).startswith(b"HTTP/")
        plain.close()
    finally:
        server.stop()
    assert server.server.url.startswith("https://")


def test_web_config_errors() -> None:
    for raw, message in (({"basic_auth_users": {"u": "plain"}}, "basic_auth_users.u: not a $pbkdf2-sha256$ hash"),
                         ({"basic_auth_users": {"u": "$pbkdf2-sha256$1000$AAAA$AAAA"}}, "1000 iterations"),
                         ({"http_server_config": {}}, "unknown key(s) http_server_config"),
                         ({"tls_server_config": {"cert_file": "/x"}}, "tls_server_config.key_file: missing"),
                         ({"tls_server_config": {"cert_file": "/x", "key_file": "/y",
                                                 "client_auth_type": "RequireAnyClientCert"}}, "client_auth_type")):
        with pytest.raises(ConfigError) as error:
            parse_web_config(raw)
        assert message in str(error.value)


def test_status_page_escapes_what_peers_send(running: Running) -> None:
    running.probe.network.reason = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'
    running.probe.network.dead.add(R1[1])
    assert running.get("/probe?target=s")[0] == 200
    status, headers, page = running.get("/")
    assert status == 200
    assert headers["content-security-policy"] == status_page.CONTENT_SECURITY_POLICY
    assert "script-src 'sha256-" in headers["content-security-policy"]
    assert "<script>alert" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    assert page.count("<script>") == 1 and page.count("<style>") == 1
    assert 'data-peer="%s:5061"' % R1[1] in page and "no_reply" in page
    assert "http://" not in page and "https://" not in page  # no external asset


def test_started_as_root_without_a_user_it_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(exporter_main.StartError) as error:
        exporter_main.drop_privileges(None, "")
    assert "refusing to run as root" in str(error.value)
    with pytest.raises(exporter_main.StartError) as error:
        exporter_main.drop_privileges("root", "")
    assert "refusing to run as root" in str(error.value)
    with pytest.raises(exporter_main.StartError) as error:
        exporter_main.drop_privileges("nobody", "root")
    assert "group root" in str(error.value)


def test_hash_password_command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("correct horse\n"))
    assert exporter_main.main(["hash-password"]) == 0
    hashed = capsys.readouterr().out.strip()
    auth = parse_web_config({"basic_auth_users": {"u": hashed}}).auth
    assert auth is not None
    assert auth.check("Basic " + base64.b64encode(b"u:correct horse").decode())
    assert not auth.check("Basic " + base64.b64encode(b"u:correct horsE").decode())
