"""An agent team's roster and mailboxes: who is in the session's team, who is working, and the
messages waiting for each member (the lead is `team-lead`, as in Claude Code).

A leaf the tools use through the workspace (SendMessage, TeamCreate) and teammates.py drives: a
teammate waits in `receive` while it is idle, the lead's frontend waits in `lead_turn` while
teammates work. Messages are wrapped as Claude Code wraps them for the model
(`<teammate-message teammate_id=... summary=...>`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from dataclasses import field
from typing import Any

from codeloop.system.aio import unless_aborted
from codeloop.system.valueclass import valueclass

LEAD = "team-lead"


@valueclass(frozen=False)
class Team:
    name: str
    description: str = ""
    # Member name -> its messages not yet read (the lead's included).
    inboxes: dict[str, list[str]] = field(default_factory=lambda: {LEAD: []})
    working: set[str] = field(default_factory=set)


class Roster:
    """The session's team (one at a time, as Claude Code's lead has) and its teammates' runs."""

    def __init__(self) -> None:
        self.team: Team | None = None
        self._runs: dict[str, asyncio.Task[None]] = {}
        self._changed: asyncio.Condition | None = None
        self._closed = False

    def create(self, name: str, description: str = "") -> Team:
        self.team = Team(name, description)
        return self.team

    def members(self) -> list[str]:
        """The teammates (not the lead)."""
        return [name for name in self.team.inboxes if name != LEAD] if self.team else []

    def join(self, name: str, run: Coroutine[Any, Any, None]) -> None:
        """A teammate starts working, in the background."""
        assert self.team is not None
        self.team.inboxes[name] = []
        self.team.working.add(name)
        self._runs[name] = asyncio.create_task(run, name=f"teammate:{name}")

    async def post(self, sender: str, to: str, text: str, summary: str = "") -> list[str]:
        """Deliver to `to` (`*`: every member but the sender); the recipients."""
        assert self.team is not None
        names = [n for n in self.team.inboxes if n != sender] if to == "*" else [to]
        about = f' summary="{_attr(summary)}"' if summary else ""
        opening = f'<teammate-message teammate_id="{_attr(sender)}"{about}>'
        wrapped = f"{opening}\n{text}\n</teammate-message>"
        for name in names:
            self.team.inboxes[name].append(wrapped)
        await self._notify()
        return names

    async def set_working(self, name: str, working: bool) -> None:
        if self.team is not None:
            (self.team.working.add if working else self.team.working.discard)(name)
            await self._notify()

    async def receive(self, name: str) -> str | None:
        """The messages waiting for `name`, once there are some; None once the team closes."""
        return await self._wait(lambda team: bool(team.inboxes[name]), name)

    async def lead_turn(self, abort: asyncio.Event) -> str | None:
        """What the lead is sent next: its messages once there are some; None when none is
        waiting and no teammate is working (then nothing more will come), or on `abort` (the
        user's Ctrl+C)."""
        waiting = asyncio.ensure_future(
            self._wait(lambda team: bool(team.inboxes[LEAD]) or not team.working, LEAD)
        )
        if not await unless_aborted(waiting, abort):
            return None
        return waiting.result()

    async def aclose(self) -> None:
        """Teammates stop with the session."""
        self._closed = True
        await self._notify()
        for run in self._runs.values():
            run.cancel()
        for run in self._runs.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await run

    async def _wait(self, ready: Callable[[Team], bool], name: str) -> str | None:
        team = self.team
        if team is None:
            return None
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self._closed or ready(team))
        waiting = team.inboxes[name]
        if self._closed or not waiting:
            return None
        text = "\n\n".join(waiting)
        waiting.clear()
        return text

    async def _notify(self) -> None:
        changed = self._condition()
        async with changed:
            changed.notify_all()

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed


def _attr(value: str) -> str:
    """An attribute value that cannot end the tag early (html.escape's module costs start-up
    ~3 ms, for three replacements)."""
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
