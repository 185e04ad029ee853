"""Everything the UI prints, rendered with rich to terminal text: markdown, code, tool lines,
diffs, notices. One Renderer per terminal; the width is read at each call, so what is printed
after a resize fits the new width. Colours follow NO_COLOR (and plain terminals get none)."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rich.console import Console, JustifyMethod, RenderableType
from rich.markdown import Heading, Markdown, MarkdownElement
from rich.syntax import Syntax
from rich.text import Text

from codeloop.cli.tui.markdown_stream import Block

BULLET = "⏺ "
INDENT = "  "
RESULT = "  ⎿  "
MAX_DIFF_LINES = 60
CODE_THEME = "monokai"


class _Heading(Heading):
    """Headings at the left, under the answer's bullet (rich centres a top-level one)."""

    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(Heading.LEVEL_ALIGN, "left")


class _Markdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": _Heading,
    }


class Renderer:
    def __init__(self, width: int, *, color: bool = True) -> None:
        self.width = width
        self.color = color
        self._buffer = io.StringIO()
        self._console = Console(
            file=self._buffer,
            width=width,
            force_terminal=color,
            color_system="truecolor" if color else None,
            no_color=not color,
            highlight=False,
            emoji=False,
            legacy_windows=False,
            soft_wrap=False,
        )

    def _render(self, renderable: RenderableType, width: int | None = None) -> str:
        console = self._console
        console.width = max(10, width or self.width)
        self._buffer.seek(0)
        self._buffer.truncate()
        console.print(renderable, end="")
        # rich pads every line to the width: those spaces would only cost bytes
        text = "\n".join(line.rstrip(" ") for line in self._buffer.getvalue().split("\n"))
        return text if text.endswith("\n") or not text else text + "\n"

    # --- the answer ---------------------------------------------------------------------

    def markdown(self, text: str, *, first: bool) -> str:
        """A final markdown block, behind the answer's bullet (first) or indented."""
        rendered = self._render(_Markdown(text, code_theme=CODE_THEME), self.width - 2)
        return _prefixed(rendered, BULLET if first else INDENT, INDENT)

    def code(self, block: Block, *, first: bool) -> str:
        """Lines of a fenced code block, highlighted for its language, blank lines kept."""
        text = block.text[:-1] if block.text.endswith("\n") else block.text
        lines = text.split("\n") if block.text else []
        out = ""
        if lines:
            syntax = Syntax(
                text,
                block.language or "text",
                theme=CODE_THEME,
                word_wrap=True,
                background_color="default",
            )
            rows = self._render(syntax, self.width - 4).split("\n")[:-1]
            rows += [""] * (len(lines) - len(rows))  # rich drops trailing blank lines
            out = "".join(f"{INDENT * 2}{row}".rstrip(" ") + "\n" for row in rows)
        if block.opens and first:
            out = BULLET + "\n" + out
        return out

    def block(self, block: Block, *, first: bool) -> str:
        if block.kind == "code":
            return self.code(block, first=first)
        return self.markdown(block.text, first=first)

    def tail(self, text: str, *, code: bool, language: str, first: bool) -> str:
        """The unfinished part of the answer, for the live region."""
        if not text:
            return ""
        if code:
            return self.code(Block("code", text, language), first=False)
        return self.markdown(text, first=first)

    def thinking(self, text: str) -> str:
        rendered = self._render(Text(text.strip(), style="dim italic"), self.width - 4)
        return _prefixed(rendered, "✻ ", INDENT)

    # --- tools --------------------------------------------------------------------------

    def tool_line(
        self, name: str, argument: str, *, failed: bool = False, running: bool = False
    ) -> str:
        head = Text(BULLET, style="red" if failed else ("yellow" if running else "green"))
        head.append(name, style="bold")
        if argument:
            head.append(f"({argument})")
        head.truncate(self.width, overflow="ellipsis")
        return self._render(head)

    def result_lines(self, lines: Sequence[str], *, error: bool = False, more: int = 0) -> str:
        out = []
        for i, line in enumerate(lines):
            text = Text(RESULT if i == 0 else " " * len(RESULT), style="dim")
            text.append(line, style="red" if error else "")
            text.truncate(self.width, overflow="ellipsis")
            out.append(self._render(text))
        if more:
            note = Text(" " * len(RESULT) + f"… +{more} lines (ctrl+o to expand)", style="dim")
            out.append(self._render(note))
        return "".join(out)

    def diff(self, hunks: Sequence[Mapping[str, Any]], *, limit: int = MAX_DIFF_LINES) -> str:
        """Hunks as coloured lines with their line numbers; past `limit` lines, folded."""
        rows: list[Text] = []
        ends = [int(h["oldStart"]) + int(h["oldLines"]) for h in hunks]
        ends += [int(h["newStart"]) + int(h["newLines"]) for h in hunks]
        number_width = len(str(max(ends, default=1)))
        for index, hunk in enumerate(hunks):
            if index:
                rows.append(Text(" " * len(RESULT) + "⋮", style="dim"))
            old, new = int(hunk["oldStart"]), int(hunk["newStart"])
            for line in hunk["lines"]:
                sign, body = line[:1], line[1:]
                if sign == "-":
                    number, style = old, "red"
                    old += 1
                elif sign == "+":
                    number, style = new, "green"
                    new += 1
                else:
                    number, style = new, "dim"
                    old += 1
                    new += 1
                row = Text(" " * len(RESULT))
                row.append(f"{number:>{number_width}} ", style="dim")
                row.append(f"{sign or ' '} {body}", style=style)
                row.truncate(self.width, overflow="ellipsis")
                rows.append(row)
        shown = rows[:limit]
        out = "".join(self._render(row) for row in shown)
        if len(rows) > limit:
            note = Text(" " * len(RESULT) + f"… +{len(rows) - limit} lines (ctrl+o to expand)")
            note.stylize("dim")
            out += self._render(note)
        return out

    # --- everything else ----------------------------------------------------------------

    def notice(self, level: str, text: str) -> str:
        style = {"error": "bold red", "warning": "yellow"}.get(level, "dim")
        mark = {"error": "✗ ", "warning": "⚠ "}.get(level, "· ")
        return self._render(Text(mark + text, style=style))

    def user(self, text: str) -> str:
        """A prompt as it is sent, kept in the scrollback above its answer."""
        line = Text("> ", style="bold")
        line.append(text)
        return self._render(line)

    def output(self, text: str) -> str:
        """A command's output."""
        return _prefixed(self._render(Text(text), self.width - 5), RESULT, " " * len(RESULT))

    def styled(self, text: str, style: str) -> str:
        return self._render(Text(text, style=style))


def _prefixed(rendered: str, first: str, rest: str) -> str:
    lines = rendered.split("\n")
    while lines and not _visible(lines[-1]):
        lines.pop()
    while lines and not _visible(lines[0]):
        lines.pop(0)
    return "".join((first if i == 0 else rest) + line + "\n" for i, line in enumerate(lines))


_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _visible(line: str) -> bool:
    return bool(_SGR.sub("", line).strip())
