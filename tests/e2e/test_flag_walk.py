"""Every flag of `codeloop` (each one `--help` lists, and the Claude Code flags the Agent SDKs
pass) does something a user can see, or is refused with a message: nothing is accepted and
silently ignored.

The walk is a table, one row per flag: the real CLI runs against the fake server once without
the flag (the row's variant's baseline) and once with it, and what a user or a program sees
(exit status, stdout, stderr, every request the model got, the files left behind) must differ;
a refused flag must end the run with its message instead. A flag added to the parser without
a row fails `test_every_flag_has_a_row`: adding one is adding a line below.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codeloop.cli.main import build_parser
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, fault, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"
GIT_USER = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
# One commit, the same every time (its hash is in the system prompt's git state).
GIT_ENV = {"PATH": os.environ.get("PATH", ""), "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z"} | {
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"
}
SESSION_ID = "12345678-1234-4321-8765-123456789abc"
BASE = ("-p", "hi", "--model", MODEL, "--output-format", "json")
STREAM_IN = ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
USER_LINE = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n"
MCP_SERVER = {"command": sys.executable, "args": ["-m", "codeloop.testing.mcp_server"]}
SETUP_HOOK = {
    "hooks": {
        "Setup": [
            {"matcher": m, "hooks": [{"type": "command", "command": f"echo {m} >> setup.log"}]}
            for m in ("init", "maintenance")
        ]
    }
}
# The flags the official Python Agent SDK passes (SDK_PROTOCOL.md §2): each is a flag of ours.
SDK_CLI_FLAGS = (
    "--output-format", "--verbose", "--input-format", "--system-prompt", "--system-prompt-file",
    "--append-system-prompt", "--tools", "--allowedTools", "--disallowedTools", "--max-turns",
    "--max-budget-usd", "--task-budget", "--model", "--fallback-model", "--betas",
    "--permission-prompt-tool", "--permission-mode", "--continue", "--resume", "--session-id",
    "--settings", "--add-dir", "--mcp-config", "--include-partial-messages",
    "--include-hook-events", "--strict-mcp-config", "--fork-session", "--resume-session-at",
    "--resume-drops-turn", "--session-mirror", "--setting-sources", "--plugin-dir", "--thinking",
    "--thinking-display", "--max-thinking-tokens", "--effort", "--json-schema",
)  # fmt: skip


def answer() -> Scenario:
    return Scenario(turns=(turn("Hi."), turn("Hi again.")))


def tool_turns(command: str = "touch made") -> Scenario:
    return Scenario(turns=(turn(tool_use("Bash", {"command": command})), turn("Done.")))


def overloaded() -> Scenario:
    """The main model stays overloaded; any other answers."""
    return Scenario(
        turns=(turn("Hi.", faults=[fault("overloaded", times=4, retry_after=0, model=MODEL)]),)
    )


@dataclass(frozen=True)
class Variant:
    """What both runs of a row share: the command line, the conversation, the project's files,
    an earlier run (a session to continue), stdin and environment."""

    base: tuple[str, ...] = BASE
    scenario: Callable[[], Scenario] = answer
    files: Mapping[str, str] = field(default_factory=dict)
    before: tuple[str, ...] | None = None
    stdin: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    git: bool = False  # the project is a git repository with one commit


VARIANTS: dict[str, Variant] = {
    "answer": Variant(),
    "tool": Variant(scenario=tool_turns),
    # Bash may do anything: only a sandbox keeps it from writing outside the project
    "tool-allowed": Variant(
        base=(*BASE, "--dangerously-skip-permissions"), scenario=lambda: tool_turns("touch ~/made")
    ),
    "overloaded": Variant(scenario=overloaded, env={"CODELOOP_MAX_RETRIES": "4"}),
    "session": Variant(before=BASE),
    "recorded": Variant(before=(*BASE, "--record", "calls.cassette")),
    "git": Variant(git=True),
    "effort": Variant(base=(*BASE, "--effort", "high")),
    "stream": Variant(base=(*BASE, "--output-format", "stream-json", "--verbose")),
    "stream-in": Variant(base=("--model", MODEL, *STREAM_IN), stdin=USER_LINE),
    "stream-in-tool": Variant(
        base=("--model", MODEL, *STREAM_IN), stdin=USER_LINE, scenario=tool_turns
    ),
    "project-settings": Variant(
        files={".claude/settings.json": json.dumps({"effortLevel": "high"})}
    ),
    "setup-hook": Variant(files={".claude/settings.json": json.dumps(SETUP_HOOK)}),
    "project-mcp": Variant(
        files={
            ".mcp.json": json.dumps({"mcpServers": {"fromfile": MCP_SERVER}}),
            ".claude/settings.local.json": json.dumps({"enableAllProjectMcpServers": True}),
        }
    ),
    "agent-file": Variant(
        files={".claude/agents/tidy.md": "---\nname: tidy\ndescription: Tidies\n---\nTIDY-PROMPT\n"}
    ),
    "prompt-files": Variant(files={"prompt.txt": "FILE-PROMPT"}),
    "plugin": Variant(
        files={
            "kit/.claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "1.0.0"}),
            "kit/skills/check/SKILL.md": "---\nname: check\ndescription: Checks\n---\nCHECK\n",
        }
    ),
}


@dataclass(frozen=True)
class Outcome:
    run: CliRun
    requests: list[RecordedRequest]
    files: list[str]

    def seen(self) -> dict[str, Any]:
        """What a user or a program sees, with what differs from run to run made equal."""
        return {
            "status": self.run.returncode,
            "stdout": _steady(self.run.stdout),
            "stderr": _steady(self.run.stderr),
            "requests": [
                _steady(json.dumps([r.path, r.headers.get("anthropic-beta"), r.body]))
                for r in self.requests
            ],
            "files": [_steady(name) for name in self.files],
        }


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PORT = re.compile(r"127\.0\.0\.1:\d+")
_TIMES = re.compile(r'("(duration_ms|duration_api_ms|ttft_ms)"\s*:\s*)\d+|\d+(\.\d+)? ?(ms|s)\b')


def _steady(text: str) -> str:
    return _PORT.sub("127.0.0.1:<port>", _TIMES.sub(r"\1<t>", _UUID.sub("<uuid>", text)))


Check = Callable[[Outcome, Outcome], None]


@dataclass(frozen=True)
class Row:
    args: tuple[str, ...]
    variant: str = "answer"
    refused: str | None = None  # the message: codeloop refuses the flag
    check: Check | None = None  # what the flag changed; default: anything seen


def _session_is(expected: str) -> Check:
    def check(_: Outcome, flagged: Outcome) -> None:
        assert flagged.run.json()["session_id"] == expected

    return check


def _forked(_: Outcome, flagged: Outcome) -> None:
    """Continued (the earlier prompt is in the request) but in a session of its own: two
    transcripts, where --continue alone appends to the earlier one."""
    sessions = [name for name in flagged.files if _UUID.search(name) and name.endswith(".jsonl")]
    assert len(flagged.requests[0].body["messages"]) > 1, "the earlier prompt is gone"
    assert len(sessions) == 2, flagged.files


def _withholds(tool: str) -> Check:
    """The tool is offered without the flag, and not with it."""

    def check(baseline: Outcome, flagged: Outcome) -> None:
        def offered(outcome: Outcome) -> list[str]:
            return [spec["name"] for spec in outcome.requests[0].body["tools"]]

        assert tool in offered(baseline) and tool not in offered(flagged), offered(flagged)

    return check


def _answered(_: Outcome, flagged: Outcome) -> None:
    assert flagged.run.json()["result"] == "Hi."


ROWS: dict[str, Row] = {
    "--help": Row(("--help",)),
    "--print": Row(BASE, check=_answered),  # headless: the answer on stdout
    "--output-format": Row(("--output-format", "text")),
    "--model": Row(("--model", "claude-opus-4-5")),
    "--effort": Row(("--effort", "high")),
    "--compact-profile": Row(("--compact-profile", "on")),  # the core tools only
    "--fallback-model": Row(("--fallback-model", "claude-haiku-4-5"), "overloaded"),
    "--record": Row(("--record", "calls.cassette")),
    "--replay": Row(("--replay", "calls.cassette"), "recorded"),
    "--token-budget": Row(("--token-budget", "1000")),
    "--max-turns": Row(("--max-turns", "1"), "tool"),
    "--max-budget-usd": Row(("--max-budget-usd", "0.000001"), "tool"),
    "--continue": Row(("--continue",), "session"),
    "--resume": Row(("--resume",), "session"),
    "--fork-session": Row(("--continue", "--fork-session"), "session", check=_forked),
    "--session-id": Row(("--session-id", SESSION_ID), check=_session_is(SESSION_ID)),
    "--permission-mode": Row(("--permission-mode", "plan")),
    "--settings": Row(("--settings", json.dumps({"effortLevel": "high"}))),
    "--sandbox": Row(("--sandbox",), "tool-allowed"),
    "--allowedTools": Row(("--allowedTools", "Bash"), "tool"),
    "--disallowedTools": Row(("--disallowedTools", "Bash"), "tool", check=_withholds("Bash")),
    "--dangerously-skip-permissions": Row(("--dangerously-skip-permissions",), "tool"),
    "--setting-sources": Row(("--setting-sources", ""), "project-settings"),
    "--init": Row(("--init",), "setup-hook"),
    "--init-only": Row(("--init-only",), "setup-hook"),
    "--maintenance": Row(("--maintenance",), "setup-hook"),
    "--plugin-dir": Row(("--plugin-dir", "kit"), "plugin"),
    "--agent": Row(("--agent", "tidy"), "agent-file"),
    "--agents": Row(("--agents", json.dumps({"tidy": {"description": "Tidies", "prompt": "T"}}))),
    "--system-prompt": Row(("--system-prompt", "Be brief.")),
    "--append-system-prompt": Row(("--append-system-prompt", "Be brief.")),
    "--add-dir": Row(("--add-dir", "/tmp")),
    "--worktree": Row(("--worktree", "walk"), "git"),
    "--mcp-config": Row(("--mcp-config", json.dumps({"mcpServers": {"py": MCP_SERVER}}))),
    "--strict-mcp-config": Row(("--strict-mcp-config",), "project-mcp"),
    "--input-format": Row(
        ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
    ),
    "--include-partial-messages": Row(("--include-partial-messages",), "stream"),
    "--prompt-suggestions": Row(("--prompt-suggestions",), "stream"),
    "--replay-user-messages": Row(("--replay-user-messages",), "stream-in"),
    "--permission-prompt-tool": Row(("--permission-prompt-tool", "stdio"), "stream-in-tool"),
    "--json-schema": Row(("--json-schema", json.dumps({"type": "object"}))),
    "--tools": Row(("--tools", "Read")),
    "--system-prompt-file": Row(("--system-prompt-file", "prompt.txt"), "prompt-files"),
    "--append-system-prompt-file": Row(
        ("--append-system-prompt-file", "prompt.txt"), "prompt-files"
    ),
    "--task-budget": Row(("--task-budget", "1000")),
    "--max-thinking-tokens": Row(("--max-thinking-tokens", "2000")),
    "--thinking": Row(("--thinking", "disabled"), "effort"),
    "--betas": Row(("--betas", "context-management-2025-06-27")),
    "--verbose": Row(("--verbose",), "tool"),
    "--version": Row(("--version",)),
    # Claude Code flags codeloop refuses, by name
    "--thinking-display": Row(
        ("--thinking-display", "summarized"), refused="--thinking-display is not supported"
    ),
    "--resume-session-at": Row(
        ("--resume-session-at", SESSION_ID), refused="--resume-session-at is not supported"
    ),
    "--resume-drops-turn": Row(
        ("--resume-drops-turn", "true"), refused="--resume-drops-turn is not supported"
    ),
    "--include-hook-events": Row(
        ("--include-hook-events",), refused="--include-hook-events is not supported"
    ),
    "--session-mirror": Row(("--session-mirror",), refused="--session-mirror is not supported"),
}


def parser_flags() -> set[str]:
    """Each option of the command line by its long name (hidden ones too)."""
    names = set()
    for action in build_parser()._actions:
        if action.option_strings:
            longs = [s for s in action.option_strings if s.startswith("--")]
            names.add(longs[0] if longs else action.option_strings[0])
    return names


def test_every_flag_has_a_row() -> None:
    flags = parser_flags()
    assert flags - set(ROWS) == set(), "a flag without a row in the walk"
    assert set(ROWS) - flags == set(), "a row for a flag the command line no longer has"
    assert set(SDK_CLI_FLAGS) <= flags, "a flag the Python Agent SDK passes is unknown"


def test_help_lists_every_flag_but_the_refused_ones() -> None:
    hidden = {
        action.option_strings[0]
        for action in build_parser()._actions
        if action.option_strings and action.help == argparse.SUPPRESS
    }
    assert hidden == {flag for flag, row in ROWS.items() if row.refused}


class Walk:
    """Runs the CLI in one project folder and one home, both made afresh for every run, so
    that two runs differ only by what their command lines ask."""

    def __init__(self, root: Path) -> None:
        self.project, self.home = root / "project", root / "home"
        self.baselines: dict[str, Outcome] = {}

    def run(self, variant: Variant, extra: tuple[str, ...] = ()) -> Outcome:
        for folder in (self.project, self.home):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
        for name, text in variant.files.items():
            (self.project / name).parent.mkdir(parents=True, exist_ok=True)
            (self.project / name).write_text(text)
        if variant.git:
            (self.project / "README").write_text("walk\n")
            for git in (["init", "-q"], ["add", "README"], ["commit", "-qm", "start"]):
                subprocess.run(["git", *GIT_USER, *git], cwd=self.project, env=GIT_ENV, check=True)
        if variant.before is not None:
            self._cli(variant, variant.before, Scenario(turns=(turn("Earlier."),)))
        run, requests = self._cli(variant, (*variant.base, *extra), variant.scenario())
        files = sorted(
            f"{folder.name}/{path.relative_to(folder)}"
            for folder in (self.project, self.home)
            for path in folder.rglob("*")
            if path.is_file() and ".git" not in path.parts
        )
        return Outcome(run, requests, files)

    def _cli(
        self, variant: Variant, args: tuple[str, ...], scenario: Scenario
    ) -> tuple[CliRun, list[RecordedRequest]]:
        with FakeModelServer(scenario) as server:
            env = provider_env(server, "anthropic", self.home) | dict(variant.env)
            env["CODELOOP_HOME"] = str(self.home / ".codeloop")
            run = run_cli(list(args), cwd=self.project, env=env, stdin=variant.stdin, timeout=180)
            return run, server.requests

    def baseline(self, name: str) -> Outcome:
        if name not in self.baselines:
            self.baselines[name] = self.run(VARIANTS[name])
        return self.baselines[name]


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Walk:
    return Walk(tmp_path_factory.mktemp("walk"))


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_baseline_is_the_same_every_time(walk: Walk, name: str) -> None:
    """Else a flag could seem to change what was going to differ anyway."""
    assert walk.run(VARIANTS[name]).seen() == walk.baseline(name).seen()


@pytest.mark.parametrize("flag", sorted(ROWS))
def test_the_flag_changes_what_is_seen_or_is_refused(walk: Walk, flag: str) -> None:
    row = ROWS[flag]
    flagged = walk.run(VARIANTS[row.variant], row.args)
    if row.refused is not None:
        assert flagged.run.returncode != 0 and row.refused in flagged.run.stderr, flagged.run
        assert "Traceback" not in flagged.run.stderr and flagged.requests == []
        return
    assert "Traceback" not in flagged.run.stderr, flagged.run.stderr
    baseline = walk.baseline(row.variant)
    if row.check is not None:
        row.check(baseline, flagged)
    else:
        assert flagged.seen() != baseline.seen(), f"{flag} changed nothing a user can see"
