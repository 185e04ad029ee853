"""The questions the UI asks: the permission dialog (allow once, allow always with the rule it
keeps, deny with a message for the model) and a picker (which session to resume, which rule to
remove). Each is a small state machine the key bindings drive; the layout draws `lines()`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:  # the policy (and the shell parser under it) loads with the session
    from codeloop.permissions.policy import Answer, PermissionRequest

MAX_PREVIEW_LINES = 8


@valueclass(frozen=False)
class Picker:
    title: str
    options: Sequence[str]
    answer: asyncio.Future[int | None]
    selected: int = 0

    def move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(self.options)

    def pick(self, index: int | None = None) -> None:
        if not self.answer.done():
            self.answer.set_result(self.selected if index is None else index)

    def cancel(self) -> None:
        if not self.answer.done():
            self.answer.set_result(None)

    def lines(self, height: int) -> list[tuple[str, str]]:
        """(style, text) lines; a long list scrolls with the selection."""
        rows = max(3, height)
        first = max(0, min(self.selected - rows // 2, len(self.options) - rows))
        out = [("bold", self.title)]
        for i in range(first, min(len(self.options), first + rows)):
            mark = "❯ " if i == self.selected else "  "
            out.append(
                ("reverse" if i == self.selected else "", f"{mark}{i + 1}. {self.options[i]}")
            )
        out.append(("dim", "↑/↓ to move · Enter to pick · Esc to cancel"))
        return out


@valueclass(frozen=False)
class PermissionDialog:
    request: PermissionRequest
    answer: asyncio.Future[Answer]
    selected: int = 0
    # Typing the message that goes with a denial.
    writing: bool = False
    choices: list[tuple[str, str]] = field(default_factory=list)  # (kind, label)

    def __post_init__(self) -> None:
        rules = self.request.decision.suggestions
        self.choices = [("allow_once", "Yes")]
        if rules:
            where = ", ".join(rules)
            self.choices.append(("allow_always", f"Yes, and don't ask again for {where}"))
        self.choices.append(("deny", "No, and tell the model what to do instead (esc)"))

    def move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(self.choices)

    def pick(self, index: int | None = None) -> None:
        """Enter or a number: allow once, allow always, or deny (which first asks for a
        message: Enter again sends it, empty or not)."""
        if index is not None:
            if not 0 <= index < len(self.choices):
                return
            self.selected = index
        from codeloop.permissions.policy import Answer

        kind = self.choices[self.selected][0]
        if kind == "deny":
            self.writing = True
            return
        self._answer(Answer(kind))  # type: ignore[arg-type]

    def deny(self, message: str = "") -> None:
        from codeloop.permissions.policy import Answer

        self._answer(Answer("deny", message.strip()))

    def _answer(self, answer: Answer) -> None:
        if not self.answer.done():
            self.answer.set_result(answer)

    def lines(self, width: int) -> list[tuple[str, str]]:
        request = self.request
        title = _TITLES.get(request.tool_name, f"Tool use: {request.tool_name}")
        out: list[tuple[str, str]] = [("bold ansiyellow", f"╭ {title}")]
        for line in preview(request)[:MAX_PREVIEW_LINES]:
            out.append(("", f"│  {line}"[: max(10, width - 1)]))
        out.append(("dim", f"│  {request.decision.explain()}"[: max(10, width - 1)]))
        out.append(("bold", "│ Do you want to proceed?"))
        for i, (_, label) in enumerate(self.choices):
            mark = "❯" if i == self.selected else " "
            style = "bold ansicyan" if i == self.selected else ""
            out.append((style, f"│ {mark} {i + 1}. {label}"[: max(10, width - 1)]))
        if self.writing:
            out.append(("bold", "│ Tell the model why, or what to do instead (Enter sends):"))
        return out


_TITLES = {
    "Bash": "Bash command",
    "Edit": "Edit file",
    "Write": "Create or overwrite file",
    "NotebookEdit": "Edit notebook",
    "WebFetch": "Fetch a web page",
}


def preview(request: PermissionRequest) -> list[str]:
    """What the call would do, in the user's terms: the command, the file and the change."""
    data = request.input
    if request.tool_name == "Bash":
        lines = str(data.get("command", "")).splitlines()
        if data.get("description"):
            lines.append(f"({data['description']})")
        return lines
    if request.tool_name == "Edit":
        lines = [str(data.get("file_path", ""))]
        lines += [f"- {x}" for x in str(data.get("old_string", "")).splitlines()[:3]]
        lines += [f"+ {x}" for x in str(data.get("new_string", "")).splitlines()[:3]]
        return lines
    if request.tool_name == "Write":
        content = str(data.get("content", ""))
        return [str(data.get("file_path", "")), f"({content.count(chr(10)) + 1} lines)"]
    return json.dumps(data, ensure_ascii=False, indent=1).splitlines()
