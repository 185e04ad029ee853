"""Slash commands: one registry for every frontend — the terminal UI, and headless
`codeloop -p "/name args"`.

A command is a name, a description and an async handler. What it shows goes through the
frontend it runs in (`Frontend`: the UI prints it, headless writes it to stdout); what it asks
of the model comes back as a `Submit`, which the frontend sends like a typed prompt. Built-in
commands are registered once (`Registry.add`); providers compute commands from a session
(`Registry.add_provider`): the custom command and skill files, and whatever else brings
commands (an MCP server's prompts, a checkpoint command) registers the same way.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from codeloop.errors import CodeloopError
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from codeloop.session import Session
    from codeloop.types import ImageBlock, TextBlock


@valueclass
class Submit:
    """A prompt for the model, as a command made it: with the files it attaches, and the model
    it picks for this one prompt (a command file's `model`)."""

    prompt: str
    attachments: tuple[TextBlock | ImageBlock, ...] = ()
    model: str | None = None


class Frontend(Protocol):
    """What a command acts through: the UI implements it, and so does headless."""

    @property
    def session(self) -> Session:
        """The session now running (a command may replace it: `reopen`)."""
        ...

    @property
    def interactive(self) -> bool:
        """True when a person can answer (pickers, the editor)."""
        ...

    def show(self, text: str) -> None:
        """Output of a command, as plain text lines."""
        ...

    async def choose(self, title: str, options: Sequence[str]) -> int | None:
        """The index of the option picked, or None when nothing was (Esc, or no person)."""
        ...

    async def reopen(self, changes: Mapping[str, Any]) -> None:
        """Replace the session with one built from the same options and these changes:
        `{}` starts a new session, `{"resume": id}` continues one, `{"model": name}` ..."""
        ...

    async def edit(self, path: Path) -> None:
        """Open the file in the user's editor and wait until they close it."""
        ...

    def exit(self) -> None: ...


@valueclass(frozen=False)
class CommandContext:
    ui: Frontend
    registry: Registry

    @property
    def session(self) -> Session:
        return self.ui.session


Handler = Callable[[CommandContext, str], Awaitable[Submit | None]]


class CommandError(CodeloopError):
    """A command could not do what was asked; the message is for the user."""


class CommandUsageError(CommandError):
    """A command called wrongly (its arguments), or where it cannot run (headless)."""

    exit_status = 2


@valueclass
class Command:
    name: str
    description: str
    handler: Handler
    argument_hint: str = ""
    # Where it comes from: built-in, project, user, plugin, managed, mcp ...
    source: str = "built-in"
    # Needs a person at a terminal (a picker, the editor): headless names it instead.
    interactive_only: bool = False


# Providers compute commands from the running session (custom command files, MCP prompts).
Provider = Callable[["Session"], Iterable[Command]]

_NAME = re.compile(r"[A-Za-z0-9_][\w.:-]*")


def parse(text: str) -> tuple[str, str] | None:
    """`/name args` → (name, args); None for text that is no command (`/etc/hosts is...`)."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    head, newline, more = head.partition("\n")
    if not _NAME.fullmatch(head):
        return None
    args = f"{more}{' ' if more and rest else ''}{rest}" if newline else rest
    return head, args.strip()


@valueclass(frozen=False)
class Registry:
    builtins: dict[str, Command] = field(default_factory=dict)
    providers: list[Provider] = field(default_factory=list)

    def add(self, command: Command) -> None:
        self.builtins[command.name] = command

    def add_provider(self, provider: Provider) -> None:
        self.providers.append(provider)

    def commands(self, session: Session | None) -> list[Command]:
        """Every command, built-ins first; a provided command never hides a built-in."""
        found = dict(self.builtins)
        if session is not None:
            for provider in self.providers:
                for command in provider(session):
                    found.setdefault(command.name, command)
        return list(found.values())

    def find(self, session: Session | None, name: str) -> Command | None:
        commands = {c.name: c for c in self.commands(session)}
        if name in commands:
            return commands[name]
        lowered = name.lower()
        return next((c for n, c in commands.items() if n.lower() == lowered), None)


@valueclass
class Ran:
    """A command's outcome: the prompt it expanded into (None: it answered itself), and what
    its UserPromptExpansion hooks told the user."""

    submit: Submit | None
    notices: tuple[str, ...] = ()


async def run_command(command: Command, ctx: CommandContext, args: str) -> Ran:
    """Run a command. A prompt it expands into (a command file, a skill, an MCP prompt, /init)
    goes through the UserPromptExpansion hooks first, matched by the command's name: they can
    refuse it (CommandError), or add context for the model."""
    submit = await command.handler(ctx, args)
    hooks = ctx.session.hooks
    if submit is None or hooks is None:
        return Ran(submit)
    from codeloop.context.memory import system_reminder
    from codeloop.types import TextBlock

    outcome = await hooks.run(
        "UserPromptExpansion",
        {
            "expansion_type": "mcp_prompt" if command.source == "mcp" else "slash_command",
            "command_name": command.name,
            "command_args": args,
            "command_source": "builtin" if command.source == "built-in" else command.source,
            "prompt": submit.prompt,
        },
    )
    if outcome.blocked or outcome.stop:
        why = outcome.reason if outcome.blocked else outcome.stop_reason
        raise CommandError(f"a UserPromptExpansion hook refused it: {why}")
    if context := outcome.for_model():
        added = TextBlock(system_reminder(context))
        submit = replace(submit, attachments=(*submit.attachments, added))
    return Ran(submit, outcome.system_messages)


def default_registry() -> Registry:
    """The built-in commands, the custom command files and the MCP servers' prompts: what
    every frontend offers."""
    from codeloop.commands import (
        add_dir,
        builtin,
        custom,
        language_servers,
        mcp_prompts,
        review,
        rewind,
        servers,
        usage,
    )

    registry = Registry()
    commands = (
        add_dir.COMMAND,
        rewind.COMMAND,
        servers.COMMAND,
        language_servers.COMMAND,
        usage.COMMAND,
    )
    for command in (*builtin.COMMANDS, *commands, *review.COMMANDS):
        registry.add(command)
    registry.add_provider(custom.provide)
    registry.add_provider(mcp_prompts.provide)
    return registry


__all__ = [
    "Command",
    "CommandContext",
    "CommandError",
    "CommandUsageError",
    "Frontend",
    "Handler",
    "Provider",
    "Ran",
    "Registry",
    "Submit",
    "default_registry",
    "parse",
    "run_command",
]
