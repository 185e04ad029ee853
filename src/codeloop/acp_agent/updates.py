"""codeloop's events as ACP `session/update`s: one translator per session, used by live
prompts (and the permission asks that run inside them) and by the replay of a loaded session,
so an editor sees a tool call the same way whichever path produced it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acp import schema
from acp.helpers import (
    image_block,
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message,
)

from codeloop import events
from codeloop.tool_names import canonical
from codeloop.types import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

Update = (
    schema.UserMessageChunk
    | schema.AgentMessageChunk
    | schema.AgentThoughtChunk
    | schema.ToolCallStart
    | schema.ToolCallProgress
    | schema.AgentPlanUpdate
    | schema.AvailableCommandsUpdate
    | schema.CurrentModeUpdate
    | schema.UsageUpdate
    | schema.ConfigOptionUpdate
)

ToolContent = (
    schema.ContentToolCallContent | schema.FileEditToolCallContent | schema.TerminalToolCallContent
)

KINDS: Mapping[str, schema.ToolKind] = {
    "Read": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "TaskOutput": "execute",
    "TaskStop": "execute",
    "Grep": "search",
    "Glob": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "Agent": "think",
    "ExitPlanMode": "switch_mode",
    "EnterPlanMode": "switch_mode",
}
# Tools whose effect the editor sees another way: the task list is the `plan` update.
UNSHOWN = frozenset({"TodoWrite"})
# An editor shows a tool's output in a panel: enough to read, not a whole log.
MAX_CONTENT_CHARS = 64_000
TITLE_CHARS = 80
# The latest calls of a sub-agent shown under its Agent call.
MAX_STEPS_SHOWN = 20


def kind_of(name: str) -> schema.ToolKind:
    return KINDS.get(canonical(name), "other")


def title_of(name: str, given: Mapping[str, Any], cwd: Path) -> str:
    """What the editor shows on the call's line: the file (relative to the project), the
    command, the pattern."""
    tool = canonical(name)
    path = _text(given.get("file_path") or given.get("notebook_path") or given.get("path"))
    shown = _relative(path, cwd) if path else ""
    if tool in ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit") and shown:
        lines = _line_range(given) if tool == "Read" else ""
        return f"{tool} {shown}{lines}"
    if tool == "Bash":
        command = _text(given.get("command")).strip().splitlines() or [""]
        return _short(command[0]) or "Bash"
    if tool == "Grep":
        return _short(f'grep "{_text(given.get("pattern"))}"' + (f" {shown}" if shown else ""))
    if tool == "Glob":
        return _short(f"glob {_text(given.get('pattern'))}" + (f" in {shown}" if shown else ""))
    if tool == "WebFetch":
        return _short(f"Fetch {_text(given.get('url'))}")
    if tool == "WebSearch":
        return _short(f"Search the web: {_text(given.get('query'))}")
    if tool == "Agent":
        return _short(_text(given.get("description")) or "Agent")
    if tool == "ExitPlanMode":
        return "Ready to code?"
    if name.startswith("mcp__"):
        _, server, rest = [*name.split("__", 2), "", ""][:3]
        return f"{server}: {rest}"
    return name


def locations_of(name: str, given: Mapping[str, Any], cwd: Path) -> list[schema.ToolCallLocation]:
    """Where the call works, as absolute paths (and the first line when the call says)."""
    path = _text(given.get("file_path") or given.get("notebook_path") or given.get("path"))
    if not path:
        return []
    line = given.get("offset") if canonical(name) == "Read" else None
    absolute = str(_absolute(path, cwd))
    if isinstance(line, int) and line > 0:
        return [schema.ToolCallLocation(path=absolute, line=line)]
    return [schema.ToolCallLocation(path=absolute)]


def planned_diff(name: str, given: Mapping[str, Any], cwd: Path) -> list[ToolContent]:
    """The change a call asks for, from its input (before it runs: what a permission request
    shows)."""
    tool = canonical(name)
    path = _text(given.get("file_path"))
    if not path:
        return []
    absolute = str(_absolute(path, cwd))
    if tool == "Edit" and isinstance(given.get("new_string"), str):
        old = given.get("old_string")
        return [
            tool_diff_content(absolute, given["new_string"], old if isinstance(old, str) else "")
        ]
    if tool == "Write" and isinstance(given.get("content"), str):
        return [tool_diff_content(absolute, given["content"], _current_text(Path(absolute)))]
    return []


def made_diff(data: Mapping[str, Any] | None) -> list[ToolContent]:
    """The change Edit or Write made, one diff item per hunk (their `structuredPatch`)."""
    if not data or not isinstance(data.get("filePath"), str):
        return []
    items: list[ToolContent] = []
    for hunk in data.get("structuredPatch") or []:
        lines = [str(line) for line in hunk.get("lines", [])]
        old = "\n".join(line[1:] for line in lines if line[:1] in (" ", "-"))
        new = "\n".join(line[1:] for line in lines if line[:1] in (" ", "+"))
        items.append(tool_diff_content(data["filePath"], new, old))
    return items


def result_content(result: ToolResultBlock) -> list[ToolContent]:
    """A tool's result as the call's content: its text (capped) and its images."""
    blocks: Sequence[TextBlock | ImageBlock] = (
        (TextBlock(result.content),) if isinstance(result.content, str) else result.content
    )
    items: list[ToolContent] = []
    for block in blocks:
        if isinstance(block, ImageBlock):
            items.append(tool_content(image_block(block.data, block.media_type)))
        elif block.text:
            items.append(tool_content(text_block(_capped(block.text))))
    return items


def stop_reason(end: events.LoopEnd, last_stop: str | None) -> schema.StopReason:
    """ACP's stop reason for how a prompt's run ended (a failure is an error instead)."""
    if end.reason in ("aborted_streaming", "aborted_tools"):
        return "cancelled"
    if end.reason in ("max_turns", "max_budget"):
        return "max_turn_requests"
    if last_stop == "max_tokens":
        return "max_tokens"
    if last_stop == "refusal":
        return "refusal"
    return "end_turn"


def usage_update(usage: Usage, window: int, cost_usd: float) -> schema.UsageUpdate:
    """After a request: the tokens its prompt took of the model's window, and the session's
    cost so far."""
    used = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    return schema.UsageUpdate(
        session_update="usage_update",
        used=used + usage.output_tokens,
        size=window,
        cost=schema.Cost(amount=cost_usd, currency="USD"),
    )


def prompt_usage(end: events.LoopEnd) -> schema.Usage:
    u = end.usage
    total = (
        u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
    )
    return schema.Usage(
        total_tokens=total,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cached_read_tokens=u.cache_read_input_tokens,
        cached_write_tokens=u.cache_creation_input_tokens,
    )


class UpdateTranslator:
    """Events in, updates out, for one session. It remembers which tool calls the editor has
    been told about, so each gets exactly one `tool_call` before any update of it, whoever
    announces it first (the event stream, or a permission request racing it)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.message_id = _new_id()
        self.last_stop: str | None = None
        self._announced: set[str] = set()
        self._running: set[str] = set()
        self._finished: set[str] = set()
        self._names: dict[str, str] = {}  # each announced call's tool
        self._steps: dict[str, list[str]] = {}  # each Agent call's sub-agent calls, as titles
        # Calls whose command runs in an editor's terminal: the terminal shows its output.
        self._terminals: dict[str, str] = {}

    def terminal(self, tool_use_id: str, terminal_id: str) -> list[Update]:
        """The call's command runs in the editor's terminal `terminal_id` (shown in the
        call's `tool_call` if it has not gone out yet)."""
        self._terminals[tool_use_id] = terminal_id
        if tool_use_id not in self._announced:
            return []
        self._running.add(tool_use_id)
        shown = [tool_terminal_ref(terminal_id)]
        return [update_tool_call(tool_use_id, status="in_progress", content=shown)]

    def _terminal_of(self, tool_use_id: str) -> list[ToolContent]:
        terminal_id = self._terminals.get(tool_use_id)
        return [tool_terminal_ref(terminal_id)] if terminal_id is not None else []

    def announce(self, tool_use: ToolUseBlock) -> list[Update]:
        """The call's `tool_call` (pending), unless the editor already has it."""
        if tool_use.id in self._announced or tool_use.name in UNSHOWN:
            return []
        self._announced.add(tool_use.id)
        self._names[tool_use.id] = canonical(tool_use.name)
        given = tool_use.input
        return [
            start_tool_call(
                tool_use.id,
                title_of(tool_use.name, given, self.cwd),
                kind=kind_of(tool_use.name),
                status="pending",
                content=[
                    *self._terminal_of(tool_use.id),
                    *planned_diff(tool_use.name, given, self.cwd),
                ],
                locations=locations_of(tool_use.name, given, self.cwd),
                raw_input=dict(given),
            )
        ]

    def open_call(self, name: str) -> str | None:
        """The latest call of tool `name` the editor was shown that has not ended."""
        open_ids = [i for i, n in self._names.items() if n == name and i not in self._finished]
        return open_ids[-1] if open_ids else None

    def running(self, tool_use_id: str) -> list[Update]:
        """The call was allowed and runs (`in_progress`, once)."""
        if tool_use_id not in self._announced or tool_use_id in self._running | self._finished:
            return []
        self._running.add(tool_use_id)
        return [update_tool_call(tool_use_id, status="in_progress")]

    def finished(self, event: events.ToolFinished) -> list[Update]:
        tool_use, result = event.tool_use, event.result
        if tool_use.name in UNSHOWN or tool_use.id in self._finished:
            return []
        updates = self.announce(tool_use)
        self._finished.add(tool_use.id)
        diff = made_diff(event.data) if not result.is_error else []
        locations = None
        if diff and event.data is not None:
            starts = [h.get("newStart") for h in event.data.get("structuredPatch") or []]
            path = str(event.data["filePath"])
            locations = [
                schema.ToolCallLocation(path=path, line=s if isinstance(s, int) and s > 0 else None)
                for s in starts[:1]
            ]
        updates.append(
            update_tool_call(
                tool_use.id,
                status="failed" if result.is_error else "completed",
                content=[*self._terminal_of(tool_use.id), *diff, *result_content(result)],
                locations=locations,
                raw_output=_capped(result.text),
            )
        )
        return updates

    def replay(self, history: Sequence[Message]) -> list[Update]:
        """A stored conversation as the editor would have seen it live: the user's prompts,
        the answers and thinking, each tool call with its result, and the task list as the
        last TodoWrite left it (session/load)."""
        updates: list[Update] = []
        calls: dict[str, ToolUseBlock] = {}
        todos: list[Any] | None = None
        for message in history:
            if message.is_meta:
                continue
            if message.role == "assistant":
                self.message_id = message.uuid
            for block in message.content:
                match block:
                    case TextBlock(text=text) if message.role == "user":
                        updates.append(update_user_message(text_block(text)))
                    case ImageBlock(media_type=mime, data=data) if message.role == "user":
                        updates.append(update_user_message(image_block(data, mime)))
                    case TextBlock(text=text):
                        updates.append(self._chunk(update_agent_message(text_block(text))))
                    case ThinkingBlock(thinking=thought):
                        updates.append(self._chunk(update_agent_thought_text(thought)))
                    case ToolUseBlock(name="TodoWrite", input={"todos": list() as listed}):
                        todos = listed
                    case ToolUseBlock():
                        calls[block.id] = block
                        updates.extend(self.announce(block))
                    case ToolResultBlock(tool_use_id=call_id) if call_id in calls:
                        updates.extend(self.finished(events.ToolFinished(calls[call_id], block)))
        if todos is not None:
            updates.append(update_plan(_plan_entry(t) for t in todos if isinstance(t, dict)))
        return updates

    def feed(self, event: events.Event) -> list[Update]:
        """What the editor is told about `event` (often nothing: internal steps)."""
        match event:
            case events.TextDelta(text=text):
                return [self._chunk(update_agent_message(text_block(text)))]
            case events.ThinkingDelta(text=text):
                return [self._chunk(update_agent_thought_text(text))]
            case events.RequestStart():
                self.message_id = _new_id()
            case events.ResponseDiscarded(reason=reason):
                self.message_id = _new_id()
                return [
                    update_agent_thought_text(f"(the answer so far is void, retrying: {reason})")
                ]
            case events.AssistantTurn(stop_reason=stop):
                self.last_stop = stop
            case events.ToolStarted(tool_use=tool_use):
                return self.announce(tool_use)
            case events.ToolRunning(tool_use_id=tool_use_id):
                return self.running(tool_use_id)
            case events.ToolFinished():
                return self.finished(event)
            case events.TodosChanged(todos=todos):
                return [update_plan(_plan_entry(todo) for todo in todos)]
            case events.Notice(level=level, text=text) if level != "info":
                return [update_agent_thought_text(f"{level}: {text}")]
            case events.Retrying(wait_seconds=wait, error=error):
                return [update_agent_thought_text(f"Retrying in {wait:.0f} s: {error}")]
            case events.Compacting():
                return [update_agent_thought_text("Compacting the conversation…")]
            case events.CompactBoundary(messages_replaced=replaced):
                return [update_agent_thought_text(f"Compacted: {replaced} messages summarised")]
            case events.ToolUseSummary(summary=summary):  # a label for the last tool batch
                return [update_agent_thought_text(f"({summary})")]
            # A sub-agent's call the editor was shown (it asked permission) runs and ends.
            case events.SubagentEvent(event=events.ToolRunning(tool_use_id=inner_id)):
                return self.running(inner_id)
            case events.SubagentEvent(event=events.ToolFinished() as inner):
                if inner.tool_use.id in self._announced:
                    return self.finished(inner)
            # Any other call of a sub-agent shows as a line under the Agent call that runs it.
            case events.SubagentEvent(agent=agent, event=events.ToolStarted(tool_use=inner)):
                return self._agent_step(agent.tool_use_id, inner)
        return []

    def _agent_step(self, agent_call: str, step: ToolUseBlock) -> list[Update]:
        if agent_call not in self._announced or step.name in UNSHOWN:
            return []
        lines = self._steps.setdefault(agent_call, [])
        lines.append(title_of(step.name, step.input, self.cwd))
        shown = tool_content(text_block("\n".join(lines[-MAX_STEPS_SHOWN:])))
        return [update_tool_call(agent_call, content=[shown])]

    def _chunk(self, chunk: Any) -> Any:
        chunk.message_id = self.message_id
        return chunk


def _plan_entry(todo: Mapping[str, str]) -> schema.PlanEntry:
    status = todo.get("status")
    known: schema.PlanEntryStatus = "pending"
    if status == "in_progress":
        known = "in_progress"
    elif status == "completed":
        known = "completed"
    return plan_entry(todo.get("content", ""), status=known)


def _new_id() -> str:
    return str(uuid.uuid4())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _short(text: str) -> str:
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def _capped(text: str) -> str:
    if len(text) <= MAX_CONTENT_CHARS:
        return text
    return text[:MAX_CONTENT_CHARS] + f"\n… ({len(text) - MAX_CONTENT_CHARS:,} more characters)"


def _absolute(path: str, cwd: Path) -> Path:
    return Path(os.path.normpath(cwd / Path(path).expanduser()))


def _relative(path: str, cwd: Path) -> str:
    absolute = _absolute(path, cwd)
    try:
        return str(absolute.relative_to(cwd))
    except ValueError:
        return str(absolute)


def _line_range(given: Mapping[str, Any]) -> str:
    offset, limit = given.get("offset"), given.get("limit")
    if isinstance(offset, int) and isinstance(limit, int):
        return f" (lines {offset}–{offset + limit - 1})"
    if isinstance(offset, int):
        return f" (from line {offset})"
    return ""


def _current_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
