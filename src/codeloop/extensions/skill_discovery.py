"""Skills that become available while the model works, as in Claude Code: a subfolder's
`.claude/skills/` the first time the model reads or edits a file below it (a monorepo
package's own skills), and a skill with `paths:` globs the first time a file they match is
touched.

It is one of the workspace's file-instruction seams (next to nested CLAUDE.md files): the new
skills join the Skill tool's registry, and their names and descriptions come back once, as a
system reminder on the tool result that brought them in.
"""

from __future__ import annotations

import copy
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from codeloop.context.globs import matches
from codeloop.context.lazy_memory import new_folders, touched_file
from codeloop.context.memory import system_reminder
from codeloop.extensions.skills import Skill, Skills, skills_in

_INTRO = "These skills apply to the files you are working on now:"
# A SKILL.md below the working folder's own .claude/skills (which loads at start), as git sees
# the tree: tracked, or untracked and not ignored.
_NESTED = ":(glob)**/.claude/skills/**/SKILL.md"


def nested_skills_exist(cwd: Path) -> bool:
    """Whether a subfolder holds skills the session would discover (so it needs the Skill
    tool though it starts with none). git's index and ignore rules keep this one quick call;
    a folder outside git is not searched. Under the protective config: the repository must
    not get to run a program of its own (core.fsmonitor) by being opened."""
    from codeloop.shell.git_env import protective_env

    listing = ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", _NESTED]
    argv = ["git", "--no-optional-locks", *listing]
    env = protective_env(os.environ)
    try:
        found = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    names = found.stdout.decode(errors="replace").split("\0") if found.returncode == 0 else []
    return any(name and not name.startswith(".claude/") for name in names)


class SkillSet(Protocol):
    """Where the session keeps its skills (the Skill tool's runtime): discovery adds the nested
    ones it finds there, for the Skill tool to load."""

    skills: Skills


class SkillDiscovery:
    """One per conversation (a sub-agent forks its own record of what it has seen)."""

    def __init__(self, runtime: SkillSet, cwd: Path) -> None:
        self.runtime = runtime
        self.cwd = cwd
        self._visited: set[Path] = set()
        self._offered: set[str] = set()
        self.notes: list[str] = []

    def fork(self) -> SkillDiscovery:
        """A sub-agent's record; the skills it finds join the session's registry."""
        other = copy.copy(self)
        other._visited, other._offered = set(self._visited), set(self._offered)
        return other

    async def attach(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        target = touched_file(tool_name, tool_input, self.cwd)
        if target is None:
            return ""
        self._nested(target.parent)
        new = [s.name for s in self._held() if _applies(s, target, self.cwd)]
        new = [name for name in new if name not in self._offered]
        self._offered.update(new)
        listing = self.runtime.skills.listing(only=new) if new else ""
        return system_reminder(f"{_INTRO}\n\n{listing}") if listing else ""

    def _nested(self, folder: Path) -> None:
        """Load `.claude/skills` of the folders from below the working directory to `folder`;
        a name already taken gets the folder as its qualifier (`apps/web:deploy`)."""
        for current in new_folders(self.cwd, folder, self._visited):
            found = skills_in(current / ".claude" / "skills", "project", self.notes)
            if found:
                self._add(current.relative_to(self.cwd).as_posix(), found)

    def _add(self, where: str, found: list[Skill]) -> None:
        by_name = dict(self.runtime.skills.by_name)
        for skill in found:
            name = f"{where}:{skill.name}" if skill.name in by_name else skill.name
            # Offered on its next matching file: every file below its folder, unless it
            # narrows that with its own `paths:`.
            globs = skill.paths or ("**",)
            by_name[name] = replace(skill, name=name, paths=globs)
        self.runtime.skills = replace(self.runtime.skills, by_name=by_name)

    def _held(self) -> list[Skill]:
        return [s for s in self.runtime.skills.by_name.values() if s.paths and s.model_invocable]


def _applies(skill: Skill, target: Path, cwd: Path) -> bool:
    """Its globs match the file, relative to the folder holding the project skill's
    `.claude/skills/` (the working directory for the user's, managed and plugin skills)."""
    base = skill.directory.parent.parent.parent if skill.level == "project" else cwd
    try:
        relative = target.relative_to(base).as_posix()
    except ValueError:
        return False
    return matches(skill.paths, relative)
