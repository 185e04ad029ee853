"""Debian's headless Chromium under Playwright, as the web page's tests and bench launch it:
Playwright's own browser download cannot work offline, so it runs the system's build, quiet
(no background requests of its own: every request seen is the page's)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def launch(*more_args: str) -> Iterator[Browser]:
    """One browser, closed (and Playwright's driver stopped) on leaving."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, *more_args])
        try:
            yield browser
        finally:
            browser.close()
