"""What a request's fixed part (system prompt and tools) costs, as the provider renders it.

Claude's and OpenAI's APIs carry every tool's full JSON schema; the `local:` provider sends a
one-line list instead (models/local.py), about a quarter of that. The budgets, the previews
and the small-window warning are only true when they count what is really sent, so a client
that renders the fixed part its own way says what it costs (`prompt_tokens(system, tools)`),
and `prompt_tokens` below asks it, through the wrappers that keep it as `inner`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from codeloop.text import estimate_text
from codeloop.types import ToolSpec

# Framing the wire format adds around each tool definition (type, name and schema keys).
TOOL_FRAMING = 3

PromptCount = Callable[[str, tuple[ToolSpec, ...]], int]
"""Tokens a system prompt and a tool set take in a request."""


def schema_prompt_tokens(system: str, tools: Iterable[ToolSpec]) -> int:
    """The system prompt and each tool's name, description and JSON schema."""
    total = estimate_text(system)
    for tool in tools:
        schema = json.dumps(tool.input_schema, ensure_ascii=False)
        total += estimate_text(tool.name) + estimate_text(tool.description)
        total += estimate_text(schema) + TOOL_FRAMING
    return total


def prompt_tokens(client: object, system: str, tools: tuple[ToolSpec, ...]) -> int:
    """The fixed part as `client` sends it: its own count when it renders it its own way
    (looked for through wrappers' `inner`), else the full schemas'."""
    while client is not None:
        count: PromptCount | None = getattr(client, "prompt_tokens", None)
        if callable(count):
            return count(system, tools)
        client = getattr(client, "inner", None)
    return schema_prompt_tokens(system, tools)
