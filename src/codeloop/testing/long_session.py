"""A long scripted coding session that overflows any window: the context manager's workout.

A few user prompts, each followed by dozens of tool calls whose results are 20-40 KB (source
files read with Read, logs printed with Bash, the same files read again later), then a short
answer. The files are written for real, so the real tools produce the results. Summary calls
are answered from a separate script (`summary_turns`), because when a compaction happens
depends on the context manager, not on the script. `play` runs it through the real loop.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from codeloop.context.compact import SummaryModel
from codeloop.context.pipeline import ContextManager, ContextSettings
from codeloop.context.tokens import context_limits
from codeloop.deps import CallModel, LoopDeps
from codeloop.events import Event, LoopEnd
from codeloop.loop import LoopParams, query_loop
from codeloop.permissions.policy import Policy
from codeloop.system.valueclass import valueclass
from codeloop.testing.scenario import Turn, text, tool_use, turn
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from codeloop.types import Message

SYSTEM = "You are a coding agent. Audit the files as asked; change nothing."

SUMMARY = """\
1. User requests and intent: audit the modules under src/ and the logs under logs/ task by \
task, as each prompt asks; report findings, change nothing.
2. Key decisions: read every file in full; print logs with cat.
3. Files and code: src/mod_*.py and logs/run_*.log were read; none were changed.
4. Errors and fixes: none.
5. Pending tasks: the rest of the current task's files.
6. Current work: reading the next file of the current task.
7. Next step: read the next file named by the latest request."""

_WORDS = (
    "value",
    "count",
    "index",
    "result",
    "buffer",
    "config",
    "parser",
    "token",
    "window",
    "limit",
    "cache",
    "entry",
    "record",
    "handle",
    "stream",
    "offset",
    "payload",
    "request",
    "session",
    "status",
)


@valueclass
class LongSession:
    root: Path  # the working directory the files are in
    prompts: tuple[str, ...]
    turns: tuple[Turn, ...]  # the main model's answers, in order
    sources: tuple[Path, ...]
    logs: tuple[Path, ...]


def long_session(
    root: Path, *, prompts: int = 4, turns_per_prompt: int = 50, seed: int = 0
) -> LongSession:
    """Write the files under `root` and script `prompts × turns_per_prompt` model turns."""
    rng = random.Random(seed)
    sources = tuple(
        _write(root / "src" / f"mod_{i:02d}.py", rng.randint(17_000, 34_000), rng, _code_line)
        for i in range(16)
    )
    logs = tuple(
        _write(root / "logs" / f"run_{i:02d}.log", rng.randint(20_000, 29_000), rng, _log_line)
        for i in range(8)
    )
    asked: list[str] = []
    turns: list[Turn] = []
    for task in range(1, prompts + 1):
        asked.append(
            f"Task {task}: go through the modules in src/ and the logs in logs/ once more and "
            f"list every function that writes to a log (pass {task} of {prompts})."
        )
        for step in range(turns_per_prompt - 1):
            if step % 4 == 3:
                log = logs[rng.randrange(len(logs))]
                call = tool_use("Bash", {"command": f"cat logs/{log.name}"})
            else:
                source = sources[rng.randrange(len(sources))]
                call = tool_use("Read", {"file_path": str(source)})
            note = f"Task {task}, step {step + 1}: {_reasoning(rng)}"
            turns.append(turn(text(note), call))
        turns.append(turn(f"Task {task} is done: nothing in these files writes to a log."))
    return LongSession(root, tuple(asked), tuple(turns), sources, logs)


def summary_turns(count: int) -> list[Turn]:
    return [turn(SUMMARY) for _ in range(count)]


async def play(
    session: LongSession,
    call_model: CallModel,
    *,
    model: str,
    settings: ContextSettings,
    results_dir: Path,
) -> AsyncIterator[Event]:
    """The prompts one after another through the real loop and tools, as a session runs them,
    with a context manager (window from the catalog and CODELOOP_CONTEXT_WINDOW) whose summary
    calls go through `call_model` too."""
    tools = default_tools()
    workspace = Workspace(cwd=session.root)
    specs = tuple(tool.spec() for tool in tools.values())
    summarizer = SummaryModel(call_model, model, SYSTEM, specs)
    manager = ContextManager(
        summarizer, context_limits(model), workspace, results_dir, settings=settings
    )
    history: tuple[Message, ...] = ()
    for prompt in session.prompts:
        params = LoopParams(
            messages=(*history, Message.user(prompt)),
            model=model,
            tools=tools,
            workspace=workspace,
            system=SYSTEM,
            max_tokens=4096,
        )
        allow = Policy("bypassPermissions").can_use_tool
        deps = LoopDeps(call_model=call_model, can_use_tool=allow, context=manager)
        async for event in query_loop(params, deps):
            yield event
            if isinstance(event, LoopEnd):
                history = event.messages


def _write(
    path: Path, size: int, rng: random.Random, line: Callable[[random.Random, int], str]
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    used = 0
    while used < size:
        lines.append(line(rng, len(lines)))
        used += len(lines[-1]) + 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _reasoning(rng: random.Random) -> str:
    """A few sentences of the thinking-aloud models do between calls (200-500 characters)."""
    sentences = [
        f"The {rng.choice(_WORDS)} handling in the last result passes the {rng.choice(_WORDS)} "
        f"through without logging, so it is not what we are after."
        for _ in range(rng.randint(2, 5))
    ]
    return " ".join(sentences) + " Next I will look at another file."


def _code_line(rng: random.Random, n: int) -> str:
    if n % 12 == 0:
        return f"def {rng.choice(_WORDS)}_{n}({rng.choice(_WORDS)}, {rng.choice(_WORDS)}):"
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 9)))
    return f"    {rng.choice(_WORDS)} = compute({words!r})  # {n}"


def _log_line(rng: random.Random, n: int) -> str:
    level = rng.choice(("INFO", "INFO", "DEBUG", "WARN"))
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10)))
    return f"2025-01-{n % 28 + 1:02d} 12:{n % 60:02d}:00 {level} {words}"
