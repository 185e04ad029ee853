"""The first frame (early.py) on a real pseudo-terminal: what it draws, what it echoes, and
that every key typed before the real input runs is handed over as typed."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import termios
from collections.abc import Iterator

import pytest

from codeloop.cli.tui.early import PROMPT, STARTING, EarlyPrompt


class Screen:
    """The terminal's side of a pty: keys go in, what the program wrote comes out."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.seen = b""

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def wait_for(self, text: bytes) -> bytes:
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], 10)
            assert ready, f"{text!r} not written; so far: {self.seen!r}"
            self.seen += os.read(self.master, 4096)
        return self.seen


@pytest.fixture
def terminal() -> Iterator[tuple[Screen, int]]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        yield Screen(master), slave
    finally:
        os.close(master)
        os.close(slave)


def waiting(tty: int, size: int) -> str:
    """`size` bytes still waiting in the terminal for the real input to read."""
    data = b""
    while len(data) < size:
        ready, _, _ = select.select([tty], [], [], 10)
        assert ready, f"only {data!r} waits in the terminal"
        data += os.read(tty, size - len(data))
    return data.decode()


def test_the_frame_is_drawn_and_keys_are_echoed_and_handed_over(
    terminal: tuple[Screen, int],
) -> None:
    screen, tty = terminal
    before = termios.tcgetattr(tty)
    with EarlyPrompt(tty, tty, color=False) as early:
        screen.wait_for(STARTING.encode())
        assert PROMPT.encode() in screen.seen
        screen.type(b"fixd")
        screen.wait_for(b"fixd")
        screen.type(b"\x7fed")
        screen.wait_for(b"\b \bed")
        assert early.handoff() == "fixd\x7fed"
        # The real UI reads the next keys itself, from a terminal still raw: Enter stays \r.
        screen.type(b"\r\x1b[Az")
        assert waiting(tty, 5) == "\r\x1b[Az"
    assert termios.tcgetattr(tty) == before


def test_an_enter_the_line_editing_took_before_it_started_still_sends(
    terminal: tuple[Screen, int],
) -> None:
    screen, tty = terminal
    screen.type(b"typed at once\rhalf")  # a cooked terminal: the line becomes "...\n"
    screen.wait_for(b"half")  # the terminal's own echo: the keys are in its buffer
    with EarlyPrompt(tty, tty, color=True) as early:
        screen.wait_for(STARTING.encode())
        typed = early.handoff()
        assert typed.startswith("typed at once\r")
        # The unfinished line: the reader's, or still waiting when the handoff came first.
        typed += waiting(tty, len("typed at once\rhalf") - len(typed))
    assert typed == "typed at once\rhalf"


def test_a_frame_the_real_ui_never_took_over_is_erased(terminal: tuple[Screen, int]) -> None:
    screen, tty = terminal
    before = termios.tcgetattr(tty)
    with pytest.raises(RuntimeError), EarlyPrompt(tty, tty, color=False):
        screen.wait_for(STARTING.encode())
        raise RuntimeError("the session could not be built")
    screen.wait_for(b"\x1b[2A\x1b[J\x1b[?2004l")  # back to the frame's top, erased, no paste
    assert termios.tcgetattr(tty) == before
