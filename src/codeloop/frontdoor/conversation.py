"""The front door: the one object every face (the terminal UI, `-p`, the SDK protocol, the
Python API, batch, the ACP agent) drives a session through. It opens the session, wires the
face's answers to what a prompt asks (permissions, questions) into it once, runs prompts, and
changes what a face may change (mode, model, files rewound); no face touches the session's
seams itself."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from codeloop.errors import UsageError
from codeloop.events import Event, LoopEnd, MessagesDelivered
from codeloop.models.aliases import resolve_alias
from codeloop.models.factory import split_spec
from codeloop.permissions.modes import MODE_ALIASES, PERMISSION_MODES, PermissionMode
from codeloop.permissions.policy import AskUser
from codeloop.system.collector import resume
from codeloop.system.valueclass import valueclass
from codeloop.tools.questions import AskQuestions
from codeloop.types import ImageBlock, Message, TextBlock, new_uuid

if TYPE_CHECKING:
    from codeloop.checkpoints.restore import Change
    from codeloop.commands.headless import Expanded
    from codeloop.options import Options
    from codeloop.session import Session
    from codeloop.workspace.tool_workspace import EditorFiles, EditorTerminals

NO_CHECKPOINT = "No file checkpoint found for this message."


@valueclass
class Responder:
    """How the face answers what a running prompt asks: `permission` a tool call the rules
    leave to a person, `questions` the model's AskUserQuestion. None: nobody is asked (a
    call that would ask is denied; the questions go unanswered)."""

    permission: AskUser | None = None
    questions: AskQuestions | None = None


class Conversation:
    """One live session, as a face sees it. `stream_events`: the main conversation's raw
    model stream comes as ModelStreamed events too (stream-json's partial messages)."""

    def __init__(
        self,
        session: Session,
        responder: Responder | None = None,
        *,
        stream_events: bool = False,
    ) -> None:
        self._session = session
        if responder is not None:
            self.respond(responder)
        session.stream_events = stream_events
        self.started_model = session.config.model
        self.running = False
        # The messages sent while the running prompt works, each told whether it reached
        # the model within that prompt (send()).
        self._sent: dict[str, asyncio.Future[bool]] = {}

    @classmethod
    async def open(
        cls,
        options: Options,
        responder: Responder | None = None,
        *,
        stream_events: bool = False,
    ) -> Conversation:
        """Build the session `options` describe (CodeloopError: they are wrong, and the
        message says how); its MCP servers start in the background."""
        from codeloop.builder import build_session

        try:
            session = await build_session(options)
        finally:
            resume()  # the collector, if the command line held it off while starting
        try:
            return cls(session, responder, stream_events=stream_events)
        except BaseException:  # the MCP servers the builder started stop with it
            await session.aclose()
            raise

    def respond(self, responder: Responder) -> None:
        """From now on `responder` answers what the session asks (a face that needs the
        opened session to build its answers wires them here)."""
        session = self._session
        if responder.permission is not None:
            session.config.policy.ask_user = responder.permission
        if responder.questions is not None:
            session.questions.ask = responder.questions

    def edit_in(self, files: EditorFiles) -> None:
        """From now on Read, Edit and Write (the session's and its sub-agents') read and write
        the text files `files` serves (an editor's buffers) instead of the disk."""
        self._session.workspace.files = files

    def run_in(self, terminals: EditorTerminals) -> None:
        """From now on Bash's foreground commands (not sandboxed ones, not background ones)
        run in `terminals` (an editor's), where the user watches them."""
        self._session.workspace.terminals = terminals

    @property
    def session(self) -> Session:
        """The session itself, for what shows its state (renderers, commands, the footer)."""
        return self._session

    @property
    def session_id(self) -> str:
        return self._session.session_id

    @property
    def model(self) -> str:
        return self._session.config.model

    def history(self) -> tuple[Message, ...]:
        """The conversation so far, as the model sees it (a resumed session's included): what
        a face replays when it shows a session it opened."""
        return self._session.messages

    @property
    def mode(self) -> PermissionMode:
        return self._session.config.policy.mode

    async def start_servers(self) -> bool:
        """Wait for the MCP servers (the first prompt does otherwise); False: interrupted."""
        return await self._session.start_servers()

    def list_commands(self) -> list[str]:
        """Every slash command's name (built-in, custom, MCP prompts), also kept in the
        session's inventory for the init lines that list them."""
        from codeloop.commands import default_registry

        session = self._session
        names = [c.name for c in default_registry().commands(session)]
        session.inventory["slash_commands"] = names
        return names

    def keep_tools(self, spec: str) -> None:
        """Only these built-in tools ("default": all of them, "": none; comma or space
        separated names)."""
        session = self._session
        if spec.strip() == "default":
            return
        names = [name.strip() for name in spec.replace(" ", ",").split(",") if name.strip()]
        unknown = [name for name in names if name not in session.builtin_tools]
        if unknown:
            known = ", ".join(session.builtin_tools)
            raise UsageError(f"--tools: unknown tool {unknown[0]!r} (tools: {known})")
        for name in [n for n in session.builtin_tools if n not in names]:
            del session.builtin_tools[name]

    async def expand(self, text: str) -> Expanded:
        """A `/command` prompt run as the terminal runs it, with no UI: a custom command
        becomes the prompt to send, a built-in answers itself (CommandError: it failed, the
        message says why)."""
        from codeloop.commands.headless import expand_command

        return await expand_command(self._session, text)

    async def prompt(
        self,
        text: str,
        *,
        attachments: Sequence[TextBlock | ImageBlock] = (),
        model: str | None = None,
        uuid: str | None = None,
        display_batches: bool = False,
    ) -> AsyncIterator[Event]:
        """Run one prompt to its LoopEnd (see Session.submit for the arguments)."""
        self.running = True
        try:
            async for event in self._session.submit(
                text,
                attachments=attachments,
                model=model,
                uuid=uuid,
                display_batches=display_batches,
            ):
                if isinstance(event, MessagesDelivered):
                    for delivered in event.uuids:
                        _settle(self._sent.pop(delivered, None), True)
                yield event
        finally:
            self.running = False
            self._session.take_sent()  # never delivered now: each becomes a prompt
            for waiting in self._sent.values():
                _settle(waiting, False)
            self._sent.clear()

    def send(self, text: str, uuid: str | None = None) -> asyncio.Future[bool] | None:
        """A message the user sent while a prompt runs (None: none runs; prompt() it): it does
        not interrupt, the model gets it with the next tool results. The future says, once the
        prompt is over, whether it did (True: that prompt's result answers it too) or the
        prompt ended first (False: run it as the next prompt)."""
        if not self.running:
            return None
        uuid = uuid or new_uuid()
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._sent[uuid] = future
        self._session.send(text, uuid)
        return future

    async def suggest_prompt(self, end: LoopEnd) -> str | None:
        """What the user might type next, asked of the small fast model once a prompt has
        completed (--prompt-suggestions, the SDK's promptSuggestions); None when they are off
        (nothing is sent), after any other end, or when nothing is obvious."""
        side = self._session.side
        if side is None or not side.prompt_suggestions or end.reason != "completed":
            return None
        return await side.suggest_prompt(self._session.messages)

    async def teammate_prompt(self) -> str | None:
        """An agent team's lead: what its teammates sent, once something came (the next
        prompt); None once none is working and nothing waits, or on an interrupt."""
        session = self._session
        return await session.workspace.roster.lead_turn(session.abort_event)

    def interrupt(self) -> None:
        """Stop the running prompt (every tool call gets its result); the session goes on."""
        self._session.interrupt()

    def set_mode(self, mode: Any) -> PermissionMode:
        """The permission mode from the next tool call on (Claude Code's names and aliases)."""
        if not isinstance(mode, str) or mode not in (*PERMISSION_MODES, *MODE_ALIASES):
            known = ", ".join((*PERMISSION_MODES, *MODE_ALIASES))
            raise UsageError(f"permission mode {mode!r} is not one of {known}")
        policy = self._session.config.policy
        if mode == "auto" and policy.auto is None:
            raise UsageError('auto mode is disabled by the settings (disableAutoMode: "disable")')
        policy.mode = MODE_ALIASES.get(mode) or _mode(mode)
        return policy.mode

    def model_choices(self) -> list[tuple[str, str]]:
        """The models `set_model` offers this session, as (alias, the model it names here):
        Claude Code's aliases its provider serves, as `/model` lists them, each model once."""
        from codeloop.models.aliases import ALIASES

        session = self._session
        env = session.workspace.env if session.workspace.env is not None else os.environ
        choices: dict[str, str] = {}
        for alias in ALIASES:
            if alias in ("default", "opusplan"):  # not one model
                continue
            provider, name = split_spec(resolve_alias(alias, env), env)
            if provider == session.client.provider:
                choices.setdefault(name, alias)
        return [(alias, name) for name, alias in choices.items()]

    async def set_model(self, spec: Any, show: Callable[[str], None]) -> str:
        """Another model from the next request on (None or "default": the one the session
        started with): an alias or a name the session's provider serves. The PreModelSwitch
        hooks may refuse it (a UsageError); what the hooks say goes to `show`."""
        session = self._session
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
        await session.switch_model(name, show)
        return name

    async def rewind_files(self, message_id: Any, *, dry_run: bool = False) -> dict[str, Any]:
        """The files as they were when the prompt `message_id` was sent (the conversation
        stays as it is), in Claude Code's answer: `canRewind`, and `filesChanged` (with a dry
        run, what would change). An id that is not a prompt of this session: UsageError, or
        canRewind false for a dry run, as Claude Code answers."""
        session = self._session
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

    async def close(self) -> None:
        """Stop the session: its MCP servers, hooks, teammates, transcript."""
        await self._session.aclose()


def _settle(future: asyncio.Future[bool] | None, delivered: bool) -> None:
    if future is not None and not future.done():
        future.set_result(delivered)


def _mode(name: str) -> PermissionMode:
    return next(m for m in PERMISSION_MODES if m == name)


def _paths(changes: Sequence[Change]) -> list[str]:
    return [os.path.join(c.root, c.path) for c in changes]
