"""MessageDisplay: the one seam assistant text passes through on its way to the user.

`Session.submit` yields its events through `MessageDisplay.shown`, so every frontend (the TUI,
`-p`, the SDK protocol, the Python API) gets them the same way; with MessageDisplay hooks
configured, each assistant message's text is what the hooks' `displayContent` says (their
original text when a hook gives none, fails or times out). Interactive frontends stream it in
batches of completed lines (`batches=True`, the TUI); the others show a message once it is
complete, in one call carrying all of it (Claude Code's contract). The session has already
recorded every event before it passes through here, so the transcript and what the model reads
keep the original text; only what the frontend sees changes. Tool results and the user's text
never pass through it, nor sub-agents' messages (not displayed as text).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import field, replace

from codeloop.events import AssistantTurn, Event, LoopEnd, ResponseDiscarded, TextDelta
from codeloop.hooks.hook_runner import HookRunner
from codeloop.system.valueclass import valueclass
from codeloop.types import ContentBlock, Message, TextBlock, new_uuid

EVENT = "MessageDisplay"


@valueclass(frozen=False)
class _Message:
    """The assistant message being displayed: its id, batches sent, text held, text shown."""

    id: str = field(default_factory=new_uuid)
    index: int = 0
    held: str = ""
    shown: list[str] = field(default_factory=list)


class MessageDisplay:
    def __init__(self, hooks: HookRunner | None, *, batches: bool) -> None:
        self.hooks = hooks
        self.batches = batches

    async def shown(self, events: AsyncIterator[Event]) -> AsyncGenerator[Event, None]:
        """`events` as the user should see them (unchanged without MessageDisplay hooks)."""
        hooks = self.hooks
        if hooks is None or not hooks.configured(EVENT):
            async for event in events:
                yield event
            return
        turn_id, current = new_uuid(), _Message()
        replaced: dict[str, Message] = {}  # original message uuid -> the displayed one
        async for event in events:
            if isinstance(event, TextDelta):
                current.held += event.text
                if self.batches and "\n" in current.held:
                    lines, _, current.held = current.held.rpartition("\n")
                    yield TextDelta(await self._batch(hooks, turn_id, current, f"{lines}\n"))
                continue
            if isinstance(event, ResponseDiscarded):
                current = _Message()
            elif isinstance(event, AssistantTurn):
                if event.message.text:
                    last = current.held if self.batches else event.message.text
                    if text := await self._batch(hooks, turn_id, current, last, final=True):
                        yield TextDelta(text)
                    shown = _with_text(event.message, "".join(current.shown))
                    replaced[event.message.uuid] = shown
                    event = replace(event, message=shown)
                current = _Message()
            elif isinstance(event, LoopEnd) and replaced:
                messages = tuple(replaced.get(m.uuid, m) for m in event.messages)
                event = replace(event, messages=messages)
            yield event

    async def _batch(
        self, hooks: HookRunner, turn_id: str, message: _Message, delta: str, *, final: bool = False
    ) -> str:
        payload = {
            "turn_id": turn_id,
            "message_id": message.id,
            "index": message.index,
            "final": final,
            "delta": delta,
        }
        message.index += 1
        outcome = await hooks.run(EVENT, payload)
        # A failing hook changes nothing and is not reported in the session (Claude Code's).
        texts = [s["displayContent"] for s in outcome.specific if "displayContent" in s]
        shown = next((t for t in reversed(texts) if isinstance(t, str)), delta)
        message.shown.append(shown)
        return shown


def _with_text(message: Message, text: str) -> Message:
    """The message with its text blocks replaced by one holding `text`, where the first was."""
    blocks: list[ContentBlock] = []
    for block in message.content:
        if not isinstance(block, TextBlock):
            blocks.append(block)
        elif not any(isinstance(b, TextBlock) for b in blocks):
            blocks.append(TextBlock(text))
    return replace(message, content=tuple(blocks))
