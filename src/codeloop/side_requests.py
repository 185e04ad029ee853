"""Side requests: small questions asked beside the conversation on the session's small, fast
model, as Claude Code asks its haiku-class model. A label for each tool batch (tool-use
summaries), a few words on what a running sub-agent does (task progress), and what the user
might type next (prompt suggestions).

Each goes through the session's side model (models/complete.py's QuickModel: the session's
client, retry policy and usage ledger, so it costs what the budgets count). None ever fails a
run: a side request that fails is logged and answers None. They run beside the main loop,
never in its way: the caller starts them as tasks and reads them when it is ready.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field
from typing import Any, Protocol

from codeloop.system.lull import background_work
from codeloop.system.valueclass import valueclass
from codeloop.text import truncate_middle
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

log = logging.getLogger("codeloop.side_requests")

SIDE_SYSTEM = "You answer in a few words, with nothing else: no quotes, no preamble."
TOOL_SUMMARY_PROMPT = (
    "Write a short summary label describing what these tool calls accomplished. It is shown "
    "as a single line cut at about 30 characters, so think git commit subject, not sentence: "
    'a past-tense verb and the most telling noun (e.g. "Read config loader", "Fixed failing '
    'test"). Reply with the label only.'
)
PROGRESS_PROMPT = (
    "Describe the most recent action of this agent in 3-5 words, present tense (e.g. "
    '"Reading the runner tests"). Reply with the words only.'
)
SUGGESTION_PROMPT = """\
[SUGGESTION MODE: Suggest what the user might naturally type next into codeloop.]

FIRST: Look at the user's recent messages and original request in the conversation below.

Your job is to predict what THEY would type - not what you think they should do.

THE TEST: Would they think "I was just about to type that"?

EXAMPLES:
User asked "fix the bug and run tests", bug is fixed -> "run the tests"
After code written -> "try it out"
The assistant offers options -> the one the user would likely pick
The assistant asks to continue -> "yes" or "go ahead"
Task complete, obvious follow-up -> "commit this" or "push it"
After an error or a misunderstanding -> silence (let them assess or correct)

Be specific: "run the tests" beats "continue".

NEVER SUGGEST:
- Evaluative ("looks good", "thanks")
- Questions ("what about...?")
- Assistant-voice ("Let me...", "I'll...", "Here's...")
- New ideas they didn't ask about
- Multiple sentences

Stay silent (reply with nothing) if the next step isn't obvious from what the user said.

Format: 2-12 words, match the user's style. Or nothing.

Reply with ONLY the suggestion, no quotes or explanation."""
# Claude Code's default period between two progress summaries of a running sub-agent.
PROGRESS_EVERY_SECONDS = 30.0
# How much of a tool's input or output, and of the conversation, a side request carries.
_TOOL_CHARS = 1000
_CONVERSATION_CHARS = 12_000
_SUGGESTION_MAX_CHARS = 120

Wait = Callable[[float], Awaitable[None]]


class Asker(Protocol):
    """One question to a model, answered whole (models/complete.py's QuickModel)."""

    async def ask(self, prompt: str, *, system: str, max_tokens: int = 2048) -> str: ...


@valueclass(frozen=False)
class SideRequests:
    """The session's side requests and which are on. `wait` is the clock the progress reports
    keep (a test's seam: it decides when a period is over)."""

    model: Asker
    tool_summaries: bool = False
    agent_progress: bool = False
    prompt_suggestions: bool = False
    progress_every: float = PROGRESS_EVERY_SECONDS
    wait: Wait = field(default=asyncio.sleep)

    async def summarize_tools(
        self, calls: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock]
    ) -> str | None:
        """A label for one tool batch: what its calls, inputs and outputs accomplished. Its
        work is background work: it is done while a main request waits on the network (or
        the loop waits for the label), never between an answer and the next request."""
        async with background_work():
            return await self._summarize_tools(calls, results)

    async def _summarize_tools(
        self, calls: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock]
    ) -> str | None:
        outputs = {r.tool_use_id: r for r in results}
        parts = [TOOL_SUMMARY_PROMPT, ""]
        for call in calls:
            result = outputs.get(call.id)
            parts.append(f"Tool: {call.name}")
            parts.append(f"Input: {_clip(json.dumps(call.input, ensure_ascii=False))}")
            if result is not None:
                error = " (error)" if result.is_error else ""
                parts.append(f"Output{error}: {_clip(result.text)}")
            parts.append("")
        return _one_line(await self._ask("tool-use summary", "\n".join(parts), 64))

    async def describe_progress(self, messages: Sequence[Message]) -> str | None:
        """A few words on a running sub-agent's most recent action."""
        prompt = f"{PROGRESS_PROMPT}\n\n{conversation_text(messages)}"
        return _one_line(await self._ask("task progress", prompt, 64))

    async def suggest_prompt(self, messages: Sequence[Message]) -> str | None:
        """What the user would type next, or None when nothing is obvious."""
        prompt = f"{SUGGESTION_PROMPT}\n\n{conversation_text(messages)}"
        answer = _one_line(await self._ask("prompt suggestion", prompt, 128))
        if answer is None or len(answer) > _SUGGESTION_MAX_CHARS:
            return None
        return answer

    async def report_progress(
        self, recent: Callable[[], Sequence[Message]], report: Callable[[str], None]
    ) -> None:
        """Every `progress_every` seconds, a few words on what `recent` shows to `report`,
        until cancelled (the sub-agent ended). A period in which the agent did nothing new
        (its prompt alone, or a tool still running since the last report) asks nothing."""
        described = len(recent())
        while True:
            await self.wait(self.progress_every)
            messages = recent()
            if len(messages) == described:
                continue
            described = len(messages)
            if (summary := await self.describe_progress(messages)) is not None:
                report(summary)

    async def _ask(self, what: str, prompt: str, max_tokens: int) -> str | None:
        try:
            return await self.model.ask(prompt, system=SIDE_SYSTEM, max_tokens=max_tokens)
        except Exception as exc:  # a side request never costs the run (a cancel still stops it)
            log.warning("codeloop: %s request failed: %s", what, exc)
            return None


def conversation_text(messages: Sequence[Message]) -> str:
    """The conversation as plain text (its latest part when long): a side request sends no
    tools, so the history's tool calls travel as text rather than as tool blocks."""
    lines: list[str] = []
    for message in messages:
        if not message.is_meta:  # reminders and recovery prompts: not the user's words
            lines.extend(_block_line(message.role, block) for block in message.content)
    text = "\n".join(line for line in lines if line)
    if len(text) > _CONVERSATION_CHARS:
        text = "[earlier conversation left out]\n" + text[-_CONVERSATION_CHARS:]
    return f"<conversation>\n{text}\n</conversation>"


def _block_line(role: str, block: Any) -> str:
    if isinstance(block, TextBlock):
        return f"{role.capitalize()}: {block.text}" if block.text.strip() else ""
    if isinstance(block, ToolUseBlock):
        return f"Assistant called {block.name}: {_clip(json.dumps(block.input))}"
    if isinstance(block, ToolResultBlock):
        return f"Tool result: {_clip(block.text)}"
    return ""


def _clip(text: str) -> str:
    return truncate_middle(text, _TOOL_CHARS)


def _one_line(answer: str | None) -> str | None:
    """The answer's first line, unquoted; None when empty."""
    if answer is None:
        return None
    line = next((ln.strip() for ln in answer.strip().splitlines() if ln.strip()), "")
    line = line.strip("\"'` ")
    return line or None
