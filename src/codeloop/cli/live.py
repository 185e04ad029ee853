"""The answer as it streams to a terminal, and how a discarded one is taken back.

The loop may void an answer it already streamed (a resend after a cut stream, a larger output
limit, a model fallback). A terminal that showed it must not leave it looking final: the rows
it took are erased, or, when part of it has scrolled out of reach, it is marked as discarded.
Lines other writers put on the same screen meanwhile (warnings on stderr) are counted too.
"""

from __future__ import annotations

import shutil
import unicodedata
from typing import TextIO


class LiveText:
    def __init__(self, out: TextIO, *, shares_screen: bool) -> None:
        """`shares_screen`: stderr is the same terminal, so its lines count as rows here."""
        self.out = out
        self.shares_screen = shares_screen
        self.at_line_start = True
        self._rows = 0  # rows below the first one of the answer being streamed
        self._col = 0
        self._open = False  # an answer is on screen that may still be discarded

    def write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self._open = True
        self._advance(text)
        self.at_line_start = text.endswith("\n")

    def end_line(self) -> None:
        """Finish a streamed line before something else is printed."""
        if not self.at_line_start:
            self.write("\n")

    def other_line(self, text: str) -> None:
        """A line another writer printed on this screen (a warning on stderr)."""
        if self._open and self.shares_screen:
            self._advance(text + "\n")

    def settle(self) -> None:
        """The answer on screen is final: it is no longer taken back."""
        self._open, self._rows, self._col = False, 0, 0

    def discard(self, reason: str) -> None:
        """Take back the answer streamed since the last `settle`."""
        if not self._open:
            return
        self.end_line()
        height = shutil.get_terminal_size().lines
        if self._rows < height:
            # Up to the answer's first row, then clear from there to the end of the screen.
            up = f"\x1b[{self._rows}A" if self._rows else ""
            self.out.write(f"\r{up}\x1b[J")
        else:
            self.out.write(f"[codeloop: the answer above was discarded ({reason})]\n")
        self.out.flush()
        self.at_line_start = True
        self.settle()

    def _advance(self, text: str) -> None:
        columns = max(shutil.get_terminal_size().columns, 1)
        for char in text:
            if char == "\n":
                self._rows, self._col = self._rows + 1, 0
                continue
            width = _width(char)
            if self._col + width > columns:  # the terminal wraps before this character
                self._rows, self._col = self._rows + 1, 0
            self._col += width


def _width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
