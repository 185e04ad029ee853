"""The protocol's own streams: the process's real stdin/stdout, moved to private descriptors
before anything runs, so no print, warning or child process can write into the ACP stream
(fd 1 becomes stderr, fd 0 /dev/null). The SDK's own stdio needs pipes (it hangs on
/dev/null and refuses regular files, which CI and redirections give): those are served by a
thread and blocking writes instead."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
import threading
from typing import Any

# A JSON-RPC line may carry images: the SDK's own limit (50 MB), not asyncio's 64 KB.
LINE_LIMIT = 50 * 1024 * 1024


def claim_stdio() -> tuple[int, int]:
    """The real stdin and stdout as private descriptors; from now on fd 0 reads /dev/null and
    fd 1 (and `print`) write to stderr."""
    sys.stdout.flush()
    proto_in, proto_out = os.dup(0), os.dup(1)  # not inherited by children (PEP 446)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def quiet_sdk_logs(command: str = "acp") -> None:
    """Warnings on stderr, one line each, named `codeloop COMMAND:`: the SDK logs a whole
    traceback for a line that is not JSON (and drops it, as JSON-RPC can only answer a
    message it can read)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"codeloop {command}: %(message)s"))
    handler.addFilter(_without_traceback)
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


def _without_traceback(record: logging.LogRecord) -> bool:
    record.exc_info = None
    record.exc_text = None
    return True


async def protocol_streams(
    proto_in: int, proto_out: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams over the two descriptors, whatever they are (pipe, socket, tty, file,
    /dev/null)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    if _pollable(proto_in):
        protocol = asyncio.StreamReaderProtocol(reader)
        await loop.connect_read_pipe(lambda: protocol, os.fdopen(proto_in, "rb", buffering=0))
    else:
        _feed_from_thread(loop, reader, proto_in)
    drain = _DrainProtocol()
    if _pollable(proto_out):
        transport, _ = await loop.connect_write_pipe(
            lambda: drain, os.fdopen(proto_out, "wb", buffering=0)
        )
    else:
        transport = _BlockingWriter(proto_out)
    writer = asyncio.StreamWriter(transport, drain, None, loop)
    return reader, writer


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int
) -> None:
    def pump() -> None:
        try:
            while data := os.read(fd, 65536):
                loop.call_soon_threadsafe(reader.feed_data, data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(RuntimeError):  # the loop closed first
                loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class _DrainProtocol(asyncio.Protocol):
    """What StreamWriter.drain waits on: the transport's pause/resume."""

    def __init__(self) -> None:
        self._resumed: asyncio.Future[None] | None = None
        self._closed = False

    def pause_writing(self) -> None:
        if self._resumed is None:
            self._resumed = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)
        self._resumed = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.resume_writing()

    async def _drain_helper(self) -> None:
        if self._closed:
            raise ConnectionResetError("the editor closed the connection")
        if self._resumed is not None:
            await self._resumed


class _BlockingWriter(asyncio.WriteTransport):
    """Writes straight to a descriptor asyncio cannot poll (a regular file, a tty)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: Any) -> None:
        if self._closing:
            return
        view = memoryview(bytes(data))
        while view:
            view = view[os.write(self._fd, view) :]

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def abort(self) -> None:
        self._closing = True
