"""The web page `codeloop serve` ships, beside the terminal UI, against the fake model server:
the time from the model's first token to its text on screen, and what a long session costs.

First token to screen: each answer starts with a marker token; the fake server stamps the
moment it writes it (wall clock and monotonic). The page's MutationObserver stamps when the
marker enters the transcript (the page draws streamed text in an animation frame, so this
is the frame that paints it); the terminal UI's time is when the marker is read off its pty.

Long session: TURNS prompts, each answered with a short markdown text (a paragraph and a
code block), typed into the page and into the terminal UI; then the page's JS heap after a
garbage collection and its DOM nodes (CDP), the serve process's RSS and the terminal UI's
RSS, after the first turn and after the last.

    python -m bench.web_latency [--prompts 20] [--turns 1000]

Needs Debian's chromium and Playwright (the dev extra), and the serve extra.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.common import MODEL, median, ms
from bench.tui import SESSION_READY, Pty, environment
from codeloop.testing import fake_server
from codeloop.testing.chromium import CHROMIUM, launch
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, Turn, text, turn

if TYPE_CHECKING:
    from playwright.sync_api import Page

URL_LINE = re.compile(r"^codeloop serve: (http://\S+)$")
BODY = "\n\nA paragraph with **bold** and `code`.\n\n```python\ndef f(x):\n    return x + 1\n```\n"
# Stamps the page's clock on the first mutation that holds each awaited text.
OBSERVER = """
window.markers = {};
window.awaited = [];
new MutationObserver((records) => {
  for (const wanted of window.awaited) {
    if (window.markers[wanted]) continue;
    if (records.some((r) => (r.target.textContent || '').includes(wanted))) {
      window.markers[wanted] = performance.timeOrigin + performance.now();
    }
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""


def marker(n: int) -> str:
    return f"Tok{n:04d}q"


def answers(count: int) -> list[Turn]:
    """Each answer's first token its marker; the rest a moment later, as a model streams."""
    return [
        turn(text(marker(n), delay_after=0.05), BODY + f"Answer number {n}.") for n in range(count)
    ]


class FirstTokens:
    """When the fake server wrote each marker: (wall clock, monotonic)."""

    def __init__(self) -> None:
        self.at: dict[str, tuple[float, float]] = {}
        self._original: Callable[[Any, bytes], None] = fake_server._Handler._chunk

    @contextmanager
    def watching(self) -> Iterator[None]:
        original = self._original
        stamps = self.at

        def chunk(handler: Any, data: bytes) -> None:
            original(handler, data)
            found = re.search(rb"Tok\d{4}q", data)
            if found is not None:
                stamps.setdefault(found.group().decode(), (time.time(), time.monotonic()))

        fake_server._Handler._chunk = chunk  # type: ignore[method-assign,assignment]
        try:
            yield
        finally:
            fake_server._Handler._chunk = original  # type: ignore[method-assign,assignment]


@dataclass
class Figures:
    latency: list[float] = field(default_factory=list)
    first: dict[str, float] = field(default_factory=dict)  # after one turn
    last: dict[str, float] = field(default_factory=dict)  # after all turns


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmRSS:\s+(\d+)", status)
    return int(found.group(1)) / 1024 if found else float("nan")


@contextmanager
def serving(server: FakeModelServer, home: Path) -> Iterator[tuple[str, int]]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODELOOP_HOME": str(home / ".codeloop"),
        "CODELOOP_MODEL": MODEL,
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "ANTHROPIC_API_KEY": "bench",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "codeloop", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=home,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        found = URL_LINE.match(process.stdout.readline().strip())
        if found is None:
            raise SystemExit("codeloop serve did not print its URL (is the serve extra installed?)")
        yield found.group(1), process.pid
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def page_prompt(page: Page, n: int, words: str) -> None:
    """Types a prompt and waits (checking every frame) for its answer's end to show and the
    prompt to be over."""
    end = f"Answer number {n}."
    page.evaluate(f"window.awaited = [{marker(n)!r}, {end!r}]")
    box = page.get_by_role("textbox").first
    box.fill(words)
    box.press("Enter")
    page.wait_for_function(
        f"window.markers[{end!r}] && !document.getElementById('send').disabled",
        polling="raf",
        timeout=120_000,
    )


def js_heap(page: Page) -> tuple[float, float]:
    """The page's JS heap in MB after a garbage collection, and its DOM nodes."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("HeapProfiler.collectGarbage")
    cdp.send("Performance.enable")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    cdp.detach()
    return metrics["JSHeapUsedSize"] / 2**20, metrics["Nodes"]


@contextmanager
def answering(count: int) -> Iterator[tuple[FirstTokens, FakeModelServer, Path]]:
    """The fake model with `count` answers, each first token stamped, and a home folder."""
    stamps = FirstTokens()
    with (
        tempfile.TemporaryDirectory() as home,
        stamps.watching(),
        FakeModelServer(Scenario(turns=tuple(answers(count)))) as server,
    ):
        yield stamps, server, Path(home)


def web(prompts: int, turns: int) -> Figures:
    figures = Figures()
    with (
        answering(prompts + turns) as (stamps, server, home),
        serving(server, home) as (url, pid),
        launch() as browser,
    ):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.add_init_script(OBSERVER)
        page.goto(url)
        for n in range(prompts):
            page_prompt(page, n, f"Question {n}")
            painted = page.evaluate(f"window.markers[{marker(n)!r}]")
            figures.latency.append(painted / 1000 - stamps.at[marker(n)][0])
        page.get_by_role("button", name="New session").click()
        for i in range(turns):
            page_prompt(page, prompts + i, f"Turn {i}")
            if i == 0:
                heap, nodes = js_heap(page)
                figures.first = {"heap": heap, "nodes": nodes, "rss": rss_mb(pid)}
        heap, nodes = js_heap(page)
        figures.last = {"heap": heap, "nodes": nodes, "rss": rss_mb(pid)}
    return figures


def tui(prompts: int, turns: int) -> Figures:
    figures = Figures()
    with answering(prompts + turns) as (stamps, server, home):
        term = Pty(environment(server, str(home), os.environ.get("PYTHONPATH")), home)
        try:
            term.read_until(SESSION_READY)
            for n in range(prompts + turns):
                term.write(f"Question {n}\r".encode())
                term.read_until(f"Answer number {n}.".encode(), timeout=120)
                seen = term.first_seen(marker(n).encode())
                if n < prompts and seen is not None:
                    figures.latency.append(seen - stamps.at[marker(n)][1])
                if n == prompts:
                    figures.first = {"rss": term.rss_mb()}
            figures.last = {"rss": term.rss_mb()}
        finally:
            term.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=20, help="answers timed (default 20)")
    parser.add_argument("--turns", type=int, default=1000, help="the long session's turns")
    options = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing: apt-get install chromium")
    page = web(options.prompts, options.turns)
    term = tui(options.prompts, options.turns)
    latency_web, latency_tui = median(page.latency), median(term.latency)
    print(f"first token to screen, median of {options.prompts} answers")
    print(f"  {'':30}{'web page':>12}{'terminal UI':>14}")
    print(f"  {'model token -> text shown':30}{ms(latency_web):>12}{ms(latency_tui):>14}")
    print(f"  {'ratio web / terminal':30}{latency_web / latency_tui:>11.2f}x")
    print(f"a {options.turns}-turn session: after 1 turn -> after {options.turns}")
    rows = [
        ("page JS heap after GC (MB)", page.first["heap"], page.last["heap"]),
        ("page DOM nodes", page.first["nodes"], page.last["nodes"]),
        ("codeloop serve RSS (MB)", page.first["rss"], page.last["rss"]),
        ("terminal UI RSS (MB)", term.first["rss"], term.last["rss"]),
    ]
    for label, before, after in rows:
        print(f"  {label:30}{before:10.1f} -> {after:10.1f}")


if __name__ == "__main__":
    main()
