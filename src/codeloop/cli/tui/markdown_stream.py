"""Streamed markdown, split into blocks that can no longer change and the tail that still can.

The UI prints a final block to the scrollback once and redraws only the tail, so nothing that
was shown moves again. A block ends at a blank line outside a code fence; inside a fence every
complete line is final at once (a long code block streams line by line instead of growing in
the redrawn region).
"""

from __future__ import annotations

import re
from typing import Literal

from codeloop.system.valueclass import valueclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")


@valueclass(slots=True)
class Block:
    kind: Literal["markdown", "code"]
    text: str  # code: whole lines, each ending in a newline (a blank line is "\n")
    language: str = ""
    # code: the first lines of the fence, and whether the fence closed with this piece
    opens: bool = False
    closes: bool = False


class MarkdownStream:
    def __init__(self) -> None:
        self._partial = ""  # the line still being streamed
        self._lines: list[str] = []  # complete lines of the block in progress
        self._fence: str | None = None  # the open fence's marker (``` or ~~~, with its length)
        self._language = ""
        self._fence_started = False  # a code piece of this fence was already given out

    def feed(self, text: str) -> list[Block]:
        """Take more streamed text; return the blocks it completed."""
        done: list[Block] = []
        data = self._partial + text
        *complete, self._partial = data.split("\n")
        for line in complete:
            self._line(line, done)
        if self._fence is not None and self._lines:
            done.append(self._code_piece(closes=False))
        return done

    @property
    def tail(self) -> str:
        """What is not final yet: the block in progress (for a fence, its unfinished line)."""
        text = "\n".join([*self._lines, self._partial]) if self._lines else self._partial
        return text

    @property
    def in_code(self) -> tuple[bool, str]:
        return self._fence is not None, self._language

    def finish(self) -> list[Block]:
        """The stream ended: everything left is final."""
        done: list[Block] = []
        if self._partial:
            self._line(self._partial, done)
            self._partial = ""
        if self._fence is not None:
            if self._lines or not self._fence_started:
                done.append(self._code_piece(closes=True))
            self._fence = None
        elif self._lines:
            done.append(self._markdown())
        return done

    def _line(self, line: str, done: list[Block]) -> None:
        if self._fence is not None:
            stripped = line.strip()
            marker = self._fence
            if stripped.startswith(marker[0] * len(marker)) and not stripped.strip(marker[0]):
                done.append(self._code_piece(closes=True))
                self._fence = None
            else:
                self._lines.append(line)
            return
        opening = _FENCE.match(line)
        if opening:
            if any(x.strip() for x in self._lines):
                done.append(self._markdown())
            self._lines = []
            self._fence, self._language = opening.group(1), opening.group(2)
            self._fence_started = False
            return
        if not line.strip():
            if any(x.strip() for x in self._lines):
                done.append(self._markdown())
            self._lines = []
            return
        self._lines.append(line)

    def _markdown(self) -> Block:
        block = Block("markdown", "\n".join(self._lines))
        self._lines = []
        return block

    def _code_piece(self, *, closes: bool) -> Block:
        block = Block(
            "code",
            "".join(f"{line}\n" for line in self._lines),
            self._language,
            opens=not self._fence_started,
            closes=closes,
        )
        self._fence_started = True
        self._lines = []
        return block
