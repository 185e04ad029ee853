"""Bash's foreground commands in the editor's terminals (ACP's terminal/*, when the client
declares `terminal`): the user watches the command run in the editor; codeloop still builds
the command line (its cwd tracking, the hooks' exports) and reads the result."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal

from acp import RequestError, schema
from acp.interfaces import Client

from codeloop.system.aio import unless_aborted

# Tells the editor which terminal a tool call's command runs in (tool call id, terminal id).
ShowTerminal = Callable[[str, str], Awaitable[None]]


class ClientTerminals:
    def __init__(self, client: Client, session_id: str, show: ShowTerminal) -> None:
        self.client = client
        self.session_id = session_id
        self.show = show

    async def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        time_limit: float,
        abort: asyncio.Event,
        limit: int,
        tool_use_id: str,
    ) -> tuple[str, int, Literal["timeout", "abort"] | None]:
        """OSError when the editor cannot run it (the tool reports it)."""
        session = self.session_id
        try:
            created = await self.client.create_terminal(
                session_id=session,
                command=argv[0],
                args=argv[1:],
                cwd=str(cwd),
                env=[schema.EnvVariable(name=k, value=v) for k, v in env.items()],
                output_byte_limit=limit,
            )
        except RequestError as exc:
            raise OSError(f"the editor could not start a terminal: {exc}") from None
        terminal = created.terminal_id
        try:
            await self.show(tool_use_id, terminal)
            stopped = await _waited(self.client, session, terminal, time_limit, abort)
            if stopped is not None:
                await self.client.kill_terminal(session_id=session, terminal_id=terminal)
            output = await self.client.terminal_output(session_id=session, terminal_id=terminal)
        except RequestError as exc:
            raise OSError(f"the editor's terminal failed: {exc}") from None
        finally:
            with contextlib.suppress(RequestError, ConnectionError):
                await self.client.release_terminal(session_id=session, terminal_id=terminal)
        text = output.output
        if output.truncated:
            text = f"(the start of the output was cut: more than {limit:,} bytes)\n{text}"
        return text, _exit_code(output.exit_status), stopped


async def _waited(
    client: Client, session: str, terminal: str, time_limit: float, abort: asyncio.Event
) -> Literal["timeout", "abort"] | None:
    waiting = asyncio.ensure_future(
        client.wait_for_terminal_exit(session_id=session, terminal_id=terminal)
    )
    try:
        async with asyncio.timeout(time_limit):
            exited = await unless_aborted(waiting, abort)
    except TimeoutError:
        return "timeout"
    finally:
        waiting.cancel()
    return None if exited else "abort"


def _exit_code(status: schema.TerminalExitStatus | None) -> int:
    """The exit code as Bash reports it: minus the signal's number when killed by one."""
    if status is None:
        return -signal.SIGKILL
    if status.exit_code is not None:
        return status.exit_code
    if status.signal:
        with contextlib.suppress(KeyError):
            return -signal.Signals[status.signal].value
    return 1
