"""A conversation: its history, usage and cost, across any number of prompts.

Frontends call `submit(prompt)` and render the events; the session keeps what the loop adds to
the history and totals what it costs. One Session serves the headless CLI, the interactive UI
and the library API alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

from codeloop.deps import LoopDeps
from codeloop.events import Event, LoopEnd
from codeloop.loop import LoopParams, query_loop
from codeloop.models.base import ModelClient
from codeloop.models.catalog import cost_usd
from codeloop.permissions.policy import Policy
from codeloop.tools.base import AnyTool, Workspace
from codeloop.types import Message, Usage, new_uuid


@dataclass
class SessionConfig:
    model: str
    system: str
    max_tokens: int
    max_turns: int | None = None
    max_budget_usd: float | None = None
    policy: Policy = field(default_factory=Policy)


class Session:
    def __init__(
        self,
        client: ModelClient,
        tools: Mapping[str, AnyTool],
        workspace: Workspace,
        config: SessionConfig,
        *,
        session_id: str | None = None,
        deps: LoopDeps | None = None,
    ) -> None:
        self.client = client
        self.tools = dict(tools)
        self.workspace = workspace
        self.config = config
        self.session_id = session_id or new_uuid()
        self.deps = deps or LoopDeps.for_client(client)
        self.messages: tuple[Message, ...] = ()
        self.usage_by_model: dict[str, Usage] = {}
        self.api_duration_ms = 0.0
        self.turns = 0
        self._abort = asyncio.Event()

    def interrupt(self) -> None:
        """Stop the running prompt (Ctrl+C, an SDK interrupt); the session stays usable."""
        self._abort.set()

    async def submit(self, prompt: str) -> AsyncIterator[Event]:
        self._abort = asyncio.Event()
        params = LoopParams(
            messages=(*self.messages, Message.user(prompt)),
            model=self.config.model,
            tools=self.tools,
            workspace=self.workspace,
            can_use_tool=self.config.policy.can_use_tool,
            system=self.config.system,
            max_tokens=self.config.max_tokens,
            max_turns=self.config.max_turns,
            budget_usd=_remaining(self.config.max_budget_usd, self.cost_usd),
            abort=self._abort,
        )
        async for event in query_loop(params, self.deps):
            if isinstance(event, LoopEnd):
                self._record(event)
            yield event

    def _record(self, end: LoopEnd) -> None:
        self.messages = end.messages
        self.turns += end.turns
        self.api_duration_ms += end.api_duration_ms
        for model, usage in end.usage_by_model.items():
            self.usage_by_model[model] = self.usage_by_model.get(model, Usage()) + usage

    @property
    def usage(self) -> Usage:
        return sum(self.usage_by_model.values(), Usage())

    @property
    def cost_usd(self) -> float:
        return sum(cost_usd(model, usage) for model, usage in self.usage_by_model.items())

    async def aclose(self) -> None:
        await self.client.aclose()


def _remaining(budget: float | None, spent: float) -> float | None:
    return None if budget is None else max(0.0, budget - spent)
