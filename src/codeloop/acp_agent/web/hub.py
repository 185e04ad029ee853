"""The sessions one server shares between its connections: several browsers (or programs) on
one session all get the same stream of `session/update`s (one client's prompt shown to the
others), a client that loads a session that is already open joins it (its transcript first,
then what comes live, nothing lost or twice, even mid-turn),
and a permission request goes to every client, the first answer winning (the others' requests
are withdrawn and they see the call go on, or fail, in the stream)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from acp import RequestError, schema
from acp.helpers import update_user_message
from acp.interfaces import Client

from codeloop.acp_agent.agent import AcpAgent
from codeloop.acp_agent.live import LiveSession
from codeloop.acp_agent.updates import Update, UpdateTranslator
from codeloop.system.valueclass import valueclass

log = logging.getLogger("codeloop.serve")


class _Ask:
    """One permission request, offered to every client watching, answered by the first."""

    def __init__(
        self, session_id: str, tool_call: schema.ToolCallUpdate, options: list[Any]
    ) -> None:
        self.session_id = session_id
        self.tool_call = tool_call
        self.options = options
        self.answer: asyncio.Future[schema.RequestPermissionResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self.asking: dict[Client, asyncio.Task[schema.RequestPermissionResponse]] = {}

    def offer(self, client: Client) -> None:
        task = asyncio.ensure_future(
            client.request_permission(
                session_id=self.session_id, tool_call=self.tool_call, options=self.options
            )
        )
        self.asking[client] = task
        task.add_done_callback(functools.partial(self._answered, client))

    def _answered(
        self, client: Client, task: asyncio.Task[schema.RequestPermissionResponse]
    ) -> None:
        if task.cancelled():
            return
        if task.exception() is not None:  # that client went away: the others may answer
            self.asking.pop(client, None)
            return
        if not self.answer.done():
            self.answer.set_result(task.result())

    def withdraw(self) -> None:
        """The requests still open end (answered elsewhere, or the prompt was cancelled)."""
        for task in self.asking.values():
            task.cancel()


@valueclass(frozen=False)
class _Turn:
    """The running turn: how much of the transcript was there before it, and everything
    sent since (its prompt first), for whoever joins before the transcript holds it."""

    before: int
    sent: list[Update]


class Broadcast:
    """What a shared LiveSession takes as its editor: every update to every client that
    watches, in one order (a join comes between two updates, never inside a batch's update)."""

    def __init__(self, first: Client) -> None:
        self.clients: list[Client] = [first]
        self._order = asyncio.Lock()
        self._asks: set[_Ask] = set()
        self._turn: _Turn | None = None

    async def session_update(self, session_id: str, update: Update, **kwargs: Any) -> None:
        async with self._order:
            if self._turn is not None:
                self._turn.sent.append(update)
            for client in list(self.clients):
                await self._deliver(client, session_id, update)

    async def begin_turn(
        self, sender: Client, session_id: str, prompt: Sequence[Update], before: int
    ) -> _Turn | None:
        """A prompt starts: the other clients see what was asked (the sender shows it
        already); `before`: the transcript's length until now. None: a turn runs already
        (the session refuses this prompt)."""
        async with self._order:
            if self._turn is not None:
                return None
            self._turn = turn = _Turn(before, list(prompt))
            for client in list(self.clients):
                if client is not sender:
                    for update in prompt:
                        await self._deliver(client, session_id, update)
            return turn

    def end_turn(self, turn: _Turn) -> None:
        if self._turn is turn:
            self._turn = None

    async def join(
        self,
        client: Client,
        session_id: str,
        transcript: Callable[[int | None], Sequence[Update]],
    ) -> None:
        """`client` watches from now on, after what came before has gone to it alone: the
        transcript (`transcript(None)`), or while a turn runs the transcript before it
        (`transcript(length)`) and everything the turn sent; a permission request still
        open is offered to it too."""
        async with self._order:
            turn = self._turn
            backlog = transcript(None) if turn is None else [*transcript(turn.before), *turn.sent]
            for update in backlog:
                await self._deliver(client, session_id, update)
            if client not in self.clients:
                self.clients.append(client)
                for ask in self._asks:
                    ask.offer(client)

    def leave(self, client: Client) -> None:
        with contextlib.suppress(ValueError):
            self.clients.remove(client)

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        """The first answer from any client (one that joins while it waits is asked too)."""
        ask = _Ask(session_id, tool_call, options)
        self._asks.add(ask)
        for client in self.clients:
            ask.offer(client)
        try:
            return await ask.answer
        finally:
            self._asks.discard(ask)
            ask.withdraw()

    async def _deliver(self, client: Client, session_id: str, update: Update) -> None:
        try:
            await client.session_update(session_id, update)
        except (ConnectionError, RuntimeError) as exc:  # gone or stalled: the others go on
            log.info("a client stopped watching %s: %s", session_id, exc)
            self.leave(client)


class Hub:
    """Every connection's view of the same sessions, in the folder the server serves."""

    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.folder = folder
        self.sessions: dict[str, LiveSession] = {}
        self.turns: set[asyncio.Task[schema.PromptResponse]] = set()

    def agent(self) -> HubAgent:
        return HubAgent(self)

    async def close(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(live.close() for live in sessions))
        for turn in list(self.turns):
            turn.cancel()


class HubAgent(AcpAgent):
    """The ACP agent of one connection, over the hub's shared sessions: closing the
    connection leaves them running for the others (and for a reconnect)."""

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub.args)
        self.hub = hub
        self.sessions = hub.sessions

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        """Also says which folder this server's sessions live in (`_meta.cwd`), which a page
        cannot know otherwise."""
        answer = await super().initialize(protocol_version, client_capabilities, client_info)
        return answer.model_copy(update={"field_meta": {"cwd": str(self.hub.folder)}})

    async def new_session(self, cwd: str, *args: Any, **kwargs: Any) -> schema.NewSessionResponse:
        return await super().new_session(self._served(cwd), *args, **kwargs)

    async def load_session(
        self, cwd: str, session_id: str, *args: Any, **kwargs: Any
    ) -> schema.LoadSessionResponse:
        return await super().load_session(self._served(cwd), session_id, *args, **kwargs)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> schema.ListSessionsResponse:
        return await super().list_sessions(self._served(cwd or str(self.hub.folder)), cursor)

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> schema.PromptResponse:
        """A turn belongs to the session, not to the connection that asked: it goes on if
        that connection drops (the others, and a reconnect, watch it end)."""
        live = self._live(session_id)
        audience = _broadcast(live)
        asked = [update_user_message(block) for block in prompt]
        before = len(live.conversation.history())
        began = await audience.begin_turn(cast(Client, self.client), session_id, asked, before)
        turn = asyncio.ensure_future(super().prompt(session_id, prompt))
        self.hub.turns.add(turn)
        turn.add_done_callback(self.hub.turns.discard)
        if began is not None:
            turn.add_done_callback(lambda _: audience.end_turn(began))
        return await asyncio.shield(turn)

    async def close_all(self) -> None:
        """This connection went away: the sessions go on, without it."""
        for task in list(self._background):
            task.cancel()
        for live in self.sessions.values():
            _broadcast(live).leave(cast(Client, self.client))

    def _audience(self) -> Client:
        assert self.client is not None
        return cast(Client, Broadcast(self.client))

    async def _replay(self, live: LiveSession) -> None:
        """Joins the session: its transcript (a translator of its own, so the live one's
        state is untouched), then everything live."""
        assert self.client is not None

        def transcript(length: int | None) -> list[Update]:
            return UpdateTranslator(live.cwd).replay(live.conversation.history()[:length])

        await _broadcast(live).join(self.client, live.session_id, transcript)

    def _served(self, cwd: str) -> str:
        if not Path(cwd).is_absolute() or Path(cwd).resolve() != self.hub.folder.resolve():
            message = (
                f"this server serves {self.hub.folder} (initialize's _meta.cwd), not {cwd}: "
                "start codeloop serve in that folder"
            )
            raise RequestError(-32602, f"Invalid params: {message}", {"message": message})
        return cwd


def _broadcast(live: LiveSession) -> Broadcast:
    audience = live.client
    assert isinstance(audience, Broadcast)
    return audience
