"""One renderer per output format of `codeloop -p` (text, json, stream-json), behind one small
interface: `start()` before the prompt, `event(e)` for each event, `finish(end, elapsed)` for
the exit status. What every format writes to stderr (retries, warnings, compaction) is
`StderrReport`'s. The json shapes are Claude Code's, so the programs that read its output read
ours unchanged.
"""

from __future__ import annotations

from typing import Protocol

from codeloop.cli.render.json_lines import JsonRenderer, StreamJsonRenderer, StructuredResult
from codeloop.cli.render.run_report import SessionView
from codeloop.cli.render.text_renderer import TextRenderer
from codeloop.events import Event, LoopEnd


class Renderer(Protocol):
    def start(self) -> None: ...

    def event(self, event: Event) -> None: ...

    def finish(self, end: LoopEnd, elapsed: float) -> int: ...


def renderer_for(
    fmt: str,
    session: SessionView,
    *,
    verbose: bool,
    structured: StructuredResult | None = None,
    partial: bool = False,
) -> Renderer:
    """`structured`: the --json-schema answer, for the result; `partial`: stream-json also
    shows the model's stream events (the caller routes the model calls through `tap`)."""
    if fmt == "json":
        return JsonRenderer(session, structured=structured)
    if fmt == "stream-json":
        return StreamJsonRenderer(session, structured=structured, partial=partial)
    return TextRenderer(session, verbose=verbose)
