"""A model's tool calls read the way the session's tools are named, whatever the provider.

Weak models spell a tool `bash` for `Bash`, and some write the call in their answer's text
instead of calling the tool. The assembler of every answer hands its blocks through a
`CallReader`, so the history (and the transcript) records the call the tool actually ran:
under the tool's real name, and as a tool_use block.

A call written as text is executed, not answered with a format error: the model meant the
call, running it costs no extra turn, and a weak model that is told its format was wrong
often writes the same thing again. An answer is never taken as final while it holds a call:
the result goes back to the model, which then answers (or calls again) as usual.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from codeloop.tool_names import ALIASES, canonical
from codeloop.types import ContentBlock, TextBlock, ToolUseBlock


class CallReader:
    def __init__(self, names: Iterable[str]) -> None:
        self._names = frozenset(names)
        spellings = {*self._names, *(old for old, new in ALIASES.items() if new in self._names)}
        by_folded: dict[str, set[str]] = {}
        for name in spellings:
            by_folded.setdefault(name.casefold(), set()).add(name)
        # Only a spelling that fits one name is read as that name: `bash` is Bash, but when
        # both `Foo` and `foo` exist, `FOO` is neither.
        self._folded = {key: found.pop() for key, found in by_folded.items() if len(found) == 1}

    def real_name(self, name: str) -> str | None:
        """The tool `name` means (itself, its current name if it is an old one, either in
        another case), or None when it means none."""
        for spelled in (name, self._folded.get(name.casefold())):
            if spelled is not None and (current := canonical(spelled)) in self._names:
                return current
        return None

    def named(self, block: ToolUseBlock) -> ToolUseBlock:
        """The call under the real name of the tool it means when it misspells it (unchanged
        when it names a tool exactly, an earlier name included, which the tools answer to as
        Claude Code's do; and when it means none: the executor refuses it, naming the tools
        there are)."""
        if canonical(block.name) in self._names:
            return block
        real = self.real_name(block.name)
        if real is None or real == block.name:
            return block
        return ToolUseBlock(block.id, real, block.input, block.input_error)

    def written(self, blocks: tuple[ContentBlock, ...]) -> tuple[ContentBlock, ...] | None:
        """An answer without tool calls whose text writes some: the blocks with each such
        text cut down to the words around the calls, and the calls appended as tool_use
        blocks. None when there is nothing to read (or the answer calls tools already)."""
        if any(isinstance(block, ToolUseBlock) for block in blocks):
            return None
        # Read once an answer is over, never before the first request: loaded then.
        from codeloop.models.written_calls import find_calls

        kept: list[ContentBlock] = []
        calls: list[ToolUseBlock] = []
        for block in blocks:
            found = find_calls(block.text, self.real_name) if isinstance(block, TextBlock) else None
            if found is None:
                kept.append(block)
                continue
            if found.rest:
                kept.append(TextBlock(found.rest))
            for call in found.calls:
                written = ToolUseBlock(
                    f"toolu_written_{uuid.uuid4().hex[:20]}",
                    call.name,
                    call.input,
                    call.input_error,
                )
                calls.append(self.named(written))
        return (*kept, *calls) if calls else None
