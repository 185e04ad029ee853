"""Auto memory: a folder per project where the model keeps notes for its later conversations,
laid out as Claude Code lays out `~/.claude/projects/<slug>/memory/`, under codeloop's own
home (beside the project's transcripts, store/data_paths.py).

The system prompt names the folder and says what belongs there; the model may write in it in
the default permission mode (an allow rule for that folder alone: permissions stay as they were
everywhere else); its index, MEMORY.md, reaches the next sessions with the other memory files
(its first 200 lines, at most 25 KB). `CLAUDE_CODE_DISABLE_AUTO_MEMORY=1` or the setting
`autoMemoryEnabled: false` turn all of it off; `autoMemoryDirectory` (not from shared project
settings: settings_files.py) puts the folder elsewhere, and all of it follows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.store.data_paths import find_repo_root, project_dir

if TYPE_CHECKING:
    from codeloop.settings.settings_files import Settings

INDEX = "MEMORY.md"
MAX_INDEX_LINES = 200
MAX_INDEX_BYTES = 25_000
DISABLE_VARIABLE = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def auto_memory_dir(cwd: Path, env: Mapping[str, str], settings: Settings) -> Path | None:
    """The memory folder: the one the settings chose (`autoMemoryDirectory`, checked where
    they are read), else the project's (its repository's, so every folder of a checkout shares
    it); None when auto memory is off: the variable decides, else `autoMemoryEnabled`, else it
    is on."""
    switch = env.get(DISABLE_VARIABLE, "").strip().lower()
    if switch in _TRUE or (switch not in _FALSE and settings.auto_memory_enabled is False):
        return None
    chosen = settings.auto_memory_directory
    return chosen or project_dir(find_repo_root(cwd) or cwd, env) / "memory"


def prompt_section(folder: Path) -> str:
    """The system prompt's words on the folder (short: every request carries them)."""
    return f"""\
# auto memory

Your persistent memory folder is `{folder}/`; it outlasts this conversation. The first \
{MAX_INDEX_LINES} lines of its index, {INDEX}, start each new one: keep it to one line per \
note, linking topic files (e.g. `debugging.md`) for details. Save what later work needs and \
the code does not show (the user's preferences and corrections, working build and test \
commands, pitfalls); remember or forget what the user asks; fix notes that prove wrong."""


def read_index(folder: Path) -> str | None:
    """MEMORY.md as the next session reads it: its first lines, cut to the size limit; None
    when there is none (or nothing in it)."""
    try:
        text = (folder / INDEX).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = text.splitlines(keepends=True)
    kept = "".join(lines[:MAX_INDEX_LINES]).encode()[:MAX_INDEX_BYTES].decode(errors="ignore")
    if len(lines) > MAX_INDEX_LINES or len(text.encode()) > MAX_INDEX_BYTES:
        kept += f"\n(MEMORY.md is longer: only its start is shown; the rest is in {folder})"
    return kept if kept.strip() else None
