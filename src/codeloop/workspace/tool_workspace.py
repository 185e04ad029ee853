"""The workspace: the session-scoped state tools share and mutate (the cwd Bash moves, the files
Read has seen, the result limits the context manager sizes). Vocabulary, not machinery: the
tools, the context manager and compaction all hold one, so it sits below every one of them.
"""

from __future__ import annotations

import asyncio
import os.path
from dataclasses import field
from pathlib import Path
from typing import Any, Literal, Protocol

from codeloop.system.valueclass import valueclass
from codeloop.teams.task_list import Member, TaskList
from codeloop.teams.team_mail import Roster
from codeloop.types import ToolUseBlock
from codeloop.workspace.background import BackgroundShells
from codeloop.workspace.file_stamp import FileStamps
from codeloop.workspace.write_lock import WriteLock


@valueclass(slots=True)
class ResultLimits:
    """How many tokens tool results may take in the model's window: one result, and all the
    results of one turn together (context/tokens.py `Shares`; these defaults are a 200K
    window's). Read pages itself to them; another tool's result past them is saved to a file
    and previewed (`Workspace.spill`). `unanswered_tokens` bounds the answer that made the
    calls and their results together: a compaction keeps that much word for word."""

    result_tokens: int = 25_000
    turn_tokens: int = 50_000
    unanswered_tokens: int = 140_000


class EditorFiles(Protocol):
    """The text files an editor holds open (ACP's fs/*): what Read, Edit and Write see and
    change instead of the disk, so the model reads the unsaved buffer and its edits land
    there. The decisions (read first, unchanged since, inside the roots) stay the tools'."""

    async def read_text(self, path: Path) -> str | None:
        """The editor's text of `path`; None: read the disk."""
        ...

    async def write_text(self, path: Path, text: str) -> bool:
        """Give the editor `path`'s new text (OSError: it refused); False: write the disk."""
        ...


class EditorTerminals(Protocol):
    """Terminals an editor runs commands in (ACP's terminal/*), so the user watches Bash's
    commands there; the command line, its environment and what is done with the result stay
    Bash's."""

    async def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        time_limit: float,
        abort: asyncio.Event,
        limit: int,
        tool_use_id: str,
    ) -> tuple[str, int, Literal["timeout", "abort"] | None]:
        """Run `argv`: its output (about `limit` characters at most), its exit code (minus
        the signal's number when killed by one), and what stopped it early, if anything."""
        ...


class Spill(Protocol):
    """Saves a result too big for the window and returns the preview that replaces it."""

    def __call__(self, use: ToolUseBlock, text: str, preview_chars: int) -> str: ...


class FileInstructions(Protocol):
    """Instructions that apply to the files a call touched (a nested CLAUDE.md, a path-scoped
    rule), given once per conversation."""

    async def attach(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """Text to add to the call's result ("" when nothing new applies)."""
        ...

    def fork(self) -> FileInstructions:
        """A sub-agent's own record, starting from this one's."""
        ...


@valueclass(frozen=False)
class Workspace:
    """Session-scoped state the tools share and mutate (Bash moves `cwd`, Read fills the cache)."""

    cwd: Path
    extra_dirs: list[Path] = field(default_factory=list)
    # Each file as this session last read or wrote it (its size and content hash): what Edit,
    # Write and NotebookEdit check it against.
    read_files: FileStamps = field(default_factory=FileStamps)
    # The environment Bash commands run with (None: the process's), and a file of `export`s
    # that hooks write (CLAUDE_ENV_FILE), sourced before every command.
    env: dict[str, str] | None = None
    env_file: Path | None = None
    instructions: FileInstructions | None = None
    # Sized to the model's window by the context manager; `spill` None: results too big are
    # cut by their tools alone, never saved.
    result_limits: ResultLimits = field(default_factory=ResultLimits)
    spill: Spill | None = None
    # The model's task list as its last TodoWrite left it (content, status, activeForm).
    todos: list[dict[str, str]] = field(default_factory=list)
    # Commands started with run_in_background: the session's, shared with its sub-agents.
    shells: BackgroundShells = field(default_factory=BackgroundShells)
    # The task list (TaskCreate and its kin): the session's, shared with its sub-agents.
    tasks: TaskList = field(default_factory=TaskList)
    # The session's agent team (its roster and mailboxes), shared with every agent.
    roster: Roster = field(default_factory=Roster)
    # Who works here when it is an agent team's teammate (its name, its team); None elsewhere.
    member: Member | None = None
    # One writer at a time across the session's agents (write_lock.py).
    write_lock: WriteLock = field(default_factory=WriteLock)
    # An editor's buffers, when an editor drives the session and serves them (None: the disk).
    files: EditorFiles | None = None
    # An editor's terminals, for Bash's foreground commands when it offers them (None: here).
    terminals: EditorTerminals | None = None

    def fork(self) -> Workspace:
        """A sub-agent's workspace: its own cwd, read state, loaded instructions and to-do list;
        the same environment, result limits, background shells, task list, write lock and
        editor (files and terminals)."""
        own = self.instructions.fork() if self.instructions is not None else None
        return Workspace(
            self.cwd,
            list(self.extra_dirs),
            env=self.env,
            env_file=self.env_file,
            instructions=own,
            result_limits=self.result_limits,
            spill=self.spill,
            shells=self.shells,
            tasks=self.tasks,
            roster=self.roster,
            write_lock=self.write_lock,
            files=self.files,
            terminals=self.terminals,
        )

    def resolve(self, path: str) -> Path:
        """An absolute path for a tool argument, relative paths taken from the current cwd."""
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.cwd / candidate
        return Path(_normalize(candidate))

    @property
    def roots(self) -> list[Path]:
        return [self.cwd, *self.extra_dirs]


def _normalize(path: Path) -> str:
    return os.path.normpath(str(path))
