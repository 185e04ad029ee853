"""User errors are one family, each with its exit status; anything else is a bug report."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeloop.__main__ import main
from codeloop.batch import cli as batch_cli
from codeloop.cli import headless
from codeloop.errors import CodeloopError, ConfigError, SessionError, SessionNotFound, UsageError


def test_each_user_error_knows_its_exit_status() -> None:
    assert [e.exit_status for e in (UsageError, ConfigError, SessionError)] == [2, 1, 1]
    assert all(issubclass(e, CodeloopError) for e in (UsageError, ConfigError, SessionNotFound))


def test_a_user_error_is_one_line_with_its_status(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object) -> int:
        raise SessionNotFound("no session to continue in /somewhere")

    monkeypatch.setattr(headless, "run_headless", refuse)
    assert main(["-p", "hi"]) == 1
    assert capsys.readouterr().err == "codeloop: no session to continue in /somewhere\n"


# Every face the command line runs, `codeloop batch` (dispatched above the others) included.
FACES = [(headless, "run_headless", ["-p", "hi"]), (batch_cli, "run_batch", ["batch", "t.jsonl"])]


@pytest.mark.parametrize(("face", "run", "argv"), FACES, ids=["headless", "batch"])
def test_an_unexpected_exception_is_a_bug_report_not_a_usage_error(
    face: object,
    run: str,
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_: object) -> int:
        raise ValueError("list index out of range in a place nobody expected")

    monkeypatch.setenv("CODELOOP_HOME", str(tmp_path))
    monkeypatch.setattr(face, run, broken)
    assert main(argv) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("codeloop: internal error (ValueError: list index out of range")
    assert "bug in codeloop" in line
    (log,) = (tmp_path / "logs").iterdir()
    assert str(log) in line and "Traceback" in log.read_text()
