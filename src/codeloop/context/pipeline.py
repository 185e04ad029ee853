"""The context pipeline the loop runs before every model request, and the session's compactor.

Order per seed 002, cheapest first: the tool-result budget (L1) runs as each result is made
(the executor calls `spill`, sized by the window's shares, which the manager puts in the
workspace), microcompact (once the history nearly fills the room the system prompt, tools and
memory leave under the autocompact threshold: in rare batches, so that the requests between
them extend each other byte for byte and a prompt cache reuses them), autocompact (past the
threshold, when there is anything to summarize); a step that brings the count back under skips
the rest. With autocompact off, a prompt past the blocking limit is not sent. No step touches
what the model has not answered yet: the results a request brings it for the first time are
the tools' own.

A summary that fails even after the main call's retries drops nothing: the history goes on
uncompacted while the window allows it, else the request is not sent (`prompt_too_long`).

One `ContextManager` lives as long as its session: it owns the folder big results go to, the
last usage the API reported, and the record of every result folded or saved since the last
compaction, which that compaction's boundary reports with the rest it replaced.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import field, replace
from pathlib import Path

from codeloop.context.budget import persist_result, saved_path
from codeloop.context.compact import (
    CompactResult,
    PostCompactHook,
    PreCompactHook,
    SummaryModel,
    Todo,
    compact_history,
    has_history_to_summarize,
)
from codeloop.context.microcompact import KeepRecent, SettledPrefix, microcompact, plain_target
from codeloop.context.tokens import (
    ContextLimits,
    HistoryTokens,
    Shares,
    UsageAnchor,
    count_tokens,
    estimate_text,
)
from codeloop.events import (
    Announce,
    Compacting,
    CompactTrigger,
    EndReason,
    Event,
    Notice,
    ResultRecord,
    ResultsFolded,
)
from codeloop.system.valueclass import valueclass
from codeloop.types import Message, ToolUseBlock, Usage
from codeloop.workspace.tool_workspace import ResultLimits, Workspace


@valueclass
class ContextSettings:
    autocompact: bool = True
    # L1 and L2 can be turned off (benchmarks measure what they save).
    persist_results: bool = True
    microcompact: bool = True
    keep_recent_turns: int = 3


@valueclass
class Prepared:
    """The history to send, and what the pipeline did to it."""

    messages: tuple[Message, ...]
    tokens: int  # the prompt size the pipeline counted for them
    events: tuple[Event, ...] = ()  # CompactBoundary events and notices, for the loop to yield
    usage: Usage = field(default_factory=Usage)  # spent on summary calls
    # Set when the request must not be sent (past the blocking limit with autocompact off, or
    # with a summary that failed), and how the run ends then.
    blocked: str | None = None
    folded: int = 0  # results folded to stubs
    blocked_reason: EndReason = "blocking_limit"


@valueclass
class Compacted:
    """What a reactive compaction made of a history the API called too long: the new history
    (None: it could not shrink, the error stands), the events and cost of trying, and
    `account`, a sentence for the run's end should the prompt stay too long: what was done,
    or why nothing could be (else the user learns only that the API refused the prompt)."""

    messages: tuple[Message, ...] | None
    account: str
    events: tuple[Event, ...] = ()
    usage: Usage = field(default_factory=Usage)


class ContextManager:
    def __init__(
        self,
        summarizer: SummaryModel,
        limits: ContextLimits,
        workspace: Workspace,
        results_dir: Path,
        *,
        settings: ContextSettings | None = None,
        pre_compact: PreCompactHook | None = None,
        post_compact: PostCompactHook | None = None,
        todos: Callable[[], Sequence[Todo] | None] | None = None,
    ) -> None:
        """`todos` reads the session's task list when there is a todo store; without one, the
        list the last TodoWrite call set is found in the history. The workspace's result
        limits and spill are set here, from the window's shares."""
        self.limits = limits
        self.workspace = workspace
        self.results_dir = results_dir
        self.settings = settings or ContextSettings()
        self.pre_compact = pre_compact
        self.post_compact = post_compact
        self.todos = todos
        self._anchor: UsageAnchor | None = None
        # Results folded or saved since the last compaction, by tool_use id.
        self._taken: dict[str, ResultRecord] = {}
        self._history_tokens = HistoryTokens()
        self._settled = SettledPrefix()
        # Where the last automatic compaction left the count (measured at the next request).
        self._compacted_to: int | None = None
        self._measure_after_compact = False
        self.use_summarizer(summarizer)

    def use_summarizer(self, summarizer: SummaryModel) -> None:
        """The session's request as it now stands (its system prompt and memory are gathered
        at start): the overhead every request carries, and the shares it leaves."""
        self.summarizer = summarizer
        self._overhead = summarizer.overhead
        self.shares = Shares(self.limits, self._overhead)
        # Microcompact's thresholds are over the room the overhead leaves (as counted, they
        # include it): it folds in rare batches, well below where it started, and keeps the
        # recent turns within what it folds down to.
        self.fold_at = self._overhead + self.shares.fold_at
        self.fold_target = self._overhead + self.shares.fold_to
        keep = max(self.shares.fold_to, 0) // 2
        self.keep_recent = KeepRecent(self.settings.keep_recent_turns, keep)
        self.workspace.result_limits = ResultLimits(
            self.shares.result, self.shares.turn_results, self.shares.unanswered
        )
        self.workspace.spill = self.spill if self.settings.persist_results else None

    def window_warning(self) -> str | None:
        """Why the window cannot hold this session's overhead plus one turn, if it cannot."""
        return self.shares.too_small()

    def spill(self, use: ToolUseBlock, text: str, preview_chars: int) -> str:
        """L1 for one result as it is made: save it, return its preview (Workspace.spill)."""
        preview = persist_result(use.id, text, self.results_dir, preview_chars)
        tokens = estimate_text(text)
        path = saved_path(preview)
        self._taken[use.id] = ResultRecord(
            use.id, use.name, plain_target(use), tokens, "saved", path
        )
        return preview

    def record_usage(self, sent: tuple[Message, ...], reply: Message, usage: Usage) -> None:
        """What the API reported for a request (call it with each complete response)."""
        estimate = self._history_tokens(sent)
        self._anchor = UsageAnchor.after(sent, reply, usage, estimate=estimate)

    def count(self, messages: tuple[Message, ...]) -> int:
        history = self._history_tokens(messages)
        return count_tokens(messages, self._overhead, self._anchor, history=history)

    async def prepare(
        self,
        messages: tuple[Message, ...],
        abort: asyncio.Event | None = None,
        announce: Announce | None = None,
    ) -> Prepared:
        """Budget → microcompact → autocompact, each only while still needed; `announce`
        hears a compaction as it starts (the summary call can take a while)."""
        events: list[Event] = []
        usage = Usage()
        limits, settings = self.limits, self.settings
        tokens = self.count(messages)
        folded = 0
        if tokens >= self.fold_at and settings.microcompact:
            need, settled = tokens - self.fold_target, self._settled(messages)
            messages, records = microcompact(messages, need, self.keep_recent, settled)
            if records:
                events.append(ResultsFolded(self._note_folds(records)))
                folded = len(records)
                tokens = self.count(messages)
        if self._measure_after_compact:
            # The first count after a compaction (the API's own, for the compacted request) is
            # what it achieved.
            self._compacted_to, self._measure_after_compact = tokens, False
        blocked: str | None = None
        reason: EndReason = "blocking_limit"
        if (
            tokens >= limits.autocompact_at
            and settings.autocompact
            and self._grew_since(tokens)
            and has_history_to_summarize(messages, limits, self._overhead)
        ):
            if announce is not None:
                announce(Compacting("auto", tokens))
            result = await self._compact(messages, "auto", None, abort)
            events += result.events
            usage = usage + result.usage
            if result.boundary is not None:
                # The count that called for it (the API's own, when it reported one) is what
                # the history weighed: the boundary says so, not a fresh estimate.
                events.append(replace(result.boundary, tokens_before=tokens))
                messages, tokens = result.messages, self.count(result.messages)
                self._measure_after_compact = True
            elif tokens < limits.blocking_at:
                events.append(Notice("warning", f"{result.failure}; going on uncompacted"))
            else:
                blocked = (
                    f"{result.failure}, and the conversation is too long to send uncompacted "
                    f"({tokens:,} tokens; the limit is {limits.blocking_at:,})"
                )
                reason = "prompt_too_long"
            self._compacted_to = tokens
        elif tokens >= limits.blocking_at and not settings.autocompact:
            blocked = (
                f"The conversation fills {tokens:,} tokens, past this model's limit of "
                f"{limits.blocking_at:,} with autocompact off: compact it or start a new session."
            )
        return Prepared(messages, tokens, tuple(events), usage, blocked, folded, reason)

    def _note_folds(self, records: tuple[ResultRecord, ...]) -> tuple[ResultRecord, ...]:
        """Fold records, a saved result's keeping its size and file from when it was saved."""
        noted = []
        for record in records:
            saved = self._taken.get(record.tool_use_id)
            if saved is not None:
                record = replace(saved, fate="folded")
            self._taken[record.tool_use_id] = record
            noted.append(record)
        return tuple(noted)

    def _grew_since(self, tokens: int) -> bool:
        """A compaction that could not get under the threshold (a system prompt and memory
        too big for the window) is not repeated every turn: only once the history has grown
        by a tenth of the threshold since."""
        last = self._compacted_to
        return last is None or tokens >= last + self.limits.autocompact_at // 10

    async def compact(
        self,
        messages: tuple[Message, ...],
        instructions: str | None = None,
        abort: asyncio.Event | None = None,
    ) -> CompactResult:
        """A compaction the user asked for (`/compact [instructions]`, `Session.compact`)."""
        return await self._compact(messages, "manual", instructions, abort)

    async def reactive_compact(self, messages: tuple[Message, ...]) -> Compacted:
        """For a prompt the API called too long (the loop's compactor seam)."""
        result = await self._compact(messages, "reactive", None, None)
        boundary = result.boundary
        # What the request carries besides the history: when it is most of the prompt, no
        # compaction can make it fit, and the user needs to know that.
        carried = (
            f"the system prompt, tool definitions and memory sent with every request take "
            f"about {self._overhead:,} tokens"
        )
        if boundary is None:
            account = (
                f"A summary of the conversation was tried to make room, but {result.failure}; "
                f"{carried}. Nothing was dropped."
            )
            return Compacted(None, account, result.events, result.usage)
        account = (
            f"The conversation had been compacted to make room (about "
            f"{boundary.tokens_before:,} → {boundary.tokens_after:,} tokens; {carried}) and "
            "the request sent again."
        )
        return Compacted(result.messages, account, (*result.events, boundary), result.usage)

    async def _compact(
        self,
        messages: tuple[Message, ...],
        trigger: CompactTrigger,
        instructions: str | None,
        abort: asyncio.Event | None,
    ) -> CompactResult:
        """A compaction, its boundary reporting every result it replaced as it was taken out
        of view (folded or saved, with its size then) or summarized now; PostCompact hooks."""
        result = await compact_history(
            messages,
            self.summarizer,
            self.limits,
            self.workspace,
            trigger=trigger,
            instructions=instructions,
            todos=self.todos() if self.todos is not None else None,
            pre_compact=self.pre_compact,
            abort=abort,
        )
        boundary = result.boundary
        if boundary is None:
            return result
        self._anchor = None  # the reported count was for a history that is gone
        records = tuple(self._taken.pop(r.tool_use_id, r) for r in boundary.results)
        boundary = replace(boundary, results=records)
        events = result.events
        if self.post_compact is not None:
            answer = await self.post_compact(trigger, boundary.summary)
            events = (*events, *(Notice("warning", text) for text in answer.system_messages))
        return replace(result, boundary=boundary, events=events)
