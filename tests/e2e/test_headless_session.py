"""A 20-turn coding session through `codeloop -p`, over each wire format, end to end."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from codeloop.models.aliases import resolve_alias
from codeloop.models.catalog import cost_usd
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, thinking, tool_use, turn, turn_usage
from codeloop.types import Usage
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli

APP = "def greet(name):\n    return 'hello ' + name\n\n\ndef main():\n    print(greet('world'))\n"
UTIL = "def add(a, b):\n    return a + b\n"
FINAL = "All done: the greeting is capitalised."

STEPS: list[tuple[str, dict[str, Any]]] = [
    ("Glob", {"pattern": "**/*.py"}),
    ("Read", {"file_path": "src/app.py"}),
    ("Grep", {"pattern": "def ", "output_mode": "content", "-n": True}),
    ("Bash", {"command": "ls src"}),
    ("Edit", {"file_path": "src/app.py", "old_string": "'hello '", "new_string": "'Hello, '"}),
    ("Bash", {"command": "cat src/app.py"}),
    ("Grep", {"pattern": "Hello", "output_mode": "count"}),
    ("Read", {"file_path": "src/util.py"}),
    ("Edit", {"file_path": "src/util.py", "old_string": "a + b", "new_string": "a + b  # sum"}),
    ("Glob", {"pattern": "*.md"}),
    ("Bash", {"command": "cd src && pwd"}),
    ("Bash", {"command": "pwd"}),
    ("Grep", {"pattern": "sum", "path": "."}),
    ("Read", {"file_path": "app.py"}),
    ("Bash", {"command": "cd .."}),
    ("Glob", {"pattern": "build/**"}),
    ("Grep", {"pattern": "greet", "glob": "*.py", "output_mode": "files_with_matches"}),
    (
        "Bash",
        {"command": "python3 -c \"import sys; sys.path.insert(0, 'src'); import app; app.main()\""},
    ),
    ("Read", {"file_path": "README.md", "limit": 1}),
]


# Bedrock and Vertex take the Messages API's body.
ANTHROPIC_SHAPED = ("anthropic", "bedrock", "vertex")


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "build").mkdir()
    (project / "src" / "app.py").write_text(APP)
    (project / "src" / "util.py").write_text(UTIL)
    (project / "build" / "ignored.py").write_text("GENERATED = True\n")
    (project / "README.md").write_text("# demo project\nsecond line\n")
    (project / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def scenario() -> Scenario:
    turns = [
        turn(thinking(f"Plan {i}.", f"sig-{i}"), f"Step {i}.", tool_use(name, args))
        for i, (name, args) in enumerate(STEPS)
    ]
    turns.append(turn(FINAL, chunk_chars=5))
    return Scenario(turns=tuple(turns))


def tool_results(body: dict[str, Any], provider: str) -> list[tuple[str, bool]]:
    """The tool results at the end of a request, as (text, is_error), in wire order."""
    if provider == "openai-responses":
        outputs = []
        for item in reversed(body["input"]):
            if item.get("type") != "function_call_output":
                break
            outputs.append((item["output"], item["output"].startswith("Error")))
        return outputs[::-1]
    messages = body["messages"]
    if provider in ANTHROPIC_SHAPED:
        blocks = messages[-1]["content"]
        return [(_text(b["content"]), bool(b.get("is_error"))) for b in blocks]
    trailing = []
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        trailing.append((message["content"], message["content"].startswith("Error")))
    return trailing[::-1]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


def carried_thinking(body: dict[str, Any], provider: str) -> list[str]:
    """The signatures (Anthropic) or encrypted reasoning (Responses) a request sends back."""
    if provider in ANTHROPIC_SHAPED:
        return [
            block["signature"]
            for message in body["messages"]
            if message["role"] == "assistant"
            for block in message["content"]
            if block["type"] == "thinking"
        ]
    return [item["encrypted_content"] for item in body["input"] if item.get("type") == "reasoning"]


@pytest.mark.parametrize(
    "provider", ["anthropic", "openai", "openai-responses", "bedrock", "vertex"]
)
def test_twenty_turn_session(provider: str, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    script = scenario()
    with FakeModelServer(script) as server:
        run = run_cli(
            [
                "-p",
                "Capitalise the greeting in src/app.py",
                "--model",
                PROVIDER_MODELS[provider],
                "--allowedTools",
                "Bash,Edit",
                "--output-format",
                "json",
            ],
            cwd=project,
            env=provider_env(server, provider, tmp_path),
        )
        requests = list(server.requests)

    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["type"] == "result"
    assert result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == FINAL
    assert result["num_turns"] == 20
    assert len(result["session_id"]) == 36
    assert isinstance(result["duration_ms"], int) and result["duration_ms"] > 0
    assert isinstance(result["duration_api_ms"], int)
    expected_usage = sum((turn_usage(t) for t in script.turns), Usage())
    assert result["usage"]["input_tokens"] == expected_usage.input_tokens
    assert result["usage"]["output_tokens"] == expected_usage.output_tokens
    model_name = resolve_alias(PROVIDER_MODELS[provider].split(":")[-1])
    assert result["total_cost_usd"] == round(cost_usd(model_name, expected_usage), 6)
    assert result["total_cost_usd"] > 0

    if provider == "vertex":  # the first request fetched the OAuth token
        assert requests.pop(0).path == "/token"
    assert len(requests) == 20
    if provider != "openai":  # Chat Completions servers take no thinking back
        for k, request in enumerate(requests):
            assert carried_thinking(request.body, provider) == [f"sig-{j}" for j in range(k)]
    results = [tool_results(r.body, provider) for r in requests[1:]]
    assert all(len(r) == 1 for r in results)
    texts = [r[0][0] for r in results]
    errors = [r[0][1] for r in results]
    assert not any(errors), [t for t, e in zip(texts, errors, strict=True) if e]
    assert "src/app.py" in texts[0] and "src/util.py" in texts[0]
    assert "ignored.py" not in texts[0]
    assert "def greet" in texts[1]
    assert "Hello, " in texts[5]
    assert texts[11].strip().endswith("/src")  # the shell's cwd persisted
    assert "No files found" in texts[15]
    assert "Hello, world" in texts[17]
    assert "# demo project" in texts[18] and "second line" not in texts[18]
    assert (
        (project / "src" / "app.py")
        .read_text()
        .startswith("def greet(name):\n    return 'Hello, '")
    )
    assert "# sum" in (project / "src" / "util.py").read_text()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_stream_json_lines(provider: str, tmp_path: Path) -> None:
    script = Scenario(
        turns=(turn("Look.", tool_use("Bash", {"command": "echo hi"})), turn("Done."))
    )
    with FakeModelServer(script) as server:
        run = run_cli(
            ["-p", "go", "--model", PROVIDER_MODELS[provider], "--output-format", "stream-json"],
            cwd=tmp_path,
            env=provider_env(server, provider, tmp_path) | {"CODELOOP_MODEL": ""},
        )
    assert run.returncode == 0, run.stderr
    lines = run.json_lines()
    assert [line["type"] for line in lines] == [
        "system",
        "assistant",
        "user",
        "assistant",
        "result",
    ]
    init = lines[0]
    assert init["subtype"] == "init" and "Bash" in init["tools"]
    assert init["session_id"] == lines[-1]["session_id"]
    tool_use_block = lines[1]["message"]["content"][1]
    assert tool_use_block["type"] == "tool_use" and tool_use_block["name"] == "Bash"
    result_block = lines[2]["message"]["content"][0]
    assert result_block["tool_use_id"] == tool_use_block["id"]
    # default mode in a headless run: read-only Bash (`echo hi`) runs without asking
    assert _text(result_block["content"]).strip() == "hi"
    assert not result_block.get("is_error")
    assert lines[-1]["result"] == "Done."


def test_denied_calls_are_listed_in_the_result(tmp_path: Path) -> None:
    write = tool_use("Write", {"file_path": "x.txt", "content": "hi"})
    script = Scenario(turns=(turn(write), turn("Could not write.")))
    with FakeModelServer(script) as server:
        run = run_cli(
            ["-p", "write x", "--model", PROVIDER_MODELS["anthropic"], "--output-format", "json"],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
        )
    assert run.returncode == 0, run.stderr
    (denial,) = run.json()["permission_denials"]
    assert denial["tool_name"] == "Write"
    assert denial["tool_input"] == {"file_path": "x.txt", "content": "hi"}
    assert denial["tool_use_id"].startswith("toolu_")
    assert not (tmp_path / "x.txt").exists()


def test_piped_input_that_is_not_utf8_is_taken_not_a_crash(tmp_path: Path) -> None:
    import sys

    script = Scenario(turns=(turn("Reviewed."),))
    with FakeModelServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "codeloop", "-p", "review", "--model", "claude-sonnet-4-5"],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
            input=b"caf\xe9 in latin-1\n",
            capture_output=True,
        )
        (request,) = server.requests
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    prompt = request.body["messages"][-1]["content"][0]["text"]
    assert prompt.endswith("caf\ufffd in latin-1")


def test_a_bad_flag_is_one_line(tmp_path: Path) -> None:
    run = run_cli(["--no-such-flag"], cwd=tmp_path, env=provider_env(None, "anthropic", tmp_path))
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "codeloop: unrecognized arguments: --no-such-flag (see codeloop --help)"
    ]


def test_an_unreachable_server_is_reported_in_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = provider_env(None, "anthropic", tmp_path) | {
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "k",
        "CODELOOP_MAX_RETRIES": "10",  # refused connections stop after 3 anyway
    }
    run = run_cli(["-p", "hi", "--model", "claude-sonnet-4-5"], cwd=tmp_path, env=env)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("codeloop: connection problem") and str(port) in last
