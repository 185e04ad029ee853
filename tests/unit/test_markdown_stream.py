"""Streamed markdown splits into final blocks the same way however the stream is cut."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from codeloop.cli.tui.markdown_stream import Block, MarkdownStream

DOC = """\
# Title

First paragraph
goes on here.

```python
a = 1

b = 2
```

- one
- two

Last."""


def blocks_of(pieces: list[str]) -> list[Block]:
    stream = MarkdownStream()
    out: list[Block] = []
    for piece in pieces:
        out += stream.feed(piece)
    return out + stream.finish()


def merged(blocks: list[Block]) -> list[tuple[str, str]]:
    """Code pieces of one fence joined: how they were cut does not matter."""
    out: list[tuple[str, str]] = []
    for block in blocks:
        if block.kind == "code" and not block.opens and out and out[-1][0] == "code":
            out[-1] = ("code", out[-1][1] + block.text)
        elif block.text or block.kind == "code":
            out.append((block.kind, block.text))
    return out


def test_blocks_end_at_blank_lines_and_fences() -> None:
    assert merged(blocks_of([DOC])) == [
        ("markdown", "# Title"),
        ("markdown", "First paragraph\ngoes on here."),
        ("code", "a = 1\n\nb = 2\n"),
        ("markdown", "- one\n- two"),
        ("markdown", "Last."),
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(DOC)), max_size=12))
def test_any_cut_of_the_stream_gives_the_same_blocks(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    pieces = [DOC[a:b] for a, b in zip([0, *points], [*points, len(DOC)], strict=True)]
    assert merged(blocks_of(pieces)) == merged(blocks_of([DOC]))


def test_code_lines_are_final_as_soon_as_they_end() -> None:
    stream = MarkdownStream()
    assert stream.feed("Intro.\n\n```sh\nls -l\nec") == [
        Block("markdown", "Intro."),
        Block("code", "ls -l\n", "sh", opens=True),
    ]
    assert stream.tail == "ec" and stream.in_code == (True, "sh")
    assert stream.feed("ho hi\n```\n") == [Block("code", "echo hi\n", "sh", closes=True)]


def test_the_tail_is_the_unfinished_paragraph() -> None:
    stream = MarkdownStream()
    assert stream.feed("one line\nand a half") == []
    assert stream.tail == "one line\nand a half"
    assert stream.finish() == [Block("markdown", "one line\nand a half")]
    assert stream.tail == ""


def test_an_unclosed_fence_ends_with_the_stream() -> None:
    stream = MarkdownStream()
    stream.feed("```\ncode")
    assert stream.finish() == [Block("code", "code\n", "", opens=True, closes=True)]


def test_a_blank_line_in_code_is_kept_however_it_arrives() -> None:
    from codeloop.cli.tui.render import Renderer

    renderer = Renderer(60, color=False)
    for pieces in (["```\na\n\nb\n```\n"], ["```\na\n", "\n", "b\n```\n"]):
        shown = "".join(renderer.block(b, first=False) for b in blocks_of(pieces))
        assert shown == "    a\n    \n    b\n".replace("    \n", "\n"), repr(shown)
