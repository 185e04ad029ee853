"""The prompt suggestion (--prompt-suggestions) drawn greyed in the empty input, after the
cursor, as Claude Code shows it; the input's Tab key takes it (app.py)."""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput


class GreyedSuggestion(Processor):
    """`current()`: the suggestion to show now (None: none, or not now)."""

    def __init__(self, current: Callable[[], str | None]) -> None:
        self.current = current

    def apply_transformation(self, ti: TransformationInput) -> Transformation:
        suggestion = self.current() if ti.lineno == 0 and not ti.document.text else None
        if not suggestion:
            return Transformation(ti.fragments)
        return Transformation([*ti.fragments, ("class:suggestion", suggestion)])
