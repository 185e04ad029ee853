"""An editor for the ACP tests: the official Python SDK's client side, recording everything
codeloop sends it in order, answering permission requests as the test says, and serving
its own (unsaved) buffers through fs/read_text_file and fs/write_text_file."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import acp
from acp import schema
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client

from codeloop.testing.fake_server import FakeModelServer

MODEL = "anthropic:claude-sonnet-5-5"
ACP = [sys.executable, "-m", "codeloop", "acp"]

Pick = Callable[[schema.ToolCallUpdate, list[schema.PermissionOption]], str | None]


def allow_once(tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> str:
    return next(o.option_id for o in options if o.kind == "allow_once")


@dataclass
class Terminal:
    """A command the editor runs for the agent: a real process, its output kept."""

    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reading: asyncio.Task[None] | None = None

    async def read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self.output += chunk

    def exit_status(self) -> schema.TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return schema.TerminalExitStatus(signal=signal.Signals(-code).name)
        return schema.TerminalExitStatus(exit_code=code)


@dataclass
class Editor:
    """`log`: ("update", update) and ("ask", tool_call, options) in the order they came."""

    pick: Pick = allow_once
    buffers: dict[str, str] = field(default_factory=dict)
    log: list[tuple[Any, ...]] = field(default_factory=list)
    written: list[tuple[str, str]] = field(default_factory=list)
    updated: asyncio.Event = field(default_factory=asyncio.Event)
    terminals: dict[str, Terminal] = field(default_factory=dict)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.log.append(("update", update))
        self.updated.set()

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        self.log.append(("ask", tool_call, options))
        chosen = self.pick(tool_call, options)
        if chosen is None:
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> schema.ReadTextFileResponse:
        text = self.buffers[path] if path in self.buffers else _disk_text(path)
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = (line or 1) - 1
            text = "".join(lines[start : start + limit if limit is not None else None])
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> schema.WriteTextFileResponse:
        self.buffers[path] = content
        self.written.append((path, content))
        return schema.WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[schema.EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> schema.CreateTerminalResponse:
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={e.name: e.value for e in env or []} or None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"terminal-{len(self.terminals) + 1}"
        terminal = Terminal(process)
        terminal.reading = asyncio.ensure_future(terminal.read())
        self.terminals[terminal_id] = terminal
        self.log.append(("terminal", terminal_id, command, args or []))
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is not None and terminal.reading is not None:
            await terminal.reading
        return schema.TerminalOutputResponse(
            output=terminal.output.decode(errors="replace"),
            truncated=False,
            exit_status=terminal.exit_status(),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.WaitForTerminalExitResponse:
        await self.terminals[terminal_id].process.wait()
        status = self.terminals[terminal_id].exit_status()
        assert status is not None
        return schema.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.KillTerminalResponse:
        process = self.terminals[terminal_id].process
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        return schema.KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.ReleaseTerminalResponse:
        await self.kill_terminal(session_id, terminal_id)
        self.terminals.pop(terminal_id)
        self.log.append(("released", terminal_id))
        return schema.ReleaseTerminalResponse()

    def updates(self, kind: str | None = None) -> list[Any]:
        return [
            entry[1]
            for entry in self.log
            if entry[0] == "update" and (kind is None or entry[1].session_update == kind)
        ]

    def asks(self) -> list[tuple[schema.ToolCallUpdate, list[schema.PermissionOption]]]:
        return [(entry[1], entry[2]) for entry in self.log if entry[0] == "ask"]

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates("agent_message_chunk"))

    def calls(self) -> dict[str, list[Any]]:
        """Each tool call's entries (its `tool_call`, updates, permission requests) in order."""
        found: dict[str, list[Any]] = {}
        for entry in self.log:
            item = entry[1]
            call_id = getattr(item, "tool_call_id", None)
            if call_id is not None:
                found.setdefault(call_id, []).append(entry)
        return found

    async def wait_for(self, kind: str) -> Any:
        while True:
            found = self.updates(kind)
            if found:
                return found[0]
            self.updated.clear()
            await self.updated.wait()


def _disk_text(path: str) -> str:
    return Path(path).read_text()


def acp_env(server: FakeModelServer | None, home: Path, **more: str) -> dict[str, str]:
    """The environment an editor starts codeloop with: the fake model server, a home of its
    own (no developer settings or keys leak in)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CODELOOP_HOME": str(home / ".codeloop"),
        "CODELOOP_MODEL": MODEL,
        **more,
    }
    if server is not None:
        env |= {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "test-key"}
    return env


@asynccontextmanager
async def spawned(
    editor: Editor, env: dict[str, str], cwd: Path, *flags: str
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """A real `codeloop acp` process, with `editor` at the other end."""
    async with acp.spawn_agent_process(
        cast(Client, editor), *ACP, *flags, env=env, cwd=str(cwd)
    ) as (conn, process):
        yield conn, process


@asynccontextmanager
async def codeloop_acp(
    editor: Editor,
    env: dict[str, str],
    cwd: Path,
    *flags: str,
    fs: bool = False,
    terminal: bool = False,
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """A real `codeloop acp` process, initialized by `editor` (declaring fs/* when `fs`,
    terminal/* when `terminal`)."""
    async with spawned(editor, env, cwd, *flags) as (conn, process):
        capabilities = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
            terminal=terminal,
        )
        await conn.initialize(protocol_version=1, client_capabilities=capabilities)
        yield conn, process


def descendant(psutil: Any, pid: int, name: str) -> Any:
    """The descendant of `pid` running `name`, once it runs (another process: polled)."""
    while True:
        for child in psutil.Process(pid).children(recursive=True):
            if child.name() == name:
                return child
        time.sleep(0.05)
