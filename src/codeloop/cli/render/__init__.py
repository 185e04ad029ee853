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

from codeloop.cli.render.text_renderer import TextRenderer
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
        return JsonRenderer(session, write_line, structured=structured)
    if fmt == "stream-json":
        return StreamJsonRenderer(session, write_line, structured=structured)
    return TextRenderer(session, verbose=verbose)
