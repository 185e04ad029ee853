"""What a session loads before its first request: nothing it does not need then.

Each check runs in a fresh interpreter, since this process has imported everything already.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, turn


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
)


def test_a_headless_run_of_a_hosted_model_loads_only_what_its_first_request_needs(
    tmp_path: Path,
) -> None:
    """In a git repository with a CLAUDE.md, as a user runs it."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("# Project\nRun the tests with `pytest`.\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    with FakeModelServer(Scenario(turns=(turn("hello"),))) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "k",
            "CODELOOP_HOME": str(tmp_path / "home"),
        }
        code = (
            "import contextlib, io, os\n"
            f"os.environ.update({env!r})\n"
            "from codeloop.__main__ import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['-p', 'hi', '--model', 'anthropic:claude-sonnet-4-5'])\n"
        )
        loaded = loaded_after(code, NOT_AT_START, cwd=project)
        assert len(server.requests) == 1
    assert loaded == []
