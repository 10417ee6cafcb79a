# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real Prometheus and Alertmanager (Debian's ``prometheus`` and ``prometheus-alertmanager``) for tests.

Each runs as a child process on a loopback address and a free port, with its data in a directory of
the test, and is asked only through its HTTP API::

    with Prometheus(workdir, config_text, rule_files=[...]) as prom:
        prom.query("probe_success")                 # instant vector: [{"metric": {...}, "value": [t, "1"]}]
        prom.alerts()                               # [{"labels": {...}, "state": "pending"|"firing", ...}]
    with Alertmanager(workdir) as am:
        am.silences()
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import typing as t
import urllib.parse
import urllib.request
from pathlib import Path


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise FileNotFoundError("none of %s installed (Debian: prometheus, prometheus-alertmanager)" % ", ".join(names))


class _Server:
    """A child server process with an HTTP API at ``self.url``."""

    name = "server"

    def __init__(self, workdir: Path, address: str = "127.0.0.1") -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.address = address
        self.port = free_port(address)
        self.url = "http://%s:%d" % (address, self.port)
        self.proc: t.Optional[subprocess.Popen[bytes]] = None
        self.log = self.workdir / ("%s.log" % self.name)

    def argv(self) -> list[str]:
        raise NotImplementedError

    def start(self, timeout_s: float = 30.0) -> "_Server":
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s:\n%s" % (self.name, self.proc.returncode, self.log.read_text()))
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("%s not ready in %.0f s:\n%s" % (self.name, timeout_s, self.log.read_text()[-3000:]))

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> "_Server":
        return self.start()

    def __exit__(self, *exc: t.Any) -> None:
        self.stop()

    def api(self, path: str, params: t.Optional[t.Mapping[str, str]] = None, method: str = "GET",
            body: t.Any = None) -> t.Any:
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"Content-Type": "application/json"} if data else {})
        with urllib.request.urlopen(request, timeout=10) as answer:
            text = answer.read().decode()
        return json.loads(text) if text else None


class Prometheus(_Server):
    """Prometheus with ``config`` (prometheus.yml text); rule files are copied next to it."""

    name = "prometheus"

    def __init__(self, workdir: Path, config: str, rule_files: t.Sequence[Path] = (), address: str = "127.0.0.1") -> None:
        super().__init__(workdir, address)
        for rule_file in rule_files:
            shutil.copy(rule_file, self.workdir / Path(rule_file).name)
        (self.workdir / "prometheus.yml").write_text(config)

    def argv(self) -> list[str]:
        return [_binary("prometheus"), "--config.file=%s" % (self.workdir / "prometheus.yml"),
                "--storage.tsdb.path=%s" % (self.workdir / "data"), "--web.listen-address=%s:%d" % (
                    self.address, self.port), "--web.enable-lifecycle", "--log.level=warn"]

    def query(self, expr: str) -> list[dict[str, t.Any]]:
        answer = self.api("/api/v1/query", {"query": expr})
        assert answer["status"] == "success", answer
        return t.cast("list[dict[str, t.Any]]", answer["data"]["result"])

    def alerts(self, name: t.Optional[str] = None) -> list[dict[str, t.Any]]:
        alerts = self.api("/api/v1/alerts")["data"]["alerts"]
        return [a for a in alerts if name is None or a["labels"].get("alertname") == name]

    def targets(self) -> list[dict[str, t.Any]]:
        return t.cast("list[dict[str, t.Any]]", self.api("/api/v1/targets")["data"]["activeTargets"])


class Alertmanager(_Server):
    """Alertmanager without clustering, with a receiver that sends nowhere."""

    name = "alertmanager"

    def argv(self) -> list[str]:
        config = self.workdir / "alertmanager.yml"
        config.write_text("route:\n  receiver: nowhere\nreceivers:\n  - name: nowhere\n")
        return [_binary("prometheus-alertmanager", "alertmanager"), "--config.file=%s" % config,
                "--storage.path=%s" % (self.workdir / "data"), "--web.listen-address=%s:%d" % (self.address, self.port),
                "--cluster.listen-address=", "--log.level=warn"]

    def silences(self) -> list[dict[str, t.Any]]:
        return t.cast("list[dict[str, t.Any]]", self.api("/api/v2/silences"))
