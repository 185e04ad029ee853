"""The prompt before prompt_toolkit: loading it and the UI takes longer than a person takes to
start typing, so the first frame (the input line and the footer) is drawn at once with plain
writes, and every key typed meanwhile is read raw, echoed, and kept, to be handed to the real
input when it starts (prompt_toolkit's typeahead): nothing typed is lost, and a key typed
before it is drawn counts too.

Standard library only, and none of it slow to import: this runs before anything else loads.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import select
import struct
import termios
import threading
from types import TracebackType
from typing import Self

PROMPT = "❯ "  # the input's prompt, here and in the real UI (app.py)
STARTING = "starting…"  # the footer until the session is built
BOLD, GREY, RESET = "\x1b[1m", "\x1b[90m", "\x1b[0m"
PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"  # bracketed paste: a paste stays one text
ROWS_ABOVE = 2  # the UI's first rows above its input line: the live region and a gap
BACKSPACES = ("\x7f", "\b")


class EarlyPrompt:
    """The first frame, on `fd_in`/`fd_out` in raw mode (as prompt_toolkit sets it), with a
    thread that reads and echoes keys until `handoff`. Leaving the block puts the terminal
    back as it was, and erases the frame when the real UI never took it over."""

    def __init__(self, fd_in: int, fd_out: int, *, color: bool) -> None:
        self.fd_in, self.fd_out, self.color = fd_in, fd_out, color
        self._saved = termios.tcgetattr(fd_in)
        self._typed = bytearray()
        self._line = ""  # what the frame shows typed
        self._echoing = True  # until a key that is not plain text: the real UI shows the rest
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._stop_r, self._stop_w = os.pipe()
        self._reader = threading.Thread(target=self._read, name="early-keys", daemon=True)
        self._handed_off = False

    def __enter__(self) -> Self:
        self._raw_mode()
        self._columns = os.get_terminal_size(self.fd_out).columns or 80  # 0: not told
        footer = f"{GREY}{STARTING}{RESET}" if self.color else STARTING
        frame = "\r\n" * ROWS_ABOVE + f"{BOLD}{PROMPT}{RESET}\r\n{footer}\x1b[1A\r\x1b[3G"
        # From the start of the line down, as the real UI draws: what the terminal echoed of
        # keys typed as codeloop started goes (they are shown again on the input line).
        self._write(f"{PASTE_ON}\r\x1b[J{frame}")
        self._reader.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._handed_off:
            self._stop()
            self._write(f"\r\x1b[{ROWS_ABOVE}A\x1b[J{PASTE_OFF}")
        termios.tcsetattr(self.fd_in, termios.TCSANOW, self._saved)
        os.close(self._stop_r)
        os.close(self._stop_w)

    def handoff(self) -> str:
        """Stop reading, put the cursor where the frame starts (the real UI draws over it),
        and return what was typed, as the real input decodes it."""
        self._stop()
        self._handed_off = True
        self._write(f"\r\x1b[{ROWS_ABOVE}A")
        return self._typed.decode("utf-8", errors="surrogateescape")

    def _raw_mode(self) -> None:
        """prompt_toolkit's raw mode. Whole lines the terminal's line editing already took
        are read at once: an Enter in them was made a newline (ICRNL), which is turned back,
        so that it still sends."""
        pending = struct.unpack("i", fcntl.ioctl(self.fd_in, termios.FIONREAD, b"\0" * 4))[0]
        attrs = termios.tcgetattr(self.fd_in)
        canonical = bool(attrs[3] & termios.ICANON)
        translated = canonical and bool(attrs[0] & termios.ICRNL)
        attrs[0] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
        attrs[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
        attrs[6][termios.VMIN] = 1
        termios.tcsetattr(self.fd_in, termios.TCSANOW, attrs)
        if not (pending and canonical):
            return
        # In canonical mode only whole lines count as pending: read exactly those.
        lines = b""
        while len(lines) < pending:
            chunk = os.read(self.fd_in, pending - len(lines))
            if not chunk:
                break
            lines += chunk
        self._typed += lines.replace(b"\n", b"\r") if translated else lines
        self._echoing = False  # they were sent (or wait to be): the real UI shows them

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd_in, self._stop_r], [], [])
            if self.fd_in in ready:
                data = os.read(self.fd_in, 4096)
                if not data:
                    return
                self._typed += data
                self._echo(self._decoder.decode(data))
            if self._stop_r in ready:
                return

    def _echo(self, text: str) -> None:
        """Plain ASCII typed on the input line, and Backspace; anything else (Enter, a
        control key, an escape sequence, wide characters) stops the echo: the real UI, when
        it starts, shows what it did."""
        out = []
        for char in text:
            if not self._echoing:
                break
            if char in BACKSPACES:
                if self._line:
                    self._line = self._line[:-1]
                    out.append("\b \b")
            elif " " <= char <= "~" and len(PROMPT) + len(self._line) + 1 < self._columns:
                self._line += char
                out.append(char)
            else:
                self._echoing = False
        if out:
            self._write("".join(out))

    def _stop(self) -> None:
        if self._reader.is_alive():
            os.write(self._stop_w, b"x")
            self._reader.join()

    def _write(self, text: str) -> None:
        data = text.encode()
        while data:
            data = data[os.write(self.fd_out, data) :]
