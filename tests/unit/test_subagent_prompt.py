"""What a sub-agent is told of its world: a custom agent's system prompt is its own, with the
environment its session gathered when it was built (nothing probed again, no git snapshot),
under the agent's model; a general-purpose one gets the session's prompt."""

from __future__ import annotations

from pathlib import Path

from codeloop.context.environment import Environment, GitState
from codeloop.extensions.agents import GENERAL, AgentDefinition, Agents
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.subagents import AgentRunner
from codeloop.testing.scenario import ToolUseSpec, tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools

REVIEWER = AgentDefinition("reviewer", "Reviews code", "You review code.", source="project")


def agent_call(agent: str) -> ToolUseSpec:
    return tool_use("Agent", {"description": "check", "prompt": "look", "subagent_type": agent})


async def sub_agent_system(tmp_path: Path, agent: str, environment: Environment | None) -> str:
    model = ScriptedModel([turn(agent_call(agent)), turn("looked"), turn("done")])
    config = SessionConfig(
        model="claude-sonnet-4-5",
        system="the session's prompt",
        max_tokens=100,
        policy=Policy("bypassPermissions"),
        environment=environment,
    )
    session = Session(model, default_tools(), Workspace(cwd=tmp_path), config)
    session.agents = AgentRunner(Agents({GENERAL.name: GENERAL, REVIEWER.name: REVIEWER}))
    async for _ in session.submit("review it"):
        pass
    await session.aclose()
    return model.requests[1].system


async def test_a_custom_agent_is_told_the_environment_the_session_gathered(
    tmp_path: Path,
) -> None:
    gathered = Environment(
        cwd=tmp_path,
        model="claude-sonnet-4-5",
        platform="gatheredos",
        os_version="GatheredOS 9",
        date="2026-01-02",
        repo_root=tmp_path,
        git=GitState("main", "M a.py", "abc123 first"),
    )
    system = await sub_agent_system(tmp_path, "reviewer", gathered)
    assert system.startswith("You review code.")
    # The session's findings (no repository here: a probe would say "no" and this machine's
    # platform), on the agent's model, without the session's git snapshot.
    assert "Is directory a git repo: yes" in system
    assert "Platform: gatheredos" in system and "Today's date: 2026-01-02" in system
    assert "Model: claude-sonnet-4-5" in system
    assert "gitStatus" not in system and "abc123" not in system


async def test_without_a_gathered_environment_a_custom_agent_gets_a_fresh_one(
    tmp_path: Path,
) -> None:
    system = await sub_agent_system(tmp_path, "reviewer", None)
    assert system.startswith("You review code.") and "Is directory a git repo: no" in system


async def test_a_general_purpose_agent_gets_the_sessions_prompt(tmp_path: Path) -> None:
    system = await sub_agent_system(tmp_path, GENERAL.name, None)
    assert system.startswith("the session's prompt")
