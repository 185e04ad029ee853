"""The SSE parser must give the same events however the bytes are split on the wire."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from codeloop.models.sse import SSEEvent, SSEParser, aiter_sse

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"


def parse(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


def test_event_and_data_fields() -> None:
    stream = b'event: message_start\ndata: {"a": 1}\n\nevent: ping\ndata: {}\n\n'
    assert parse(stream) == [SSEEvent("message_start", '{"a": 1}'), SSEEvent("ping", "{}")]


def test_an_event_without_a_name_is_a_message() -> None:
    assert parse(b"data: [DONE]\n\n") == [SSEEvent("message", "[DONE]")]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert parse(b"data: one\ndata:two\ndata:  three\n\n") == [
        SSEEvent("message", "one\ntwo\n three")
    ]


def test_comments_and_unknown_fields_are_ignored() -> None:
    stream = b": keep-alive\nretry: 3000\nfoo: bar\nevent: x\n: mid-event comment\ndata: d\n\n"
    assert parse(stream) == [SSEEvent("x", "d")]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert parse(b"event: ping\n\ndata: next\n\n") == [SSEEvent("message", "next")]


def test_empty_data_is_dispatched() -> None:
    assert parse(b"data\n\ndata:\n\n") == [SSEEvent("message", ""), SSEEvent("message", "")]


def test_id_persists_until_changed() -> None:
    events = parse(b"id: 7\ndata: a\n\ndata: b\n\nid: 8\ndata: c\n\n")
    assert [e.id for e in events] == ["7", "7", "8"]


def test_crlf_and_cr_line_endings() -> None:
    expected = [SSEEvent("e", "x"), SSEEvent("message", "y")]
    assert parse(b"event: e\r\ndata: x\r\n\r\ndata: y\r\n\r\n") == expected
    assert parse(b"event: e\rdata: x\r\rdata: y\r\r") == expected


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    assert parse(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [
        SSEEvent("message", "a"),
        SSEEvent("message", "b"),
    ]


def test_utf8_character_split_across_chunks() -> None:
    raw = "data: héllo — ✓\n\n".encode()
    cut = raw.index("✓".encode()) + 1
    assert parse(raw[:cut], raw[cut:]) == [SSEEvent("message", "héllo — ✓")]


def test_leading_bom_is_dropped() -> None:
    assert parse(b"\xef\xbb\xbfdata: x\n\n") == [SSEEvent("message", "x")]


def test_events_come_out_as_soon_as_their_blank_line_arrives() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: first\n") == []
    assert parser.feed(b"\ndata: sec") == [SSEEvent("message", "first")]
    assert parser.feed(b"ond\n\n") == [SSEEvent("message", "second")]


def test_end_of_stream_dispatches_a_complete_last_event_and_drops_a_half_line() -> None:
    assert parse(b"data: last\n") == [SSEEvent("message", "last")]
    assert parse(b"data: last\r") == [SSEEvent("message", "last")]
    assert parse(b"data: whole\n\ndata: hal") == [SSEEvent("message", "whole")]


RECORDED = b"".join(p.read_bytes() for p in sorted(STREAMS.glob("*.sse")))
CRLF = RECORDED.replace(b"\n", b"\r\n")
CUTS = st.lists(st.floats(min_value=0, max_value=1), max_size=40)


def chunked(data: bytes, fractions: list[float]) -> list[bytes]:
    bounds = [0, *sorted(int(f * len(data)) for f in fractions), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


@given(CUTS)
def test_any_chunking_of_recorded_streams_gives_the_same_events(cuts: list[float]) -> None:
    assert parse(*chunked(RECORDED, cuts)) == parse(RECORDED)


@given(CUTS)
def test_any_chunking_with_crlf_gives_the_same_events(cuts: list[float]) -> None:
    assert parse(*chunked(CRLF, cuts)) == parse(RECORDED)


async def test_aiter_sse_reads_an_async_byte_stream() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"event: a\nda"
        yield b"ta: 1\n\ndata: 2\n"

    assert [event async for event in aiter_sse(chunks())] == [
        SSEEvent("a", "1"),
        SSEEvent("message", "2"),
    ]
