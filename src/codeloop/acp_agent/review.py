"""A saved session for review, where ACP has no method for it: codeloop's extension methods,
on the same connection (so the same token guards them), for a session's timeline
(`_codeloop/timeline`: its messages, folds, compactions with what each summarized, and the
checkpoints to rewind to) and its usage (`_codeloop/usage`: `codeloop usage --json`'s report,
by model, tool, sub-agent and file)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codeloop.checkpoints.journal import Journal
from codeloop.context.microcompact import describe_target
from codeloop.events import ResultRecord
from codeloop.store.session_store import SessionStore
from codeloop.store.timeline import (
    CompactionEntry,
    Entry,
    FoldEntry,
    MessageEntry,
    Timeline,
    read_timeline,
)
from codeloop.store.transcript import sidechain_paths
from codeloop.usage.ledger import read_ledger
from codeloop.usage.report import build_report
from codeloop.usage.views import VIEWS, report_json

TIMELINE = "codeloop/timeline"
USAGE = "codeloop/usage"
METHODS = frozenset({TIMELINE, USAGE})
# A message in the timeline is a line to recognise it by, not the whole text (the transcript,
# replayed by session/load, has that).
MESSAGE_CHARS = 600


def review(method: str, session_ref: str, project: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """The answer to one of METHODS for session `session_ref` of `project` (SessionNotFound
    when there is none)."""
    store = SessionStore(project, env)
    path = store.find(session_ref)
    if method == USAGE:
        return usage_json(path)
    return timeline_json(path, store.directory / path.stem / "checkpoints")


def usage_json(path: Path) -> dict[str, Any]:
    ledger = read_ledger(path)
    out = report_json(build_report([ledger]), VIEWS)
    out["warnings"] = list(ledger.warnings)
    return out


def timeline_json(path: Path, checkpoints: Path) -> dict[str, Any]:
    timeline = read_timeline(path)
    return {
        "sessionId": timeline.session_id,
        "cwd": timeline.cwd,
        "warnings": list(timeline.warnings),
        "entries": [_entry(e, timeline) for e in timeline.entries],
        "checkpoints": [
            {
                "number": cp.number,
                "kind": cp.kind,
                "time": _iso(cp.created),
                "label": cp.label,
                "prompt": cp.prompt,
                "rewoundTo": cp.rewound_to,
                "rewind": f"codeloop rewind --session {timeline.session_id} --to {cp.number}",
            }
            for cp in Journal(checkpoints).read()
        ],
        "agents": [_agent(read_timeline(p)) for p in sidechain_paths(path)],
    }


def _entry(entry: Entry, timeline: Timeline) -> dict[str, Any]:
    if isinstance(entry, MessageEntry):
        message = entry.message
        results = []
        for result in message.tool_results:
            use = timeline.calls.get(result.tool_use_id)
            results.append(
                {
                    "tool": use.name if use is not None else "tool",
                    "target": describe_target(use),
                    "lines": len(result.text.splitlines()),
                    "error": result.is_error,
                }
            )
        text = message.text
        return {
            "kind": "message",
            "time": entry.time,
            "role": "context" if message.is_meta else message.role,
            "text": text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…",
            "calls": [{"tool": u.name, "target": describe_target(u)} for u in message.tool_uses],
            "results": results,
        }
    if isinstance(entry, FoldEntry):
        return {"kind": "fold", "time": entry.time, "results": _records(entry.results)}
    if isinstance(entry, CompactionEntry):
        return {
            "kind": "compaction",
            "time": entry.time,
            "trigger": entry.trigger,
            "tokensBefore": entry.tokens_before,
            "tokensAfter": entry.tokens_after,
            "summarized": entry.summarized,
            "kept": entry.kept,
            "summary": entry.summary,
            "results": _records(entry.results),
        }
    return {"kind": "rewrite", "time": entry.time, "trigger": entry.trigger}


def _records(records: tuple[ResultRecord, ...]) -> list[dict[str, str | int]]:
    return [r.to_dict() for r in records]


def _agent(timeline: Timeline) -> dict[str, Any]:
    messages = sum(isinstance(e, MessageEntry) for e in timeline.entries)
    return {**timeline.agent, "messages": messages}


def _iso(epoch: float) -> str:
    """Seconds since the epoch as the transcripts write their times (UTC, milliseconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"
