"""MCP at the prompt: server prompts as slash commands, and `@server:uri` resource mentions.

`/mcp__server__prompt arg1 "arg two"` fills the prompt's arguments in order and sends what the
server returns as the user's message; every frontend (`-p`, the UI) calls `expand_command`.
A mention `@server:protocol://path` in a prompt attaches that resource's contents to it.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

from codeloop.mcp.names import prefix, safe
from codeloop.system.valueclass import valueclass
from codeloop.types import ContentBlock, ImageBlock, Message, TextBlock

if TYPE_CHECKING:
    from codeloop.mcp.connection import Connection
    from codeloop.mcp.server_manager import McpManager

_COMMAND = re.compile(r"/(mcp__[A-Za-z0-9_-]+?__[A-Za-z0-9_-]+)(?:\s+(.*))?\Z", re.DOTALL)
_MENTION = re.compile(r"(?<![^\s(\[{\"'])@([A-Za-z0-9_-]+):(\S+)")
_TRAILING = ".,;:!?)]}\"'"


class PromptError(Exception):
    """A slash command or mention that cannot run; the message is for the user."""


def is_command(text: str) -> bool:
    return _COMMAND.match(text.strip()) is not None


@valueclass
class PromptCommand:
    name: str  # the slash command, without the slash
    description: str
    argument_hint: str  # <required> [optional], in order


def prompt_commands(manager: McpManager) -> list[PromptCommand]:
    """Every server prompt as the slash command that runs it (the commands registry lists
    them: completion, /help, stream-json's init line)."""
    commands = []
    for conn in manager.connections.values():
        if conn.status != "connected":
            continue
        for p in conn.prompts:
            declared = list(p.arguments or [])
            hint = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in declared)
            about = (p.description or "").strip().splitlines()
            description = about[0] if about else f"prompt {p.name} of MCP server {conn.name}"
            commands.append(PromptCommand(f"{prefix(conn.name)}{safe(p.name)}", description, hint))
    return commands


def command_names(manager: McpManager) -> list[str]:
    """Every server prompt as the slash command that runs it (without the slash)."""
    return [command.name for command in prompt_commands(manager)]


async def expand_command(text: str, manager: McpManager) -> str | None:
    """The prompt a `/mcp__server__prompt args` command stands for; None when `text` is not
    one. PromptError when it names no prompt, or its arguments do not fit."""
    match = _COMMAND.match(text.strip())
    if match is None:
        return None
    command, rest = match.group(1), match.group(2) or ""
    found = _find(command, manager)
    if found is None:
        known = ", ".join(f"/{n}" for n in command_names(manager)) or "none"
        raise PromptError(f"/{command}: no such MCP prompt (available: {known})")
    connection, prompt = found
    arguments = _arguments(command, prompt, rest)

    async def get(session: Any) -> Any:
        return await session.get_prompt(prompt.name, arguments)

    from codeloop.mcp.connection import ServerLost

    try:
        result = await connection.request(get, limit=connection.timeouts.tool, what=f"/{command}")
    except ServerLost as exc:
        raise PromptError(str(exc)) from None
    except Exception as exc:
        from codeloop.mcp.connection import describe

        raise PromptError(f"/{command}: MCP server {connection.name}: {describe(exc)}") from None
    return _as_text(result.messages)


def _find(command: str, manager: McpManager) -> tuple[Connection, Any] | None:
    for conn in manager.connections.values():
        head = prefix(conn.name)
        if not command.startswith(head):
            continue
        for prompt in conn.prompts:
            if safe(prompt.name) == command[len(head) :]:
                return conn, prompt
    return None


def _arguments(command: str, prompt: Any, rest: str) -> dict[str, str]:
    try:
        values = shlex.split(rest)
    except ValueError as exc:
        raise PromptError(f"/{command}: {exc}") from None
    declared = list(prompt.arguments or [])
    if len(values) > len(declared):
        names = " ".join(a.name for a in declared) or "no arguments"
        raise PromptError(f"/{command} takes {names}; got {len(values)} values (quote spaces)")
    arguments = {arg.name: value for arg, value in zip(declared, values, strict=False)}
    missing = [a.name for a in declared if a.required and a.name not in arguments]
    if missing:
        usage = " ".join(a.name if a.required else f"[{a.name}]" for a in declared)
        raise PromptError(f"/{command} needs {', '.join(missing)}: /{command} {usage}")
    return arguments


def _as_text(messages: Any) -> str:
    """The prompt's messages as one user message; an assistant part is marked as such."""
    from codeloop.mcp.tools import content_blocks

    parts = []
    for message in messages:
        texts = []
        for block in content_blocks(message.content):
            if isinstance(block, TextBlock):
                texts.append(block.text)
            else:
                texts.append("[an image from the prompt: not included in a text prompt]")
        text = "\n".join(texts)
        parts.append(text if message.role == "user" else f"(assistant) {text}")
    return "\n\n".join(parts)


# --- @server:uri ------------------------------------------------------------------------------


@valueclass
class Attachments:
    messages: tuple[Message, ...]
    problems: tuple[str, ...]


async def attach_mentions(prompt: str, manager: McpManager) -> Attachments:
    """A message with the contents of each `@server:uri` the prompt mentions (servers that
    exist only: an e-mail address stays text)."""
    from codeloop.mcp.tools import read_resource

    blocks: list[ContentBlock] = []
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for match in _MENTION.finditer(prompt):
        server, uri = match.group(1), match.group(2).rstrip(_TRAILING)
        connection = manager.connections.get(server)
        if connection is None or (server, uri) in seen or "://" not in uri:
            continue
        seen.add((server, uri))
        try:
            contents = await read_resource(connection, uri)
        except Exception as exc:
            from codeloop.mcp.connection import describe

            problems.append(f"@{server}:{uri} could not be read: {describe(exc)}")
            continue
        blocks.append(TextBlock(f'<mcp-resource server="{server}" uri="{uri}">'))
        blocks += [b for b in contents if isinstance(b, TextBlock | ImageBlock)]
        blocks.append(TextBlock("</mcp-resource>"))
    if not blocks:
        return Attachments((), tuple(problems))
    return Attachments((Message("user", tuple(blocks), is_meta=True),), tuple(problems))
