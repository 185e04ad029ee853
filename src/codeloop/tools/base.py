"""The tool seam: what a tool declares, what it receives, what it returns.

A tool never raises into the loop for a user-level failure: it returns `ToolResult(is_error=True)`
with a message the model can act on. Unexpected exceptions are caught by the executor and turned
into error results too, so one broken tool cannot end a session.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from codeloop.events import Event
from codeloop.models.base import ToolSpec
from codeloop.system.valueclass import valueclass
from codeloop.tools.input import ToolInput, input_schema, parse_input
from codeloop.tools.input import ToolInputError as ToolInputError  # where callers look for it
from codeloop.types import ImageBlock, TextBlock
from codeloop.workspace.tool_workspace import FileInstructions, ResultLimits
from codeloop.workspace.tool_workspace import Workspace as Workspace  # where the tools look for it

if TYPE_CHECKING:
    from codeloop.hooks.hook_runner import HookOutcome


InputT = TypeVar("InputT", bound=ToolInput)


@valueclass(slots=True)
class ToolResult:
    content: str | tuple[TextBlock | ImageBlock, ...]
    is_error: bool = False
    # What frontends show beyond the text the model reads, never sent to the model: Edit and
    # Write give their change as hunks (tools/patch.py).
    data: Mapping[str, Any] | None = None
    # The tool sized this result to the window itself (Read's pages): it reaches the model
    # as it is, never saved to a file in its place.
    sized: bool = False

    @staticmethod
    def error(message: str) -> ToolResult:
        return ToolResult(message, is_error=True)

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content if isinstance(part, TextBlock))


class TurnRoom:
    """What is left of one turn's allowance for tool results, shared by the turn's calls
    (they run concurrently, but each takes its share on the event loop, in one step)."""

    def __init__(self, tokens: int) -> None:
        self.left = tokens
        self._granted = 0

    def take(self, tokens: int) -> int:
        """Up to `tokens` of what is left: what was granted."""
        granted = max(0, min(tokens, self.left))
        self.left -= granted
        self._granted += granted
        return granted

    def within(self, tokens: int) -> None:
        """At most `tokens` for the turn's results in all (the answer took the rest)."""
        self.left = max(0, min(self.left, tokens - self._granted))


ProgressFn = Callable[[str], None]
# Hands an event of a nested run (a sub-agent's) to whoever runs the call: frontends see it.
EmitFn = Callable[["Event"], None]


@valueclass(slots=True)
class AgentCall:
    """What one Agent (Task) call asks for: the job, the agent type and, when the call names
    one, the model (an alias such as sonnet, opus, haiku)."""

    description: str
    prompt: str
    agent_type: str = "general-purpose"
    model: str | None = None
    # An agent team's teammate to spawn (agent teams): its name and its team's.
    name: str | None = None
    team_name: str | None = None


# Runs the hooks of one event (its name, its own fields) and returns what they answered.
RunHook = Callable[[str, Mapping[str, Any]], Awaitable["HookOutcome"]]
# Runs a sub-agent for one call, in that call's context (its tool_use id, its abort, where its
# events go), and returns its final answer.
SpawnAgent = Callable[[AgentCall, "ToolContext"], Awaitable["ToolResult"]]


def _no_progress(_: str) -> None:
    return None


def _no_events(_: Event) -> None:
    return None


@valueclass
class ToolContext:
    """What one tool call receives: the shared workspace plus its own abort and progress."""

    workspace: Workspace
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    progress: ProgressFn = _no_progress
    tool_use_id: str = ""
    # How the Task tool starts a sub-agent; None where there is no session to run one in.
    spawn_agent: SpawnAgent | None = None
    # A PreToolUse hook approved this call: it answers the prompt the call would get; deny and
    # ask rules still hold.
    hook_approved: bool = False
    # This turn's allowance for results, shared with the other calls of the turn.
    room: TurnRoom = field(default_factory=lambda: TurnRoom(ResultLimits().turn_tokens))
    emit: EmitFn = _no_events
    # A delegating call's: its caller's turn checkpoint, which is taken while its sub-agent
    # starts; the sub-agent's first write waits for it.
    checkpoint: Callable[[], Awaitable[None]] | None = None
    # Runs the hooks of an event the tool itself raises (TaskCreated, TaskCompleted) as the
    # caller's agent (its agent_id); the caller acts on their systemMessage and `continue`.
    run_hook: RunHook | None = None


class Tool(ABC, Generic[InputT]):
    name: ClassVar[str]
    description: ClassVar[str]
    input_model: type[InputT]
    # The longest result the tool itself makes: Bash, Grep, Glob and Read cut their output to
    # it (head and tail kept, or a page). The executor cuts nothing; what is too big for the
    # context window is the context manager's to handle.
    max_result_chars: ClassVar[int] = 100_000
    # A tool that only hands its work to others (a sub-agent): it holds no part of the
    # session's write lock while they work, and a checkpoint comes before their first write.
    delegates: ClassVar[bool] = False

    def is_read_only(self, args: InputT) -> bool:
        return False

    def is_concurrency_safe(self, args: InputT) -> bool:
        return self.is_read_only(args)

    @abstractmethod
    async def call(self, args: InputT, ctx: ToolContext) -> ToolResult: ...

    def warm(self) -> None:
        """Load now what the first call would load (a parser, a grammar); it runs in a
        background thread while the session's first model call is in flight."""

    def parse(self, raw: dict[str, Any]) -> InputT:
        return parse_input(self.name, self.input_model, raw)

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, input_schema(self.input_model))


class AnyTool(Protocol):
    """What the executor, the loop and the permission policy need of a tool: a `Tool`, or a
    stand-in such as the registry's lazily loaded tools."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def spec(self) -> ToolSpec: ...

    def parse(self, raw: dict[str, Any]) -> Any: ...

    def is_read_only(self, args: Any) -> bool: ...

    def is_concurrency_safe(self, args: Any) -> bool: ...

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult: ...


@valueclass
class InstructionSeams:
    """Several FileInstructions as one (nested CLAUDE.md files and rules, nested skills)."""

    parts: tuple[FileInstructions, ...]

    async def attach(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        texts = [await part.attach(tool_name, tool_input) for part in self.parts]
        return "\n\n".join(text for text in texts if text)

    def fork(self) -> InstructionSeams:
        return InstructionSeams(tuple(part.fork() for part in self.parts))
