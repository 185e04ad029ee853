"""The CLI side of the Agent SDK protocol: JSON lines in both directions (SDK_PROTOCOL.md).

Stdin is read the whole time, in a thread of its own: user messages queue up as prompts (one
that comes while a prompt runs goes to the model with its next tool results instead, and is a
prompt of its own only if that prompt ends first),
the SDK's control requests are answered as they come (interrupt, set_permission_mode,
set_model, mcp_status, rewind_files; anything else gets an error response, never silence),
and the answers to codeloop's own requests (can_use_tool, hook_callback, mcp_message) wake
the call that waits for them. The session is built when the SDK's `initialize` arrives (its
hooks and agents are part of it), or with the first prompt. One session serves every prompt
of the process, so its id is stable; when stdin closes the queued prompts still run, then the
process exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import threading
from typing import Any

from codeloop.cli.headless import fit_session, schema_output
from codeloop.cli.render import write_line
from codeloop.cli.sdk_protocol.channel import Channel, ControlError
from codeloop.cli.sdk_protocol.initialize import from_initialize
from codeloop.errors import CodeloopError, UsageError
from codeloop.frontdoor.session_flags import session_options
from codeloop.protocol.callbacks import callback_hooks, permission_prompt
from codeloop.protocol.json_lines import CLAUDE_CODE_VERSION
from codeloop.protocol.turns import SdkConversation
from codeloop.structured_output import StructuredOutput, checked_schema
from codeloop.types import new_uuid

_EOF = None


def run_sdk(args: argparse.Namespace, unknown: list[str]) -> int:
    if args.output_format != "stream-json":
        raise UsageError("--input-format stream-json needs --output-format stream-json")
    given = [*unknown, *args.words, *([args.prompt] if args.prompt else [])]
    if given:
        print(
            f"codeloop: warning: ignoring {' '.join(given)}: with --input-format stream-json, "
            "prompts come on stdin and unknown flags are not acted on",
            file=sys.stderr,
        )
    return asyncio.run(SdkServer(args).serve())


class SdkServer:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.channel = Channel(write_line)
        self.conversation: SdkConversation | None = None
        self.prompts: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        # Messages sent while a prompt ran, each with whether it reached the model then.
        self.sent: list[tuple[dict[str, Any], asyncio.Future[bool]]] = []
        self.failure: CodeloopError | None = None
        # What initialize asked for that the session took (its answer confirms each).
        self.applied: dict[str, bool] = {}
        self._handlers: dict[str, asyncio.Task[None]] = {}
        self._line = 0
        # Building takes awaits: a prompt read meanwhile waits for the session being built
        # (the one initialize asked for) instead of building a second one.
        self._building = asyncio.Lock()

    # --- the process -----------------------------------------------------------------------

    async def serve(self) -> int:
        frames: asyncio.Queue[bytes | None] = asyncio.Queue()
        _read_stdin(asyncio.get_running_loop(), frames)
        reading = asyncio.create_task(self._dispatch(frames))
        undelivered: list[dict[str, Any]] = []
        try:
            while (
                frame := undelivered.pop(0) if undelivered else await self.prompts.get()
            ) is not None:
                conversation = await self.ensure_session(None)
                if conversation is None:
                    break
                await conversation.prompt(_content(frame), frame.get("uuid"))
                # Sent meanwhile, but the prompt ended before a tool result could carry them.
                undelivered += [sent for sent, reached in self.sent if not reached.result()]
                self.sent.clear()
        finally:
            reading.cancel()
            for task in list(self._handlers.values()):
                task.cancel()
            await asyncio.gather(reading, *self._handlers.values(), return_exceptions=True)
            if self.conversation is not None:
                await self.conversation.conversation.close()
        if self.failure is not None:
            raise self.failure
        # A turn that failed (not one that was interrupted) is the process's failure too.
        return 1 if self.conversation is not None and self.conversation.status == 1 else 0

    async def _dispatch(self, frames: asyncio.Queue[bytes | None]) -> None:
        while (raw := await frames.get()) is not None:
            self._line += 1
            frame = self._parse(raw)
            if frame is not None:
                self._take(frame)
        self.channel.close("the SDK closed codeloop's input")
        await self.prompts.put(_EOF)

    def _parse(self, raw: bytes) -> dict[str, Any] | None:
        text = raw.decode("utf-8", errors="replace").strip()
        if not text:
            return None
        try:
            frame = json.loads(text)
        except json.JSONDecodeError as exc:
            self._bad(f"not JSON ({exc.msg} at column {exc.colno}): {text[:80]}")
            return None
        if not isinstance(frame, dict):
            self._bad(f"a JSON {type(frame).__name__}, not an object")
            return None
        return frame

    def _bad(self, why: str) -> None:
        message = f"stdin line {self._line}: {why}; ignored"
        print(f"codeloop: {message}", file=sys.stderr)
        write_line({"type": "system", "subtype": "notice", "level": "error", "text": message})

    def _take(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "user":
            message = frame.get("message")
            if not isinstance(message, dict) or "content" not in message:
                self._bad("a user message without message.content")
            elif (current := self.conversation) is not None and current.running:
                frame["uuid"] = frame.get("uuid") or new_uuid()
                reached = current.send(_content(frame), frame["uuid"])
                if reached is None:
                    self.prompts.put_nowait(frame)
                else:
                    self.sent.append((frame, reached))
            else:
                self.prompts.put_nowait(frame)
        elif kind == "control_request":
            request_id = str(frame.get("request_id") or "")
            request = frame.get("request")
            if not request_id or not isinstance(request, dict):
                self._bad("a control_request without request_id and request")
                return
            task = asyncio.create_task(self._control(request_id, request))
            self._handlers[request_id] = task
            task.add_done_callback(lambda _: self._handlers.pop(request_id, None))
        elif kind == "control_response":
            if problem := self.channel.answered(frame.get("response")):
                self._bad(problem)
        elif kind == "control_cancel_request":
            running = self._handlers.get(str(frame.get("request_id")))
            if running is not None:
                running.cancel()
        elif kind in ("keep_alive", "update_environment_variables"):
            if kind == "update_environment_variables":
                self._environment(frame.get("variables"))
        else:
            self._bad(f"unknown message type {kind!r}")

    def _environment(self, variables: Any) -> None:
        if isinstance(variables, dict):
            os.environ.update({str(k): str(v) for k, v in variables.items()})

    # --- the session -----------------------------------------------------------------------

    async def ensure_session(self, init: dict[str, Any] | None) -> SdkConversation | None:
        """The conversation, built once, on first need (None once building failed); `init`
        is the SDK's initialize request, which must come before anything built the session."""
        async with self._building:
            if init is not None and self.conversation is not None:
                raise UsageError("initialize: the session is already initialized")
            if self.conversation is not None or self.failure is not None:
                return self.conversation
            self.conversation = await self._build(init)
            return self.conversation

    async def _build(self, init: dict[str, Any] | None) -> SdkConversation | None:
        from codeloop.frontdoor import Conversation, Responder

        args = self.args
        try:
            options = session_options(args)
            options.agents = _agents(args.agents, (init or {}).get("agents"))
            options.mcp_tunnel = self._tunnel
            structured = schema_output(args)
            if init is not None:
                self.applied, schema = from_initialize(options, init)
                if schema is not None:
                    structured = StructuredOutput(checked_schema(schema))
            conversation = await Conversation.open(
                options, stream_events=args.include_partial_messages
            )
        except CodeloopError as exc:
            self.failure = exc
            self.prompts.put_nowait(_EOF)
            return None
        session = conversation.session
        try:
            fit_session(conversation, args, structured)
        except CodeloopError as exc:
            self.failure = exc
            self.prompts.put_nowait(_EOF)
            await conversation.close()
            return None
        prompt_tool = args.permission_prompt_tool
        if prompt_tool == "stdio":
            ask = permission_prompt(self._decide, conversation)
            conversation.respond(Responder(permission=ask))
        elif prompt_tool:
            print(
                f"codeloop: warning: --permission-prompt-tool {prompt_tool}: only stdio is "
                "supported; permission prompts are denied",
                file=sys.stderr,
            )
        hooks, warnings = callback_hooks((init or {}).get("hooks"), self._call_hook)
        if session.hooks is not None and hooks:
            session.hooks.add(hooks)
        for text in warnings:
            print(f"codeloop: warning: {text}", file=sys.stderr)
        conversation.list_commands()  # initialize's answer lists them
        return SdkConversation(
            conversation,
            write_line,
            structured=structured,
            replay=args.replay_user_messages,
        )

    # --- codeloop's requests to the SDK ---------------------------------------------------

    async def _decide(
        self, tool_name: str, tool_input: dict[str, Any], fields: dict[str, Any]
    ) -> dict[str, Any]:
        return await self.channel.request(
            "can_use_tool", {"tool_name": tool_name, "input": tool_input, **fields}
        )

    async def _call_hook(self, callback_id: str, body: dict[str, Any], tool_use_id: str | None):  # type: ignore[no-untyped-def]
        return await self.channel.request(
            "hook_callback", {"callback_id": callback_id, "input": body, "tool_use_id": tool_use_id}
        )

    async def _tunnel(self, server: str, message: dict[str, Any]) -> dict[str, Any] | None:
        answer = await self.channel.request(
            "mcp_message", {"server_name": server, "message": message}
        )
        response = answer.get("mcp_response")
        return response if isinstance(response, dict) else None

    # --- the SDK's requests to codeloop ---------------------------------------------------

    async def _control(self, request_id: str, request: dict[str, Any]) -> None:
        subtype = request.get("subtype")
        try:
            answer = await self._answer(str(subtype), request)
        except asyncio.CancelledError:
            raise
        except (CodeloopError, ControlError, ValueError) as exc:
            self.channel.error(request_id, str(exc))
        except _Unsupported:
            self.channel.error(
                request_id,
                f"Unsupported control request subtype: {subtype}",
                "unsupported_request",
            )
        except Exception as exc:  # a bug in codeloop: the SDK hears it now, not in 60 s
            from codeloop.cli.bugs import report_bug

            print(report_bug(exc), file=sys.stderr)
            self.channel.error(request_id, f"internal error in codeloop: {exc!r}")
        else:
            self.channel.success(request_id, answer)

    async def _answer(self, subtype: str, request: dict[str, Any]) -> dict[str, Any]:
        if subtype == "initialize":
            conversation = await self.ensure_session(request)
            if conversation is None:
                assert self.failure is not None
                raise self.failure
            hooks = {"hooks_applied": True} if request.get("hooks") else {}
            return {**_server_info(conversation), **self.applied, **hooks}
        conversation = await self.ensure_session(None)
        if conversation is None:
            assert self.failure is not None
            raise self.failure
        session = conversation.session
        if subtype == "interrupt":
            if conversation.running:
                conversation.conversation.interrupt()
            return {"still_queued": []}
        if subtype == "set_permission_mode":
            return {"mode": conversation.set_permission_mode(request.get("mode"))}
        if subtype == "set_model":
            return {"model": await conversation.set_model(request.get("model"))}
        if subtype == "mcp_status":
            return {"mcpServers": _mcp_status(session)}
        if subtype == "rewind_files":
            dry_run = bool(request.get("dry_run"))
            return await conversation.rewind_files(request.get("user_message_id"), dry_run=dry_run)
        raise _Unsupported


class _Unsupported(Exception):
    pass


def _content(frame: dict[str, Any]) -> Any:
    message = frame.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if content is not None else ""


def _read_stdin(loop: asyncio.AbstractEventLoop, frames: asyncio.Queue[bytes | None]) -> None:
    """Lines of stdin, read in a thread (any stdin: a pipe, a file, a terminal).

    From the file descriptor, not `sys.stdin.buffer`: a thread blocked in a buffered read holds
    the buffer's lock, and a process ending while the SDK still holds stdin open (a session that
    could not start) then aborts in the interpreter's shutdown ("could not acquire lock for
    <stdin>", SIGABRT) instead of exiting with its status."""

    def put(line: bytes | None) -> None:
        loop.call_soon_threadsafe(frames.put_nowait, line)

    def read() -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError, RuntimeError):
            fd = sys.stdin.fileno()
            pending = b""
            while chunk := os.read(fd, 1 << 16):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    put(line)
            if pending:
                put(pending)
        with contextlib.suppress(RuntimeError):  # the loop may be gone already
            put(None)

    threading.Thread(target=read, name="sdk-stdin", daemon=True).start()


def _agents(flag: str | None, given: Any) -> str | None:
    """--agents and initialize's agents, as one JSON object (initialize's win)."""
    merged: dict[str, Any] = {}
    if flag:
        try:
            parsed = json.loads(flag)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--agents: not valid JSON: {exc.msg}") from None
        if isinstance(parsed, dict):
            merged.update(parsed)
    if isinstance(given, dict):
        merged.update(given)
    return json.dumps(merged) if merged or flag else None


def _server_info(conversation: SdkConversation) -> dict[str, Any]:
    """initialize's answer: what this session offers (the SDK's get_server_info())."""
    session = conversation.session
    inventory = session.inventory
    agents = session.extensions.agents.by_name if session.extensions is not None else {}
    style = inventory.get("output_style", "default")
    return {
        "commands": [
            {"name": name, "description": "", "argumentHint": ""}
            for name in inventory.get("slash_commands", [])
        ],
        "agents": [{"name": a.name, "description": a.description} for a in agents.values()],
        "output_style": style,
        "available_output_styles": sorted({"default", style}),
        "models": [{"value": session.config.model, "displayName": session.config.model}],
        "account": {},
        "pid": os.getpid(),
        "claude_code_version": CLAUDE_CODE_VERSION,
        "current_permission_mode": conversation.conversation.mode,
        "hook_on_failure_supported": True,
    }


def _mcp_status(session: Any) -> list[dict[str, Any]]:
    if session.mcp is None:
        return []
    return [
        {
            "name": s.name,
            "status": s.status,
            **({"error": s.error} if s.error else {}),
            "tools": [{"name": t} for t in s.tools],
            "scope": s.scope,
        }
        for s in session.mcp.statuses()
    ]
