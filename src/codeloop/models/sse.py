"""Incremental Server-Sent-Events parsing, fed raw bytes as they arrive from the socket.

Both wire formats stream SSE. Parsing bytes ourselves (rather than decoded lines) keeps a CRLF or
a multi-byte UTF-8 character that straddles two network chunks from corrupting an event.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterable, AsyncIterator

from codeloop.system.valueclass import valueclass


@valueclass(slots=True)
class SSEEvent:
    event: str  # "message" when the server gave no `event:` field, as the spec says
    data: str
    id: str = ""


# What `aiter_sse` yields for bytes that completed no event: proof that the server is there.
HEARTBEAT = SSEEvent("", "")


class SSEParser:
    """Feed chunks, get complete events back.

    Follows https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._first_line = True
        self._event = ""
        self._data: list[str] = []
        self._id = ""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer += self._decoder.decode(chunk)
        return self._drain()

    def close(self) -> list[SSEEvent]:
        """End of stream: complete lines are kept, a dangling half line is dropped.

        An event whose terminating blank line never came is still dispatched: some servers omit
        it after their last event, and a stream cut short is detected by its missing terminator
        event, not here.
        """
        self._buffer += self._decoder.decode(b"", final=True)
        if self._buffer.endswith("\r"):
            self._buffer += "\n"  # a final CR ends its line: no LF can follow any more
        events = self._drain()
        self._buffer = ""
        dangling = self._dispatch()
        return [*events, dangling] if dangling else events

    def _drain(self) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        buffer, start = self._buffer, 0
        while (cut := _line_end(buffer, start)) is not None:
            end, next_start = cut
            line = buffer[start:end]
            start = next_start
            if self._first_line:
                self._first_line = False
                line = line.removeprefix("\ufeff")
            event = self._line(line)
            if event is not None:
                events.append(event)
        self._buffer = buffer[start:]
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment (servers send these as keep-alives)
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        # `retry` and unknown fields: nothing we act on
        return None

    def _dispatch(self) -> SSEEvent | None:
        """A blank line ends an event; one with no data field is not dispatched (per the spec)."""
        event = None
        if self._data:
            event = SSEEvent(self._event or "message", "\n".join(self._data), self._id)
        self._event, self._data = "", []
        return event


def _line_end(buffer: str, start: int) -> tuple[int, int] | None:
    """Where the line at `start` ends and the next begins; None until a terminator is certain.

    A lone CR at the very end might be the first half of a CRLF, so it waits for more input.
    """
    lf = buffer.find("\n", start)
    cr = buffer.find("\r", start, lf if lf != -1 else len(buffer))
    if cr == -1:
        return None if lf == -1 else (lf, lf + 1)
    if cr + 1 == len(buffer):
        return None
    return cr, cr + 2 if buffer[cr + 1] == "\n" else cr + 1


async def aiter_sse(
    chunks: AsyncIterable[bytes], *, heartbeats: bool = False
) -> AsyncIterator[SSEEvent]:
    """Events from a byte stream such as `httpx.Response.aiter_bytes()`; with `heartbeats`,
    `HEARTBEAT` for each chunk that completed none (a comment, half an event)."""
    parser = SSEParser()
    async for chunk in chunks:
        events = parser.feed(chunk)
        for event in events:
            yield event
        if heartbeats and not events:
            yield HEARTBEAT
    for event in parser.close():
        yield event
