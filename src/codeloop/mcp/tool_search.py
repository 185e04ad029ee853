"""Tool search: many MCP tools without their schemas eating the window.

When the MCP tools' definitions would take more than a share of the context window (10% by
default; ENABLE_TOOL_SEARCH=auto:N sets N%, true always, false never), the model is first
offered only their names and one-line descriptions, inside the description of a ToolSearch
tool. Searching loads the full definitions of the tools it finds: from the next request on they
are offered like any other tool (and stay, so the request prefix stays cacheable). A deferred
tool is callable all along; it is only its schema that waits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codeloop.context.tokens import estimate_overhead
from codeloop.mcp.names import SEARCH_TOOL
from codeloop.models.base import ToolSpec
from codeloop.system.valueclass import valueclass
from codeloop.tools.base import ToolContext, ToolInputError, ToolResult

DEFAULT_SHARE = 0.10
MAX_LINE = 120
_WORD = re.compile(r"[a-z0-9]+")


@valueclass
class SearchMode:
    """`share` of the window past which MCP schemas are deferred; None: never defer."""

    share: float | None = DEFAULT_SHARE

    def defers(self, specs: Sequence[ToolSpec], window: int) -> bool:
        if self.share is None or not specs:
            return False
        return estimate_overhead("", specs) > self.share * window


def search_mode(env: Mapping[str, str], warnings: list[str] | None = None) -> SearchMode:
    raw = env.get("ENABLE_TOOL_SEARCH", "auto").strip().lower()
    if raw in ("", "auto"):
        return SearchMode()
    if raw in ("true", "1", "yes", "on"):
        return SearchMode(0.0)
    if raw in ("false", "0", "no", "off"):
        return SearchMode(None)
    if raw.startswith("auto:"):
        try:
            percent = float(raw.removeprefix("auto:"))
        except ValueError:
            percent = -1.0
        if 0 <= percent <= 100:
            return SearchMode(percent / 100)
    if warnings is not None:
        warnings.append(
            f"ENABLE_TOOL_SEARCH={raw!r} is not auto, auto:PERCENT, true or false; using auto"
        )
    return SearchMode()


def one_line(description: str) -> str:
    line = next((part.strip() for part in description.splitlines() if part.strip()), "")
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


class ToolSearchTool:
    """Finds deferred tools by name or words and loads their definitions."""

    name = SEARCH_TOOL

    def __init__(
        self, deferred: Callable[[], Sequence[ToolSpec]], load: Callable[[Sequence[str]], None]
    ) -> None:
        self._deferred = deferred
        self._load = load

    @property
    def description(self) -> str:
        listing = "\n".join(f"- {s.name}: {one_line(s.description)}" for s in self._deferred())
        return (
            "Load the definitions of deferred MCP tools so that you can call them. The tools "
            "below exist, but their parameters are not shown yet: search by words "
            '(query "github issue"), or pick tools by name (query "select:NAME,NAME"). The '
            "definitions of the tools found are returned, and those tools are offered to you "
            f"from then on.\n\nDeferred tools:\n{listing}"
        )

    def spec(self) -> ToolSpec:
        schema = {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": 'Words to search for, or "select:NAME,NAME" for exact names',
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many tools to load at most (default 5)",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        }
        return ToolSpec(self.name, self.description, schema)

    def parse(self, raw: dict[str, Any]) -> dict[str, Any]:
        query = raw.get("query") if isinstance(raw, dict) else None
        if not isinstance(query, str) or not query.strip():
            raise ToolInputError(f"InputValidationError: {self.name} needs a query")
        limit = raw.get("max_results", 5)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ToolInputError(f"InputValidationError: {self.name}: max_results must be >= 1")
        return {"query": query.strip(), "max_results": limit}

    def is_read_only(self, args: Any) -> bool:
        return True

    def is_concurrency_safe(self, args: Any) -> bool:
        return True

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        found = find(self._deferred(), args["query"], args["max_results"])
        if not found:
            return ToolResult(f"No deferred tool matches {args['query']!r}.")
        self._load([s.name for s in found])
        definitions = [
            {"name": s.name, "description": s.description, "input_schema": s.input_schema}
            for s in found
        ]
        return ToolResult(
            f"Loaded {len(found)} tool(s); you can call them now:\n"
            + json.dumps(definitions, ensure_ascii=False, indent=2)
        )


def find(specs: Sequence[ToolSpec], query: str, limit: int) -> list[ToolSpec]:
    """`select:a,b` picks by name (the full name, or the part after the server); words rank
    by how many appear in the name (counting triple) and the description."""
    if query.lower().startswith("select:"):
        wanted = [w.strip() for w in query[len("select:") :].split(",") if w.strip()]
        by_name = {s.name: s for s in specs}
        short = {s.name.rsplit("__", 1)[-1]: s for s in specs}
        picked = [by_name.get(w) or short.get(w) for w in wanted]
        return list({s.name: s for s in picked if s is not None}.values())
    words = set(_WORD.findall(query.lower()))
    scored = []
    for index, spec in enumerate(specs):
        name_words = set(_WORD.findall(spec.name.lower()))
        text_words = set(_WORD.findall(spec.description.lower()))
        score = 3 * len(words & name_words) + len(words & text_words)
        if score:
            scored.append((-score, index, spec))
    return [spec for _, _, spec in sorted(scored)[:limit]]
