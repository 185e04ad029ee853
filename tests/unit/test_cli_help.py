"""--help states the loop's figures; these tests keep the text true to the code."""

from __future__ import annotations

import re

from codeloop.cli.main import EPILOG, build_parser
from codeloop.models import retry
from codeloop.session_config import DEFAULT_SUBAGENT_MAX_TURNS


def _env_line(name: str) -> str:
    match = re.search(rf"^  {name} +(.+(?:\n {{20,}}.+)*)", EPILOG, re.MULTILINE)
    assert match, f"{name} is not in --help"
    return " ".join(match.group(1).split())


def test_the_watchdog_figures_in_help_are_the_code_s() -> None:
    assert f"({retry.DEFAULT_IDLE_TIMEOUT:g})" in _env_line("CODELOOP_STREAM_IDLE_TIMEOUT")
    first = _env_line("CODELOOP_FIRST_EVENT_TIMEOUT")
    assert f"({retry.DEFAULT_FIRST_EVENT_TIMEOUT:g};" in first
    assert f"1 s more per {retry.LOCAL_PREFILL_TOKENS_PER_SECOND:g} prompt tokens" in first
    assert f"({retry.DEFAULT_MAX_ATTEMPTS})" in _env_line("CODELOOP_MAX_RETRIES")
    assert f"({DEFAULT_SUBAGENT_MAX_TURNS})" in _env_line("CODELOOP_SUBAGENT_MAX_TURNS")


def test_the_fallback_triggers_in_help_are_the_code_s() -> None:
    text = " ".join(build_parser().format_help().split())
    assert f"overloaded {retry.OVERLOADS_BEFORE_FALLBACK} times in a row" in text
    assert f"5xx {retry.SERVER_ERRORS_BEFORE_FALLBACK} times in a row" in text
    assert f"rate limited for more than {retry.FALLBACK_RETRY_AFTER:g} s" in text
