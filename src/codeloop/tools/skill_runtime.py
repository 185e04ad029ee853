"""What invoking a skill acts through (the Skill tool's runtime), apart from the tool: the session
assembly builds one for every session, and the tool itself loads on first use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import field
from pathlib import Path

from codeloop.extensions.skills import Skill, Skills
from codeloop.system.valueclass import valueclass
from codeloop.tools.base import AgentCall, ToolContext, ToolResult


@valueclass(frozen=False)
class SkillRuntime:
    """What invoking a skill acts through; the session assembly fills it in."""

    skills: Skills
    session_id: str
    project_dir: Path
    # Temporarily allows rules (the policy's `grant`).
    grant: Callable[[tuple[str, ...], str], None] = lambda rules, source: None
    # Whether a shell command may run without asking (the permission rules).
    may_run: Callable[[str, ToolContext], bool] = lambda command, ctx: False
    # Registers a skill's hooks for the rest of the session.
    add_hooks: Callable[[Skill], None] = lambda skill: None
    # Runs a call as a sub-agent, in the Skill call's context: `context: fork` skills.
    fork: Callable[[AgentCall, ToolContext], Awaitable[ToolResult]] | None = None
    shell_disabled: bool = False
    # Skill name -> the text last given to the model: the same text twice is not repeated.
    loaded: dict[str, str] = field(default_factory=dict)
