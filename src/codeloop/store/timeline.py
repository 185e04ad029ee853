"""A saved session as a timeline: its messages, and what context management did between them.

What a user reviews after a long session ("what did the compaction drop?"): every message as
it was said (the transcript keeps them whole), each microcompact fold, each compaction with
what it summarized, kept word for word and folded, and its summary; other rewrites of the
history (a resume that repaired it, a rewind) are marked. `codeloop sessions show` prints it;
the terminal UI can show the same entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from codeloop.events import ResultFate, ResultRecord
from codeloop.store.transcript import (
    COMPACT_BOUNDARY,
    MICROCOMPACT,
    SIDECHAIN_FIELDS,
    entry_message,
    read_transcript,
)
from codeloop.system.valueclass import valueclass
from codeloop.types import Message, ToolUseBlock

_FATES: tuple[ResultFate, ...] = ("folded", "saved", "summarized")


@valueclass
class MessageEntry:
    time: str  # the transcript's ISO timestamp
    message: Message


@valueclass
class FoldEntry:
    """Microcompact folded these results before a request."""

    time: str
    results: tuple[ResultRecord, ...]


@valueclass
class CompactionEntry:
    time: str
    trigger: str
    tokens_before: int | None
    tokens_after: int | None
    summarized: int | None  # messages replaced by the summary (None: not recorded)
    kept: int
    summary: str
    results: tuple[ResultRecord, ...]


@valueclass
class RewriteEntry:
    """The history was rewritten otherwise (a resume's repair, a rewind, images removed)."""

    time: str
    trigger: str


Entry = MessageEntry | FoldEntry | CompactionEntry | RewriteEntry


@valueclass(frozen=False)
class Timeline:
    session_id: str
    entries: list[Entry] = field(default_factory=list)
    # Every call the session made, by id: what a result belongs to.
    calls: dict[str, ToolUseBlock] = field(default_factory=dict)
    cwd: str = ""
    warnings: tuple[str, ...] = ()
    # A sub-agent's transcript (a sidechain): its agentId, agentType, description and
    # parentToolUseId; empty for a session's own.
    agent: dict[str, str] = field(default_factory=dict)

    @property
    def compactions(self) -> list[CompactionEntry]:
        return [e for e in self.entries if isinstance(e, CompactionEntry)]


def read_timeline(path: Path) -> Timeline:
    """Raises OSError when the file cannot be read; bad lines are skipped with a warning."""
    timeline = Timeline(path.stem)
    transcript = read_transcript(path, _visitor(timeline))
    timeline.warnings = transcript.warnings
    return timeline


def _visitor(timeline: Timeline) -> Callable[[dict[str, Any]], None]:
    def visit(line: dict[str, Any]) -> None:
        time = str(line.get("timestamp") or "")
        timeline.cwd = timeline.cwd or str(line.get("cwd") or "")
        if line.get("isSidechain") and not timeline.agent:
            timeline.session_id = str(line.get("sessionId") or timeline.session_id)
            timeline.agent = {k: str(line.get(k) or "") for k in SIDECHAIN_FIELDS}
        if line["type"] in ("user", "assistant"):
            message = entry_message(line)
            timeline.calls.update((use.id, use) for use in message.tool_uses)
            timeline.entries.append(MessageEntry(time, message))
        elif line.get("subtype") == MICROCOMPACT:
            timeline.entries.append(FoldEntry(time, _records(line["toolResults"])))
        elif line.get("subtype") == COMPACT_BOUNDARY:
            timeline.entries.append(_boundary(time, line))

    return visit


def _boundary(time: str, line: dict[str, Any]) -> Entry:
    meta = line.get("compactMetadata") or {}
    trigger = str(meta.get("trigger") or "")
    if trigger not in ("auto", "manual", "reactive"):
        return RewriteEntry(time, trigger or "unknown")
    kept = meta.get("kept")
    summarized = meta.get("messagesSummarized")
    summary = meta.get("summary")
    if summary is None and line.get("messages"):  # written before the summary was recorded
        summary = entry_message(line["messages"][0]).text
    return CompactionEntry(
        time,
        trigger,
        meta.get("preTokens"),
        meta.get("postTokens"),
        summarized if isinstance(summarized, int) else None,
        len(kept) if isinstance(kept, list) else max(len(line.get("messages") or ()) - 1, 0),
        str(summary or ""),
        _records(meta.get("toolResults") or ()),
    )


def _records(raw: Any) -> tuple[ResultRecord, ...]:
    records = []
    for item in raw:
        fate = item.get("fate")
        records.append(
            ResultRecord(
                str(item["toolUseId"]),
                str(item.get("tool") or "tool"),
                str(item.get("target") or ""),
                int(item.get("tokens") or 0),
                fate if fate in _FATES else "summarized",
                item.get("path"),
            )
        )
    return tuple(records)
