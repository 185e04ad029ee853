"""`codeloop sessions`: this directory's saved sessions as a table, newest first; `codeloop
sessions show ID`: one session's timeline, with what each compaction summarized, kept and
folded, and its summary, then its sub-agents; `--agent AGENT_ID`: one sub-agent's timeline."""

from __future__ import annotations

import calendar
import os
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from codeloop.context.budget import saved_path
from codeloop.context.microcompact import FOLDED_PREFIX, describe_target
from codeloop.errors import SessionError
from codeloop.events import ResultRecord
from codeloop.frontdoor.flags import Parser
from codeloop.store.session_store import SessionStore, SessionSummary
from codeloop.store.timeline import (
    CompactionEntry,
    Entry,
    FoldEntry,
    MessageEntry,
    RewriteEntry,
    Timeline,
    read_timeline,
)
from codeloop.store.transcript import sidechain_paths
from codeloop.text import human_size
from codeloop.types import Message

HEADER = ("SESSION", "LAST ACTIVE", "TURNS", "COST", "FIRST PROMPT")
# Time, kind, then the entry: the columns every timeline line shares.
INDENT = " " * 22


def run_sessions(argv: Sequence[str]) -> int:
    parser = Parser(
        prog="codeloop sessions",
        description="List the sessions started in this directory, newest first. "
        'Continue one with: codeloop -p "PROMPT" --resume ID. '
        "`codeloop sessions show ID` prints one session's timeline.",
    )
    commands = parser.add_subparsers(dest="command")
    show = commands.add_parser(
        "show",
        help="a session's timeline: its messages, and each compaction with what it "
        "summarized, kept word for word and folded, and its summary",
    )
    show.add_argument("session", metavar="ID", help="a session id, or enough of its start")
    show.add_argument(
        "--compactions",
        action="store_true",
        help="only what context management did: folds and compactions",
    )
    show.add_argument("--full", action="store_true", help="messages whole, not one line each")
    show.add_argument(
        "--agent",
        metavar="AGENT_ID",
        help="the timeline of one of the session's sub-agents (its own transcript) instead",
    )
    args = parser.parse_args(argv)
    project = Path.cwd().resolve()
    store = SessionStore(project, os.environ)
    if args.command == "show":
        path = store.find(args.session)
        agents = sidechain_paths(path)
        if args.agent is not None:
            path = _agent_path(path, agents, args.agent)
        timeline = _read(path)
        width = shutil.get_terminal_size((120, 24)).columns
        for line in format_timeline(timeline, width, compactions=args.compactions, full=args.full):
            print(line)
        if args.agent is None and agents:
            for line in format_agents([_read(p) for p in agents], timeline.session_id):
                print(line)
        return 0
    summaries = store.summaries()
    if not summaries:
        print(f"No sessions in {project} yet.")
        return 0
    width = shutil.get_terminal_size((120, 24)).columns
    for line in format_table(summaries, width):
        print(line)
    return 0


def _read(path: Path) -> Timeline:
    try:
        return read_timeline(path)
    except OSError as exc:
        raise SessionError(f"cannot read the session {path}: {exc.strerror}") from None


def _agent_path(session: Path, agents: Sequence[Path], ref: str) -> Path:
    """The transcript of the session's sub-agent `ref` (its id, or enough of its start)."""
    ref = ref.strip().removeprefix("agent-")
    found = [p for p in agents if p.stem.removeprefix("agent-").startswith(ref)] if ref else []
    if len(found) == 1:
        return found[0]
    known = ", ".join(p.stem.removeprefix("agent-") for p in agents) or "none"
    many = f"{len(found)} sub-agents start with {ref!r}" if found else f"no sub-agent {ref!r}"
    raise SessionError(f"{many} in session {session.stem} (its sub-agents: {known})")


def format_agents(agents: Sequence[Timeline], session_id: str) -> list[str]:
    """The session's sub-agents, one line each, with the command that shows one."""
    lines = [
        "",
        f"{_plural(len(agents), 'sub-agent')} (codeloop sessions show {session_id} --agent ID):",
    ]
    for agent in agents:
        info = agent.agent
        messages = sum(isinstance(e, MessageEntry) for e in agent.entries)
        lines.append(
            f"  {info.get('agentId', '?')}  {info.get('agentType', '?')}: "
            f"{info.get('description', '')} ({_plural(messages, 'message')})"
        )
    return lines


def format_table(summaries: Sequence[SessionSummary], width: int) -> list[str]:
    rows = [
        (
            s.session_id,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(s.last_active)),
            str(s.turns),
            f"${s.cost_usd:.4f}",
            " ".join(s.first_prompt.split()) or "-",
        )
        for s in summaries
    ]
    widths = [max(len(row[i]) for row in (HEADER, *rows)) for i in range(4)]

    def line(row: tuple[str, ...]) -> str:
        sid, date, turns, cost, prompt = row
        head = (
            f"{sid:<{widths[0]}}  {date:<{widths[1]}}  {turns:>{widths[2]}}  {cost:>{widths[3]}}  "
        )
        room = max(20, width - len(head))
        return head + (prompt if len(prompt) <= room else prompt[: room - 1] + "…")

    return [line(HEADER), *(line(row) for row in rows)]


def format_timeline(
    timeline: Timeline, width: int, *, compactions: bool = False, full: bool = False
) -> list[str]:
    folds = sum(len(e.results) for e in timeline.entries if isinstance(e, FoldEntry))
    messages = sum(isinstance(e, MessageEntry) for e in timeline.entries)
    agent = timeline.agent
    head = (
        f"sub-agent {agent['agentId']} ({agent['agentType']}: {agent['description']}) of "
        if agent
        else ""
    )
    lines = [
        f"{head}session {timeline.session_id} in {timeline.cwd or '?'}",
        f"{messages} messages, {len(timeline.compactions)} compactions, "
        f"{folds} tool results folded",
        *(f"warning: {w}" for w in timeline.warnings),
    ]
    day = ""
    for entry in timeline.entries:
        if compactions and isinstance(entry, MessageEntry):
            continue
        date, clock = _local(entry.time)
        if date != day:
            day = date
            lines += ["", date]
        for i, text in enumerate(_describe(entry, timeline, full)):
            head = f"{clock:<8}  " if i == 0 else ""
            line = f"{head:<10}{text}" if i == 0 else f"{INDENT}{text}"
            lines.append(line if full or len(line) <= width else line[: width - 1] + "…")
    return lines


def _describe(entry: Entry, timeline: Timeline, full: bool) -> list[str]:
    if isinstance(entry, MessageEntry):
        return _message(entry.message, timeline, full)
    if isinstance(entry, FoldEntry):
        count = _plural(len(entry.results), "tool result")
        return [f"{'folded':<10}  {count}, to one-line stubs:"] + [
            f"  {_record(r)}" for r in entry.results
        ]
    if isinstance(entry, RewriteEntry):
        return [f"{'rewritten':<10}  the history was rewritten ({entry.trigger})"]
    return _compaction(entry)


def _compaction(entry: CompactionEntry) -> list[str]:
    tokens = (
        f": {entry.tokens_before:,} → {entry.tokens_after:,} tokens"
        if entry.tokens_before is not None and entry.tokens_after is not None
        else ""
    )
    summarized = (
        "" if entry.summarized is None else f"summarized {_plural(entry.summarized, 'message')}, "
    )
    lines = [
        f"{'compaction':<10}  {entry.trigger}{tokens}; {summarized}kept {entry.kept} word for word"
    ]
    if entry.results:
        fates = Counter(r.fate for r in entry.results)
        counts = ", ".join(f"{n} {fate}" for fate, n in fates.items())
        lines.append(f"{_plural(len(entry.results), 'tool result')} it replaced ({counts}):")
        lines += [f"  {_record(r)}" for r in entry.results]
    lines.append("summary:")
    lines += [f"  {line}".rstrip() for line in entry.summary.splitlines()]
    return lines


def _record(record: ResultRecord) -> str:
    where = f"  {record.path}" if record.path else ""
    target = f" {record.target}" if record.target else ""
    return f"{record.fate:<10}  {record.tool}{target} ({record.tokens:,} tokens){where}"


def _message(message: Message, timeline: Timeline, full: bool) -> list[str]:
    if message.tool_results:
        parts = []
        for result in message.tool_results:
            use = timeline.calls.get(result.tool_use_id)
            name = use.name if use is not None else "tool"
            target = describe_target(use)
            text = result.text
            path = saved_path(text)
            if path is not None:
                what = f"saved to {path}"
            elif text.startswith(FOLDED_PREFIX):
                what = "folded"
            else:
                what = f"{len(text.splitlines())} lines, {human_size(len(text.encode()))}"
            failed = " (failed)" if result.is_error else ""
            parts.append(f"{name}{' ' + target if target else ''}{failed} → {what}")
        return [f"{'results':<10}  " + "; ".join(parts)]
    text = message.text if full else " ".join(message.text.split())
    calls = ", ".join(f"{u.name} {describe_target(u)}".strip() for u in message.tool_uses)
    kind = message.role if not message.is_meta else "context"
    body = f"{text} → {calls}" if calls and text else calls or text or "(empty)"
    if full:
        first, *rest = body.splitlines() or [""]
        return [f"{kind:<10}  {first}", *rest]
    return [f"{kind:<10}  {body}"]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _local(stamp: str) -> tuple[str, str]:
    """A transcript's UTC stamp as the local date and time."""
    try:
        epoch = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return "", ""
    local = time.localtime(epoch)
    return time.strftime("%Y-%m-%d", local), time.strftime("%H:%M:%S", local)
