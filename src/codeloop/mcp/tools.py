"""MCP tools as codeloop tools: `mcp__<server>__<tool>`, and the two resource tools.

They are the same Protocol as the built-ins (tools/base.py `AnyTool`), so the executor, the
permission policy and the hooks treat them alike. A server's read-only hint lets its calls run
in parallel, but it is a hint from the server, not a promise: permission rules, not the hint,
decide whether a call may run (`--allowedTools mcp__server`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcp import types
from mcp.shared.exceptions import McpError

from codeloop.mcp.connection import Connection, ServerLost, describe, every
from codeloop.mcp.names import tool_name
from codeloop.models.base import ToolSpec
from codeloop.system.aio import unless_aborted
from codeloop.tools.base import ToolContext, ToolInputError, ToolResult
from codeloop.types import ImageBlock, TextBlock

LIST_RESOURCES = "ListMcpResourcesTool"
READ_RESOURCE = "ReadMcpResourceTool"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


class McpTool:
    """One tool of one server; calls go to the server's connection."""

    def __init__(self, connection: Connection, tool: types.Tool) -> None:
        self.connection = connection
        self.tool = tool
        self.name = tool_name(connection.name, tool.name)
        self.description = tool.description or f"{tool.name} (from MCP server {connection.name})"
        hints = tool.annotations
        self.read_only_hint = bool(hints and hints.readOnlyHint)

    def spec(self) -> ToolSpec:
        schema = {k: v for k, v in self.tool.inputSchema.items() if k != "$schema"}
        schema.setdefault("type", "object")
        return ToolSpec(self.name, self.description, schema)

    def parse(self, raw: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise ToolInputError(f"InputValidationError: {self.name} takes a JSON object")
        return raw

    def is_read_only(self, args: Any) -> bool:
        return False

    def is_concurrency_safe(self, args: Any) -> bool:
        return self.read_only_hint

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        connection = self.connection

        def progress(done: float, total: float | None, message: str | None) -> Awaitable[None]:
            shown = f"{done:g}/{total:g}" if total else f"{done:g}"
            ctx.progress(f"{shown} {message or ''}".strip())
            return asyncio.sleep(0)

        async def run(session: Any) -> types.CallToolResult:
            result: types.CallToolResult = await session.call_tool(
                self.tool.name, args, progress_callback=progress
            )
            return result

        what = f"{self.name}"
        task = asyncio.ensure_future(
            connection.request(run, limit=connection.timeouts.tool, what=what)
        )
        if not await unless_aborted(task, ctx.abort):
            await asyncio.gather(task, return_exceptions=True)
            return ToolResult.error(f"Interrupted: {self.name} was stopped before it finished.")
        try:
            result = task.result()
        except ServerLost as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:  # the server's error reply, or a result the SDK rejected
            return ToolResult.error(f"MCP server {connection.name}: {describe(exc)}")
        return convert_result(result.content, result.structuredContent, result.isError, what)


def convert_result(
    content: Sequence[Any], structured: Mapping[str, Any] | None, is_error: bool, what: str
) -> ToolResult:
    """Text, images and embedded resources as content blocks the model reads."""
    blocks: list[TextBlock | ImageBlock] = []
    for item in content:
        blocks += content_blocks(item)
    if not blocks and structured is not None:
        blocks.append(TextBlock(json.dumps(structured, ensure_ascii=False, indent=2)))
    if not blocks:
        blocks.append(TextBlock(f"{what} returned no content."))
    if all(isinstance(b, TextBlock) for b in blocks):
        text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        return ToolResult(text, is_error=is_error)
    return ToolResult(tuple(blocks), is_error=is_error)


def content_blocks(item: Any) -> list[TextBlock | ImageBlock]:
    if isinstance(item, types.TextContent):
        return [TextBlock(item.text)]
    if isinstance(item, types.ImageContent):
        return [ImageBlock(item.mimeType, item.data)]
    if isinstance(item, types.AudioContent):
        size = len(base64.b64decode(item.data, validate=False))
        return [TextBlock(f"[audio, {item.mimeType}, {size:,} bytes: not shown to the model]")]
    if isinstance(item, types.EmbeddedResource):
        return resource_blocks(item.resource)
    if isinstance(item, types.ResourceLink):
        kind = f", {item.mimeType}" if item.mimeType else ""
        link = f"[resource {item.name}{kind}: {item.uri} ({READ_RESOURCE} reads it)]"
        return [TextBlock(link)]
    return [TextBlock(f"[{getattr(item, 'type', 'unknown')} content: not supported]")]


def resource_blocks(resource: Any) -> list[TextBlock | ImageBlock]:
    """One resource's contents: text as text, an image as an image, other binary described."""
    uri = str(resource.uri)
    if isinstance(resource, types.TextResourceContents):
        return [TextBlock(f"[resource {uri}]\n{resource.text}")]
    mime = resource.mimeType or "application/octet-stream"
    if mime in IMAGE_TYPES:
        return [TextBlock(f"[resource {uri}]"), ImageBlock(mime, resource.blob)]
    size = len(base64.b64decode(resource.blob, validate=False))
    return [TextBlock(f"[resource {uri}: {mime}, {size:,} bytes of binary data, not shown]")]


# --- resources ---------------------------------------------------------------------------------

Servers = Callable[[], Mapping[str, Connection]]


class _ResourceTool:
    """What the two resource tools share: the servers they ask, and reading only."""

    def __init__(self, servers: Servers) -> None:
        self._servers = servers

    def is_read_only(self, args: Any) -> bool:
        return True

    def is_concurrency_safe(self, args: Any) -> bool:
        return True


class ListResourcesTool(_ResourceTool):
    name = LIST_RESOURCES
    description = (
        "List the resources (files, documents, data) that the connected MCP servers offer, "
        "with their URIs; give `server` to list one server's only. Read one with "
        f"{READ_RESOURCE}."
    )

    def spec(self) -> ToolSpec:
        schema = {
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "Only this server's resources"}
            },
            "additionalProperties": False,
        }
        return ToolSpec(self.name, self.description, schema)

    def parse(self, raw: dict[str, Any]) -> dict[str, Any]:
        return _checked(self.name, raw, required=(), optional=("server",))

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        servers = self._servers()
        wanted = args.get("server")
        if wanted is not None and wanted not in servers:
            return ToolResult.error(_unknown_server(wanted, servers))
        chosen = [c for name, c in servers.items() if wanted in (None, name)]
        found: list[dict[str, Any]] = []
        problems: list[str] = []
        for connection in chosen:
            try:
                found += await _resources_of(connection)
            except Exception as exc:
                problems.append(f"{connection.name}: {describe(exc)}")
        text = json.dumps(found, ensure_ascii=False, indent=2) if found else "No resources found."
        if problems:
            text += "\n\nCould not list: " + "; ".join(problems)
        return ToolResult(text, is_error=bool(problems) and not found)


async def _resources_of(connection: Connection) -> list[dict[str, Any]]:
    async def listing(session: Any) -> list[dict[str, Any]]:
        resources = await every(session.list_resources, "resources")
        out = [_resource_entry(r, connection.name) for r in resources]
        caps = connection.capabilities
        if caps is not None and caps.resources is not None:
            # Servers that list resources but not templates answer 'method not found'.
            with contextlib.suppress(McpError):
                templates = await session.list_resource_templates()
                out += [
                    {"uriTemplate": t.uriTemplate, "name": t.name, "server": connection.name}
                    | ({"description": t.description} if t.description else {})
                    for t in templates.resourceTemplates
                ]
        return out

    await connection.session()
    if connection.capabilities is None or connection.capabilities.resources is None:
        return []
    result: list[dict[str, Any]] = await connection.request(
        listing, limit=connection.timeouts.tool, what=f"listing {connection.name}'s resources"
    )
    return result


def _resource_entry(resource: types.Resource, server: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"uri": str(resource.uri), "name": resource.name, "server": server}
    if resource.mimeType:
        entry["mimeType"] = resource.mimeType
    if resource.description:
        entry["description"] = resource.description
    return entry


class ReadResourceTool(_ResourceTool):
    name = READ_RESOURCE
    description = (
        "Read one resource of an MCP server by its URI (as ListMcpResourcesTool lists them)."
    )

    def spec(self) -> ToolSpec:
        schema = {
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server's name"},
                "uri": {"type": "string", "description": "The resource's URI"},
            },
            "required": ["server", "uri"],
            "additionalProperties": False,
        }
        return ToolSpec(self.name, self.description, schema)

    def parse(self, raw: dict[str, Any]) -> dict[str, Any]:
        return _checked(self.name, raw, required=("server", "uri"), optional=())

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        servers = self._servers()
        connection = servers.get(args["server"])
        if connection is None:
            return ToolResult.error(_unknown_server(args["server"], servers))
        try:
            blocks = await read_resource(connection, args["uri"])
        except ServerLost as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:
            return ToolResult.error(f"MCP server {connection.name}: {describe(exc)}")
        if all(isinstance(b, TextBlock) for b in blocks):
            return ToolResult("\n".join(b.text for b in blocks if isinstance(b, TextBlock)))
        return ToolResult(tuple(blocks))


async def read_resource(connection: Connection, uri: str) -> list[TextBlock | ImageBlock]:
    """A resource's contents as blocks (an empty resource says so)."""
    from pydantic import AnyUrl

    async def read(session: Any) -> types.ReadResourceResult:
        result: types.ReadResourceResult = await session.read_resource(AnyUrl(uri))
        return result

    result = await connection.request(read, limit=connection.timeouts.tool, what=f"reading {uri}")
    blocks = [b for item in result.contents for b in resource_blocks(item)]
    return blocks or [TextBlock(f"[resource {uri}: empty]")]


def _checked(
    name: str, raw: Any, *, required: Sequence[str], optional: Sequence[str]
) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ToolInputError(f"InputValidationError: {name} takes a JSON object")
    missing = [key for key in required if not isinstance(raw.get(key), str) or not raw[key]]
    if missing:
        raise ToolInputError(f"InputValidationError: {name} needs {', '.join(missing)}")
    extra = [key for key in raw if key not in (*required, *optional)]
    if extra:
        raise ToolInputError(f"InputValidationError: {name} does not take {', '.join(extra)}")
    if any(raw.get(key) is not None and not isinstance(raw[key], str) for key in optional):
        raise ToolInputError(f"InputValidationError: {name}: {', '.join(optional)} is a string")
    return dict(raw)


def _unknown_server(name: str, servers: Mapping[str, Connection]) -> str:
    known = ", ".join(servers) or "none"
    return f"No MCP server named {name!r} (connected: {known})."
