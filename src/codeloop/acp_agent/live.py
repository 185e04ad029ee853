"""One ACP session: a front-door Conversation, the editor connection its updates go to, and
the answers to what its prompts ask (permissions, through `session/request_permission`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from acp import RequestError, schema
from acp.helpers import (
    update_agent_message_text,
    update_agent_thought_text,
    update_current_mode,
)
from acp.interfaces import Client

from codeloop.acp_agent.modes import config_options
from codeloop.acp_agent.permissions import CANCELLED, answer_for, options_for
from codeloop.acp_agent.prompt_content import Block, to_prompt
from codeloop.acp_agent.questions import chosen, question_call, question_options
from codeloop.acp_agent.updates import (
    Update,
    UpdateTranslator,
    kind_of,
    locations_of,
    planned_diff,
    prompt_usage,
    stop_reason,
    title_of,
    usage_update,
)
from codeloop.commands import CommandError, Submit
from codeloop.events import LoopEnd, RequestEnd
from codeloop.frontdoor import Conversation
from codeloop.permissions.policy import Answer, PermissionRequest
from codeloop.tools.questions import Question
from codeloop.types import ToolUseBlock
from codeloop.workspace.tool_workspace import EditorFiles

log = logging.getLogger("codeloop.acp")

# How a run ended that is a failure the editor must show, not a stop reason.
FAILURES = frozenset({"model_error", "prompt_too_long", "image_error", "blocking_limit"})
# How a run ended early for a reason the user should read (a hook, the budget, a loop).
EXPLAINED = frozenset({"hook_stopped", "stop_hook_prevented", "max_budget", "repeated_calls"})
# How long a running prompt may take to stop when the editor goes away.
CLOSE_GRACE_SECONDS = 10.0


class LiveSession:
    def __init__(self, conversation: Conversation, client: Client, cwd: Path) -> None:
        self.conversation = conversation
        self.client = client
        self.cwd = cwd
        self.translator = UpdateTranslator(cwd)
        # The editor's buffers, when it serves them (what a linked file's content is).
        self.files: EditorFiles | None = None
        self._writing = asyncio.Lock()
        self._cancelled = asyncio.Event()
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._shown_mode = conversation.mode

    @property
    def session_id(self) -> str:
        return self.conversation.session_id

    async def send(self, updates: Iterable[Update]) -> None:
        """Updates in order, one writer per session: whoever sends after this call returns
        (a permission request) comes after them. Once the editor is gone they are dropped, so
        a running turn still ends and its transcript stays whole."""
        async with self._writing:
            for update in updates:
                try:
                    await self.client.session_update(self.session_id, update)
                except (ConnectionError, RuntimeError) as exc:
                    log.debug("update dropped: %s", exc)

    async def ask(self, request: PermissionRequest) -> Answer:
        """The policy's question to the user, as the editor's permission request, after the
        call's `tool_call`; a `session/cancel` while it waits is a rejection."""
        tool_use = ToolUseBlock(request.tool_use_id, request.tool_name, request.input)
        await self.send(self.translator.announce(tool_use))
        tool_call = schema.ToolCallUpdate(
            tool_call_id=request.tool_use_id,
            title=title_of(request.tool_name, request.input, self.cwd),
            kind=kind_of(request.tool_name),
            status="pending",
            content=planned_diff(request.tool_name, request.input, self.cwd) or None,
            locations=locations_of(request.tool_name, request.input, self.cwd) or None,
            raw_input=dict(request.input),
        )
        try:
            outcome = await self._request(tool_call, options_for(request))
        except (RequestError, ConnectionError, RuntimeError) as exc:
            return Answer("deny", f"The editor could not be asked for permission: {exc}")
        return answer_for(outcome, request) if outcome is not None else Answer("deny", CANCELLED)

    async def questions(self, questions: tuple[Question, ...]) -> dict[str, str] | None:
        """The model's questions, one permission request each (None: the user declined)."""
        call_id = self.translator.open_call("AskUserQuestion") or "AskUserQuestion"
        answers: dict[str, str] = {}
        for question in questions:
            try:
                outcome = await self._request(
                    question_call(call_id, question), question_options(question)
                )
            except (RequestError, ConnectionError, RuntimeError):
                return None
            label = chosen(outcome, question)
            if label is None:
                return None
            answers[question.question] = label
        return answers

    async def _request(
        self, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> schema.AllowedOutcome | schema.DeniedOutcome | None:
        """The editor's answer; None when a `session/cancel` came first."""
        asking = asyncio.ensure_future(
            self.client.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=options
            )
        )
        cancelled = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait({asking, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
        if not asking.done():
            asking.cancel()
            return None
        return asking.result().outcome

    async def prompt(self, blocks: Sequence[Block]) -> schema.PromptResponse:
        if self._busy:
            message = f"a prompt is already running in session {self.session_id}"
            raise RequestError(-32600, f"Invalid request: {message}", {"message": message})
        self._busy = True
        self._idle.clear()
        self._cancelled.clear()
        try:
            content = await to_prompt(blocks, self.cwd, self.files)
            await self.send(update_agent_thought_text(note) for note in content.notes)
            end: LoopEnd | None = None
            submit = await self._expanded(content.text)
            if submit is None:  # a built-in command answered
                return schema.PromptResponse(stop_reason="end_turn")
            events = self.conversation.prompt(
                submit.prompt,
                attachments=[*content.attachments, *submit.attachments],
                model=submit.model,
            )
            async for event in events:
                if self._cancelled.is_set():  # it came before the run began: stop it now
                    self.conversation.interrupt()
                await self.send(self.translator.feed(event))
                if isinstance(event, RequestEnd) and event.purpose == "turn" and not event.error:
                    await self.send(self._usage(event))
                await self._show_mode()
                if isinstance(event, LoopEnd):
                    end = event
        finally:
            self._busy = False
            self._idle.set()
        return await self._response(end)

    async def _expanded(self, text: str) -> Submit | None:
        """What to send the model: the prompt, or what its `/command` made of it (None: the
        command answered itself, and the editor was shown its answer)."""
        if not text.startswith("/"):
            return Submit(text)
        try:
            expanded = await self.conversation.expand(text)
        except CommandError as exc:
            raise RequestError(-32602, str(exc), {"message": str(exc)}) from None
        if expanded.notice:
            await self.send([update_agent_thought_text(expanded.notice)])
        if expanded.submit is None:
            await self.send([update_agent_message_text(expanded.output)])
        return expanded.submit

    async def _response(self, end: LoopEnd | None) -> schema.PromptResponse:
        if end is None or end.reason in FAILURES:
            message = (end.error if end is not None else None) or "the run ended without an answer"
            reason = end.reason if end is not None else "no_end"
            raise RequestError(-32603, message, {"message": message, "reason": reason})
        if end.reason in EXPLAINED and end.error:
            await self.send([update_agent_thought_text(f"Stopped: {end.error}")])
        return schema.PromptResponse(
            stop_reason=stop_reason(end, self.translator.last_stop), usage=prompt_usage(end)
        )

    def cancel(self) -> None:
        """`session/cancel`: the running prompt ends (every tool call gets its result) and
        answers `cancelled`; a permission request still open counts as a rejection."""
        self._cancelled.set()
        self.conversation.interrupt()

    async def show_terminal(self, tool_use_id: str, terminal_id: str) -> None:
        """A call's command runs in the editor's terminal: the call shows it."""
        await self.send(self.translator.terminal(tool_use_id, terminal_id))

    def set_mode(self, mode_id: object) -> str:
        return self.conversation.set_mode(mode_id)

    async def set_model(self, spec: object) -> None:
        """Another model from the next request on; what the model-switch hooks say is shown
        (UsageError: refused, or not a model this session's provider serves)."""
        said: list[str] = []
        await self.conversation.set_model(spec, said.append)
        await self.send([*(update_agent_thought_text(s) for s in said), self._options_update()])

    def _usage(self, end: RequestEnd) -> list[Update]:
        """How full the window is after a request, and what the session has cost so far."""
        session = self.conversation.session
        window = session.model_usage().get(end.request.model, {}).get("contextWindow")
        if not isinstance(window, int):
            return []
        return [usage_update(end.usage, window, session.cost_usd)]

    def _options_update(self) -> schema.ConfigOptionUpdate:
        return schema.ConfigOptionUpdate(
            session_update="config_option_update",
            config_options=config_options(self.conversation),
        )

    async def _show_mode(self) -> None:
        """The editor follows mode changes the session made itself (an accepted plan)."""
        mode = self.conversation.mode
        if mode != self._shown_mode:
            self._shown_mode = mode
            await self.send([update_current_mode(mode), self._options_update()])

    async def mode_set(self) -> None:
        """After `session/set_mode`: the editor's mode picker shows the new one."""
        self._shown_mode = self.conversation.mode
        await self.send([update_current_mode(self._shown_mode), self._options_update()])

    async def close(self) -> None:
        """The running prompt stops first (its tool calls get their results, the transcript
        keeps them); then the session's servers, shells and hooks."""
        if self._busy:
            self.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), CLOSE_GRACE_SECONDS)
        try:
            await self.conversation.close()
        except Exception as exc:  # the other sessions still close
            log.warning("session %s did not close cleanly: %s", self.session_id, exc)
