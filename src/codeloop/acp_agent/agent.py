"""The ACP agent one editor connection talks to (the SDK's `Agent` protocol): it answers
`initialize` without building anything, opens sessions through the front door, and hands each
session's requests to its LiveSession."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, schema
from acp.helpers import update_agent_thought_text, update_available_commands
from acp.interfaces import Client

from codeloop._version import __version__
from codeloop.acp_agent.auth import auth_methods, auth_required, authenticated
from codeloop.acp_agent.client_files import ClientFiles
from codeloop.acp_agent.client_terminal import ClientTerminals
from codeloop.acp_agent.live import LiveSession
from codeloop.acp_agent.mcp_servers import EditorServer, server_configs
from codeloop.acp_agent.modes import config_options, mode_state
from codeloop.acp_agent.prompt_content import Block
from codeloop.errors import CodeloopError, NoCredentials, UsageError
from codeloop.frontdoor import Conversation, Responder
from codeloop.options import Options

log = logging.getLogger("codeloop.acp")


class AcpAgent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.client: Client | None = None
        self.client_capabilities = schema.ClientCapabilities()
        self.sessions: dict[str, LiveSession] = {}
        self._background: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        """What codeloop speaks; answered at once (no session, no key, no network needed)."""
        if client_capabilities is not None:
            self.client_capabilities = client_capabilities
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                session_capabilities=schema.SessionCapabilities(
                    list=schema.SessionListCapabilities()
                ),
                prompt_capabilities=schema.PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=True),
            ),
            auth_methods=list(auth_methods()),
            agent_info=schema.Implementation(
                name="codeloop", title="codeloop", version=__version__
            ),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> schema.AuthenticateResponse:
        authenticated(method_id)
        return schema.AuthenticateResponse()

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[EditorServer] | None = None,
        **kwargs: Any,
    ) -> schema.NewSessionResponse:
        live, warnings = await self._open(cwd, additional_directories, mcp_servers)
        self._after_answer(live, warnings)
        return schema.NewSessionResponse(
            session_id=live.session_id,
            modes=mode_state(live.conversation),
            config_options=config_options(live.conversation),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[EditorServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> schema.LoadSessionResponse:
        """A stored session (from the terminal, `-p` or an editor) continued here: its whole
        conversation is replayed to the editor before the answer."""
        live = self.sessions.get(session_id)
        warnings: list[str] = []
        if live is None:
            live, warnings = await self._open(
                cwd, additional_directories, mcp_servers, resume=session_id
            )
            if live.session_id != session_id:  # busy elsewhere: codeloop forked a copy
                del self.sessions[live.session_id]
                await live.close()
                message = f"session {session_id} is open in another codeloop; close it there first"
                raise RequestError(-32603, message, {"message": message})
        await self._replay(live)
        self._after_answer(live, warnings)
        return schema.LoadSessionResponse(
            modes=mode_state(live.conversation), config_options=config_options(live.conversation)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> schema.ListSessionsResponse:
        """The project's stored sessions, newest first (the folder asked for, else this
        process's); one page, so no cursor."""
        from codeloop.store.session_store import SessionStore

        folder = _project_dir(cwd) if cwd is not None else Path.cwd()
        return schema.ListSessionsResponse(
            sessions=[
                schema.SessionInfo(
                    session_id=s.session_id,
                    cwd=str(folder),
                    title=s.first_prompt[:120] or None,
                    updated_at=_iso(s.last_active),
                )
                for s in SessionStore(folder, os.environ).summaries()
            ]
        )

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """codeloop's own methods (review.py): a saved session's timeline and usage."""
        from codeloop.acp_agent import review

        if method not in review.METHODS:
            raise RequestError.method_not_found(f"_{method}")
        session, cwd = params.get("sessionId"), params.get("cwd")
        if not isinstance(session, str):
            raise _invalid("sessionId (a string) is required")
        root = _project_dir(cwd) if isinstance(cwd, str) else Path.cwd()
        try:
            return await asyncio.to_thread(review.review, method, session, root, os.environ)
        except CodeloopError as exc:
            raise _invalid(str(exc)) from None

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> schema.SetSessionModeResponse:
        live = self._live(session_id)
        try:
            live.set_mode(mode_id)
        except UsageError as exc:
            raise _invalid(str(exc)) from None
        await live.mode_set()
        return schema.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        """The mode or the model, from the editor's pickers."""
        live = self._live(session_id)
        try:
            if config_id == "mode":
                live.set_mode(value)
                await live.mode_set()
            elif config_id == "model":
                await live.set_model(value)
            else:
                raise UsageError(f"no configuration option {config_id!r} (mode, model)")
        except UsageError as exc:
            raise _invalid(str(exc)) from None
        return schema.SetSessionConfigOptionResponse(
            config_options=config_options(live.conversation)
        )

    async def prompt(
        self, session_id: str, prompt: list[Block], **kwargs: Any
    ) -> schema.PromptResponse:
        return await self._live(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is None:  # a notification: nobody to answer
            log.warning("session/cancel for an unknown session %s", session_id)
            return
        live.cancel()

    async def close_all(self) -> None:
        """The editor went away: every session stops (running prompts first)."""
        for task in list(self._background):
            task.cancel()
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(live.close() for live in sessions))

    async def _open(
        self,
        cwd: str,
        additional_directories: list[str] | None,
        mcp_servers: list[EditorServer] | None,
        **fields: Any,
    ) -> tuple[LiveSession, list[str]]:
        root = _project_dir(cwd)
        servers, warnings = server_configs(mcp_servers or [])
        options = self._options(root, additional_directories or [], servers, **fields)
        if self.client is None:
            raise RequestError.internal_error({"message": "no editor connection"})
        try:
            conversation = await Conversation.open(options)
        except NoCredentials as exc:
            raise auth_required(exc) from None
        except CodeloopError as exc:
            raise RequestError(-32603, str(exc), {"message": str(exc)}) from None
        if self.args.tools is not None:
            try:
                conversation.keep_tools(self.args.tools)
            except UsageError as exc:
                await conversation.close()
                raise _invalid(str(exc)) from None
        live = LiveSession(conversation, self._audience(), root)
        conversation.respond(Responder(permission=live.ask, questions=live.questions))
        fs = self.client_capabilities.fs
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            files = ClientFiles(
                self.client,
                live.session_id,
                read=bool(fs.read_text_file),
                write=bool(fs.write_text_file),
            )
            conversation.edit_in(files)
            live.files = files
        if self.client_capabilities.terminal:
            conversation.run_in(ClientTerminals(self.client, live.session_id, live.show_terminal))
        self.sessions[live.session_id] = live
        return live, warnings

    def _audience(self) -> Client:
        """Where a new session's updates and permission requests go: this editor."""
        assert self.client is not None
        return self.client

    async def _replay(self, live: LiveSession) -> None:
        """session/load: the whole conversation, as the editor would have seen it live."""
        await live.send(live.translator.replay(live.conversation.history()))

    def _options(
        self, cwd: Path, add_dirs: list[str], servers: list[Any], **fields: Any
    ) -> Options:
        """The session the flags `codeloop acp` was started with describe, in the editor's
        folder, with the editor's servers."""
        from codeloop.frontdoor.session_flags import session_options

        try:
            options = session_options(self.args)
        except CodeloopError as exc:
            raise _invalid(str(exc)) from None
        changes: dict[str, Any] = {"continue_conversation": False, "resume": None, **fields}
        return dataclasses.replace(
            options,
            cwd=cwd,
            add_dirs=[*options.add_dirs, *add_dirs],
            mcp_servers=[*options.mcp_servers, *servers],
            **changes,
        )

    def _after_answer(self, live: LiveSession, warnings: list[str]) -> None:
        """Right after the answer (the editor knows the session id by then): the slash
        commands, and what could not be set up; the commands again once the MCP servers are
        up, if their prompts added some."""

        async def tell() -> None:
            offered = _commands(live)
            await live.send([update_available_commands(offered)])
            await live.send(update_agent_thought_text(w) for w in warnings)
            if await live.conversation.start_servers() and (now := _commands(live)) != offered:
                await live.send([update_available_commands(now)])

        task = asyncio.get_running_loop().create_task(tell())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _live(self, session_id: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise _invalid(f"no session {session_id} in this connection")
        return live


def _commands(live: LiveSession) -> list[schema.AvailableCommand]:
    from codeloop.commands import default_registry

    return [
        schema.AvailableCommand(
            name=c.name,
            description=c.description,
            input=(
                schema.AvailableCommandInput(
                    root=schema.UnstructuredCommandInput(hint=c.argument_hint)
                )
                if c.argument_hint
                else None
            ),
        )
        for c in default_registry().commands(live.conversation.session)
        if not c.interactive_only
    ]


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _project_dir(cwd: str) -> Path:
    root = Path(cwd)
    if not root.is_absolute() or not root.is_dir():
        raise _invalid(f"cwd {cwd!r} is not an absolute path to a directory")
    return root


def _invalid(message: str) -> RequestError:
    return RequestError(-32602, f"Invalid params: {message}", {"message": message})
