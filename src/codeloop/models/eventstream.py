"""AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), which Bedrock's
InvokeModelWithResponseStream answers in, decoded incrementally from raw socket chunks.

A frame: total length and headers length (4 bytes each, big-endian), a CRC32 of those eight
bytes, the headers, the payload, and a CRC32 of everything before it. A frame whose CRC does
not match is a broken stream, worth a resend, never data to act on.
"""

from __future__ import annotations

import struct
import zlib

from codeloop.models.base import Transient
from codeloop.system.valueclass import valueclass

_PRELUDE = 12
_MAX_FRAME = 16 * 1024 * 1024
# Header value types → fixed sizes (None: a 2-byte length precedes the value).
_SIZES: dict[int, int | None] = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 6: None, 7: None, 8: 8, 9: 16}

HeaderValue = str | bytes | int | bool


@valueclass(slots=True)
class Frame:
    headers: dict[str, HeaderValue]
    payload: bytes


class EventStreamDecoder:
    """Feed chunks as they arrive; get each complete frame back once."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[Frame]:
        self._buffer += chunk
        frames = []
        while len(self._buffer) >= _PRELUDE:
            total, headers_length, prelude_crc = struct.unpack_from(">III", self._buffer)
            if zlib.crc32(self._buffer[:8]) != prelude_crc or not 16 <= total <= _MAX_FRAME:
                raise Transient(f"corrupt event-stream frame from {self.url}")
            if len(self._buffer) < total:
                break
            frame = bytes(self._buffer[:total])
            del self._buffer[:total]
            (message_crc,) = struct.unpack_from(">I", frame, total - 4)
            if zlib.crc32(frame[:-4]) != message_crc:
                raise Transient(f"corrupt event-stream frame from {self.url}")
            headers = _headers(frame[_PRELUDE : _PRELUDE + headers_length], self.url)
            frames.append(Frame(headers, frame[_PRELUDE + headers_length : -4]))
        return frames

    @property
    def pending(self) -> bool:
        """Bytes of an unfinished frame are waiting: a stream ending now was cut."""
        return bool(self._buffer)


def _headers(raw: bytes, url: str) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    at = 0
    try:
        while at < len(raw):
            name_length = raw[at]
            name = raw[at + 1 : at + 1 + name_length].decode()
            at += 1 + name_length
            kind = raw[at]
            at += 1
            size = _SIZES[kind]
            if size is None:
                (size,) = struct.unpack_from(">H", raw, at)
                at += 2
            value = raw[at : at + size]
            at += size
            headers[name] = _value(kind, value)
    except (IndexError, KeyError, struct.error, UnicodeDecodeError):
        raise Transient(f"malformed event-stream headers from {url}") from None
    return headers


def _value(kind: int, value: bytes) -> HeaderValue:
    if kind in (0, 1):
        return kind == 0
    if kind == 7:
        return value.decode()
    if kind in (2, 3, 4, 5, 8):
        return int.from_bytes(value, "big", signed=True)
    return value
