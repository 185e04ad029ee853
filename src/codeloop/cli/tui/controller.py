"""What both interactive frontends (the terminal UI and the plain line mode) do the same way:
build the session (and rebuild it for /clear, /resume, /model), run what the user typed — a
slash command from the shared registry, or a prompt with its @-mentioned files — and feed
every event to the presenter. The frontends differ only in how they draw and ask."""

from __future__ import annotations

import asyncio
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeloop.cli.tui.presenter import Presenter
from codeloop.commands import CommandContext, CommandError, Registry, Submit, parse

if TYPE_CHECKING:
    from codeloop.options import Options
    from codeloop.permissions.policy import Answer, PermissionRequest
    from codeloop.session import Session


class Controller(ABC):
    def __init__(self, options: Options, registry: Registry, presenter: Presenter) -> None:
        self.options = options
        self.registry = registry
        self.presenter = presenter
        self._session: Session | None = None
        self.closing = False
        self.exit_status = 0

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

    # --- the session ----------------------------------------------------------------------

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the session is not open yet")
        return self._session

    @property
    def ready(self) -> bool:
        return self._session is not None

    async def open(self) -> None:
        self._session = await self._build(self.options)
        self._show_startup(self._session)

    async def reopen(self, changes: Mapping[str, Any]) -> None:
        """A new session from the same options: `{}` a fresh one, `resume` an earlier one,
        `model` another model (with `resume`: this conversation, continued)."""
        old = self.session
        options = dataclasses.replace(
            self.options,
            resume=changes.get("resume"),
            continue_conversation=False,
            fork_session=False,
            session_id=None,
            model=changes.get("model", self.options.model),
            permission_mode=old.config.policy.mode,
        )
        new = await self._build(options)
        self.options = dataclasses.replace(options, resume=None)
        self._session = new
        await old.aclose()

    async def _build(self, options: Options) -> Session:
        session = await asyncio.to_thread(_build_session, options)
        session.config.policy.ask_user = self.ask
        await session.start_servers()  # MCP: their prompts are commands from the start
        return session

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
            submit = await command.handler(CommandContext(self, self.registry), parsed[1])
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
        presenter.begin(shown)
        self.flush()
        try:
            async for event in self.session.submit(
                submit.prompt, attachments=submit.attachments, model=submit.model
            ):
                presenter.event(event)
                self.flush()
        finally:
            presenter.end()
            self.flush()

    def show(self, text: str) -> None:
        self.presenter.show(text)
        self.flush()

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.aclose()


def _build_session(options: Options) -> Session:
    """Off the UI's thread: the session, then the renderer's modules (rich), so the first
    answer does not wait for them."""
    from codeloop.options import build_session

    session = build_session(options)
    import codeloop.cli.tui.render  # noqa: F401

    return session
