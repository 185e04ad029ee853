"""What a session loads before its first request: nothing it does not need then.

Each check runs in a fresh interpreter, since this process has imported everything already.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from codeloop.session import FIRST_ANSWER_MODULES
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, Turn, text, turn


def loaded_after(code: str, modules: tuple[str, ...], cwd: Path | None = None) -> list[str]:
    """Which of `modules` are in sys.modules after running `code` in a new interpreter."""
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {modules!r} if m in sys.modules))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=cwd
    )
    return [name for name in out.stdout.strip().split(",") if name]


@pytest.mark.skipif(
    importlib.util.find_spec("click") is None, reason="httpx loads its CLI only with click"
)
def test_the_http_client_comes_without_httpx_command_line_tool() -> None:
    code = (
        "from codeloop.models.anthropic import AnthropicClient\n"
        "AnthropicClient(base_url='http://127.0.0.1:9', api_key='k')\n"
    )
    assert loaded_after(code, ("httpx", "httpx._main", "click", "rich", "pygments")) == ["httpx"]


def test_httpx_command_line_tool_is_still_importable_after() -> None:
    code = "from codeloop.models.transport import load_httpx\nload_httpx()\nimport httpx._main\n"
    assert loaded_after(code, ("httpx", "httpx._main")) == ["httpx", "httpx._main"]


# What a one-turn headless run with no MCP server, no slash command, no extension file and no
# tool call never needs: each loads with its first use (the local model's module, pydantic and
# the tools, the MCP manager, Bash's permission checker, parser and git grammar, the
# slash-command registry, the frontmatter parser of agents, skills and output styles, the
# language server support and its protocol library without a configured server, the ACP face
# and its SDK).
NOT_AT_START = (
    "codeloop.models.local",
    "pydantic",
    "codeloop.tools.bash",
    "codeloop.mcp.server_manager",
    "codeloop.permissions.bash_check",
    "codeloop.shell.bash_parse",
    "codeloop.shell.git_check",
    "codeloop.commands",
    "codeloop.extensions.frontmatter",
    "codeloop.lsp",
    "pygls",
    "lsprotocol",
    # The ACP face and its SDK: `codeloop acp` only.
    "codeloop.acp_agent",
    "acp",
    # What takes and reads checkpoints: nothing was written. A model the catalog knows has
    # no window to discover; no side request is on; agent teams are off.
    "codeloop.checkpoints.journal",
    "codeloop.checkpoints.snapshot",
    "codeloop.models.window_discovery",
    "codeloop.side_requests",
    "codeloop.teams.teammates",
)


def one_turn_modules(tmp_path: Path) -> list[str]:
    """Every module a one-turn headless run of a hosted model has imported when it ends, in a
    git repository with a CLAUDE.md, as a user runs it."""
    return after_one_turn(tmp_path, "','.join(sorted(sys.modules))").split(",")


def after_one_turn(
    tmp_path: Path,
    report: str,
    before: str = "",
    answer: Turn | None = None,
    served: list[RecordedRequest] | None = None,
) -> str:
    """What the expression `report` says in the process of a one-turn headless run once
    it has ended (`sys` and `gc` imported; `before` runs first); the server answers `answer`
    (a "hello" at once by default) and puts the request it served in `served`."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("# Project\nRun the tests with `pytest`.\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    with FakeModelServer(Scenario(turns=(answer or turn("hello"),))) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "k",
            "CODELOOP_HOME": str(tmp_path / "home"),
        }
        code = (
            "import contextlib, gc, io, os, sys\n"
            f"os.environ.update({env!r})\n"
            f"{before}"
            "from codeloop.__main__ import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['-p', 'hi', '--model', 'anthropic:claude-sonnet-4-5'])\n"
            f"print({report})\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=project
        )
        assert len(server.requests) == 1
        if served is not None:
            served.extend(server.requests)
    return out.stdout.strip()


def test_a_headless_run_collects_garbage_again_once_its_session_is_built(tmp_path: Path) -> None:
    """The command line holds the collector off while it starts (system/collector.py)."""
    assert after_one_turn(tmp_path, "gc.isenabled(), gc.get_freeze_count() > 0") == "True True"


# What a one-turn run loads only once the answer is in, never before the first request: the
# reader of calls a model wrote as text, lenient JSON (a tool call's input), the segments the
# transcript's request line records.
AFTER_THE_FIRST_REQUEST = (
    "codeloop.models.written_calls",
    "codeloop.models.lenient_json",
    "codeloop.usage.segments",
)
# The modules loaded when the run first connects to the model's server (its first request).
AT_FIRST_CONNECT = (
    "at_connect = []\n"
    "def first_connect(event, args):\n"
    "    if event == 'socket.connect' and not at_connect:\n"
    "        at_connect.append(','.join(sorted(sys.modules)))\n"
    "sys.addaudithook(first_connect)\n"
)


def test_what_only_an_answer_needs_loads_after_the_first_request(tmp_path: Path) -> None:
    loaded = after_one_turn(tmp_path, "at_connect[0]", before=AT_FIRST_CONNECT).split(",")
    assert "codeloop.models.anthropic" in loaded  # the request's own client, for certain
    assert [name for name in AFTER_THE_FIRST_REQUEST if name in loaded] == []


# When each module is first looked for (time.monotonic(), the server's clock too).
IMPORT_TIMES = (
    "import time\n"
    "found_at = {}\n"
    "class Spy:\n"
    "    @staticmethod\n"
    "    def find_spec(name, path=None, target=None):\n"
    "        found_at.setdefault(name, time.monotonic())\n"
    "sys.meta_path.insert(0, Spy)\n"
)


def test_what_any_first_answer_needs_loads_while_the_first_request_waits(tmp_path: Path) -> None:
    """FIRST_ANSWER_MODULES load in the first request's lulls (system/lull.py): with a model
    that takes its time, before its answer is over, not once it is."""
    served: list[RecordedRequest] = []
    paced = turn(text("hello there"), chunk_chars=2, delay=0.05)
    report = f"repr([found_at.get(name) for name in {FIRST_ANSWER_MODULES!r}])"
    found = ast.literal_eval(after_one_turn(tmp_path, report, IMPORT_TIMES, paced, served))
    finished = served[0].finished
    assert finished is not None and None not in found
    assert max(found) < finished


def test_a_headless_run_of_a_hosted_model_loads_only_what_its_first_request_needs(
    tmp_path: Path,
) -> None:
    loaded = set(one_turn_modules(tmp_path))
    assert [name for name in NOT_AT_START if name in loaded] == []


def test_every_module_a_one_turn_run_loads_is_listed_here(tmp_path: Path) -> None:
    """A module new on start-up's path costs every run: load it with its first use, or, if the
    first request needs it, add it to AT_START (the failure prints the list as it is now)."""
    ours = [name for name in one_turn_modules(tmp_path) if name.partition(".")[0] == "codeloop"]
    newcomers = sorted(set(ours) - set(AT_START))
    gone = sorted(set(AT_START) - set(ours))
    assert (newcomers, gone) == ([], []), "AT_START is now:\n" + "\n".join(
        f"    {name!r}," for name in ours
    )


# codeloop's modules a one-turn headless run imports (test above).
AT_START = (
    "codeloop",
    "codeloop.__main__",
    "codeloop._version",
    "codeloop.builder",
    "codeloop.checkpoints",
    "codeloop.checkpoints.limits",
    "codeloop.checkpoints.manager",
    "codeloop.cli",
    "codeloop.cli.headless",
    "codeloop.cli.live",
    "codeloop.cli.main",
    "codeloop.cli.render",
    "codeloop.cli.render.text_renderer",
    "codeloop.context",
    "codeloop.context.auto_memory",
    "codeloop.context.budget",
    "codeloop.context.compact",
    "codeloop.context.environment",
    "codeloop.context.globs",
    "codeloop.context.lazy_memory",
    "codeloop.context.media",
    "codeloop.context.memory",
    "codeloop.context.microcompact",
    "codeloop.context.pipeline",
    "codeloop.context.system_prompt",
    "codeloop.context.tokens",
    "codeloop.context.trim",
    "codeloop.deps",
    "codeloop.errors",
    "codeloop.events",
    "codeloop.extensions",
    "codeloop.extensions.agents",
    "codeloop.extensions.loader",
    "codeloop.extensions.output_styles",
    "codeloop.extensions.plugins",
    "codeloop.extensions.skill_discovery",
    "codeloop.extensions.skills",
    "codeloop.frontdoor",
    "codeloop.frontdoor.conversation",
    "codeloop.frontdoor.flags",
    "codeloop.frontdoor.session_flags",
    "codeloop.history_fold",
    "codeloop.hooks",
    "codeloop.hooks.hook_config",
    "codeloop.hooks.hook_events",
    "codeloop.hooks.hook_handlers",
    "codeloop.hooks.hook_runner",
    "codeloop.hooks.hook_watch",
    "codeloop.loop",
    "codeloop.mcp",
    "codeloop.mcp.agent_servers",
    "codeloop.mcp.names",
    "codeloop.mcp.server_config",
    "codeloop.mcp.server_policy",
    "codeloop.mcp.setup",
    "codeloop.mcp.sources",
    "codeloop.message_display",
    "codeloop.model_switch",
    "codeloop.models",
    "codeloop.models.aliases",
    "codeloop.models.anthropic",
    "codeloop.models.assembler",
    "codeloop.models.base",
    "codeloop.models.call_reader",
    "codeloop.models.catalog",
    "codeloop.models.complete",
    "codeloop.models.factory",
    "codeloop.models.http11",
    "codeloop.models.http_errors",
    "codeloop.models.lenient_json",
    "codeloop.models.prompt_size",
    "codeloop.models.retry",
    "codeloop.models.shaping",
    "codeloop.models.sse",
    "codeloop.models.thinking",
    "codeloop.models.transport",
    "codeloop.models.wire_events",
    "codeloop.models.written_calls",
    "codeloop.options",
    "codeloop.permissions",
    "codeloop.permissions.auto_mode",
    "codeloop.permissions.decision",
    "codeloop.permissions.files_check",
    "codeloop.permissions.modes",
    "codeloop.permissions.paths",
    "codeloop.permissions.persist",
    "codeloop.permissions.policy",
    "codeloop.permissions.rules",
    "codeloop.protocol",
    "codeloop.protocol.json_lines",
    "codeloop.protocol.run_report",
    "codeloop.repetition",
    "codeloop.session",
    "codeloop.session_config",
    "codeloop.settings",
    "codeloop.settings.settings_apply",
    "codeloop.settings.settings_checks",
    "codeloop.settings.settings_files",
    "codeloop.settings.settings_keys",
    "codeloop.settings.settings_safety",
    "codeloop.shell",
    "codeloop.shell.git_env",
    "codeloop.shell.sandbox",
    "codeloop.store",
    "codeloop.store.data_paths",
    "codeloop.store.repair",
    "codeloop.store.resume",
    "codeloop.store.session_store",
    "codeloop.store.transcript",
    "codeloop.subagents",
    "codeloop.system",
    "codeloop.system.aio",
    "codeloop.system.child_watcher",
    "codeloop.system.collector",
    "codeloop.system.dataclass_fields",
    "codeloop.system.env_values",
    "codeloop.system.jsonfile",
    "codeloop.system.lazy_pattern",
    "codeloop.system.lull",
    "codeloop.system.procs",
    "codeloop.system.reaper",
    "codeloop.system.valueclass",
    "codeloop.system.valueclass_templates",
    "codeloop.teams",
    "codeloop.teams.task_list",
    "codeloop.teams.team_mail",
    "codeloop.telemetry",
    "codeloop.telemetry.config",
    "codeloop.text",
    "codeloop.token_budget",
    "codeloop.tool_names",
    "codeloop.tools",
    "codeloop.tools.base",
    "codeloop.tools.executor",
    "codeloop.tools.input",
    "codeloop.tools.permission",
    "codeloop.tools.profile",
    "codeloop.tools.questions",
    "codeloop.tools.registry",
    "codeloop.tools.services",
    "codeloop.tools.skill_runtime",
    "codeloop.types",
    "codeloop.usage",
    "codeloop.usage.costs",
    "codeloop.usage.record",
    "codeloop.usage.segments",
    "codeloop.workspace",
    "codeloop.workspace.background",
    "codeloop.workspace.file_stamp",
    "codeloop.workspace.tool_workspace",
    "codeloop.workspace.write_lock",
)
