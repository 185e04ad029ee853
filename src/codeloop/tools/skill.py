"""Skill: load a skill's instructions when the model decides it applies (progressive
disclosure: the prompt lists only names and descriptions; the body arrives through this tool,
and the skill's other files are read with Read when the body points to them).

Invoking a skill grants its `allowed-tools` until the user's next prompt, registers its hooks
for the rest of the session, runs its `!`command`` injections (each must be allowed by the
permission rules, and never when disableSkillShellExecution is set), and with `context: fork`
runs the rendered body as a sub-agent's task instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, ClassVar

from codeloop.extensions.skills import Skill, Skills, shell_commands, substitute
from codeloop.tools.base import AgentCall, Tool, ToolContext, ToolResult, Workspace
from codeloop.tools.input import Arg, ToolInput
from codeloop.tools.skill_runtime import SkillRuntime

SHELL_TIMEOUT = 120.0
DISABLED = "[shell command execution disabled by policy]"
# Exit 1 from these is a result (no match, a difference), not a failure.
_SEARCHES = frozenset({"grep", "rg", "egrep", "fgrep", "diff", "cmp", "test", "["})


class SkillInput(ToolInput):
    skill: Annotated[str, Arg('The skill name, e.g. "commit", "review-pr" or "my-plugin:pdf".')]
    args: Annotated[str | None, Arg("Optional arguments for the skill.")] = None


DESCRIPTION = """\
Execute a skill within the main conversation.

When the user asks you to perform a task, check whether one of the available skills (listed in \
a system reminder) matches. Skills give you specialized instructions and domain knowledge.

- Invoke it with the skill's name and optional arguments, e.g. skill: "pdf", or skill: \
"review-pr", args: "123". Plugin skills use their full name (plugin:skill).
- When a skill matches the request, invoke it before doing the task another way.
- The result is the skill's instructions; follow them. Files the instructions mention live in \
the skill's base directory: read them when you need them.
- Do not invoke a skill that is already loaded in this conversation."""


class SkillTool(Tool[SkillInput]):
    name: ClassVar[str] = "Skill"
    description: ClassVar[str] = DESCRIPTION
    input_model = SkillInput
    # A `context: fork` skill runs a sub-agent, whose own calls take the write lock.
    delegates: ClassVar[bool] = True

    def __init__(self, runtime: SkillRuntime | None = None) -> None:
        # None only to declare the spec (the registry's specs.json); a session passes one.
        self.runtime = runtime or SkillRuntime(Skills({}), "", Path.cwd())

    def is_read_only(self, args: SkillInput) -> bool:
        """Loading instructions changes nothing; what the skill then does is checked as it
        runs."""
        return True

    def is_concurrency_safe(self, args: SkillInput) -> bool:
        return False  # it may grant permissions the calls after it rely on

    async def call(self, args: SkillInput, ctx: ToolContext) -> ToolResult:
        runtime = self.runtime
        skill = runtime.skills.get(args.skill)
        if skill is None:
            known = ", ".join(s.name for s in runtime.skills.by_name.values() if s.model_invocable)
            return ToolResult.error(f"Unknown skill: {args.skill}. Available skills: {known}")
        if not skill.model_invocable:
            return ToolResult.error(
                f"The skill {skill.name} can only be run by the user (/{skill.name}); do not "
                "carry out its steps another way."
            )
        text = substitute(
            skill, args.args or "", session_id=runtime.session_id, project_dir=runtime.project_dir
        )
        if skill.allowed_tools:
            runtime.grant(skill.allowed_tools, f"skill {skill.name}")
        try:
            text = await self._inject(skill, text, ctx)
        except ShellFailed as exc:
            return ToolResult.error(str(exc))
        if skill.hooks:
            runtime.add_hooks(skill)
        if skill.context == "fork" and runtime.fork is not None:
            call = AgentCall(f"skill {skill.name}", text, skill.agent or "general-purpose")
            return await runtime.fork(call, ctx)
        if runtime.loaded.get(skill.name) == text:
            return ToolResult(f"The skill {skill.name} is already loaded; follow it.")
        runtime.loaded[skill.name] = text
        header = f"Base directory for this skill: {skill.directory}"
        return ToolResult(f"{header}\n\n{text.strip()}")

    async def _inject(self, skill: Skill, text: str, ctx: ToolContext) -> str:
        async def may_run(command: str) -> bool:
            return self.runtime.may_run(command, ctx)

        return await inject_shell(
            text, may_run, ctx.workspace, disabled=self.runtime.shell_disabled
        )


async def inject_shell(
    text: str,
    may_run: Callable[[str], Awaitable[bool]],
    workspace: Workspace,
    *,
    disabled: bool = False,
) -> str:
    """Run each !`command` of a skill or command body and put its output in its place (once,
    not re-scanned). `may_run` decides each command (the permission policy); a refused or
    failing one raises ShellFailed, as Claude Code aborts the skill."""
    from codeloop.system.procs import child_env, run_bounded

    pieces = shell_commands(text)
    if not pieces:
        return text
    outputs: list[tuple[str, str]] = []
    for placeholder, command in pieces:
        if disabled:
            outputs.append((placeholder, DISABLED))
            continue
        if not await may_run(command):
            raise ShellFailed(
                f'Shell command permission check failed for pattern "{placeholder}": '
                "allow it in the allowed-tools or the permission rules."
            )
        done = await run_bounded(
            ["bash", "-c", f"{command} 2>&1"],
            time_limit=SHELL_TIMEOUT,
            cwd=workspace.cwd,
            env=child_env(workspace.env),
        )
        first = command.split()[0] if command.split() else ""
        ok = done.returncode == 0 or (done.returncode == 1 and first in _SEARCHES)
        if not ok:
            why = "timed out" if done.timed_out else f"exit {done.returncode}"
            raise ShellFailed(
                f'Shell command failed for pattern "{placeholder}" ({why}):\n'
                f"[stderr]\n{done.stdout.strip()}"
            )
        outputs.append((placeholder, done.stdout.rstrip("\n")))
    for placeholder, output in outputs:
        text = text.replace(placeholder, output, 1)
    return text


class ShellFailed(Exception):
    """A !`command` was refused or failed; the message says which and why."""
