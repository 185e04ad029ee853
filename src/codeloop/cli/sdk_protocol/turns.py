"""One session driven prompt by prompt, its output as the Agent SDK's messages: each prompt
opens with the init message and closes with its result, and everything between is what
stream-json prints (the same renderer). The CLI side of the protocol writes these objects to
stdout; the in-process API (api.py) hands them to Python code.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from codeloop.cli.headless import list_slash_commands
from codeloop.cli.render.json_lines import Emit, StreamJsonRenderer
from codeloop.errors import UsageError
from codeloop.events import LoopEnd
from codeloop.models.aliases import resolve_alias
from codeloop.models.factory import split_spec
from codeloop.permissions.policy import PERMISSION_MODES, PermissionMode
from codeloop.session import Session
from codeloop.structured_output import StructuredOutput
from codeloop.types import new_uuid

if TYPE_CHECKING:
    from codeloop.checkpoints.restore import Change

# Claude Code's other names for modes codeloop runs as default.
MODE_ALIASES: Mapping[str, PermissionMode] = {"manual": "default"}


class Conversation:
    """`partial`: stream_event lines too; `structured`: --json-schema's answer, per prompt;
    `replay`: echo each prompt as a user line (--replay-user-messages)."""

    def __init__(
        self,
        session: Session,
        emit: Emit,
        *,
        partial: bool = False,
        structured: StructuredOutput | None = None,
        replay: bool = False,
    ) -> None:
        self.session = session
        self.emit = emit
        self.structured = structured
        self.replay = replay
        self.out = StreamJsonRenderer(session, emit, structured=structured, partial=partial)
        session.deps = replace(session.deps, call_model=self.out.tap(session.deps.call_model))
        self.started_model = session.config.model
        self.running = False
        # The last prompt's exit status as `codeloop -p` would give it (0, 1, 130).
        self.status = 0

    async def prompt(self, content: Any, uuid: str | None = None) -> int:
        """Run one prompt (a string, or a list of content blocks) to its result; `uuid` names
        its message (the SDK's, or a new one), the id rewind_files takes."""
        started = time.monotonic()
        text, dropped = prompt_text(content)
        session = self.session
        uuid = uuid or new_uuid()
        if self.replay:
            self.emit(
                {
                    "type": "user",
                    "message": {"role": "user", "content": content},
                    "parent_tool_use_id": None,
                    "session_id": session.session_id,
                    "uuid": uuid,
                    "isReplay": True,
                }
            )
        if self.structured is not None:
            self.structured.reset()
        self.running = True
        try:
            await session.start_servers()
            list_slash_commands(session)  # the MCP servers' prompts too, now they are up
            self.out.start()
            for kind in dropped:
                self.notice(f"a prompt's {kind} block is not supported yet; it was left out")
            end: LoopEnd | None = None
            async for event in session.submit(text, uuid=uuid):
                self.out.event(event)
                if isinstance(event, LoopEnd):
                    end = event
        finally:
            self.running = False
        assert end is not None
        self.status = self.out.finish(end, time.monotonic() - started)
        return self.status

    def notice(self, text: str) -> None:
        """Something the SDK's user should know that is not a message of the conversation."""
        self.emit(
            {
                "type": "system",
                "subtype": "notice",
                "level": "warning",
                "text": text,
                "session_id": self.session.session_id,
                "uuid": new_uuid(),
            }
        )

    def set_permission_mode(self, mode: Any) -> str:
        if not isinstance(mode, str) or mode not in (*PERMISSION_MODES, *MODE_ALIASES):
            known = ", ".join((*PERMISSION_MODES, *MODE_ALIASES))
            raise UsageError(f"permission mode {mode!r} is not one of {known}")
        policy = self.session.config.policy
        if mode == "auto" and policy.auto is None:
            raise UsageError('auto mode is disabled by the settings (disableAutoMode: "disable")')
        policy.mode = MODE_ALIASES.get(mode) or _mode(mode)
        return mode

    async def set_model(self, spec: Any) -> str:
        """Another model from the next request on (None: the one the session started with):
        an alias or a name the session's provider serves. The PreModelSwitch hooks may refuse
        it (a UsageError); the PostModelSwitch hooks' context goes with the next prompt."""
        session = self.session
        if spec is None or spec == "default":
            name = self.started_model
        elif not isinstance(spec, str) or not spec.strip():
            raise UsageError("set_model: expected a model name")
        else:
            env = session.workspace.env if session.workspace.env is not None else os.environ
            provider, name = split_spec(resolve_alias(spec.strip(), env), env)
            if provider != session.client.provider:
                raise UsageError(
                    f"set_model: {spec} is served by {provider}, and this session talks to "
                    f"{session.client.provider}; start a session with --model {spec} instead"
                )
        await session.switch_model(name, self.notice)
        return name

    async def rewind_files(self, message_id: Any, *, dry_run: bool = False) -> dict[str, Any]:
        """The files as they were when the prompt `message_id` was sent (the conversation
        stays as it is), in Claude Code's answer: `canRewind`, and `filesChanged` (with a dry
        run, what would change). An id that is not a prompt of this session: UsageError, or
        canRewind false for a dry run, as Claude Code answers."""
        session = self.session
        if session.checkpoints is None:
            raise UsageError(
                "rewind_files: this session keeps no checkpoints (checkpoints.enabled is "
                "false, or CODELOOP_CHECKPOINTS=0)"
            )
        prompts = {m.uuid for m in session.messages if m.role == "user" and not m.tool_results}
        if not isinstance(message_id, str) or message_id not in prompts:
            if dry_run:
                return {"canRewind": False, "error": NO_CHECKPOINT}
            raise UsageError(NO_CHECKPOINT)
        await session.checkpoints.settle()
        checkpoint = session.checkpoints.for_message(message_id)
        if checkpoint is None:  # nothing was written from that prompt on
            return {"canRewind": True, "filesChanged": []}
        # The files as they were, whoever changed them since (Claude Code's rewind): force.
        done = await session.rewind(
            checkpoint.number, conversation=False, dry_run=dry_run, force=True
        )
        plan = done.files.plan
        if dry_run:
            changes = plan.to_apply(force=True)
            return {"canRewind": True, "filesChanged": _paths(changes)}
        applied = done.files.applied
        restored = applied.done if applied is not None else []
        failed = applied.failed if applied is not None else []
        if failed and not restored:
            why = "; ".join(f"{_paths([c])[0]}: {reason}" for c, reason in failed)
            raise UsageError(f"rewind_files: no file could be restored: {why}")
        answer: dict[str, Any] = {"canRewind": True, "filesChanged": _paths(restored)}
        if failed:
            answer["filesFailed"] = [
                {"path": _paths([c])[0], "error": reason} for c, reason in failed
            ]
        return answer


NO_CHECKPOINT = "No file checkpoint found for this message."


def _paths(changes: Sequence[Change]) -> list[str]:
    return [os.path.join(c.root, c.path) for c in changes]


def _mode(name: str) -> PermissionMode:
    return next(m for m in PERMISSION_MODES if m == name)


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
