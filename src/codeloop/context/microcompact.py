"""L2, microcompact: fold old tool results to one-line stubs, without a model call.

A stub names the tool, its target (file, command, pattern) and the size of what it returned,
so the model knows what it saw and can run the call again. Only results the model has already
answered fold (an assistant message follows them): the results a request carries to the model
for the first time reach it as the tools gave them. Results a newer Read (or Write) of the same
file made stale go first, wherever they are; then the oldest results, never those of the last
few turns (within a token allowance; the latest turn is always kept). Only the content of a
tool_result changes, so every tool_use keeps its one answer. Each fold is returned as a
`ResultRecord`, for the transcript and a later compaction to report.

The pipeline folds in rare batches (once the history nearly fills the room the overhead
leaves under the autocompact threshold, down to a quarter of that room: tokens.Shares) rather
than a little every turn: between batches each request extends the one before byte for byte,
which is all a prompt cache (llama.cpp's KV cache, a provider's) can reuse.
"""

from __future__ import annotations

import os.path
from collections.abc import Iterator, Sequence
from dataclasses import replace

from codeloop.context.budget import saved_path
from codeloop.context.tokens import estimate_text, result_tokens
from codeloop.events import ResultFate, ResultRecord
from codeloop.history_fold import HistoryFold
from codeloop.system.valueclass import valueclass
from codeloop.text import human_size
from codeloop.types import ContentBlock, Message, ToolResultBlock, ToolUseBlock

FOLDED_PREFIX = "[Folded"
# Smaller results are left alone: a stub would save next to nothing.
MIN_FOLD_TOKENS = 200
TARGET_CHARS = 120
_TARGET_FIELDS = ("file_path", "command", "pattern", "path", "url", "query", "description")


@valueclass(slots=True)
class KeepRecent:
    """The results microcompact leaves alone unless they are superseded."""

    turns: int = 3
    tokens: int = 40_000


@valueclass(slots=True)
class _Result:
    message: int  # index in the history
    block: int  # index in that message's content
    result: ToolResultBlock
    use: ToolUseBlock | None
    turn: int  # how many tool-calling turns back: 0 is the latest
    tokens: int
    answered: bool  # an assistant message follows it: the model has seen it

    @property
    def key(self) -> tuple[int, int]:
        return self.message, self.block

    def record(self, fate: ResultFate) -> ResultRecord:
        name = self.use.name if self.use is not None else "tool"
        path = saved_path(self.result.text)
        return ResultRecord(
            self.result.tool_use_id, name, plain_target(self.use), self.tokens, fate, path
        )


@valueclass(slots=True)
class Settled:
    """A prefix of the history with no result left to fold (each is folded already or too
    small to be worth it), up to the call before the first that may fold: microcompact starts
    after it. `turns` counts its tool-calling turns."""

    messages: int = 0
    turns: int = 0


class SettledPrefix:
    """A history's `Settled` prefix, kept as the history grows (history_fold.py): what
    microcompact scans is then what the window holds unfolded, however long the session. On
    a history the API takes (each result right after its call) microcompact folds exactly
    what a scan of the whole history would: a result of the prefix neither folds nor makes a
    later one stale, and its turns come after every later one's."""

    def __init__(self) -> None:
        self._fold: HistoryFold[_Scanned] = HistoryFold(_Scanned(0, 0, 0, None), _scan)

    def __call__(self, messages: Sequence[Message]) -> Settled:
        scanned = self._fold(messages)
        return scanned.settled or Settled(scanned.messages, scanned.turns)


@valueclass(slots=True)
class _Scanned:
    messages: int
    turns: int
    turns_before_last: int
    settled: Settled | None  # found at the first message with a result that may fold


def _scan(state: _Scanned, message: Message) -> _Scanned:
    turns = state.turns + (message.role == "assistant" and bool(message.tool_uses))
    settled = state.settled
    if settled is None and message.cached("may fold", _may_fold):
        settled = Settled(max(state.messages - 1, 0), state.turns_before_last)
    return _Scanned(state.messages + 1, turns, state.turns, settled)


def _may_fold(message: Message) -> bool:
    return any(_foldable(r) for r in message.tool_results)


def _foldable(result: ToolResultBlock) -> bool:
    return result_tokens(result.content) >= MIN_FOLD_TOKENS and not result.text.startswith(
        FOLDED_PREFIX
    )


def microcompact(
    messages: tuple[Message, ...], need: int, keep: KeepRecent, settled: Settled = Settled()
) -> tuple[tuple[Message, ...], tuple[ResultRecord, ...]]:
    """Fold until about `need` tokens are freed or nothing foldable is left; returns the new
    history and what was folded. The `settled` prefix is not looked at."""
    if need <= 0:
        return messages, ()
    everything = list(_results(messages, settled))
    superseded = _superseded(everything)  # a Read not answered yet supersedes earlier ones
    results = [r for r in everything if r.answered]
    protected = _protected(results, keep)
    order = [r for r in results if r.key in superseded] + [
        r for r in results if r.key not in superseded and r.key not in protected
    ]
    stubs: dict[tuple[int, int], ToolResultBlock] = {}
    records: list[ResultRecord] = []
    freed = 0
    for r in order:
        if freed >= need:
            break
        if not _foldable(r.result):
            continue
        stub = stub_text(r.result, r.use, superseded=r.key in superseded)
        stubs[r.key] = replace(r.result, content=stub)
        records.append(r.record("folded"))
        freed += r.tokens - estimate_text(stub)
    if not stubs:
        return messages, ()
    out = list(messages)
    for i in {m for m, _ in stubs}:
        content: list[ContentBlock] = list(out[i].content)
        for (m, b), stub_block in stubs.items():
            if m == i:
                content[b] = stub_block
        out[i] = replace(out[i], content=tuple(content))
    return tuple(out), tuple(records)


def _results(messages: tuple[Message, ...], settled: Settled = Settled()) -> Iterator[_Result]:
    uses: dict[str, ToolUseBlock] = {}
    turn_of: dict[str, int] = {}
    scanned = messages[settled.messages :]
    turns = sum(1 for m in scanned if m.role == "assistant" and m.tool_uses)
    seen = 0
    last_answer = -1
    for i, message in enumerate(scanned, settled.messages):
        if message.role == "assistant":
            last_answer = i
        if message.role == "assistant" and message.tool_uses:
            seen += 1
            for use in message.tool_uses:
                uses[use.id] = use
                turn_of[use.id] = turns - seen
    turns += settled.turns  # a result whose call is not found counts as the oldest
    for i, message in enumerate(scanned, settled.messages):
        for j, block in enumerate(message.content):
            if isinstance(block, ToolResultBlock):
                yield _Result(
                    i,
                    j,
                    block,
                    uses.get(block.tool_use_id),
                    turn_of.get(block.tool_use_id, turns),
                    result_tokens(block.content),
                    i < last_answer,
                )


def results_of(messages: tuple[Message, ...]) -> Iterator[ResultRecord]:
    """Every tool result of a history as a record (fate: summarized), or as its stub or
    preview says it was folded or saved."""
    for r in _results(messages):
        fate: ResultFate = "summarized"
        if r.result.text.startswith(FOLDED_PREFIX):
            fate = "folded"
        elif saved_path(r.result.text) is not None:
            fate = "saved"
        yield r.record(fate)


def _superseded(results: list[_Result]) -> set[tuple[int, int]]:
    """Read results a later Read of the same range, or a later Write, made stale."""
    stale: set[tuple[int, int]] = set()
    reads_after: set[tuple[str, object, object]] = set()
    writes_after: set[str] = set()
    for r in reversed(results):
        if r.use is None or r.result.is_error:
            continue
        path = r.use.input.get("file_path")
        if not isinstance(path, str):
            continue
        path = os.path.normpath(path)
        if r.use.name == "Write":
            writes_after.add(path)
        elif r.use.name == "Read":
            key = (path, r.use.input.get("offset"), r.use.input.get("limit"))
            if key in reads_after or path in writes_after:
                stale.add(r.key)
            reads_after.add(key)
    return stale


def _protected(results: list[_Result], keep: KeepRecent) -> set[tuple[int, int]]:
    kept: set[tuple[int, int]] = set()
    used = 0
    for r in sorted(results, key=lambda r: (r.turn, -r.message)):
        if r.turn >= keep.turns:
            break
        if r.turn > 0 and used + r.tokens > keep.tokens:
            break
        kept.add(r.key)
        used += r.tokens
    return kept


def stub_text(result: ToolResultBlock, use: ToolUseBlock | None, *, superseded: bool) -> str:
    """`[Folded …: Read /src/app.py → 412 lines, 15.3 KB. …]`"""
    name = use.name if use is not None else "tool"
    target = describe_target(use)
    call = f"{name} {target}" if target else name
    text = result.text
    saved = saved_path(text)
    if saved is not None:
        what = f"full output saved in {saved}"
    else:
        lines = len(text.splitlines())
        what = f"{lines} lines, {human_size(len(text.encode('utf-8')))}"
    status = " (it failed)" if result.is_error else ""
    if superseded:
        return f"{FOLDED_PREFIX}: a later read of the same file superseded it. {call} → {what}.]"
    return (
        f"{FOLDED_PREFIX} to save context: {call}{status} → {what}. "
        "Run the call again if you need its output.]"
    )


def describe_target(use: ToolUseBlock | None) -> str:
    """What a call was about, on one short line: its path, command (in backticks) or pattern."""
    target = plain_target(use)
    return f"`{target}`" if use is not None and use.name == "Bash" and target else target


def plain_target(use: ToolUseBlock | None) -> str:
    """A call's path, command or pattern, on one short line."""
    if use is None:
        return ""
    parts = [str(use.input[k]) for k in _TARGET_FIELDS if isinstance(use.input.get(k), str)]
    target = " in ".join(parts[:2]) if use.name in ("Grep", "Glob") else (parts[:1] or [""])[0]
    target = " ".join(target.split())
    if len(target) > TARGET_CHARS:
        target = target[: TARGET_CHARS - 1] + "…"
    return target
