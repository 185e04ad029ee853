"""The web page `codeloop serve` ships, in a real headless Chromium, driven as outside tests
drive it (by role and name): a prompt streams its answer as markdown with highlighted code;
an Edit asks, "Allow once" approves it, its diff shows and the file changes; a rejection
carries its message to the model; Stop and Escape end a slow answer; an old session opens with
its timeline and usage charts; and every test checks that the page asked nothing of any other
origin and had no errors."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.needs import missing, module

module("acp", "needs the acp extra (pip install -e '.[dev,acp]')")
module("playwright.sync_api", "needs Playwright for Python (the dev extra)")
from codeloop.testing.chromium import CHROMIUM, launch  # noqa: E402

if not os.path.exists(CHROMIUM):
    missing("Debian's chromium is not installed (apt-get install chromium)")

from codeloop.testing.fake_server import FakeModelServer  # noqa: E402
from codeloop.testing.scenario import Turn, text, tool_use, turn  # noqa: E402
from tests.acp_agent.browser import DESKTOP, PHONE, Visit, serve, visit  # noqa: E402
from tests.acp_agent.editor import acp_env  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

# What Chromium logs while the server is away (nothing else may show as an error).
DROPPED = re.compile(r"WebSocket connection to 'ws://127\.0\.0\.1:\d+/acp.*' failed")
ANSWER = "Here is **the plan**:\n\n```python\ndef answer():\n    return 42\n```\n\nDone."


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as browser:
        yield browser


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("x = 1\n")
    return work


def edit_x(value: str, then: str) -> list[Turn]:
    """The model reads app.py (an Edit needs the file read first), sets x to `value`, and
    answers `then`."""
    edit = {"file_path": "app.py", "old_string": "x = 1", "new_string": f"x = {value}"}
    return [
        turn(tool_use("Read", {"file_path": "app.py"})),
        turn(tool_use("Edit", edit)),
        turn(then),
    ]


@contextmanager
def served(
    browser: Browser, script: list[Turn], home: Path, project: Path, name: str
) -> Iterator[tuple[FakeModelServer, Visit]]:
    """The fake model playing `script`, `codeloop serve` in `project`, and its page."""
    with (
        FakeModelServer(script) as server,
        serve(server, home, project) as url,
        visit(browser, url, name) as seen,
    ):
        yield server, seen


def clean(seen: Visit) -> None:
    """What every visit must end with: no request off the page's origin, no errors."""
    assert seen.requests, "the page made no request at all"
    assert seen.foreign_requests() == []
    assert seen.errors == []


def prompt(seen: Visit, words: str) -> None:
    box = seen.page.get_by_role("textbox").first
    box.fill(words)
    box.press("Enter")


def transcript(seen: Visit) -> Locator:
    return seen.page.get_by_role("log", name="Transcript")


def test_a_prompt_streams_its_answer_as_markdown(
    browser: Browser, project: Path, tmp_path: Path
) -> None:
    # The answer's second half comes 1.5 s after its first: the page shows the first alone.
    script = [
        turn(
            text("Here is **the plan**:", delay_after=1.5),
            ANSWER.removeprefix("Here is **the plan**:"),
        )
    ]
    with served(browser, script, tmp_path, project, "prompt-streams") as (_, seen):
        page = seen.page
        page.evaluate(
            """() => { window.seenTexts = [];
            new MutationObserver(() => {
              const last = document.querySelector('.message.agent:last-of-type');
              if (last) window.seenTexts.push(last.textContent);
            }).observe(document.getElementById('transcript'),
              {childList: true, subtree: true, characterData: true}); }"""
        )
        seen.shot("loaded")
        prompt(seen, "What is the answer?")
        log = transcript(seen)
        log.get_by_text("the plan").wait_for()
        seen.shot("streaming")
        log.get_by_text("Done.").wait_for()
        seen.shot("answered")
        assert log.locator("strong", has_text="the plan").is_visible()
        code = log.locator("pre code")
        assert code.inner_text() == "def answer():\n    return 42"
        assert code.locator(".tok-keyword", has_text="return").count() == 1
        assert log.get_by_text("What is the answer?").count() == 1
        partial = page.evaluate("window.seenTexts")
        assert any("the plan" in t and "42" not in t for t in partial), partial
        clean(seen)


def test_an_edit_asks_is_allowed_once_shows_its_diff_and_changes_the_file(
    browser: Browser, project: Path, tmp_path: Path
) -> None:
    script = edit_x("2", then="Changed x.")
    with served(browser, script, tmp_path, project, "edit-allowed") as (_, seen):
        page = seen.page
        prompt(seen, "Set x to 2")
        dialog = page.get_by_role("dialog")
        dialog.get_by_text("+ x = 2").wait_for()
        assert dialog.get_by_text("- x = 1").is_visible()
        for name in ("Allow once", "Allow always", "Reject"):
            assert page.get_by_role("button", name=name, exact=True).is_visible()
        seen.shot("asked")
        page.get_by_role("button", name="Allow once").click()
        log = transcript(seen)
        log.get_by_text("Changed x.").wait_for()
        seen.shot("edited")
        # The diff shows in the transcript without expanding anything.
        assert log.get_by_text("+ x = 2").is_visible()
        assert log.get_by_text("- x = 1").is_visible()
        assert (project / "app.py").read_text() == "x = 2\n"
        clean(seen)


def test_a_rejection_tells_the_model_why(browser: Browser, project: Path, tmp_path: Path) -> None:
    script = edit_x("3", then="Understood.")
    with served(browser, script, tmp_path, project, "edit-rejected") as (server, seen):
        page = seen.page
        prompt(seen, "Set x to 3")
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("textbox").fill("keep x at 1, it is a constant")
        seen.shot("rejecting")
        page.get_by_role("button", name="Reject", exact=True).click()
        transcript(seen).get_by_text("Understood.").wait_for()
        seen.shot("rejected")
        told = json.dumps(server.requests[-1].body["messages"][-1])
        assert "keep x at 1, it is a constant" in told
        assert (project / "app.py").read_text() == "x = 1\n"
        clean(seen)


@pytest.mark.parametrize("how", ["Stop", "Escape"])
def test_a_slow_answer_stops(browser: Browser, project: Path, tmp_path: Path, how: str) -> None:
    script = [turn(text("Thinking it over", delay_after=120.0), "…and never finishing.")]
    with served(browser, script, tmp_path, project, f"stop-by-{how.lower()}") as (_, seen):
        page = seen.page
        prompt(seen, "Take your time")
        log = transcript(seen)
        log.get_by_text("Thinking it over").wait_for()
        seen.shot("answering")
        asked = time.monotonic()
        if how == "Stop":
            page.get_by_role("button", name="Stop").click()
        else:
            page.keyboard.press("Escape")
        log.get_by_text("Stopped.").wait_for()
        took = time.monotonic() - asked
        seen.shot("stopped")
        print(f"stopped {took:.2f} s after {how}")
        assert page.get_by_role("button", name="Send").is_enabled()
        clean(seen)


def _old_session(server: FakeModelServer, home: Path, project: Path) -> None:
    """A finished session made the way users make them: `codeloop -p` edits a file (a
    checkpoint), then `/compact` summarizes the conversation."""
    env = acp_env(server, home)
    for args in (
        ["-p", "Set x to 2", "--permission-mode", "acceptEdits"],
        ["-p", "/compact", "--continue"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "codeloop", *args],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_an_old_session_opens_with_its_timeline_and_usage(
    browser: Browser, project: Path, tmp_path: Path, viewport: str
) -> None:
    script = edit_x("2", then="Changed x.")
    summaries = [turn("Summary: app.py now sets x to 2.")]
    with FakeModelServer(script, summaries=summaries) as server:
        _old_session(server, tmp_path, project)
        with serve(server, tmp_path, project) as url:
            size = PHONE if viewport == "phone" else DESKTOP
            with visit(browser, url, f"old-session-{viewport}", size) as seen:
                page = seen.page
                seen.shot("loaded")
                page.get_by_role("link", name="Set x to 2").click()
                review = page.get_by_role("region", name="Review")
                review.get_by_role("region", name="Timeline").wait_for()
                # The replay: the old conversation, its Edit with its diff.
                log = transcript(seen)
                log.get_by_text("Changed x.").wait_for()
                assert log.get_by_text("+ x = 2").is_visible()
                timeline = review.get_by_role("region", name="Timeline")
                assert timeline.get_by_text("compaction", exact=True).count() == 1
                assert timeline.get_by_text("Summary: app.py now sets x to 2.").count() == 1
                assert timeline.get_by_text("checkpoint 1").is_visible()
                assert timeline.get_by_text("codeloop rewind --session").first.is_visible()
                usage = review.get_by_role("region", name="Usage")
                assert (
                    usage.get_by_role("figure", name="Usage by model")
                    .get_by_text("claude-sonnet-5-5")
                    .is_visible()
                )
                assert (
                    usage.get_by_role("figure", name="Usage by tool")
                    .get_by_text("Edit", exact=True)
                    .is_visible()
                )
                review.scroll_into_view_if_needed()
                seen.shot("review")
                wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
                assert not wide, "the page scrolls sideways"
                clean(seen)


def test_a_dropped_connection_reconnects_and_the_session_goes_on(
    browser: Browser, project: Path, tmp_path: Path
) -> None:
    """The server goes away and comes back (same port and token): the page reconnects by
    itself, loads its session again (its transcript once, not twice) and takes the next
    prompt in it."""
    script = [turn("Hello there."), turn("Hello again.")]
    with FakeModelServer(script) as server, contextlib.ExitStack() as first:
        url = first.enter_context(serve(server, tmp_path, project))
        address = urlsplit(url)
        port, token = address.port, parse_qs(address.query)["token"][0]
        assert port is not None
        with visit(browser, url, "reconnect") as seen:
            page = seen.page
            prompt(seen, "Say hello")
            log = transcript(seen)
            log.get_by_text("Hello there.").wait_for()
            seen.shot("answered")
            first.close()  # the server stops
            status = page.get_by_role("status")
            status.get_by_text("reconnecting").wait_for()
            seen.shot("disconnected")
            with serve(server, tmp_path, project, port=port, token=token):
                status.get_by_text("connected", exact=True).wait_for()
                log.get_by_text("Hello there.").wait_for()
                seen.shot("reconnected")
                assert log.get_by_text("Say hello").count() == 1
                assert log.get_by_text("Hello there.").count() == 1
                prompt(seen, "Once more")
                log.get_by_text("Hello again.").wait_for()
                seen.shot("went-on")
                # The model saw the conversation so far: the same session, resumed.
                assert "Say hello" in json.dumps(server.requests[-1].body["messages"])
                # While the server was away, the browser said its connection attempts failed.
                seen.errors = [e for e in seen.errors if not DROPPED.search(e)]
                clean(seen)


def test_two_browsers_share_a_session_and_either_may_answer(
    browser: Browser, project: Path, tmp_path: Path
) -> None:
    """A second browser opens the session the first is running: it gets the question too,
    answers it, and both watch the answer; the first's dialog goes away."""
    with (
        FakeModelServer(edit_x("2", then="Changed x.")) as server,
        serve(server, tmp_path, project) as url,
        visit(browser, url, "two-browsers-first") as first,
    ):
        prompt(first, "Set x to 2")
        asked = first.page.get_by_role("dialog")
        asked.get_by_text("+ x = 2").wait_for()
        with visit(browser, url, "two-browsers-second") as second:
            second.page.get_by_role("link", name="Set x to 2").click()
            second.page.get_by_role("dialog").get_by_text("+ x = 2").wait_for()
            second.shot("asked-too")
            second.page.get_by_role("button", name="Allow once").click()
            for seen in (first, second):
                transcript(seen).get_by_text("Changed x.").wait_for()
                assert transcript(seen).get_by_text("+ x = 2").is_visible()
                seen.shot("answered")
            asked.wait_for(state="hidden")
            assert (project / "app.py").read_text() == "x = 2\n"
            clean(second)
        clean(first)


def test_an_answer_s_html_stays_text(browser: Browser, project: Path, tmp_path: Path) -> None:
    """Markup in a model's answer is shown, never run or fetched: no image, no script, no
    javascript: link."""
    hostile = (
        '<img src="http://203.0.113.9/x.png" onerror="document.title=1"> '
        "<script>document.title=2</script> [click](javascript:document.title=3)"
    )
    with served(browser, [turn(hostile)], tmp_path, project, "html-stays-text") as (_, seen):
        prompt(seen, "Say something odd")
        log = transcript(seen)
        log.get_by_text('<img src="http://203.0.113.9/x.png"', exact=False).wait_for()
        seen.shot("shown")
        assert log.locator("img, script, a[href^='javascript']").count() == 0
        assert log.get_by_text("[click](javascript:document.title=3)").count() == 1
        assert seen.page.title() == "codeloop"
        clean(seen)
