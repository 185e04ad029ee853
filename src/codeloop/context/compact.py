"""L3, compaction: the model summarizes the history, and the summary replaces it.

The summary request is the session's own request (same model, system prompt and tools, so the
provider's prompt cache serves the history) with the summary instructions appended. The new
history is one message holding the summary, the current contents of the files read most
recently and the task list, followed by the user's latest request, word for word (a summary
that paraphrases the request is how long sessions drift off task) and the most recent turns,
word for word too (seed 002's "summary + recent turns": the last error or test output stays,
so the model does not redo a step). Whatever the model has not answered yet (the results of
the turn being sent, a request not yet worked on) is always among them, as it was: the
window's shares (tokens.Shares) leave room for it next to the summary.

The summary call goes through the main call's retry policy, watchdog and fallback. When it
still fails, nothing is dropped: the history stays as it was, and the caller decides whether
the window still allows going on.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Protocol

from codeloop.context.microcompact import KeepRecent, microcompact, results_of
from codeloop.context.tokens import (
    CHARS_PER_TOKEN,
    ContextLimits,
    Shares,
    estimate_message,
    estimate_messages,
    estimate_overhead,
    estimate_text,
)
from codeloop.events import CompactBoundary, CompactTrigger, Event, Notice
from codeloop.models.base import ModelRequest, ToolSpec, describe
from codeloop.models.complete import CallModel, Sleep, complete
from codeloop.models.prompt_size import PromptCount
from codeloop.models.retry import RetryPolicy
from codeloop.system.valueclass import valueclass
from codeloop.text import (
    BINARY_EXTENSIONS,
    BINARY_SNIFF_BYTES,
    IMAGE_TYPES,
    looks_binary,
    number_line,
    truncate_middle,
)
from codeloop.types import Message, TextBlock, ToolResultBlock, Usage
from codeloop.workspace.tool_workspace import Workspace

SUMMARY_PROMPT = """\
Stop here and write a summary of this conversation. Do not call any tools.

The conversation is about to be cleared to free the context window. You will continue the work \
from your summary alone, together with the user's latest message (kept word for word), the \
current contents of the files read most recently, and the task list. Whatever the summary \
leaves out is lost.

Go through the conversation in order, then write these sections:

1. User requests and intent: every request the user made, in order, quoted when short and \
closely paraphrased when long; the goal behind them; constraints and preferences they stated \
(what to use, what not to touch, style). Say which requests are done.
2. Key decisions: technical choices made and why; approaches tried and abandoned, and why.
3. Files and code: every file read, created or changed, with its full path; for each change, \
what changed and why. Quote short snippets only where the exact text matters (signatures, \
config keys, tricky lines).
4. Errors and fixes: each error met (command, test, tool), its cause, and how it was fixed or \
that it is still open; every correction the user made.
5. Pending tasks: what was asked for and is not done yet.
6. Current work: exactly what was being done just before this summary, with file paths, \
commands and their latest results.
7. Next step: the one next action, in line with the user's latest request; quote the words of \
the request it serves so the task cannot drift. If everything asked for is done, say so and \
invent no new work.

Be specific: paths, names, commands, numbers, error messages. No preamble and no closing \
remarks: reply with the summary only, starting with "1. User requests and intent"."""

SUMMARY_HEADER = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier part of the conversation."
)
DROPPED_HEADER = "Earlier messages of this session were dropped to fit the context window"
_RESUME = (
    "The user's latest message follows word for word. Work on it was already under way: go on "
    "from the current work and next step above, without redoing finished steps and without "
    "asking the user to repeat anything."
)
_LATEST = "The user's latest message follows word for word."
_RECENT = "The most recent turns follow word for word as well."

MAX_FILES = 5
FILE_TOKENS = 5_000
FILES_TOKENS = 50_000
# The least the history after a compaction may hold, however small the window.
MIN_HISTORY_TOKENS = 2_000
# The newest assistant turns (with their tool results) kept word for word after a summary,
# within a quarter of the new history's budget.
RECENT_TURNS = 3


class HookAnswer(Protocol):
    """What the compaction hooks answered (a hooks.HookOutcome): whether they refused, why,
    what they add for the model, what they tell the user."""

    @property
    def blocked(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    @property
    def system_messages(self) -> tuple[str, ...]: ...

    def for_model(self) -> str: ...


PreCompactHook = Callable[[CompactTrigger, str | None], Awaitable[HookAnswer]]
"""Runs before a compaction with its trigger and the user's instructions (PreCompact hooks):
it may refuse the compaction; what it adds for the model is added to the instructions."""

PostCompactHook = Callable[[CompactTrigger, str], Awaitable[HookAnswer]]
"""Runs after a compaction with its trigger and the summary (PostCompact hooks)."""

Todo = Mapping[str, Any]
"""A task list entry as TodoWrite takes it: content, status, activeForm."""


@valueclass
class SummaryModel:
    """The session's model request, reused for the summary so the cached prefix is hit."""

    call_model: CallModel
    model: str
    system: str = ""
    tools: tuple[ToolSpec, ...] = ()
    # Sent ahead of the history, as in the session's own requests (the memory message).
    user_context: tuple[Message, ...] = ()
    # The main call's: retried, watched and switched to the fallback model alike.
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    fallback_model: str | None = None
    sleep: Sleep = asyncio.sleep
    # How the client renders system prompt and tools (models/prompt_size.py): full schemas
    # unless it says otherwise.
    prompt_count: PromptCount = estimate_overhead

    @property
    def overhead(self) -> int:
        """What every request carries besides the history: system prompt, tools, memory."""
        fixed = self.prompt_count(self.system, self.tools)
        return fixed + estimate_messages(self.user_context)


@valueclass
class CompactResult:
    """The new history and its boundary; or, when the summary failed, the history untouched,
    no boundary, and why (`failure`)."""

    messages: tuple[Message, ...]
    boundary: CompactBoundary | None
    usage: Usage  # what the summary call cost, failed tries included
    failure: str | None = None
    events: tuple[Event, ...] = ()  # the summary call's retries and model switches


async def compact_history(
    messages: tuple[Message, ...],
    summarizer: SummaryModel,
    limits: ContextLimits,
    workspace: Workspace,
    *,
    trigger: CompactTrigger,
    instructions: str | None = None,
    todos: Sequence[Todo] | None = None,
    pre_compact: PreCompactHook | None = None,
    abort: asyncio.Event | None = None,
) -> CompactResult:
    """Replace the history with a summary; leave it as it is if the summary call fails, a
    PreCompact hook refuses it, or (reacting to a prompt the API refused) what the summary
    would leave is no smaller."""
    overhead = summarizer.overhead
    before = overhead + estimate_messages(messages)
    notices: list[Event] = []
    if pre_compact is not None:
        answer = await pre_compact(trigger, instructions)
        notices += [Notice("warning", text) for text in answer.system_messages]
        if answer.blocked:
            why = answer.reason or "no reason given"
            refused = f"a PreCompact hook refused the compaction ({why})"
            return CompactResult(messages, None, Usage(), refused, tuple(notices))
        if extra := answer.for_model():
            instructions = f"{instructions}\n\n{extra}" if instructions else extra
    todos = latest_todos(messages) if todos is None else todos
    prompt = SUMMARY_PROMPT
    if instructions:
        prompt += f"\n\nAdditional instructions for this summary:\n{instructions.strip()}"
    shares = Shares(limits, overhead)
    # The gap between the autocompact threshold and the blocking limit is the room the
    # summary request has; the answer's room is reserved beyond the blocking limit.
    room = limits.blocking_at - overhead - estimate_text(prompt)
    if trigger == "reactive":
        # The server found the prompt longer than our estimate did: leave a wide margin.
        room = min(room, estimate_messages(messages) // 2)
    sent = (*summarizer.user_context, *with_instructions(fit(messages, room), prompt))
    request = ModelRequest(
        model=summarizer.model,
        messages=sent,
        system=summarizer.system,
        tools=summarizer.tools,
        max_tokens=shares.summary,
        tool_choice="none",
    )
    done = await complete(
        summarizer.call_model,
        request,
        summarizer.retry,
        fallback_model=summarizer.fallback_model,
        abort=abort,
        sleep=summarizer.sleep,
        prompt_tokens=overhead + estimate_messages(sent),
    )
    events = (*notices, *done.events)
    summary = "" if done.error or done.aborted else _summary_text(done.assembler.message().text)
    failure: str | None = None
    if done.aborted:
        failure = "the summary request was interrupted"
    elif done.error is not None:
        failure = f"the summary request failed: {describe(done.error)}"
    elif not summary:
        failure = "the model returned an empty summary"
    if failure is not None:
        return CompactResult(messages, None, done.usage, failure, events)
    room_after = _RoomAfter.of(messages, limits, overhead, estimate_text(summary), trigger)
    new = _after_summary(summary, messages, todos, workspace, room_after)
    after = overhead + estimate_messages(new)
    if trigger == "reactive" and after >= before:
        # Sent again, it would be refused again: the history stays, and the caller says why.
        failure = _no_gain(before - overhead, after - overhead)
        return CompactResult(messages, None, done.usage, failure, events)
    kept = tuple(m.uuid for m in new[1:])
    replaced = tuple(m for m in messages if m.uuid not in kept)
    boundary = CompactBoundary(
        trigger, before, after, len(messages), summary, new, kept, tuple(results_of(replaced))
    )
    return CompactResult(new, boundary, done.usage, None, events)


def _no_gain(history: int, left: int) -> str:
    """Why a summary that leaves no less than the history it would replace cannot help."""
    why = (
        f"the history it would leave (about {left:,} tokens: the summary, the latest request "
        f"and the recent turns) is no smaller than the history now (about {history:,} tokens)"
    )
    if history <= 2 * MIN_HISTORY_TOKENS:
        # The reactive target is half the history, but never under the floor.
        why += (
            f", which is already at the floor (a compaction keeps up to {MIN_HISTORY_TOKENS:,} "
            "tokens of history as it is)"
        )
    return why


def with_instructions(messages: tuple[Message, ...], prompt: str) -> tuple[Message, ...]:
    """The history with the summary instructions as the last user text."""
    if messages and messages[-1].role == "user":
        last = messages[-1]
        return (*messages[:-1], replace(last, content=(*last.content, TextBlock(prompt))))
    return (*messages, Message.user(prompt, is_meta=True))


def is_summary_request(request: ModelRequest) -> bool:
    """Whether a request is a compaction's summary call (for routing in tests and benches)."""
    if not request.messages:
        return False
    last = request.messages[-1].content
    return (
        bool(last) and isinstance(last[-1], TextBlock) and last[-1].text.startswith(SUMMARY_PROMPT)
    )


def is_compact_summary(message: Message) -> bool:
    """The message a compaction put at the start of the history."""
    return message.is_meta and message.text.startswith((SUMMARY_HEADER, "[" + DROPPED_HEADER))


def _summary_text(text: str) -> str:
    text = text.strip()
    start, end = text.find("<summary>"), text.rfind("</summary>")
    if start != -1 and end > start:
        return text[start + len("<summary>") : end].strip()
    return text


def latest_user_request(messages: tuple[Message, ...]) -> Message | None:
    """The last message the user typed: not synthetic, not tool results."""
    for message in reversed(messages):
        if message.role == "user" and not message.is_meta and not message.tool_results:
            return message
    return None


def latest_todos(messages: tuple[Message, ...]) -> Sequence[Todo]:
    """The task list as the last TodoWrite call set it (each call sends the whole list)."""
    for message in reversed(messages):
        for use in reversed(message.tool_uses):
            todos = use.input.get("todos")
            if use.name == "TodoWrite" and isinstance(todos, list):
                return [t for t in todos if isinstance(t, Mapping)]
    return ()


def render_todos(todos: Sequence[Todo]) -> str:
    if not todos:
        return ""
    lines = [
        f"{i}. [{t.get('status', 'pending')}] {t.get('content', '')}"
        for i, t in enumerate(todos, 1)
    ]
    return (
        "The task list as it stood before the compaction (keep it up to date with TodoWrite):\n"
        + "\n".join(lines)
    )


def fit(messages: tuple[Message, ...], budget: int) -> tuple[Message, ...]:
    """The history cut to `budget` tokens for the summary request: old tool results folded
    first, then the oldest turns dropped (an earlier summary and the latest request kept)."""
    folded = _fold(messages, budget)
    if estimate_messages(folded) <= budget:
        return folded
    reason = "the conversation was too long to summarize whole"
    return drop_oldest(folded, budget, _worth_keeping(messages), (), reason=reason)


def _fold(messages: tuple[Message, ...], budget: int) -> tuple[Message, ...]:
    """Every tool result but the latest turn's folded, as far as needed to fit `budget`."""
    excess = estimate_messages(messages) - budget
    return (
        microcompact(messages, excess, KeepRecent(turns=1, tokens=0))[0] if excess > 0 else messages
    )


def _worth_keeping(messages: tuple[Message, ...]) -> list[Message]:
    """What must outlive a cut: the summary of an earlier compaction, the latest request."""
    first = messages[0] if messages else None
    keep = [first] if first and first.is_meta and first.text.startswith(SUMMARY_HEADER) else []
    latest = latest_user_request(messages)
    return [*keep, latest] if latest is not None else keep


def drop_oldest(
    messages: tuple[Message, ...],
    budget: int,
    keep: Sequence[Message],
    todos: Sequence[Todo],
    *,
    reason: str,
) -> tuple[Message, ...]:
    """The newest turns that fit `budget`, behind a note saying what happened and the task
    list; the `keep` messages (without tool results) stay even when older than the cut."""
    note_text = f"[{DROPPED_HEADER}: {reason}.]"
    if todos:
        note_text += "\n\n" + render_todos(todos)
    fixed = estimate_text(note_text) + estimate_messages(keep) + 8
    suffix = messages[_cut(messages, budget - fixed) :]
    older = tuple(m for m in keep if not any(m is s for s in suffix))
    return (Message.user(note_text, is_meta=True), *older, *suffix)


def _cut(messages: tuple[Message, ...], budget: int) -> int:
    """The first index from which the rest fits, at a message carrying no tool_result (so no
    result loses its call); the last such index when nothing fits."""
    sizes = [estimate_message(m) for m in messages]
    rest = list(itertools.accumulate(reversed(sizes)))[::-1]
    starts = [i for i, m in enumerate(messages) if not m.tool_results]
    for i in starts:
        if rest[i] <= budget:
            return i
    return starts[-1] if starts else len(messages)


@valueclass(slots=True)
class _RoomAfter:
    """What the history after a summary may hold: `budget` for the latest request and the
    recent turns; what the model has not answered yet is kept whatever that says, up to
    `ceiling`, all it may hold."""

    budget: int
    ceiling: int

    @staticmethod
    def of(
        messages: tuple[Message, ...],
        limits: ContextLimits,
        overhead: int,
        summary_tokens: int,
        trigger: CompactTrigger,
    ) -> _RoomAfter:
        # On a small window the system prompt and tools can take most of half the threshold,
        # so a floor keeps the latest request readable.
        budget = max(limits.autocompact_at // 2 - overhead, MIN_HISTORY_TOKENS)
        ceiling = max(Shares(limits, overhead).free - summary_tokens, MIN_HISTORY_TOKENS)
        if trigger == "reactive":
            # Our count was wrong by the server's: what is kept must be small by the history's
            # own.
            half = max(estimate_messages(messages) // 2, MIN_HISTORY_TOKENS)
            budget, ceiling = min(budget, half), min(ceiling, half)
        return _RoomAfter(budget, ceiling)


def has_history_to_summarize(
    messages: tuple[Message, ...], limits: ContextLimits, overhead: int
) -> bool:
    """Whether an automatic compaction would replace anything: it keeps the latest request,
    what the model has not answered yet and the recent turns that fit word for word, so a
    history of nothing else (a session's first requests, on a window its overhead fills) has
    nothing to summarize. Counted with the longest summary the request allows."""
    summary = Shares(limits, overhead).summary
    room = _RoomAfter.of(messages, limits, overhead, summary, "auto")
    return len(_kept(messages, room)[1]) < len(messages)


def _kept(
    messages: tuple[Message, ...], room: _RoomAfter
) -> tuple[Message | None, tuple[Message, ...]]:
    """The latest request (its head and tail, when a giant paste) and what a compaction keeps
    of the history word for word, that request among it."""
    latest = latest_user_request(messages)
    if latest is not None and estimate_message(latest) > room.budget // 2:
        # A giant paste cannot stay whole; its head and tail do.
        text = truncate_middle(latest.text, room.budget * 2, what="the message")
        shrunk = replace(latest, content=(TextBlock(text),))
        messages = tuple(shrunk if m is latest else m for m in messages)
        latest = shrunk
    recent = _recent_turns(messages, room.budget // 4, room.ceiling)
    kept = recent if latest is None or any(m is latest for m in recent) else (latest, *recent)
    return latest, kept


def _after_summary(
    summary: str,
    messages: tuple[Message, ...],
    todos: Sequence[Todo],
    workspace: Workspace,
    room: _RoomAfter,
) -> tuple[Message, ...]:
    mid_task = messages[-1] is not latest_user_request(messages)
    latest, kept = _kept(messages, room)
    parts = [f"{SUMMARY_HEADER}\n\n<summary>\n{summary}\n</summary>"]
    if todos:
        parts.append(render_todos(todos))
    if latest is not None:
        parts.append(_RESUME if mid_task else _LATEST)
    if any(m.role == "assistant" for m in kept):
        parts.append(_RECENT)
    used = sum(estimate_text(p) for p in parts) + estimate_messages(kept)
    shown = {use.id for m in kept for use in m.tool_uses}
    budget = min(FILES_TOKENS, room.budget // 3, room.budget - used)
    files = _recent_files(messages, workspace, budget, shown)
    if files:
        parts.insert(1, files)
    return (Message.user("\n\n".join(parts), is_meta=True), *kept)


def unanswered_start(messages: tuple[Message, ...]) -> int:
    """Where what the model has not answered yet begins: after the last assistant message, or
    at it when it made calls whose results come after it (a result keeps its call)."""
    answers = [i for i, m in enumerate(messages) if m.role == "assistant"]
    if not answers:
        return 0
    last = answers[-1]
    return last if messages[last].tool_uses else last + 1


def _recent_turns(messages: tuple[Message, ...], budget: int, ceiling: int) -> tuple[Message, ...]:
    """What the model has not answered yet, word for word, and before it as much of the last
    RECENT_TURNS turns (the unanswered one among them) as fits `budget`, from an assistant
    message on (so every call keeps its result). Only an unanswered part past `ceiling`, which
    the results' shares prevent, has its tool results cut to fit, as a last resort."""
    tail = unanswered_start(messages)
    unseen = messages[tail:]
    size = estimate_messages(unseen)
    if size > ceiling:
        return _cut_to_fit(unseen, ceiling)
    answers = [i for i, m in enumerate(messages) if m.role == "assistant"][-RECENT_TURNS:]
    for start in (i for i in answers if i < tail):
        if estimate_messages(messages[start:tail]) <= budget:
            return messages[start:]
    return unseen


def _cut_to_fit(turn: tuple[Message, ...], budget: int) -> tuple[Message, ...]:
    """`turn` with its tool results cut (head and tail kept) to fit `budget`; nothing when even
    that cannot fit."""
    results = sum(len(m.tool_results) for m in turn)
    room = budget - estimate_messages(tuple(m for m in turn if not m.tool_results))
    if results == 0 or room <= 0:
        return ()
    share = room * CHARS_PER_TOKEN // results - 200  # the cut note takes a few dozen tokens
    cut = tuple(_cut_results(m, share) if m.tool_results else m for m in turn)
    return cut if estimate_messages(cut) <= budget else ()


def _cut_results(message: Message, chars: int) -> Message:
    blocks = tuple(
        ToolResultBlock(b.tool_use_id, truncate_middle(b.text, chars), b.is_error)
        if isinstance(b, ToolResultBlock)
        else b
        for b in message.content
    )
    return replace(message, content=blocks)


def _recent_files(
    messages: tuple[Message, ...], workspace: Workspace, budget: int, shown: set[str]
) -> str:
    """The current contents of the files Read most recently, within `budget` tokens (but those
    whose Read is among the kept turns, `shown`, word for word already)."""
    if budget <= 0:
        return ""
    skip = shown | {r.tool_use_id for m in messages for r in m.tool_results if r.is_error}
    seen: set[str] = set()
    sections: list[str] = []
    for message in reversed(messages):
        for use in reversed(message.tool_uses):
            raw = use.input.get("file_path")
            if use.name != "Read" or not isinstance(raw, str) or use.id in skip:
                continue
            path = workspace.resolve(raw)
            if str(path) in seen or len(seen) >= MAX_FILES:
                continue
            seen.add(str(path))
            # The tags and the cut note take a few dozen tokens of the file's share.
            section = _file_section(path, (min(FILE_TOKENS, budget) - 50) * CHARS_PER_TOKEN)
            if section and estimate_text(section) <= budget:
                sections.append(section)
                budget -= estimate_text(section)
    if not sections:
        return ""
    return "Files read recently, re-read from disk now (their current contents):\n\n" + (
        "\n\n".join(sections)
    )


def _file_section(path: Path, max_chars: int) -> str:
    if max_chars <= 0 or path.suffix.lower() in {*IMAGE_TYPES, *BINARY_EXTENSIONS}:
        return ""
    lines: list[str] = []
    used, more = 0, False
    try:
        with path.open("rb") as f:
            if looks_binary(f.read(BINARY_SNIFF_BYTES)):
                return ""
            f.seek(0)
            for number, raw in enumerate(f, 1):
                line = number_line(number, raw.rstrip(b"\r\n").decode("utf-8", "replace"))
                used += len(line) + 1
                if used > max_chars:
                    more = True
                    break
                lines.append(line)
    except OSError:
        return ""
    body = "\n".join(lines)
    if more:
        body += f"\n(cut here: Read the file from line {len(lines) + 1} for the rest)"
    return f'<file path="{path}">\n{body}\n</file>'
