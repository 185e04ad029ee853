"""`codeloop -p` on the bundled local model, as a subprocess, offline: the newcomer's first run.

Structure only: a schema-valid tool call (any other is not run, and the model is told why),
executed, its result fed back, and the loop ending by completing or at its turn limit.
Skipped when the `local` extra is not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codeloop.loop import TRUNCATED_TOOL_CALL
from codeloop.tools.input import ToolInputError
from codeloop.tools.registry import default_tools
from tests import needs
from tests.e2e.cli import provider_env, run_cli

needs.local_model()


def project(root: Path) -> Path:
    (root / "project").mkdir()
    (root / "project" / "app.py").write_text("print('hello')\n")
    (root / "project" / "README.md").write_text("# demo\n")
    return root / "project"


def content(line: dict[str, Any]) -> list[dict[str, Any]]:
    return line["message"]["content"]  # type: ignore[no-any-return]


def test_a_headless_run_on_the_local_model_calls_a_tool_and_ends(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    args = ["-p", "What is in this directory?", "--model", "local:", "--max-turns", "3"]
    run = run_cli(
        [*args, "--output-format", "stream-json"],
        cwd=cwd,
        env=provider_env(None, "none", tmp_path),
    )
    lines = run.json_lines()
    assert lines[0]["subtype"] == "init" and lines[0]["model"] == "smollm2-135m-instruct"
    result = lines[-1]
    assert result["type"] == "result"
    assert result["subtype"] in ("success", "error_max_turns"), run.stderr
    assert run.returncode == (0 if result["subtype"] == "success" else 1)

    turns = [line for line in lines[1:-1] if line["type"] in ("user", "assistant")]
    calls = [b for line in turns if line["type"] == "assistant" for b in content(line)]
    calls = [b for b in calls if b["type"] == "tool_use"]
    assert calls, "the model made no tool call"
    tools = default_tools()
    answers = {
        b["tool_use_id"]: b
        for line in turns
        if line["type"] == "user"
        for b in content(line)
        if b["type"] == "tool_result"
    }
    for call in calls:
        try:
            tools[call["name"]].parse(call["input"])  # valid for the tool's schema
        except ToolInputError:
            # Else never run, and the model told why: cut at the output limit mid-input, or
            # the input checked and refused.
            answer = answers[call["id"]]
            said = _text(answer) or ""
            assert answer.get("is_error") is True, answer
            assert said == TRUNCATED_TOOL_CALL or "InputValidationError" in said, answer
    for i, line in enumerate(turns):
        uses = [b["id"] for b in content(line) if b["type"] == "tool_use"]
        if uses and line["type"] == "assistant":
            # Its results, in order (a reminder may ride along: the model repeated itself).
            results = [
                b["tool_use_id"] for b in content(turns[i + 1]) if b["type"] == "tool_result"
            ]
            assert results == uses  # executed, and its result went back to the model
    assert "Traceback" not in run.stderr


def _text(result: dict[str, Any] | None) -> str | None:
    """A tool result's text, as stream-json carries it (a string or text blocks)."""
    if result is None:
        return None
    body = result.get("content")
    if isinstance(body, list):
        return "".join(b.get("text", "") for b in body)
    return body if isinstance(body, str) else None


def test_with_nothing_configured_the_local_model_runs(tmp_path: Path) -> None:
    run = run_cli(
        ["-p", "Say hello.", "--max-turns", "1", "--output-format", "json"],
        cwd=project(tmp_path),
        env=provider_env(None, "none", tmp_path),
    )
    result = run.json()
    assert list(result["modelUsage"]) == ["smollm2-135m-instruct"], run.stderr
    assert result["subtype"] in ("success", "error_max_turns")
    # The 8K window holds the compact profile as the local model renders it (issue 37).
    assert "too small" not in run.stderr and "compacted" not in run.stderr
