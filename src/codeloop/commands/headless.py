"""`codeloop -p "/name args"`: the slash command runs as in the terminal UI (the same
registry); a custom command becomes the prompt, a built-in's output becomes the answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeloop.commands import (
    CommandContext,
    CommandError,
    CommandUsageError,
    Submit,
    default_registry,
    parse,
    run_command,
)
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from codeloop.session import Session


@valueclass(frozen=False)
class HeadlessFrontend:
    """Commands' output is collected; nothing can be picked, edited or reopened."""

    _session: Session
    shown: list[str] = field(default_factory=list)

    @property
    def session(self) -> Session:
        return self._session

    @property
    def interactive(self) -> bool:
        return False

    def show(self, text: str) -> None:
        self.shown.append(text)

    async def choose(self, title: str, options: Sequence[str]) -> int | None:
        return None

    async def reopen(self, changes: Mapping[str, Any]) -> None:
        raise CommandUsageError("needs the interactive UI (run codeloop without -p)")

    async def edit(self, path: Path) -> None:
        raise CommandUsageError("opens your editor: run it in the interactive UI")

    def exit(self) -> None:
        return None


@valueclass
class Expanded:
    submit: Submit | None  # what to send the model; None: the command answered itself
    output: str = ""
    notice: str = ""


async def expand_command(session: Session, prompt: str) -> Expanded:
    """What a headless prompt asks for. Raises CommandError when the command fails."""
    parsed = parse(prompt)
    if parsed is None:
        return Expanded(Submit(prompt))
    name, args = parsed
    registry = default_registry()
    command = registry.find(session, name)
    if command is None:
        return Expanded(Submit(prompt), notice=f"/{name} is no command: sent as text")
    if command.interactive_only:
        raise CommandUsageError(
            f"/{command.name} needs the interactive UI (run codeloop without -p)"
        )
    ui = HeadlessFrontend(session)
    try:
        ran = await run_command(command, CommandContext(ui, registry), args)
    except CommandError as exc:
        raise type(exc)(f"/{command.name}: {exc}") from None
    return Expanded(ran.submit, "\n".join(ui.shown), "\n".join(ran.notices))
