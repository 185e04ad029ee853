"""opusplan: a session plans on opus and, once the plan is accepted (the session leaves plan
mode), carries it out on sonnet; the fake model server sees which model each request names."""

from __future__ import annotations

from pathlib import Path

from codeloop.builder import build_session
from codeloop.models.aliases import resolve_alias
from codeloop.models.factory import mode_models
from codeloop.options import Options
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn


def env_for(server: FakeModelServer, home: Path) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "CODELOOP_HOME": str(home),
        "HOME": str(home),
    }


async def test_an_accepted_plan_is_carried_out_on_sonnet(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=(
            turn(tool_use("ExitPlanMode", {"plan": "1. Rename the function."})),
            turn("The plan is accepted."),
            turn("Renamed."),
        )
    )
    with FakeModelServer(scenario) as server:
        session = await build_session(
            Options(
                model="opusplan",
                permission_mode="plan",
                allowed_tools=["ExitPlanMode"],
                cwd=tmp_path,
                env=env_for(server, tmp_path / "home"),
            )
        )
        try:
            async for _ in session.submit("plan the rename"):
                pass
            mode_after_plan = session.config.policy.mode
            async for _ in session.submit("go ahead"):
                pass
        finally:
            await session.aclose()
        models = [r.body["model"] for r in server.requests]
    opus, sonnet = resolve_alias("opus", {}), resolve_alias("sonnet", {})
    assert mode_after_plan == "default"
    assert models == [opus, opus, sonnet]


def test_only_opusplan_depends_on_the_mode() -> None:
    env = {"ANTHROPIC_DEFAULT_OPUS_MODEL": "my-opus", "ANTHROPIC_API_KEY": "k"}
    assert mode_models("opusplan", env) == ("my-opus", resolve_alias("sonnet", {}))
    assert mode_models("anthropic:opusplan", env) == ("my-opus", resolve_alias("sonnet", {}))
    assert mode_models(None, {"ANTHROPIC_MODEL": "opusplan"}) is not None
    assert mode_models("opus", env) is None
    assert mode_models("claude-sonnet-4-5", env) is None
    assert mode_models(None, {}) is None
