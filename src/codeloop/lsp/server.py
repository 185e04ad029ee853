"""One running language server: its process (a process group of its own, watched by the reaper
so that it dies with codeloop, `kill -9` included), the protocol through pygls's client, the
documents it has open and the diagnostics it published.

Documents are synced from disk: before every request and after every edit, each file the
server has open is compared with what it was last sent, and a changed one goes over whole
(`didChange` then `didSave`). So the server sees the file as it is, whoever changed it (Edit,
Write, a `sed -i` through Bash).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from codeloop._version import __version__
from codeloop.lsp.config import ServerConfig
from codeloop.lsp.errors import ServerFailed
from codeloop.lsp.places import read_text
from codeloop.system.procs import DRAIN_SECONDS, child_env, kill_group, process_running
from codeloop.system.reaper import REAPER
from codeloop.system.valueclass import valueclass

# How long the diagnostics of a server that gives no versions must rest to count as settled.
SETTLE_SECONDS = 0.3
# How much of the server's stderr (and log messages) is kept for the message when it fails.
STDERR_TAIL_LINES = 20
MAX_LINE_CHARS = 500
T = TypeVar("T")
# pygls logs what it does not handle as warnings; with no handler of codeloop's they would be
# printed on the terminal by logging's last resort.
logging.getLogger("pygls").addHandler(logging.NullHandler())


@valueclass(frozen=False)
class _Document:
    version: int
    text: str
    language: str


@valueclass(frozen=False)
class Published:
    """What the server last said of one file's diagnostics, and how often it has said it."""

    diagnostics: list[lsp.Diagnostic] = field(default_factory=list)
    count: int = 0
    # The document version they are for, when the server says.
    version: int | None = None


class LanguageServer:
    """Started by `start`, used by one session (and its sub-agents), ended by `stop`."""

    def __init__(
        self, config: ServerConfig, root: Path, env: Mapping[str, str] | None = None
    ) -> None:
        self.config = config
        # A relative workspaceFolder is the session's folder's.
        self.root = root / config.workspace_folder if config.workspace_folder else root
        self._env = os.environ if env is None else env
        self._client: LanguageClient | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._documents: dict[Path, _Document] = {}
        self.published: dict[str, Published] = {}
        # Set (and replaced) at each publishDiagnostics: who waits for fresh ones.
        self._news = asyncio.Event()
        self.capabilities: lsp.ServerCapabilities | None = None
        self._drain: asyncio.Future[None] | None = None
        # Whether the server has answered a question about a file: it has loaded the workspace.
        self.loaded = False
        # An edit waited in vain and the server has never published a diagnostic.
        self.silent = False

    @property
    def running(self) -> bool:
        """Whether the process runs: asyncio may learn late that it died (kill -9)."""
        process = self._process
        return process is not None and process.returncode is None and process_running(process.pid)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def supports(self, capability: str) -> bool:
        """Whether the server said at initialize that it has `capability` (a field of
        ServerCapabilities, e.g. `implementation_provider`)."""
        return bool(getattr(self.capabilities, capability, None))

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    async def start(self) -> None:
        """Start the process and initialize it, within the configured startup time."""
        client = LanguageClient("codeloop", __version__)
        self._listen(client)
        REAPER.ready()
        try:
            await client.start_io(
                self.config.command,
                *self.config.args,
                cwd=str(self.root),
                env=child_env({**self._env, **self.config.env}),
                start_new_session=True,
            )
        except OSError as exc:
            raise ServerFailed(
                f"cannot start {self.config.command}: {exc.strerror or exc}"
            ) from None
        process: asyncio.subprocess.Process = client._server  # type: ignore[assignment]
        REAPER.watch(process.pid)
        self._client, self._process = client, process
        self._drain = asyncio.ensure_future(self._drain_stderr(process))
        try:
            result = await self._bounded(
                client.initialize_async(self._initialize_params()),
                self.config.startup_timeout,
                "initialize",
            )
        except ServerFailed:
            await self.stop()
            raise
        self.capabilities = result.capabilities
        client.initialized(lsp.InitializedParams())
        if self.config.settings is not None:
            client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=self.config.settings)
            )

    def _initialize_params(self) -> lsp.InitializeParams:
        uri = self.root.as_uri()
        return lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri,
            root_path=str(self.root),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri, name=self.root.name)],
            initialization_options=self.config.initialization_options,
            capabilities=lsp.ClientCapabilities(
                general=lsp.GeneralClientCapabilities(
                    position_encodings=[lsp.PositionEncodingKind.Utf16]
                ),
                # Not `workspace_folders`: pyright then waits for a folder request it never
                # sends, and answers nothing.
                workspace=lsp.WorkspaceClientCapabilities(configuration=True),
                text_document=lsp.TextDocumentClientCapabilities(
                    synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
                    publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                        version_support=True
                    ),
                    hover=lsp.HoverClientCapabilities(
                        content_format=[lsp.MarkupKind.PlainText, lsp.MarkupKind.Markdown]
                    ),
                    document_symbol=lsp.DocumentSymbolClientCapabilities(
                        hierarchical_document_symbol_support=True
                    ),
                    definition=lsp.DefinitionClientCapabilities(link_support=True),
                    implementation=lsp.ImplementationClientCapabilities(link_support=True),
                    call_hierarchy=lsp.CallHierarchyClientCapabilities(),
                ),
            ),
        )

    def _listen(self, client: LanguageClient) -> None:
        """What the server sends us: diagnostics, and the requests servers expect answered."""

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]
        def diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            entry = self.published.setdefault(params.uri, Published())
            entry.diagnostics = list(params.diagnostics)
            entry.count += 1
            entry.version = params.version
            self._news.set()
            self._news = asyncio.Event()

        @client.feature(lsp.WINDOW_LOG_MESSAGE)  # type: ignore[untyped-decorator]
        def log(params: lsp.LogMessageParams) -> None:
            self._stderr.append(params.message)

        @client.feature(lsp.WINDOW_SHOW_MESSAGE)  # type: ignore[untyped-decorator]
        def show(params: lsp.ShowMessageParams) -> None:
            self._stderr.append(params.message)

        @client.feature(lsp.WORKSPACE_CONFIGURATION)  # type: ignore[untyped-decorator]
        def configuration(params: lsp.ConfigurationParams) -> list[Any]:
            return [_section(self.config.settings, item.section) for item in params.items]

        @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)  # type: ignore[untyped-decorator]
        def register(params: Any) -> None:
            return None

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)  # type: ignore[untyped-decorator]
        def progress(params: Any) -> None:
            return None

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        """Read stderr to its end (a full pipe would stall the server), keeping its tail."""
        assert process.stderr is not None
        partial = ""
        with contextlib.suppress(OSError):
            # In blocks, not lines: a line longer than the stream's limit must not stop it.
            while block := await process.stderr.read(65536):
                *lines, partial = (partial + block.decode(errors="replace")).split("\n")
                self._stderr.extend(line.rstrip()[:MAX_LINE_CHARS] for line in lines)
                partial = partial[-MAX_LINE_CHARS:]
        if partial.strip():
            self._stderr.append(partial.rstrip())

    async def request(self, make: Callable[[LanguageClient], Awaitable[T]], within: float) -> T:
        """One request, with the open documents synced first; ServerFailed if the server is
        gone or does not answer within `within` seconds."""
        client = self._live_client()
        self.sync()
        return await self._bounded(make(client), within, "request")

    async def _bounded(self, pending: Awaitable[T], within: float, what: str) -> T:
        try:
            return await asyncio.wait_for(pending, within)
        except TimeoutError:
            raise ServerFailed(
                self._failure(f"did not answer the {what} within {within:g} s")
            ) from None
        except RuntimeError:  # pygls: the process exited with the request pending
            raise ServerFailed(self._failure(await self._ended())) from None
        except Exception as exc:  # an error response (JsonRpcException) or a broken stream
            if not self.running:
                raise ServerFailed(self._failure(await self._ended())) from None
            raise ServerFailed(f"{self.config.name} answered with an error: {exc}") from None

    async def _ended(self) -> str:
        """How a process that stopped ended, once its last words are read (so that the
        message carries them)."""
        process = self._process
        with contextlib.suppress(TimeoutError):
            if self._drain is not None:
                await asyncio.wait_for(asyncio.shield(self._drain), DRAIN_SECONDS)
            if process is not None:
                await asyncio.wait_for(process.wait(), DRAIN_SECONDS)
        if process is None or process.returncode is None:
            return "stopped answering"
        if process.returncode < 0:
            return f"was killed by signal {-process.returncode}"
        return f"exited with status {process.returncode}"

    def _failure(self, what: str) -> str:
        tail = self.stderr_tail()
        said = f"; what it last said:\n{tail}" if tail else ""
        return f"language server {self.config.name} {what}{said}"

    def _live_client(self) -> LanguageClient:
        if self._client is None or not self.running:
            raise ServerFailed(self._failure("is not running"))
        return self._client

    def open(self, path: Path, language: str, text: str | None = None) -> bool:
        """Have the server hold `path` as it is on disk now (or as `text`, what it held when
        it was read); True when that was news to it (opened, or changed since it was last
        sent)."""
        client = self._live_client()
        text = read_text(path) if text is None else text
        if text is None:
            return False
        uri = path.as_uri()
        known = self._documents.get(path)
        if known is None:
            self._documents[path] = _Document(1, text, language)
            item = lsp.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
            client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
            return True
        if known.text == text:
            return False
        known.version += 1
        known.text = text
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=known.version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        return True

    def sync(self) -> None:
        """Every open document as it is on disk now (a file deleted meanwhile is closed)."""
        for path, document in list(self._documents.items()):
            if path.is_file():
                self.open(path, document.language)
                continue
            del self._documents[path]
            if self._client is not None and self.running:
                self._client.text_document_did_close(
                    lsp.DidCloseTextDocumentParams(
                        text_document=lsp.TextDocumentIdentifier(uri=path.as_uri())
                    )
                )

    def is_open(self, path: Path) -> bool:
        return path in self._documents

    def version(self, path: Path) -> int:
        """The version of `path` the server was last sent (0: it does not hold it)."""
        document = self._documents.get(path)
        return document.version if document is not None else 0

    def fresh(self, uri: str, count: int, version: int) -> bool:
        """Whether the server has published for `uri` since it did `count` times, for
        `version` of it or later (when it says which)."""
        entry = self.published.get(uri)
        if entry is None or entry.count <= count:
            return False
        return entry.version is None or entry.version >= version

    async def published_after(self, uri: str, count: int, version: int, within: float) -> bool:
        """Wait until `fresh(uri, count, version)`; False if not within `within` seconds. A
        server that does not say which version its diagnostics are for (typescript-language-
        server) may first publish what it found before the change: its publications are
        awaited until they pause for SETTLE_SECONDS."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not self.fresh(uri, count, version):
            if not await self._next_news(deadline - loop.time()):
                return False
        while self.published[uri].version is None:
            seen = self.published[uri].count
            if not await self._next_news(min(SETTLE_SECONDS, deadline - loop.time())):
                break
            if self.published[uri].count == seen:
                continue  # news of another file
        return True

    async def _next_news(self, within: float) -> bool:
        """Wait for the server's next publication; False if none within `within` seconds."""
        if within <= 0 or not self.running:
            return False
        try:
            await asyncio.wait_for(self._news.wait(), within)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        """shutdown and exit, then whatever of the process group is left is killed."""
        client, process = self._client, self._process
        if process is None:
            return
        if client is not None and process.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.shutdown_async(None), self.config.shutdown_timeout)
                client.exit(None)
                await asyncio.wait_for(process.wait(), self.config.shutdown_timeout)
        await kill_group(process.pid)
        REAPER.forget(process.pid)
        if client is not None:
            client._stop_event.set()
            for task in client._async_tasks:
                task.cancel()


def _section(settings: Any, section: str | None) -> Any:
    """The part of the configured `settings` a `workspace/configuration` item asks for
    (dotted, as VS Code settings are)."""
    value = settings
    for key in (section or "").split(".") if section else ():
        value = value.get(key) if isinstance(value, dict) else None
    return value
