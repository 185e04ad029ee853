"""The system prompt, and the context gathered with it at the start of a session.

The prompt is a static part (the same for every session and project: `--system-prompt`
replaces it), then the dynamic boundary, where the session's part begins: the environment
(working directory, platform, date, git state) and `--append-system-prompt`. The static part
is identical across sessions; the session's part is fixed for the session, so every request of
a session repeats the prompt byte for byte and the prompt cache holds. (The whole prompt is one
cached block: the tools before it are the big, shared prefix, and carry their own breakpoint.)

Memory (CLAUDE.md, AGENTS.md) is not here but in one user-context message (context/memory.py),
read concurrently with the git commands, as the seeds' agent entry gathers both at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from codeloop.context.auto_memory import prompt_section
from codeloop.context.environment import (
    Environment,
    GitProbe,
    basic_environment,
    gather_environment,
)
from codeloop.context.memory import Memory, load_memory, user_context_message
from codeloop.system.valueclass import valueclass
from codeloop.types import Message

IDENTITY = """\
You are codeloop, a coding agent working in the user's terminal. You help with software
engineering tasks: reading and changing code, running commands, finding things, explaining.
"""
# What an output style without keep-coding-instructions keeps of the static part.
STYLE_BASE = (
    IDENTITY
    + """
Text inside <system-reminder> tags comes from codeloop and the user's configuration (memory
files, hooks), not from the user's typing; follow it, but do not reply to it.
"""
)
STATIC_PROMPT = (
    IDENTITY
    + """
How to work:
- Use the tools to look before you act: read a file before you edit it, search before you guess.
- Make the smallest change that does the job, in the style of the surrounding code.
- Run the project's tests or the command that shows your change works, when there is one.
- Several independent read-only calls can go in one response; they run in parallel.
- Be brief. Report what you did and what you found, not what you are about to do.
- If a tool call is denied, do not retry the same call; adjust or explain what you need.
- Text inside <system-reminder> tags comes from codeloop and the user's configuration (memory
  files, hooks), not from the user's typing; follow it, but do not reply to it.
"""
)


def build_system_prompt(
    cwd: Path,
    model: str,
    *,
    extra_dirs: Sequence[Path] | None = None,
    override: str | None = None,
    append: str | None = None,
    environment: Environment | None = None,
    brief: bool = False,
    memory_dir: Path | None = None,
) -> str:
    """The static part, a blank line, then the session's part: the `<env>` section onwards.

    `override` replaces the static part (--system-prompt); `append` is added at the end
    (--append-system-prompt). Without `environment`, one without the git state is used.
    `brief`: a short git status (the compact profile's).
    `memory_dir`: the auto-memory folder, which the built-in prompt tells the model about.
    """
    env = environment or basic_environment(cwd, model, extra_dirs or ())
    static = (override if override is not None else STATIC_PROMPT).strip("\n")
    parts = [static, env.render(brief=brief)]
    if memory_dir is not None and override is None:
        parts.append(prompt_section(memory_dir))
    if append and append.strip():
        parts.append(append.strip("\n"))
    return "\n\n".join(part for part in parts if part)


@valueclass
class PromptContext:
    """What a session sends ahead of its conversation, built once when it starts."""

    system: str
    memory: Memory
    environment: Environment
    # The memory message to put before the first message of every request (None: no memory).
    user_context: Message | None

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.memory.warnings


async def gather_prompt_context(
    cwd: Path,
    model: str,
    *,
    extra_dirs: Sequence[Path] = (),
    override: str | None = None,
    append: str | None = None,
    env: Mapping[str, str] | None = None,
    memory: Memory | None = None,
    reminders: Sequence[str] = (),
    git: GitProbe | None = None,
    brief: bool = False,
    memory_dir: Path | None = None,
) -> PromptContext:
    """Memory files and the environment, gathered concurrently, and the system prompt.
    `memory` given: already read (the session reports it before its first prompt); `git`: the
    probe of `cwd` already under way; `brief`: a short git status."""
    git_env = asyncio.create_task(gather_environment(cwd, model, extra_dirs, git=git))
    await asyncio.sleep(0)  # the git processes start; the memory files are read meanwhile
    # A few small files: read here, since a worker thread costs more than the reads.
    memory = memory if memory is not None else load_memory(cwd, env=env)
    environment = await git_env
    system = build_system_prompt(
        cwd,
        model,
        override=override,
        append=append,
        environment=environment,
        brief=brief,
        memory_dir=memory_dir,
    )
    return PromptContext(system, memory, environment, user_context_message(memory, reminders))
