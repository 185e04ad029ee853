"""One renderer per output format of `codeloop -p` (text, json, stream-json), behind one small
interface: `start()` before the prompt, `event(e)` for each event, `finish(end, elapsed)` for
the exit status. What every format writes to stderr (retries, warnings, compaction) is
`StderrReport`'s. The json shapes are Claude Code's (codeloop.protocol.json_lines, shared with
the SDK protocol and the Python API), so the programs that read its output read ours unchanged.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Protocol

from codeloop.cli.render.text_renderer import TextRenderer, progress_line
from codeloop.events import Event, LoopEnd
from codeloop.protocol.json_lines import JsonRenderer, StreamJsonRenderer, StructuredResult
from codeloop.protocol.run_report import SessionView


class Renderer(Protocol):
    def start(self) -> None: ...

    def event(self, event: Event) -> None: ...

    def finish(self, end: LoopEnd, elapsed: float) -> int: ...


def write_line(obj: dict[str, Any]) -> None:
    """One JSON object as a line of stdout, flushed: the program reading it sees it now."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def renderer_for(
    fmt: str,
    session: SessionView,
    *,
    verbose: bool,
    structured: StructuredResult | None = None,
) -> Renderer:
    """`structured`: the --json-schema answer, for the result. stream-json also shows the
    model's stream events when the session yields them (ModelStreamed)."""
    if fmt == "json":
        result = JsonRenderer(session, write_line, structured=structured)
        return VerboseJson(result) if verbose else result
    if fmt == "stream-json":
        return StreamJsonRenderer(session, write_line, structured=structured)
    return TextRenderer(session, verbose=verbose)


class VerboseJson:
    """--verbose with the json format: the tool calls on stderr as with text (stream-json
    prints them as lines already)."""

    def __init__(self, inner: JsonRenderer) -> None:
        self.inner = inner

    def start(self) -> None:
        self.inner.start()

    def event(self, event: Event) -> None:
        self.inner.event(event)
        if line := progress_line(event):
            self.inner.report.line(line)

    def finish(self, end: LoopEnd, elapsed: float) -> int:
        return self.inner.finish(end, elapsed)
