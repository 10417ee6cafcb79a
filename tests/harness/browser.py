# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real headless browser for page tests: Debian's ``chromium`` driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ending in NUL on file descriptors 3 and 4; no port, no extra library).

    with Browser(workdir) as browser:
        page = browser.open("http://127.0.0.1:9473/")
        page.evaluate("document.title")
        page.errors          # console errors, uncaught exceptions, CSP and network errors the page caused
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import typing as t
from pathlib import Path


class BrowserError(RuntimeError):
    pass


class Page:
    def __init__(self, browser: "Browser", session: str) -> None:
        self.browser, self.session = browser, session
        self.errors: list[str] = []
        self.console: list[str] = []
        self.loaded = threading.Event()

    def command(self, method: str, **params: t.Any) -> dict[str, t.Any]:
        return self.browser.command(method, session=self.session, **params)

    def evaluate(self, expression: str) -> t.Any:
        answer = self.command("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in answer:
            raise BrowserError("evaluating %r: %s" % (expression, answer["exceptionDetails"]))
        return answer["result"].get("value")

    def event(self, method: str, params: t.Mapping[str, t.Any]) -> None:
        if method == "Page.loadEventFired":
            self.loaded.set()
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append("%s: %s" % (params.get("type"), text))
            if params.get("type") in ("error", "assert"):
                self.errors.append("console.%s: %s" % (params.get("type"), text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append("exception: %s %s" % (details.get("text"), details.get("exception", {}).get(
                "description", "")))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            self.console.append("%s %s: %s" % (entry.get("source"), entry.get("level"), entry.get("text")))
            if entry.get("level") == "error":
                self.errors.append("%s: %s" % (entry.get("source"), entry.get("text")))


class Browser:
    def __init__(self, workdir: Path, timeout_s: float = 30.0) -> None:
        self.workdir = Path(workdir)
        self.timeout_s = timeout_s
        self.proc: t.Optional[subprocess.Popen[bytes]] = None
        self.next_id = 0
        self.answers: dict[int, dict[str, t.Any]] = {}
        self.pages: dict[str, Page] = {}
        self.lock = threading.Condition()
        self.reader: t.Optional[threading.Thread] = None

    def start(self) -> "Browser":
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if binary is None:
            raise BrowserError("chromium is not installed (Debian package chromium)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        argv = [binary, "--headless=new", "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
                "--disable-gpu", "--disable-extensions", "--disable-background-networking", "--disable-sync",
                "--user-data-dir=%s" % (self.workdir / "profile"), "about:blank"]
        if os.geteuid() == 0:
            argv.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        with open(self.workdir / "chromium.log", "ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(3, 4),
                                         preexec_fn=child_fds, start_new_session=True)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.command("Target.getTargets")  # answers once the browser is up
        return self

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw.decode())
                with self.lock:
                    if "id" in message:
                        self.answers[message["id"]] = message
                        self.lock.notify_all()
                    elif message.get("sessionId") in self.pages:
                        self.pages[message["sessionId"]].event(message["method"], message.get("params", {}))

    def command(self, method: str, session: t.Optional[str] = None, **params: t.Any) -> dict[str, t.Any]:
        with self.lock:
            self.next_id += 1
            ident = self.next_id
        message: dict[str, t.Any] = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        with self.lock:
            while ident not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError("no answer to %s within %.0f s" % (method, self.timeout_s))
                self.lock.wait(left)
            answer = self.answers.pop(ident)
        if "error" in answer:
            raise BrowserError("%s: %s" % (method, answer["error"]))
        return t.cast("dict[str, t.Any]", answer.get("result", {}))

    def open(self, url: str) -> Page:
        """A new tab showing ``url`` once its load event fired, its errors collected from the start."""
        target = self.command("Target.createTarget", url="about:blank")["targetId"]
        session = self.command("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        with self.lock:
            self.pages[session] = page
        for domain in ("Page", "Runtime", "Log"):
            page.command(domain + ".enable")
        page.command("Page.navigate", url=url)
        if not page.loaded.wait(self.timeout_s):
            raise BrowserError("%s did not load within %.0f s" % (url, self.timeout_s))
        time.sleep(0.5)  # let the page's own script run and report
        return page

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.command("Browser.close")
            except (BrowserError, OSError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for fd in (getattr(self, "_to_browser", None), getattr(self, "_from_browser", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def __enter__(self) -> "Browser":
        return self.start()

    def __exit__(self, *exc: t.Any) -> None:
        self.stop()
