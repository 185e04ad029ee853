"""What both interactive frontends (the terminal UI and the plain line mode) do the same way:
open the conversation through the front door (and open another for /clear, /resume, /model),
run what the user typed — a slash command from the shared registry, or a prompt with its
@-mentioned files — and feed every event to the presenter. The frontends differ only in how
they draw and ask."""

from __future__ import annotations

import asyncio
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeloop.cli.tui.presenter import Presenter
from codeloop.commands import CommandContext, CommandError, Registry, Submit, parse, run_command
from codeloop.events import LoopEnd

if TYPE_CHECKING:
    from codeloop.frontdoor import Conversation
    from codeloop.mcp.server_config import ServerConfig
    from codeloop.options import Options
    from codeloop.permissions.policy import Answer, PermissionRequest
    from codeloop.session import Session


class Controller(ABC):
    def __init__(self, options: Options, registry: Registry, presenter: Presenter) -> None:
        self.options = options
        self.registry = registry
        self.presenter = presenter
        self._conversation: Conversation | None = None
        self.closing = False
        self.exit_status = 0
        # What the user might type next (--prompt-suggestions): shown greyed in the empty
        # input, Tab takes it; None until the last prompt's suggestion came (or none did).
        self.suggestion: str | None = None
        self._suggesting: asyncio.Task[None] | None = None

    # --- what each frontend provides ------------------------------------------------------

    @property
    @abstractmethod
    def interactive(self) -> bool: ...

    @abstractmethod
    def flush(self) -> None:
        """Print what became final, and redraw what is live."""

    @abstractmethod
    async def choose(self, title: str, options: Sequence[str]) -> int | None: ...

    @abstractmethod
    async def ask(self, request: PermissionRequest) -> Answer:
        """The permission dialog: allow once, allow always, or deny with a message."""

    @abstractmethod
    async def edit(self, path: Path) -> None: ...

    @abstractmethod
    def exit(self) -> None: ...

    # --- the conversation -----------------------------------------------------------------

    @property
    def conversation(self) -> Conversation:
        """What the UI drives: prompts, interrupts, the mode."""
        if self._conversation is None:
            raise RuntimeError("the session is not open yet")
        return self._conversation

    @property
    def session(self) -> Session:
        """The session behind it, for what shows its state (footer, presenter, commands)."""
        return self.conversation.session

    @property
    def ready(self) -> bool:
        return self._conversation is not None

    async def open(self) -> None:
        if not self.options.strict_mcp_config:
            await self._approve_project_servers()
        self._conversation = await self._open(self.options)
        self._show_startup(self._conversation.session)

    async def _approve_project_servers(self) -> None:
        """The first time the project's `.mcp.json` brings a server, ask before it starts;
        the answer is kept (.codeloop/settings.local.json). Esc: ask again next time."""
        from codeloop.mcp.sources import remember_approval

        pending = await asyncio.to_thread(_awaiting_approval, self.options)
        approved: list[str] = []
        refused: list[str] = []
        for index, server in enumerate(pending):
            what = server.url if server.remote else " ".join([server.command, *server.args])
            picked = await self.choose(
                f"The project's .mcp.json has an MCP server you have not approved yet: "
                f"{server.name} ({what}). Start it?",
                [
                    "Yes, use this server",
                    "Yes, and every server of this project's .mcp.json",
                    "No, not this server",
                ],
            )
            if picked == 1:
                cwd = _cwd(self.options)
                names = [s.name for s in pending[index:]]
                path = remember_approval(cwd, [*approved, *names], refused, enable_all=True)
                self.presenter.note("info", f"Project MCP servers approved (in {path})")
                return
            if picked is not None:
                (approved if picked == 0 else refused).append(server.name)
        if approved or refused:
            path = remember_approval(_cwd(self.options), approved, refused)
            self.presenter.note("info", f"Your answer about the project's MCP servers: {path}")

    async def reopen(self, changes: Mapping[str, Any]) -> None:
        """A new conversation from the same options, in the mode this one is in: `{}` a fresh
        session, `resume` an earlier one, `model` another model (with `resume`: this
        conversation, continued)."""
        old = self.conversation
        options = dataclasses.replace(
            self.options,
            resume=changes.get("resume"),
            continue_conversation=False,
            fork_session=False,
            session_id=None,
            model=changes.get("model", self.options.model),
            permission_mode=old.mode,
        )
        new = await self._open(options)
        self.options = dataclasses.replace(options, resume=None)
        self._forget_suggestion()  # the old conversation's
        self._conversation = new
        await old.close()

    async def _open(self, options: Options) -> Conversation:
        await asyncio.to_thread(_load_modules)
        from codeloop.frontdoor import Conversation, Responder

        # On the UI's loop: the MCP servers the builder starts live there.
        conversation = await Conversation.open(options, Responder(permission=self.ask))
        await conversation.start_servers()  # MCP: their prompts are commands from the start
        return conversation

    def _show_startup(self, session: Session) -> None:
        if session.messages:
            self.presenter.note(
                "info", f"Resumed session {session.session_id} ({len(session.messages)} messages)"
            )

    # --- running what was typed ------------------------------------------------------------

    async def handle(self, text: str) -> None:
        """One submitted input: a command, or a prompt (an unknown /word is sent as text)."""
        text = text.strip()
        if not text:
            return
        parsed = parse(text)
        command = self.registry.find(self.session, parsed[0]) if parsed else None
        if parsed is not None and command is None:
            self.presenter.note(
                "info", f"/{parsed[0]} is no command (/help lists them): sent as text"
            )
        if command is None:
            from codeloop.commands.mentions import attach

            attached = attach(text, self.session.workspace.cwd)
            for note in attached.notes:
                self.presenter.note("warning", note)
            await self.run(Submit(text, attached.blocks), shown=text)
            return
        assert parsed is not None
        self.presenter.begin(text, status=f"Running /{command.name}")
        self.flush()
        try:
            ran = await run_command(command, CommandContext(self, self.registry), parsed[1])
            for notice in ran.notices:
                self.presenter.note("warning", notice)
            submit = ran.submit
        except CommandError as exc:
            self.presenter.note("error", f"/{command.name}: {exc}")
            submit = None
        except Exception as exc:  # a command's failure is reported; the session goes on
            self.presenter.note("error", f"/{command.name} failed: {type(exc).__name__}: {exc}")
            submit = None
        finally:
            self.presenter.end()
            self.flush()
        if submit is not None:
            await self.run(submit, shown=None)

    async def run(self, submit: Submit, *, shown: str | None) -> None:
        presenter = self.presenter
        self._forget_suggestion()
        presenter.begin(shown)
        self.flush()
        end: LoopEnd | None = None
        try:
            async for event in self.conversation.prompt(
                submit.prompt,
                attachments=submit.attachments,
                model=submit.model,
                display_batches=True,
            ):
                presenter.event(event)
                self.flush()
                if isinstance(event, LoopEnd):
                    end = event
        finally:
            presenter.end()
            self.flush()
        if end is not None:
            self._suggesting = asyncio.ensure_future(self._suggest(self.conversation, end))

    async def _suggest(self, conversation: Conversation, end: LoopEnd) -> None:
        """The next prompt's suggestion, asked beside the UI (the input stays usable)."""
        self.suggestion = await conversation.suggest_prompt(end)
        if self.suggestion is not None:
            self.suggested(self.suggestion)

    def suggested(self, suggestion: str) -> None:
        """A suggestion came: the terminal UI draws it greyed in the empty input."""
        self.flush()

    def _forget_suggestion(self) -> None:
        if self._suggesting is not None:
            self._suggesting.cancel()
            self._suggesting = None
        self.suggestion = None

    def show(self, text: str) -> None:
        self.presenter.show(text)
        self.flush()

    async def close(self) -> None:
        self._forget_suggestion()
        if self._conversation is not None:
            conversation, self._conversation = self._conversation, None
            await conversation.close()


def _cwd(options: Options) -> Path:
    return (options.cwd or Path.cwd()).resolve()


def _awaiting_approval(options: Options) -> list[ServerConfig]:
    """The project's MCP servers nobody approved or refused yet, by the settings the session
    will read."""
    import os

    from codeloop.mcp.sources import McpApproval, awaiting_approval
    from codeloop.settings.settings_files import load_settings

    env = os.environ if options.env is None else options.env
    cwd = _cwd(options)
    settings = load_settings(cwd, cli=options.settings, env=env, sources=options.setting_sources)
    return awaiting_approval(cwd, env, McpApproval.of(settings))


def _load_modules() -> None:
    """Off the UI's thread: the front door's and the builder's modules (most of a session's),
    then the renderer's (rich), so neither the prompt nor the first answer waits for them."""
    import codeloop.builder
    import codeloop.cli.tui.render
    import codeloop.frontdoor  # noqa: F401
