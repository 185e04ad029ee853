"""The LSP tool's operations, asked of the server that owns the file and written out for the
model as plain text: workspace-relative paths, 1-based lines and columns as editors show them
(columns count characters; the protocol counts UTF-16 units, converted both ways here)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

from codeloop.lsp.errors import PositionError, ServerFailed, Unsupported
from codeloop.lsp.places import characters, read_text, relative, utf16_units
from codeloop.lsp.server import LanguageServer
from codeloop.lsp.servers import LanguageServers

# What the server must have said it supports for each operation.
CAPABILITIES = {
    "goToDefinition": "definition_provider",
    "findReferences": "references_provider",
    "hover": "hover_provider",
    "documentSymbol": "document_symbol_provider",
    "workspaceSymbol": "workspace_symbol_provider",
    "goToImplementation": "implementation_provider",
    "prepareCallHierarchy": "call_hierarchy_provider",
    "incomingCalls": "call_hierarchy_provider",
    "outgoingCalls": "call_hierarchy_provider",
}
# At most this many locations or symbols are listed; the rest are counted.
MAX_ITEMS = 200


async def answer(
    servers: LanguageServers,
    operation: str,
    path: Path,
    line: int,
    character: int,
    query: str | None = None,
) -> str:
    """What the server says, as text. Raises NoServer, ServerFailed, Unsupported or
    PositionError. A server that dies on the question (it crashed a moment before, or
    because of it) is started again, within its restarts, and asked once more."""
    server = await servers.server_for(path)
    try:
        return await _answer(servers, server, operation, path, line, character, query)
    except ServerFailed:
        if server.running:
            raise
    server = await servers.server_for(path)
    return await _answer(servers, server, operation, path, line, character, query)


async def _answer(
    servers: LanguageServers,
    server: LanguageServer,
    operation: str,
    path: Path,
    line: int,
    character: int,
    query: str | None,
) -> str:
    if not server.supports(CAPABILITIES[operation]):
        raise Unsupported(f"The language server {server.config.name} does not support {operation}.")
    server.open(path, servers.language(path))
    lines = _lines(path)
    position = _position(lines, line, character)
    document = lsp.TextDocumentIdentifier(uri=path.as_uri())
    at = lsp.TextDocumentPositionParams(text_document=document, position=position)
    view = _View(servers.root)
    timeout = servers.request_timeout

    async def ask(make: Callable[[Any], Any]) -> Any:
        return await server.request(make, timeout)

    if operation in ("goToDefinition", "goToImplementation"):
        if operation == "goToDefinition":
            found = await ask(
                lambda c: c.text_document_definition_async(
                    lsp.DefinitionParams(text_document=document, position=position)
                )
            )
        else:
            found = await ask(
                lambda c: c.text_document_implementation_async(
                    lsp.ImplementationParams(text_document=document, position=position)
                )
            )
        return view.definitions(found, operation == "goToImplementation")
    if operation == "findReferences":
        found = await ask(
            lambda c: c.text_document_references_async(
                lsp.ReferenceParams(
                    text_document=document,
                    position=position,
                    context=lsp.ReferenceContext(include_declaration=True),
                )
            )
        )
        return view.references(found or [])
    if operation == "hover":
        found = await ask(
            lambda c: c.text_document_hover_async(
                lsp.HoverParams(text_document=document, position=position)
            )
        )
        return _hover_text(found) or f"No hover information at {view.place(path, at.position)}."
    if operation == "documentSymbol":
        found = await ask(
            lambda c: c.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(text_document=document)
            )
        )
        return view.document_symbols(path, found or [])
    if operation == "workspaceSymbol":
        if not server.loaded and server.supports("document_symbol_provider"):
            # A question about the file waits until the server has loaded the workspace;
            # pyright answers workspace/symbol with nothing until then.
            await ask(
                lambda c: c.text_document_document_symbol_async(
                    lsp.DocumentSymbolParams(text_document=document)
                )
            )
            server.loaded = True
        found = await ask(
            lambda c: c.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query or ""))
        )
        return view.workspace_symbols(query or "", found or [])
    return await _call_hierarchy(server, operation, document, position, view, timeout)


async def _call_hierarchy(
    server: LanguageServer,
    operation: str,
    document: lsp.TextDocumentIdentifier,
    position: lsp.Position,
    view: _View,
    within: float,
) -> str:
    items = await server.request(
        lambda c: c.text_document_prepare_call_hierarchy_async(
            lsp.CallHierarchyPrepareParams(text_document=document, position=position)
        ),
        within,
    )
    if not items:
        return "No function or method at this position (nothing for a call hierarchy)."
    if operation == "prepareCallHierarchy":
        return "\n".join(["Call hierarchy item(s):", *(view.item(i) for i in items)])
    item = items[0]
    incoming = operation == "incomingCalls"

    def calls_of(client: Any) -> Any:
        if incoming:
            return client.call_hierarchy_incoming_calls_async(
                lsp.CallHierarchyIncomingCallsParams(item=item)
            )
        return client.call_hierarchy_outgoing_calls_async(
            lsp.CallHierarchyOutgoingCallsParams(item=item)
        )

    found = await server.request(calls_of, within) or []
    # An incoming call's ranges are in the caller; an outgoing one's in this function.
    calls = [(call.from_ if incoming else call.to, call.from_ranges) for call in found]
    if incoming:
        title = f"{len(calls)} caller(s) of {item.name}:" if calls else f"No calls to {item.name}."
    else:
        title = f"{item.name} calls {len(calls)}:" if calls else f"{item.name} calls nothing."
    lines = [title]
    for other, ranges in calls[:MAX_ITEMS]:
        lines.append(view.item(other))
        if incoming:  # where in the caller the calls are
            where = ", ".join(view.position(other.uri, r.start) for r in ranges)
            lines.append(f"    calls at {where}")
    return "\n".join(lines + _more(len(calls)))


def _more(count: int) -> list[str]:
    return [f"... and {count - MAX_ITEMS} more"] if count > MAX_ITEMS else []


def _lines(path: Path) -> list[str]:
    text = read_text(path)
    if text is None:
        raise PositionError(f"cannot read {path}")
    return text.splitlines()


def _position(lines: Sequence[str], line: int, character: int) -> lsp.Position:
    """The protocol's position for the 1-based line and character."""
    if not 1 <= line <= max(len(lines), 1):
        raise PositionError(f"line {line} is outside the file, which has {len(lines)} lines")
    text = lines[line - 1] if lines else ""
    if not 1 <= character <= len(text) + 1:
        raise PositionError(
            f"character {character} is outside line {line}, which has {len(text)} characters"
        )
    return lsp.Position(line=line - 1, character=utf16_units(text[: character - 1]))


def _hover_text(hover: lsp.Hover | None) -> str:
    if hover is None:
        return ""
    contents: Any = hover.contents
    parts = contents if isinstance(contents, list) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif hasattr(part, "value"):
            texts.append(part.value)
    return "\n\n".join(t.strip() for t in texts if t.strip())


class _View:
    """Paths and positions as the model reads them: relative to the workspace, 1-based."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, list[str]] = {}

    def path(self, uri: str) -> str:
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return uri
        return relative(Path(unquote(parsed.path)), self.root)

    def _line(self, uri: str, line: int) -> str:
        if uri not in self._files:
            text = read_text(Path(unquote(urlparse(uri).path)))
            self._files[uri] = (text or "").splitlines()
        lines = self._files[uri]
        return lines[line] if 0 <= line < len(lines) else ""

    def position(self, uri: str, position: lsp.Position) -> str:
        """`line:column`, 1-based, the column in characters."""
        column = characters(self._line(uri, position.line), position.character)
        return f"{position.line + 1}:{column + 1}"

    def place(self, path: Path, position: lsp.Position) -> str:
        uri = path.as_uri()
        return f"{self.path(uri)}:{self.position(uri, position)}"

    def location(self, uri: str, position: lsp.Position) -> str:
        return f"{self.path(uri)}:{self.position(uri, position)}"

    def definitions(self, found: Any, implementation: bool) -> str:
        targets = [_target(item) for item in _listed(found)]
        what = "implementation" if implementation else "definition"
        if not targets:
            return f"No {what} found."
        if len(targets) == 1:
            uri, position = targets[0]
            label = "Implemented in" if implementation else "Defined in"
            return f"{label} {self.location(uri, position)}"
        lines = [f"Found {len(targets)} {what}s:"]
        lines += [f"  {self.location(uri, position)}" for uri, position in targets[:MAX_ITEMS]]
        return "\n".join(lines + _more(len(targets)))

    def references(self, found: Sequence[lsp.Location]) -> str:
        if not found:
            return "No references found."
        by_file: dict[str, list[lsp.Location]] = {}
        for location in found:
            by_file.setdefault(location.uri, []).append(location)
        lines = [f"Found {len(found)} references across {len(by_file)} files:"]
        shown = 0
        for uri, locations in by_file.items():
            lines += ["", f"{self.path(uri)}:"]
            for location in sorted(locations, key=lambda loc: loc.range.start.line):
                if shown == MAX_ITEMS:
                    break
                shown += 1
                start = location.range.start
                text = self._line(uri, start.line).strip()
                lines.append(f"  Line {self.position(uri, start)}: {text}")
        return "\n".join(lines + _more(len(found)))

    def document_symbols(self, path: Path, found: Sequence[Any]) -> str:
        if not found:
            return f"No symbols found in {self.path(path.as_uri())}."
        uri = path.as_uri()
        lines: list[str] = []

        def walk(symbols: Sequence[Any], depth: int) -> None:
            for symbol in symbols:
                if len(lines) == MAX_ITEMS:
                    return
                start = (
                    symbol.selection_range.start
                    if isinstance(symbol, lsp.DocumentSymbol)
                    else symbol.location.range.start
                )
                kind = _kind(symbol.kind)
                lines.append(
                    f"{'  ' * depth}{symbol.name} ({kind}) - Line {self.position(uri, start)}"
                )
                walk(getattr(symbol, "children", None) or [], depth + 1)

        walk(found, 0)
        return "\n".join([f"Symbols in {self.path(uri)}:", *lines])

    def workspace_symbols(self, query: str, found: Sequence[Any]) -> str:
        if not found:
            return f"No symbols match {query!r}."
        lines = [f"Found {len(found)} symbols matching {query!r}:"]
        for symbol in found[:MAX_ITEMS]:
            location = symbol.location
            place = (
                self.location(location.uri, location.range.start)
                if isinstance(location, lsp.Location)
                else self.path(location.uri)
            )
            container = f" in {symbol.container_name}" if symbol.container_name else ""
            lines.append(f"  {symbol.name} ({_kind(symbol.kind)}){container} - {place}")
        return "\n".join(lines + _more(len(found)))

    def item(self, item: lsp.CallHierarchyItem) -> str:
        detail = f" {item.detail}" if item.detail else ""
        place = self.location(item.uri, item.selection_range.start)
        return f"  {item.name} ({_kind(item.kind)}){detail} - {place}"


def _listed(found: Any) -> list[Any]:
    if found is None:
        return []
    return list(found) if isinstance(found, list | tuple) else [found]


def _target(item: Any) -> tuple[str, lsp.Position]:
    if isinstance(item, lsp.LocationLink):
        return item.target_uri, item.target_selection_range.start
    return item.uri, item.range.start


def _kind(kind: lsp.SymbolKind) -> str:
    try:
        return lsp.SymbolKind(kind).name
    except ValueError:
        return "Symbol"
