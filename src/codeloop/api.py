"""The loop in-process, for Python programs: `query()` for one prompt, `Client` for a
conversation, in the Claude Agent SDK's shapes (its message types, its callbacks) with no
subprocess in between.

    async for message in codeloop.query("What does this repository do?"):
        if isinstance(message, codeloop.ResultMessage):
            print(message.result, message.total_cost_usd)

Options (codeloop.Options) configure the session as the CLI's flags do; the callbacks are
the seams the SDK has: `can_use_tool` answers what would be asked, `hooks` are functions run
on Claude Code's hook events, `tools` are functions the model may call (`@codeloop.tool`),
`output_schema` makes the answer JSON valid for a schema. A callback that raises or times out
denies the call with the reason; it never hangs the session.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, overload

from codeloop.frontdoor import Conversation, Responder
from codeloop.hooks.hook_config import HookMatcher as _Matcher
from codeloop.messages import Message, ResultMessage, parse_message
from codeloop.options import Options
from codeloop.protocol.callbacks import callback_command, permission_prompt
from codeloop.protocol.turns import SdkConversation
from codeloop.structured_output import StructuredOutput, checked_schema
from codeloop.system.valueclass import valueclass
from codeloop.tools.function import FunctionTool
from codeloop.types import new_uuid


@valueclass
class PermissionResultAllow:
    """Run the call, with `updated_input` instead of the model's if given; `updated_permissions`
    (the SDK's permission update objects) apply for the rest of the session."""

    updated_input: dict[str, Any] | None = None
    updated_permissions: list[dict[str, Any]] | None = None


@valueclass
class PermissionResultDeny:
    """Refuse the call; the model reads `message`. `interrupt` ends the run too."""

    message: str = ""
    interrupt: bool = False


@valueclass
class ToolPermissionContext:
    tool_use_id: str
    suggestions: list[dict[str, Any]]
    decision_reason: str


PermissionResult = PermissionResultAllow | PermissionResultDeny
CanUseTool = Callable[
    [str, dict[str, Any], ToolPermissionContext], PermissionResult | Awaitable[PermissionResult]
]
# (the hook's input, its tool_use_id, a context) -> Claude Code's hook output object.
HookCallback = Callable[[dict[str, Any], str | None, dict[str, Any]], Any]


@valueclass
class HookMatcher:
    """Hooks for one event: `matcher` as in Claude Code's settings (None: every call)."""

    matcher: str | None = None
    hooks: Sequence[HookCallback] = field(default_factory=list)
    timeout: float | None = None  # seconds (default 60)
    on_failure: str | None = None  # "block": a hook that fails blocks; default: no decision


@overload
def tool(function: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, read_only: bool = False
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """A function the model may call: its type hints are the input schema, its docstring the
    description. `read_only` tools run in parallel with other readers, and in plan mode."""

    def make(fn: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(fn, name=name, description=description, read_only=read_only)

    return make(function) if function is not None else make


class Client:
    """One conversation in-process: `query()` sends a prompt, `receive_response()` yields its
    messages up to its ResultMessage; `interrupt()` stops the running prompt (the session goes
    on). Use it as `async with Client(...) as client:`."""

    def __init__(
        self,
        options: Options | None = None,
        *,
        can_use_tool: CanUseTool | None = None,
        hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
        tools: Sequence[FunctionTool] = (),
        output_schema: dict[str, Any] | None = None,
        include_partial_messages: bool = False,
    ) -> None:
        self.options = options or Options()
        self._can_use_tool = can_use_tool
        self._hooks = hooks or {}
        self._tools = list(tools)
        self._schema = checked_schema(output_schema) if output_schema is not None else None
        self._partial = include_partial_messages
        self._conversation: SdkConversation | None = None
        self._messages: asyncio.Queue[Message | BaseException] = asyncio.Queue()
        self._turn: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        """Build the session (the first query does it otherwise). CodeloopError: the options
        are wrong, and the message says how."""
        if self._conversation is not None:
            return
        options = self.options
        if options.cwd is None:
            options = _with_cwd(options)
        conversation = await Conversation.open(options, stream_events=self._partial)
        try:
            self._conversation = self._converse(conversation)
        except BaseException:  # the MCP servers the builder started stop with it
            await conversation.close()
            raise

    def _converse(self, conversation: Conversation) -> SdkConversation:
        """The opened session with the caller's tools, callbacks and output schema."""
        session = conversation.session
        policy = session.config.policy
        for function_tool in self._tools:
            session.builtin_tools[function_tool.name] = function_tool
        if self._tools:  # the caller's own functions: allowed unless a deny rule says no
            policy.add_rules("allow", [t.name for t in self._tools], "the Python API's tools")
        if self._can_use_tool is not None:
            decide = _decider(self._can_use_tool)
            conversation.respond(Responder(permission=permission_prompt(decide, conversation)))
        if session.hooks is not None and self._hooks:
            session.hooks.add(_hook_config(self._hooks))
        structured = StructuredOutput(self._schema) if self._schema is not None else None
        if structured is not None:
            structured.attach(session)
        return SdkConversation(conversation, self._emit, structured=structured)

    def _emit(self, data: dict[str, Any]) -> None:
        message = parse_message(data)
        if message is not None:
            self._messages.put_nowait(message)

    @property
    def session_id(self) -> str:
        return self._live().session.session_id

    def _live(self) -> SdkConversation:
        if self._conversation is None:
            raise RuntimeError("the client is not connected: call connect() or query() first")
        return self._conversation

    async def query(self, prompt: str) -> str:
        """Send a prompt. While one runs, the model gets it with its next tool results (that
        prompt's ResultMessage answers both: user_message_uuids), or it runs next if that
        prompt ends first. Its message's uuid comes back: rewind_files() takes it."""
        await self.connect()
        uuid = new_uuid()
        reached = self._live().send(prompt, uuid)
        self._turn = asyncio.create_task(self._run(prompt, uuid, self._turn, reached))
        return uuid

    async def _run(
        self,
        prompt: str,
        uuid: str,
        before: asyncio.Task[None] | None,
        reached: asyncio.Future[bool] | None = None,
    ) -> None:
        if before is not None:
            await asyncio.gather(before, return_exceptions=True)
        if reached is not None and await reached:
            return  # answered with the prompt that was running
        try:
            await self._live().prompt(prompt, uuid)
        except Exception as exc:  # surfaces in the caller's receive loop
            self._messages.put_nowait(exc)

    async def receive_messages(self) -> AsyncIterator[Message]:
        while True:
            item = await self._messages.get()
            if isinstance(item, BaseException):
                raise item
            yield item

    async def receive_response(self) -> AsyncIterator[Message]:
        """Messages up to and including the next ResultMessage."""
        async for message in self.receive_messages():
            yield message
            if isinstance(message, ResultMessage):
                return

    async def after_response(self) -> AsyncIterator[Message]:
        """What the prompts sent so far still had to say after their ResultMessage (a prompt
        suggestion), once they are over."""
        if self._turn is not None:
            await asyncio.gather(self._turn, return_exceptions=True)
        while not self._messages.empty():
            item = self._messages.get_nowait()
            if isinstance(item, BaseException):
                raise item
            yield item

    async def interrupt(self) -> None:
        if self._conversation is not None and self._conversation.running:
            self._conversation.conversation.interrupt()

    async def set_permission_mode(self, mode: str) -> None:
        await self.connect()
        self._live().set_permission_mode(mode)

    async def set_model(self, model: str | None = None) -> None:
        """An alias or a model name of the session's provider; None: the starting model."""
        await self.connect()
        await self._live().set_model(model)

    async def rewind_files(self, user_message_id: str, *, dry_run: bool = False) -> dict[str, Any]:
        """Set the files back to how they were when that prompt was sent (the conversation
        goes on as it is): `filesChanged` names them. A dry run only says what would change.
        CodeloopError: not a prompt of this session, or checkpoints are off."""
        return await self._live().rewind_files(user_message_id, dry_run=dry_run)

    async def disconnect(self) -> None:
        """Stop what runs and close the session (its MCP servers, hooks, transcript)."""
        if self._turn is not None and not self._turn.done():
            await self.interrupt()
            await asyncio.gather(self._turn, return_exceptions=True)
        if self._conversation is not None:
            await self._conversation.conversation.close()
            self._conversation = None

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.disconnect()


async def query(
    prompt: str,
    options: Options | None = None,
    *,
    can_use_tool: CanUseTool | None = None,
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
    tools: Sequence[FunctionTool] = (),
    output_schema: dict[str, Any] | None = None,
    include_partial_messages: bool = False,
) -> AsyncIterator[Message]:
    """One prompt in a session of its own: its messages, the ResultMessage last (then, with
    Options.prompt_suggestions, the PromptSuggestionMessage that follows it)."""
    client = Client(
        options,
        can_use_tool=can_use_tool,
        hooks=hooks,
        tools=tools,
        output_schema=output_schema,
        include_partial_messages=include_partial_messages,
    )
    try:
        await client.query(prompt)
        async for message in client.receive_response():
            yield message
        async for message in client.after_response():
            yield message
    finally:
        await client.disconnect()


def _with_cwd(options: Options) -> Options:
    from dataclasses import replace

    return replace(options, cwd=Path.cwd())


def _decider(callback: CanUseTool) -> Any:
    async def decide(
        name: str, tool_input: dict[str, Any], fields: dict[str, Any]
    ) -> Mapping[str, Any]:
        context = ToolPermissionContext(
            fields["tool_use_id"], fields["permission_suggestions"], fields["decision_reason"]
        )
        answer = await _maybe_await(callback(name, tool_input, context))
        if isinstance(answer, PermissionResultAllow):
            wire: dict[str, Any] = {"behavior": "allow", "updatedInput": answer.updated_input}
            if answer.updated_permissions is not None:
                wire["updatedPermissions"] = answer.updated_permissions
            return wire
        if isinstance(answer, PermissionResultDeny):
            return {"behavior": "deny", "message": answer.message, "interrupt": answer.interrupt}
        if isinstance(answer, Mapping):
            return answer
        raise TypeError(f"can_use_tool returned {type(answer).__name__}, not a PermissionResult")

    return decide


def _hook_config(hooks: Mapping[str, Sequence[HookMatcher]]) -> dict[str, tuple[_Matcher, ...]]:
    config: dict[str, tuple[_Matcher, ...]] = {}
    for event, matchers in hooks.items():
        groups = []
        for matcher in matchers:
            commands = tuple(
                callback_command(
                    getattr(fn, "__name__", "hook"),
                    _hook_function(fn),
                    timeout=matcher.timeout,
                    on_failure=matcher.on_failure,
                )
                for fn in matcher.hooks
            )
            groups.append(_Matcher(matcher.matcher or "", commands))
        config[event] = tuple(groups)
    return config


def _hook_function(fn: HookCallback) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    async def run(body: dict[str, Any]) -> Any:
        tool_use_id = body.get("tool_use_id")
        answer = await _maybe_await(fn(body, tool_use_id, {"signal": None}))
        if not isinstance(answer, Mapping):
            return answer
        # Python-safe names, as the SDK allows them.
        renamed = {"async_": "async", "continue_": "continue"}
        return {renamed.get(key, key): value for key, value in answer.items()}

    return run


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
