"""The session's language servers: each configured one started on the first need of a file of
its language (never at start), shared by the session's agents, started again after a crash
within its `maxRestarts`, and stopped with the session."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeloop.lsp.config import ServerConfig, plugin_lsp_servers
from codeloop.lsp.errors import NoServer, ServerFailed
from codeloop.system.env_values import milliseconds
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:  # the protocol library loads with the first server
    from codeloop.lsp.server import LanguageServer

# The protocol library: the `lsp` extra.
PROTOCOL_PACKAGES = ("pygls", "lsprotocol")
INSTALL_HINT = "pip install 'codeloop[lsp]'"
# How long a request may wait for its answer; CODELOOP_LSP_TIMEOUT_MS changes it.
DEFAULT_REQUEST_SECONDS = 30.0


@valueclass(frozen=False)
class _Slot:
    config: ServerConfig
    server: LanguageServer | None = None
    starts: int = 0
    failure: str | None = None  # why it is down for good
    lock: asyncio.Lock | None = None


class LanguageServers:
    def __init__(
        self,
        configs: Sequence[ServerConfig],
        root: Path,
        *,
        request_timeout: float = DEFAULT_REQUEST_SECONDS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        # The session's environment (its settings' `env` included), which servers start with.
        self.env = env
        self.request_timeout = request_timeout
        self._slots = [_Slot(config) for config in configs]
        self._closed = False

    @property
    def configs(self) -> list[ServerConfig]:
        return [slot.config for slot in self._slots]

    def _slot(self, path: Path) -> _Slot | None:
        suffix = path.suffix.lower()
        return next(
            (s for s in self._slots if suffix and suffix in s.config.extension_to_language), None
        )

    def handles(self, path: Path) -> bool:
        return self._slot(path) is not None

    def language(self, path: Path) -> str:
        slot = self._slot(path)
        return slot.config.extension_to_language[path.suffix.lower()] if slot else ""

    async def server_for(self, path: Path) -> LanguageServer:
        """The running server for `path`, started now if it is not (again, after a crash, while
        its restarts last). NoServer when none handles it; ServerFailed when it cannot run."""
        await load_protocol()
        slot = self._slot(path)
        if slot is None:
            known = sorted({e for s in self._slots for e in s.config.extension_to_language})
            kind = f"{path.suffix} files" if path.suffix else "files without an extension"
            configured = ", ".join(known) or "none"
            raise NoServer(
                f"No language server is configured for {kind} (configured: {configured})."
            )
        if slot.lock is None:
            slot.lock = asyncio.Lock()
        async with slot.lock:
            if slot.server is not None and slot.server.running:
                return slot.server
            if self._closed:
                raise ServerFailed("the session is ending: its language servers are stopped")
            if slot.failure is not None:
                raise ServerFailed(slot.failure)
            return await self._start(slot)

    async def _start(self, slot: _Slot) -> LanguageServer:
        from codeloop.lsp.server import LanguageServer

        config = slot.config
        crashed = slot.server
        if crashed is not None:
            await crashed.stop()
            allowed = config.max_restarts if config.restart_on_crash else 0
            if slot.starts > allowed:
                slot.failure = (
                    f"language server {config.name} stopped and is not started again "
                    f"(restarted {slot.starts - 1} of {allowed} times); its stderr ended with:\n"
                    f"{crashed.stderr_tail()}"
                )
                raise ServerFailed(slot.failure)
        slot.starts += 1
        server = LanguageServer(config, self.root, self.env)
        slot.server = server
        try:
            await server.start()
        except ServerFailed as exc:
            slot.server = None
            slot.failure = str(exc)  # a server that cannot start is not tried on every call
            raise
        if self._closed:  # the session ended while it started: nothing would stop it
            await server.stop()
            raise ServerFailed("the session is ending: its language servers are stopped")
        return server

    def running(self) -> list[LanguageServer]:
        return [s.server for s in self._slots if s.server is not None and s.server.running]

    def status(self) -> list[tuple[str, str]]:
        """(server, its state) for /status: not started, running, failed."""
        states = []
        for slot in self._slots:
            if slot.server is not None and slot.server.running:
                state = f"running (pid {slot.server.pid})"
            elif slot.failure is not None:
                state = "failed: " + slot.failure.splitlines()[0]
            else:
                state = "not started" if slot.server is None else "stopped"
            states.append((slot.config.name, state))
        return states

    async def aclose(self) -> None:
        """Stop every server (shutdown, exit, then kill); none is started after this."""
        self._closed = True
        servers = [s.server for s in self._slots if s.server is not None]
        await asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)


async def load_protocol() -> None:
    """Import the protocol library (pygls, lsprotocol, cattrs: most of a second on a busy
    machine) with the modules that use it, in a thread, the first time: the session's event
    loop goes on meanwhile (a Read that starts a server in the background must not hold up the
    next request, nor an LSP call the calls beside it)."""
    if "codeloop.lsp.answers" not in sys.modules:
        await asyncio.to_thread(importlib.import_module, "codeloop.lsp.answers")


def session_servers(
    declared: Mapping[str, Any],
    plugin_roots: Mapping[str, tuple[Path, Path | None]],
    env: Mapping[str, str],
    cwd: Path,
    warnings: list[str],
) -> LanguageServers | None:
    """The servers the plugins configure (None: none), with the request time limit from
    CODELOOP_LSP_TIMEOUT_MS; nothing starts here."""
    configs, notes = plugin_lsp_servers(declared, plugin_roots)
    warnings += notes
    if not configs:
        return None
    if any(importlib.util.find_spec(name) is None for name in PROTOCOL_PACKAGES):
        names = ", ".join(c.name for c in configs)
        warnings.append(f"language servers ({names}) need the lsp extra: {INSTALL_HINT}")
        return None
    timeout = milliseconds(
        env, "CODELOOP_LSP_TIMEOUT_MS", int(DEFAULT_REQUEST_SECONDS * 1000), warnings
    )
    return LanguageServers(configs, cwd, request_timeout=timeout / 1000)
