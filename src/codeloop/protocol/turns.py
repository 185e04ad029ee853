"""One session driven prompt by prompt, its output as the Agent SDK's messages: each prompt
opens with the init message and closes with its result, and everything between is what
stream-json prints (the same renderer). The CLI side of the protocol writes these objects to
stdout; the in-process API (api.py) hands them to Python code.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from codeloop.errors import UsageError
from codeloop.events import LoopEnd
from codeloop.frontdoor import Conversation
from codeloop.protocol.json_lines import Emit, StreamJsonRenderer
from codeloop.structured_output import StructuredOutput
from codeloop.types import new_uuid


class SdkConversation:
    """The front door's conversation, spoken in the SDK's messages (stream_event lines when
    it was opened to stream its events); `structured`: --json-schema's answer, per prompt;
    `replay`: echo each prompt as a user line (--replay-user-messages)."""

    def __init__(
        self,
        conversation: Conversation,
        emit: Emit,
        *,
        structured: StructuredOutput | None = None,
        replay: bool = False,
    ) -> None:
        self.conversation = conversation
        self.session = conversation.session
        self.emit = emit
        self.structured = structured
        self.replay = replay
        self.out = StreamJsonRenderer(self.session, emit, structured=structured)
        # The last prompt's exit status as `codeloop -p` would give it (0, 1, 130).
        self.status = 0

    @property
    def running(self) -> bool:
        return self.conversation.running

    async def prompt(self, content: Any, uuid: str | None = None) -> int:
        """Run one prompt (a string, or a list of content blocks) to its result; `uuid` names
        its message (the SDK's, or a new one), the id rewind_files takes."""
        started = time.monotonic()
        text, dropped = prompt_text(content)
        conversation = self.conversation
        uuid = uuid or new_uuid()
        if self.replay:
            self.emit(
                {
                    "type": "user",
                    "message": {"role": "user", "content": content},
                    "parent_tool_use_id": None,
                    "session_id": conversation.session_id,
                    "uuid": uuid,
                    "isReplay": True,
                }
            )
        if self.structured is not None:
            self.structured.reset()
        await conversation.start_servers()
        conversation.list_commands()  # the MCP servers' prompts too, now they are up
        self.out.start(uuid)
        for kind in dropped:
            self.notice(f"a prompt's {kind} block is not supported yet; it was left out")
        end: LoopEnd | None = None
        async for event in conversation.prompt(text, uuid=uuid):
            self.out.event(event)
            if isinstance(event, LoopEnd):
                end = event
        assert end is not None
        self.status = self.out.finish(end, time.monotonic() - started)
        return self.status

    def send(self, content: Any, uuid: str) -> asyncio.Future[bool] | None:
        """A message sent while a prompt runs (Conversation.send); None: none runs."""
        text, dropped = prompt_text(content)
        for kind in dropped:
            self.notice(f"a message's {kind} block is not supported yet; it was left out")
        return self.conversation.send(text, uuid)

    def notice(self, text: str) -> None:
        """Something the SDK's user should know that is not a message of the conversation."""
        self.emit(
            {
                "type": "system",
                "subtype": "notice",
                "level": "warning",
                "text": text,
                "session_id": self.conversation.session_id,
                "uuid": new_uuid(),
            }
        )

    def set_permission_mode(self, mode: Any) -> str:
        self.conversation.set_mode(mode)
        return str(mode)

    async def set_model(self, spec: Any) -> str:
        """Another model from the next request on (None: the one the session started with)."""
        return await self.conversation.set_model(spec, self.notice)

    async def rewind_files(self, message_id: Any, *, dry_run: bool = False) -> dict[str, Any]:
        return await self.conversation.rewind_files(message_id, dry_run=dry_run)


def prompt_text(content: Any) -> tuple[str, list[str]]:
    """A user message's content as the prompt's text, and the kinds of blocks left out."""
    if isinstance(content, str):
        return content, []
    if not isinstance(content, Sequence):
        raise UsageError("a user message's content is a string or a list of blocks")
    texts: list[str] = []
    dropped: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            dropped.append(str(kind))
    return "\n\n".join(texts), dropped
