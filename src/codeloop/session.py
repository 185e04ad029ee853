"""A conversation: its history, usage and cost, across any number of prompts.

Frontends call `submit(prompt)` and render the events; the session keeps what the loop adds to
the history, writes it to the transcript as it happens (each message before the next model
call, synced at turn boundaries) and totals what it costs. One Session serves the headless CLI,
the interactive UI and the library API alike.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from collections import ChainMap
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from codeloop.context.compact import CompactResult
from codeloop.context.memory import system_reminder
from codeloop.context.pipeline import ContextManager
from codeloop.deps import CallModel, LoopDeps, TrimOnly
from codeloop.events import (
    Event,
    LoopEnd,
    ModelStreamed,
    Notice,
    RequestEnd,
    SubAgent,
    UserTurn,
)
from codeloop.extensions.agents import GENERAL, Agents
from codeloop.hooks.hook_runner import HookRunner, instructions_loaded
from codeloop.loop import LoopParams, query_loop
from codeloop.model_switch import Confirm, check_switch, switched
from codeloop.models.base import BlockStart, ModelClient, ModelRequest, StreamEvent
from codeloop.session_config import SessionConfig
from codeloop.store.transcript import TranscriptWriter, sidechain_path
from codeloop.subagents import AgentRunner, SubagentRun
from codeloop.system.aio import unless_aborted
from codeloop.system.lull import in_lull
from codeloop.token_budget import parse_budget_marker
from codeloop.tools.base import AgentCall, AnyTool, ToolContext, ToolResult, Workspace
from codeloop.tools.questions import QuestionChannel
from codeloop.tools.registry import Offered, preload_soon, warm_in_lulls
from codeloop.types import ImageBlock, Message, TextBlock, ToolUseBlock, Usage, new_uuid
from codeloop.usage.costs import Ledger, model_usage
from codeloop.usage.record import RequestLog

if TYPE_CHECKING:
    from pathlib import Path

    from codeloop.checkpoints.manager import Checkpoints
    from codeloop.checkpoints.rewinding import Rewound
    from codeloop.lsp.servers import LanguageServers
    from codeloop.mcp.server_manager import McpManager
    from codeloop.settings.settings_files import Settings
    from codeloop.side_requests import SideRequests

# What any first answer needs and a run loads only then, loaded while the first request waits
# for it (in lulls, system/lull.py): the segments its request line records (usage/record.py),
# lenient JSON for a tool call's input (models/assembler.py), the reader of calls an answer
# writes as text (models/call_reader.py). Not before the first request: start-up needs none.
FIRST_ANSWER_MODULES = (
    "codeloop.usage.segments",
    "codeloop.models.lenient_json",
    "codeloop.models.written_calls",
)


class SessionObserver(Protocol):
    """Sees what a session does as it happens (telemetry): each prompt as it enters the
    history, every event of its loops (a sub-agent's marked with the sub-agent), and the
    session's end. It must not raise; one that does is dropped with a warning."""

    def prompt(self, message: Message) -> None: ...

    def event(self, event: Event, agent: SubAgent | None) -> None: ...

    def close(self) -> None: ...


class Session:
    """`history` continues an earlier conversation; `transcript` (whose session id the session
    takes) records this one; `notices` are shown before the first prompt's events (e.g. what
    reading a resumed transcript had to skip); `context` manages the context window across
    prompts; `mcp` holds the MCP servers (the builder starts them, the first prompt waits for
    them). Usage and cost count this process's requests."""

    def __init__(
        self,
        client: ModelClient,
        tools: Mapping[str, AnyTool],
        workspace: Workspace,
        config: SessionConfig,
        *,
        session_id: str | None = None,
        deps: LoopDeps | None = None,
        history: Sequence[Message] = (),
        transcript: TranscriptWriter | None = None,
        notices: Sequence[str | Notice] = (),
        context: ContextManager | None = None,
        hooks: HookRunner | None = None,
        user_context: Sequence[Message] = (),
        checkpoints: Checkpoints | None = None,
        mcp: McpManager | None = None,
    ) -> None:
        if transcript is not None and session_id not in (None, transcript.session_id):
            raise ValueError("session_id differs from the transcript's session id")
        self.client = client
        self.builtin_tools = dict(tools)
        # The MCP servers' tools lie over the built-ins and change as the servers do.
        self.mcp = mcp
        # The language servers plugins configure (the builder sets them): stopped on close.
        self.language_servers: LanguageServers | None = None
        # What the model is offered and may call: all of them less those a deny rule names
        # whole (Policy.withholds), for this session's runs and its sub-agents' alike.
        self.tools: Mapping[str, AnyTool] = Offered(
            ChainMap(mcp.tools, self.builtin_tools) if mcp else self.builtin_tools,
            self._withheld,
        )
        if mcp is not None:
            mcp.visible = self.tools
        self.workspace = workspace
        self.config = config
        self.session_id = transcript.session_id if transcript else session_id or new_uuid()
        self.deps = deps or LoopDeps.for_client(client, config.policy.can_use_tool)
        # A snapshot of the workspace before every turn that can write (rewind()).
        self.checkpoints = checkpoints
        if checkpoints is not None:
            self.deps = replace(self.deps, before_write=checkpoints.before_write)
        self.messages: tuple[Message, ...] = tuple(history)
        self.transcript = transcript
        self.context = context
        self._notices = [n if isinstance(n, Notice) else Notice("warning", n) for n in notices]
        # What the session loaded (agents, memory files, skills...), for the init message,
        # and the extensions themselves (plugins' commands and MCP server configs among them).
        self.inventory: dict[str, Any] = {}
        self.extensions: Any = None
        # The settings the session was built from (the UI reads statusLine, editorMode).
        self.settings: Settings | None = None
        # Runs a Task call: the general-purpose agent, and the custom agents the assembler adds.
        self.agents: AgentSpawner = AgentRunner(Agents({GENERAL.name: GENERAL}))
        # Every request's usage, sub-agents' included, as it happens: the budget's measure.
        self.ledger = Ledger()
        self.turns = 0
        self._abort = asyncio.Event()
        self.hooks = hooks
        self._started = False
        self._setup_context: list[Message] = []
        # What the model is told with the next prompt (a directory /add-dir added ...).
        self._reminders: list[str] = []
        # Sent ahead of the history in every request: the memory, then what the Setup and
        # SessionStart hooks add when the session starts.
        self.user_context: tuple[Message, ...] = tuple(user_context)
        # The memory files behind it, for the InstructionsLoaded hooks at the start.
        self.memory_files: tuple[Any, ...] = ()
        # The project's auto-memory folder (context/auto_memory.py); None when it is off.
        self.memory_dir: Path | None = None
        # What the user sent while a prompt runs, until the loop hands it to the model.
        self._inbox: list[Message] = []
        self.observers: list[SessionObserver] = []
        self._requests = RequestLog()
        # The tools load in the background (registry.preload): each one the model calls
        # while its call streams, the others once a call was made, during the next response.
        self._preloaded = False
        self._called = False
        self._warmed = False
        # Every sub-agent this process ran, with what it spent: the itemised part of the cost.
        self.subagent_runs: list[SubagentRun] = []
        # How the model's questions (AskUserQuestion) reach a person: a UI sets `.ask`.
        self.questions: QuestionChannel = QuestionChannel()
        # The main conversation's raw model stream as events too (ModelStreamed), for a face
        # that shows it; the front door sets it (frontdoor.Conversation).
        self.stream_events = False
        # The side requests asked for (tool-use summaries, task progress, prompt
        # suggestions; side_requests.py); None: none.
        self.side: SideRequests | None = None

    async def start_servers(self) -> bool:
        """Wait for the MCP servers the builder started (the first prompt does otherwise);
        False when interrupted first (they go on starting in the background)."""
        if self.mcp is None:
            return True
        return await unless_aborted(self.mcp.start(), self._abort)

    def interrupt(self) -> None:
        """Stop the running prompt (Ctrl+C, an SDK interrupt); the session stays usable."""
        self._abort.set()

    async def submit(
        self,
        prompt: str,
        *,
        attachments: Sequence[TextBlock | ImageBlock] = (),
        model: str | None = None,
        uuid: str | None = None,
        display_batches: bool = False,
    ) -> AsyncIterator[Event]:
        """Run one prompt: `attachments` go with it in the same message (files an `@path`
        names, images); `model` answers this prompt instead of the session's (a command's);
        `uuid` names its message (the Agent SDK's, which rewind_files refers to).

        The events are what the caller shows: assistant text as MessageDisplay hooks display
        it (in batches of lines as it streams with `display_batches`, an interactive UI's; else
        once per complete message). The transcript and the model keep the original."""
        from codeloop.message_display import MessageDisplay

        display = MessageDisplay(self.hooks, batches=display_batches)
        # Closed with this generator (a caller that stops early), as if it were this one.
        async with (
            aclosing(self._prompt(prompt, attachments, model, uuid)) as events,
            aclosing(display.shown(events)) as shown,
        ):
            async for event in shown:
                yield event

    async def _prompt(
        self,
        prompt: str,
        attachments: Sequence[TextBlock | ImageBlock],
        model: str | None,
        uuid: str | None,
    ) -> AsyncGenerator[Event, None]:
        self._abort = asyncio.Event()
        for notice in self._notices:
            yield notice
        self._notices.clear()
        if self.checkpoints is not None:
            self.checkpoints.warm()  # a resumed session's first checkpoint: only what changed
        if not self._started:
            self._started = True
            async for event in self._start():
                yield event
        for text in self.mcp.take_notices() if self.mcp else ():
            yield Notice("warning", text)
        added: tuple[Message, ...] = ()
        if self._reminders:
            added = (Message.user(system_reminder("\n\n".join(self._reminders)), is_meta=True),)
            self._reminders.clear()
        if self.hooks is not None:
            for text in await self.hooks.check_watched():  # changed since the last prompt
                yield Notice("warning", text)
            if pending := self.hooks.take_async_context():
                reminder = system_reminder("\n\n".join(pending))
                added = (*added, Message.user(reminder, is_meta=True))
            submitted = await self.hooks.run("UserPromptSubmit", {"prompt": prompt})
            for text in submitted.system_messages:
                yield Notice("warning", text)
            if submitted.blocked or submitted.stop:
                why = submitted.reason if submitted.blocked else submitted.stop_reason
                error = f"a UserPromptSubmit hook refused the prompt: {why}"
                self.config.policy.clear_grants()
                yield LoopEnd("hook_stopped", 0, Usage(), self.messages, error=error)
                return
            if context := submitted.for_model():
                added = (*added, Message.user(system_reminder(context), is_meta=True))
        if self.mcp is not None and "@" in prompt:
            from codeloop.mcp.prompts import attach_mentions

            attached = await attach_mentions(prompt, self.mcp)
            for problem in attached.problems:
                yield Notice("warning", problem)
            added = (*added, *attached.messages)
        self.config = self.config.for_mode()
        if self.config.policy.mode == "plan":
            from codeloop.tools.plan import PLAN_MODE_READ_ONLY, PLAN_MODE_REMINDER

            leaves = "ExitPlanMode" in self.builtin_tools
            reminder = PLAN_MODE_REMINDER if leaves else PLAN_MODE_READ_ONLY
            added = (*added, Message.user(system_reminder(reminder), is_meta=True))
        message = Message("user", (TextBlock(prompt), *attachments))
        if uuid is not None:
            message = replace(message, uuid=uuid)
        for item in (message, *added):
            if (failed := self._persist(item)) is not None:
                yield failed
        for observer in list(self.observers):
            self._observe(observer, observer.prompt, message)
        messages = (*self.messages, message, *added)
        budget = parse_budget_marker(prompt) or self.config.token_budget
        params = self.run_params(
            messages,
            token_budget=budget,
            model=model or self.config.model,
            stream_events=self.stream_events,
            inbox=self.take_sent,
        )
        async for event in query_loop(params, self.run_deps()):
            if isinstance(event, ModelStreamed):  # the face's alone: nothing keeps or observes it
                yield event
                continue
            if (failed := self._persist(event)) is not None:
                yield failed
            if self.checkpoints is not None and isinstance(event, UserTurn | LoopEnd):
                self.checkpoints.turn_done()  # the turn's tools have all finished
            if isinstance(event, LoopEnd):
                self._record(event)
                self.config.policy.clear_grants()  # allowed-tools last one prompt
                if self.hooks is not None and event.reason in FAILURE_ENDS:
                    await self._stop_failure(event)
            self._publish(event)
            # What the MCP servers caused meanwhile (an elicitation nobody could answer).
            self._notices += (
                [Notice("warning", t) for t in self.mcp.take_notices()] if self.mcp else []
            )
            for notice in self._notices:
                yield notice
            self._notices.clear()
            yield event

    async def _stop_failure(self, end: LoopEnd) -> None:
        """StopFailure hooks: the turn ended on an API error (their output is ignored)."""
        assert self.hooks is not None
        error = end.error or end.reason
        await self.hooks.run(
            "StopFailure",
            {
                "error": stop_failure_type(end.reason, error),
                "error_details": error,
                "last_assistant_message": f"API Error: {error}",
            },
        )

    async def setup(self, trigger: str) -> AsyncIterator[Event]:
        """Setup hooks (`--init`, `--init-only`, `--maintenance`), before anything else."""
        if self.hooks is None:
            return
        outcome = await self.hooks.run("Setup", {"trigger": trigger})
        for text in outcome.system_messages:
            yield Notice("warning", text)
        if text := outcome.for_model():
            self._setup_context.append(Message.user(system_reminder(text), is_meta=True))

    async def start(self) -> AsyncIterator[Event]:
        """Gather the context and run the SessionStart hooks now (they run on the first prompt
        otherwise); `--init-only` stops after this."""
        if not self._started:
            self._started = True
            async for event in self._start():
                yield event

    def observe_subagent(self, event: Event, agent: SubAgent) -> None:
        """A sub-agent's event: its requests are recorded in the session's transcript under
        its Task call, and observers see it (a failure shows at the next event)."""
        if (failed := self._persist(event, agent)) is not None:
            self._notices.append(failed)
        self._publish(event, agent)

    async def switch_model(
        self, name: str, show: Callable[[str], None], confirm: Confirm | None = None
    ) -> None:
        """Another model from the next request on, as the session's own operation: the
        PreModelSwitch hooks may refuse it (SwitchRefused; `confirm` answers their `ask`), and
        their messages and the PostModelSwitch hooks' go to `show`."""
        was = self.config.model
        for text in await check_switch(self.hooks, was, name, confirm):
            show(text)
        self.config = replace(self.config, model=name)  # frozen: replaced, not changed
        await self.model_switched(was, show)

    async def model_switched(self, was: str, show: Callable[[str], None]) -> None:
        """The switch from `was` to this session's model told to the PostModelSwitch hooks
        (/model rebuilds the session on the new model, then tells them): their messages to
        `show`, their context to the model with the next prompt."""
        after = await switched(self.hooks, was, self.config.model)
        for text in after.messages:
            show(text)
        if after.context:
            self.remind(after.context)

    def remind(self, text: str) -> None:
        """Something the model is told with the next prompt, as a system reminder."""
        self._reminders.append(text)

    def notify(self, text: str) -> None:
        """A warning for the user, shown with the next event (a sub-agent's server that did
        not start, ...)."""
        self._notices.append(Notice("warning", text))

    def record_aside(self, event: RequestEnd) -> None:
        """A model request made beside the conversation (a prompt hook's question): recorded
        in the transcript and seen by the observers like the loop's own."""
        if (failed := self._persist(event)) is not None:
            self._notices.append(failed)
        self._publish(event)

    async def _run_subagent(self, call: AgentCall, ctx: ToolContext) -> ToolResult:
        """One Agent call, run by the session's agents (subagents.py)."""
        return await self.agents(self, call, ctx)

    def sidechain(self, agent: SubAgent) -> TranscriptWriter | None:
        """A sub-agent's own transcript, beside the session's and linked to its Agent call;
        None when the session keeps no transcript."""
        if self.transcript is None:
            return None
        fields = {
            "agentId": agent.agent_id,
            "agentType": agent.agent_type,
            "description": agent.description,
            "parentToolUseId": agent.tool_use_id,
        }
        path = sidechain_path(self.transcript.path, agent.agent_id)
        return TranscriptWriter(path, self.session_id, self.workspace.cwd, sidechain=fields)

    def send(self, text: str, uuid: str) -> None:
        """A message the user sent while a prompt runs: the model gets it with the next tool
        results (MessagesDelivered says when); `take_sent` hands back what it never got."""
        self._inbox.append(Message("user", (TextBlock(text),), uuid=uuid))

    def take_sent(self) -> tuple[Message, ...]:
        """The messages sent meanwhile, taken: the loop's next tool results carry them, or,
        once the prompt is over, they are prompts of their own."""
        taken, self._inbox = tuple(self._inbox), []
        return taken

    @property
    def abort_event(self) -> asyncio.Event:
        return self._abort

    def run_params(self, messages: tuple[Message, ...], **changes: Any) -> LoopParams:
        """One run's parameters: the session's, with `changes` (a sub-agent's differ; the
        tools it is given are withheld from it as from the session)."""
        config = self.config
        given = changes.pop("tools", None)
        params = LoopParams(
            messages=messages,
            model=config.model,
            tools=self.tools if given is None else Offered(given, self._withheld),
            workspace=self.workspace,
            system=config.system,
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            stop_sequences=config.stop_sequences,
            max_output_tokens=config.max_output_tokens,
            max_turns=config.max_turns,
            max_budget_usd=config.max_budget_usd,
            task_budget=config.task_budget,
            ledger=self.ledger,
            fallback_model=config.fallback_model,
            retry=config.retry,
            abort=self._abort,
            user_context=self.user_context,
            # With tool search, what is offered differs from what may be called. A sub-agent
            # given its own tools is offered exactly those.
            offered_tools=(self.mcp.offered() if self.mcp is not None and given is None else None),
        )
        return replace(params, **changes)

    def _withheld(self, tool_name: str) -> bool:
        return self.config.policy.withholds(tool_name)

    def run_deps(self) -> LoopDeps:
        """The loop's collaborators: the given ones, with the session's own."""
        call_model = self.deps.call_model
        return replace(
            self.deps,
            call_model=self._answering(call_model),
            can_use_tool=self.config.policy.can_use_tool,
            context=self.context or TrimOnly(),
            hooks=self.hooks,
            spawn_agent=self._run_subagent,
            summarize_tools=(
                self.side.summarize_tools if self.side and self.side.tool_summaries else None
            ),
        )

    def _answering(self, call_model: CallModel) -> CallModel:
        """The model's stream, watched. At its first event the request is out and the answer
        awaited: the transcript hands the last tool round's sync to its worker then
        (`TranscriptWriter.sync_due`). What any first answer needs loads while the first
        request waits for it (FIRST_ANSWER_MODULES, in lulls). Until the session's first tool
        calls: a called tool loads in a background thread while its input streams, not once it
        has (unless it came whole: the call loads it then, `preload_soon`); the other tools
        once the next request is out (its first event back), in its lulls, so that loading
        them slows neither the calls the user is waiting for nor the sending of their results
        nor the reading of the next answer; a session that calls no tool loads none."""

        async def call(request: ModelRequest) -> AsyncIterator[StreamEvent]:
            if not self._warmed:
                self._warmed = True
                for name in FIRST_ANSWER_MODULES:
                    in_lull(functools.partial(importlib.import_module, name))
            after_calls = self._called  # an earlier response called a tool
            answered = False
            async for event in call_model(request):
                if not answered:
                    answered = True
                    if self.transcript is not None:
                        self.transcript.sync_due()
                if after_calls and not self._preloaded:
                    self._preloaded = True
                    warm_in_lulls(self.tools.values())
                if (
                    isinstance(event, BlockStart)
                    and isinstance(event.block, ToolUseBlock)
                    and not self._preloaded
                    and (tool := self.tools.get(event.block.name)) is not None
                ):
                    self._called = True
                    preload_soon([tool])
                yield event

        return call

    async def compact(self, instructions: str | None = None) -> CompactResult:
        """Summarise the history now (the manual compact command), keeping the latest request
        and the recent turns; when the summary fails, the history stays and `failure` says why."""
        if self.context is None:
            raise ValueError("this session has no context manager to compact with")
        result = await self.context.compact(self.messages, instructions, self._abort)
        self.ledger.add(self.config.model, result.usage)
        if result.boundary is not None:
            self.messages = result.messages
        # Its summary call's requests (their cost), then the boundary: recorded and observed.
        boundary = () if result.boundary is None else (result.boundary,)
        for event in (*result.events, *boundary):
            if (failed := self._persist(event)) is not None:
                self._notices.append(failed)
            self._publish(event)
        return result

    async def _start(self) -> AsyncIterator[Event]:
        """The MCP servers the builder started come up (the first prompt waits for them unless
        interrupted) while the InstructionsLoaded hooks run, then the SessionStart hooks; what
        they and the Setup hooks add joins the memory the builder gathered."""
        context = [*self._setup_context, *self.user_context]
        servers = asyncio.ensure_future(self.start_servers())
        if self.hooks is not None:
            for loaded in self.memory_files:
                await instructions_loaded(self.hooks, loaded)
        await servers  # interrupted: the loop sees the abort and stops
        if self.hooks is not None:
            source = self.config.start_source
            started = await self.hooks.run(
                "SessionStart", {"source": source, "model": self.config.model}
            )
            for text in started.system_messages:
                yield Notice("warning", text)
            if text := started.for_model():
                context.append(Message.user(system_reminder(text), is_meta=True))
        self.user_context = tuple(context)
        if self.context is not None:
            # Summary requests share the session's prefix: the summariser sees the memory too.
            self.context.use_summarizer(
                replace(self.context.summarizer, user_context=self.user_context)
            )
            if (too_small := self.context.window_warning()) is not None:
                yield Notice("warning", too_small)

    def _persist(self, item: Message | Event, agent: SubAgent | None = None) -> Notice | None:
        """Write what changes the history before anyone sees it, and each model request's
        record (a sub-agent's events add only those); a failing disk costs the transcript
        (with a warning), never the run."""
        transcript = self.transcript
        if transcript is None:
            return None
        try:
            if isinstance(item, Message):
                transcript.append(item)
                return None
            if agent is None:
                transcript.record(item)
            for request in self._requests.feed(item, agent):
                transcript.record_request(request)
        except OSError as exc:
            self.transcript = None
            return Notice("warning", f"the transcript {transcript.path} stopped saving: {exc}")
        return None

    def _publish(self, event: Event, agent: SubAgent | None = None) -> None:
        for observer in list(self.observers):
            self._observe(observer, observer.event, event, agent)

    def _observe(self, observer: SessionObserver, call: Callable[..., None], *args: object) -> None:
        """An observer that fails is dropped, with a warning: it never costs the run."""
        try:
            call(*args)
        except Exception as exc:
            self.observers.remove(observer)
            self._notices.append(Notice("warning", f"{type(observer).__name__} stopped: {exc!r}"))

    def _record(self, end: LoopEnd) -> None:
        self.messages = end.messages
        self.turns += end.turns

    @property
    def usage_by_model(self) -> dict[str, Usage]:
        return self.ledger.by_model

    @property
    def api_duration_ms(self) -> float:
        return self.ledger.api_ms

    async def rewind(
        self,
        number: int,
        *,
        files: bool = True,
        conversation: bool = True,
        dry_run: bool = False,
        force: bool = False,
    ) -> Rewound:
        """Set the workspace, the conversation, or both back to checkpoint `number`; the
        rewind is itself a checkpoint, so it can be rewound. See checkpoints/rewind.py."""
        from codeloop.checkpoints.rewinding import rewind

        if self.checkpoints is None or self.transcript is None:
            raise ValueError("this session keeps no checkpoints")
        await self.checkpoints.settle()
        done = await asyncio.to_thread(
            rewind,
            self.checkpoints,
            number,
            history=self.messages,
            transcript=self.transcript.path,
            files=files,
            conversation=conversation,
            dry_run=dry_run,
            force=force,
        )
        if done.messages is not None and not dry_run:
            self.transcript.compact(done.messages, trigger="rewind")
            self.transcript.sync()
            self.messages = done.messages
            # What the model read is no longer all in its conversation: a file is changed
            # again only after a new Read, so nothing is overwritten that it cannot see.
            self.workspace.read_files.clear()
        return done

    @property
    def usage(self) -> Usage:
        return self.ledger.usage

    def model_usage(self) -> dict[str, dict[str, Any]]:
        """Per model: tokens, cost, window and output limit (what a result shows)."""
        return model_usage(self.ledger.by_model, self.ledger.cost_by_model)

    @property
    def cost_usd(self) -> float:
        return self.ledger.cost_usd()

    async def aclose(self) -> None:
        try:
            if self.mcp is not None:
                await self.mcp.aclose()
            if self.hooks is not None:
                await self.hooks.run("SessionEnd", {"reason": "other"})
                await self.hooks.aclose()
            if self.transcript is not None:
                self.transcript.close()
            if self.checkpoints is not None:
                await self.checkpoints.aclose()
            for observer in list(self.observers):
                self._observe(observer, observer.close)
        finally:
            try:
                if self.language_servers is not None:  # no language server outlives it
                    await self.language_servers.aclose()
                await self.workspace.roster.aclose()  # nor a teammate
                await self.workspace.shells.aclose()  # no background process outlives it
            finally:
                await self.client.aclose()


# A run that ended on an API error: StopFailure hooks fire instead of Stop.
FAILURE_ENDS = frozenset({"model_error", "prompt_too_long", "image_error"})
# Runs one Agent call: (session, what it asks, the call's context) -> the agent's answer.
AgentSpawner = Callable[["Session", AgentCall, ToolContext], Awaitable[ToolResult]]


def stop_failure_type(reason: str, error: str) -> str:
    """Claude Code's StopFailure `error` values, from how the run ended."""
    text = error.lower()
    for needle, kind in (
        ("rate limit", "rate_limit"),
        ("overloaded", "overloaded"),
        ("401", "authentication_failed"),
        ("403", "authentication_failed"),
        ("404", "model_not_found"),
        ("connection", "server_error"),
        ("http 5", "server_error"),
    ):
        if needle in text:
            return kind
    if reason in ("prompt_too_long", "image_error") or "http 400" in text:
        return "invalid_request"
    return "unknown"
