"""The web page's test bench: a real `codeloop serve` process (against the fake model server)
and Debian's Chromium driven by Playwright, recording every request the page makes, its
errors and console errors, and a screenshot of each step (test-artifacts/, kept by CI)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from codeloop.testing.fake_server import FakeModelServer
from tests.acp_agent.editor import acp_env

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Request

SERVE = [sys.executable, "-m", "codeloop", "serve"]
URL_LINE = re.compile(r"^codeloop serve: (http://127\.0\.0\.1:\d+/\?token=\S+)$")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WAIT_MS = 60_000  # the machine is shared: generous, never a measure
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


@contextmanager
def serve(
    server: FakeModelServer, home: Path, project: Path, port: int = 0, token: str | None = None
) -> Iterator[str]:
    """`codeloop serve --port PORT` in `project`; yields the URL of its first stdout line,
    and stops it (its whole process group) afterwards."""
    flags = ["--port", str(port), *(["--token", token] if token is not None else [])]
    process = subprocess.Popen(
        [*SERVE, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=acp_env(server, home),
        cwd=project,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        found = URL_LINE.match(first)
        if found is None:
            process.kill()
            _, err = process.communicate(timeout=30)
            raise AssertionError(f"codeloop serve printed {first!r} first; stderr: {err}")
        yield found.group(1)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@dataclass
class Visit:
    """One page, watched: every request's URL, the page's uncaught errors and console
    errors, and numbered screenshots."""

    page: Page
    name: str
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    shots: int = 0

    def shot(self, step: str) -> Path:
        self.shots += 1
        path = ARTIFACTS / self.name / f"{self.shots:02d}-{step}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def foreign_requests(self) -> list[str]:
        origin = _origin(self.url)
        return [r for r in self.requests if _origin(r) != origin]


@contextmanager
def visit(
    browser: Browser, url: str, name: str, viewport: dict[str, int] = DESKTOP
) -> Iterator[Visit]:
    shutil.rmtree(ARTIFACTS / name, ignore_errors=True)  # a rerun's screenshots only
    context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    seen = Visit(page, name, url)

    def on_request(request: Request) -> None:
        seen.requests.append(request.url)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            seen.errors.append(f"console: {message.text}")

    page.on("request", on_request)
    page.on("websocket", lambda socket: seen.requests.append(socket.url))
    page.on("pageerror", lambda error: seen.errors.append(f"page error: {error}"))
    page.on("console", on_console)
    page.goto(url)
    try:
        yield seen
    except BaseException:
        seen.shot("failed")  # what the page showed when the test gave up
        raise
    finally:
        context.close()


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return scheme, parts.netloc
