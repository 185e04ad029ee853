"""The system prompt: a static part that never changes (so it caches), then the environment."""

from __future__ import annotations

import datetime
import platform
from pathlib import Path

STATIC_PROMPT = """\
You are codeloop, a coding agent working in the user's terminal. You help with software
engineering tasks: reading and changing code, running commands, finding things, explaining.

How to work:
- Use the tools to look before you act: read a file before you edit it, search before you guess.
- Make the smallest change that does the job, in the style of the surrounding code.
- Run the project's tests or the command that shows your change works, when there is one.
- Several independent read-only calls can go in one response; they run in parallel.
- Be brief. Report what you did and what you found, not what you are about to do.
- If a tool call is denied, do not retry the same call; adjust or explain what you need.
"""


def environment_section(cwd: Path, model: str, extra_dirs: list[Path]) -> str:
    is_git = any((parent / ".git").exists() for parent in (cwd, *cwd.parents))
    lines = [
        "<env>",
        f"Working directory: {cwd}",
        f"Is directory a git repo: {'yes' if is_git else 'no'}",
        f"Platform: {platform.system().lower()}",
        f"Today's date: {datetime.date.today().isoformat()}",
        f"Model: {model}",
    ]
    if extra_dirs:
        lines.append("Additional working directories: " + ", ".join(str(d) for d in extra_dirs))
    lines.append("</env>")
    return "\n".join(lines)


def build_system_prompt(
    cwd: Path,
    model: str,
    *,
    extra_dirs: list[Path] | None = None,
    override: str | None = None,
    append: str | None = None,
) -> str:
    """`override` replaces the static part (--system-prompt); `append` is added at the end."""
    parts = [override if override is not None else STATIC_PROMPT]
    parts.append(environment_section(cwd, model, extra_dirs or []))
    if append:
        parts.append(append)
    return "\n\n".join(part.strip("\n") for part in parts if part)
