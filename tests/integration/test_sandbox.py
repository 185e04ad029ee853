"""Bash under a real bubblewrap sandbox: what fails inside it, and what still works.

CI installs bubblewrap (.ci/run), so there these tests must run: a missing or broken bwrap fails
them under CI=true instead of skipping.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeloop.shell.sandbox import Sandbox, probe, sandbox_for
from codeloop.tools.base import ToolContext, ToolResult, Workspace
from codeloop.tools.bash import BashTool


@pytest.fixture
def bwrap() -> str:
    found, why = probe()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs bubblewrap, but: {why}")
        pytest.skip(why)
    return found


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path.resolve()
    for name in ("ws", "home", "extra"):
        (root / name).mkdir()
    (root / "outside").write_text("untouched\n")
    monkeypatch.setenv("HOME", str(root / "home"))
    return root


def sandboxed(world: Path, bwrap: str, **kw: Any) -> tuple[BashTool, ToolContext]:
    roots = (world / "ws", world / "extra")
    tool = BashTool(Sandbox(roots, bwrap, **kw))
    return tool, ToolContext(Workspace(cwd=world / "ws", extra_dirs=[world / "extra"]))


async def run(tool: BashTool, ctx: ToolContext, command: str, **raw: Any) -> ToolResult:
    return await tool.call(tool.parse({"command": command, **raw}), ctx)


def on_host(path: str) -> bool:
    return os.path.exists(path)


def text(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def test_writes_outside_the_workspace_fail(world: Path, bwrap: str) -> None:
    tool, ctx = sandboxed(world, bwrap)
    result = await run(tool, ctx, "touch ../outside")
    assert result.is_error and "Read-only file system" in text(result)
    result = await run(tool, ctx, "echo pwned > ../outside")
    assert result.is_error
    result = await run(tool, ctx, 'echo pwned > "$HOME/pwned"')
    assert result.is_error and "Read-only file system" in text(result)
    assert (world / "outside").read_text() == "untouched\n"
    assert list((world / "home").iterdir()) == []


async def test_no_capabilities_so_no_remounting_or_proc_escape(world: Path, bwrap: str) -> None:
    tool, ctx = sandboxed(world, bwrap)
    result = await run(tool, ctx, "grep CapEff /proc/self/status; mount -o remount,rw / && echo R")
    assert "CapEff:\t0000000000000000" in text(result)
    assert result.is_error and not text(result).endswith("R")
    # Nor a way round the mounts through another process's view of the file system.
    escape = f"/proc/{os.getpid()}/root{world}/outside"
    result = await run(tool, ctx, f"echo pwned > {escape}")
    assert result.is_error
    assert (world / "outside").read_text() == "untouched\n"


async def test_the_workspace_stays_writable_and_the_cwd_is_tracked(world: Path, bwrap: str) -> None:
    tool, ctx = sandboxed(world, bwrap)
    result = await run(tool, ctx, "mkdir -p sub && echo ok > sub/made.txt && cd sub && pwd")
    assert not result.is_error, text(result)
    assert (world / "ws" / "sub" / "made.txt").read_text() == "ok\n"
    assert ctx.workspace.cwd == world / "ws" / "sub"
    result = await run(tool, ctx, "echo more > ../../extra/also.txt && pwd")
    assert not result.is_error, text(result)
    assert (world / "extra" / "also.txt").read_text() == "more\n"


async def test_a_folder_added_mid_session_is_writable_too(world: Path, bwrap: str) -> None:
    tool = BashTool(Sandbox((world / "ws",), bwrap))
    ctx = ToolContext(Workspace(cwd=world / "ws"))
    result = await run(tool, ctx, "echo no > ../extra/late.txt")
    assert result.is_error and "Read-only file system" in text(result)
    ctx.workspace.extra_dirs.append(world / "extra")  # what /add-dir does
    result = await run(tool, ctx, "echo yes > ../extra/late.txt")
    assert not result.is_error, text(result)
    assert (world / "extra" / "late.txt").read_text() == "yes\n"


async def test_tmp_is_private(world: Path, bwrap: str) -> None:
    tool, ctx = sandboxed(world, bwrap)
    name = f"/tmp/codeloop-sandbox-{uuid.uuid4().hex}"
    result = await run(tool, ctx, f"echo x > {name} && cat {name} && echo $TMPDIR")
    assert not result.is_error, text(result)
    assert text(result).split() == ["x", "/tmp"]
    assert not on_host(name)


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts (the kernel completes the handshake)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


async def test_no_network_unless_allowed(world: Path, bwrap: str, listener: int) -> None:
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    plain = BashTool()
    reached = await run(plain, ToolContext(Workspace(cwd=world / "ws")), connect)
    assert "connected" in text(reached)  # the server is there: the control
    tool, ctx = sandboxed(world, bwrap)
    blocked = await run(tool, ctx, connect)
    assert blocked.is_error and "connected" not in text(blocked)
    tool, ctx = sandboxed(world, bwrap, allow_network=True)
    allowed = await run(tool, ctx, connect)
    assert "connected" in text(allowed)


async def test_system_sockets_in_run_are_hidden(world: Path, bwrap: str) -> None:
    tool, ctx = sandboxed(world, bwrap)
    result = await run(tool, ctx, "find /run /var/run/ -mindepth 1 | wc -l")
    assert text(result).strip() == "0"


async def test_environment_is_reduced_to_the_allowlist(
    world: Path, bwrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "s3cret")
    tool, ctx = sandboxed(world, bwrap)
    result = await run(tool, ctx, 'echo "${SECRET_TOKEN:-unset} $HOME $CODELOOP"')
    assert text(result) == f"unset {world / 'home'} 1"


async def test_timeouts_still_kill_the_whole_command(world: Path, bwrap: str) -> None:
    tool, ctx = sandboxed(world, bwrap)
    result = await run(tool, ctx, "sleep 30 & sleep 30; echo never", timeout=300)
    assert result.is_error and "timed out" in text(result)
    assert "never" not in text(result)


def test_missing_bwrap_gives_one_warning_and_no_sandbox(tmp_path: Path) -> None:
    sandbox, warning = sandbox_for([tmp_path], bwrap=str(tmp_path / "no-bwrap"))
    assert sandbox is None
    assert warning is not None and "unsandboxed" in warning and "bubblewrap" in warning


async def test_the_agents_own_configuration_stays_read_only(world: Path, bwrap: str) -> None:
    ws = world / "ws"
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text('{"sandbox": {"enabled": true}}')
    (ws / ".git" / "hooks").mkdir(parents=True)
    tool, ctx = sandboxed(world, bwrap)
    script = "echo '{}' > .claude/settings.json; echo x > .git/hooks/pre-commit; touch ok"
    result = await run(tool, ctx, script)
    assert "Read-only file system" in text(result)
    assert (ws / ".claude" / "settings.json").read_text() == '{"sandbox": {"enabled": true}}'
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert (ws / "ok").exists()  # the rest of the workspace is writable
