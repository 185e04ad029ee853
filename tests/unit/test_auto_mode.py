"""Auto mode's place in the policy: what reaches the classifier, what its answers do, and that
nothing but a verdict allows. The judge is a function answering as a model would."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeloop.permissions.auto_mode import (
    AutoMode,
    AutoRules,
    runs_any_code,
)
from codeloop.permissions.policy import Answer, PermissionRequest, Policy
from codeloop.permissions.rules import Rule
from codeloop.tools.base import ToolContext, Workspace
from codeloop.tools.registry import default_tools
from codeloop.types import Message

TOOLS = default_tools()


class Judge:
    """Answers in turn; raises an answer that is an exception."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, model: str | None, text: str) -> str:
        self.asked.append(text)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def auto_policy(root: Path, judge: Judge, **kwargs: object) -> Policy:
    policy = Policy("auto", roots=[root], **kwargs)  # type: ignore[arg-type]
    policy.auto = AutoMode(judge, history=[Message.user("clean up the build")])
    return policy


async def call(policy: Policy, root: Path, tool: str, **raw: object) -> tuple[bool, str]:
    t = TOOLS[tool]
    ctx = ToolContext(Workspace(cwd=root), tool_use_id="toolu_1")
    decision = await policy.can_use_tool(t, t.parse(raw), ctx)
    return decision.allowed, decision.message


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "build").mkdir()
    return tmp_path.resolve()


async def test_what_the_engine_allows_never_reaches_the_classifier(root: Path) -> None:
    judge = Judge()
    policy = auto_policy(root, judge)
    assert (await call(policy, root, "Bash", command="ls build"))[0]
    assert (await call(policy, root, "Write", file_path=str(root / "a.txt"), content="x"))[0]
    assert judge.asked == []


async def test_a_verdict_decides_and_the_classifier_reads_the_request_and_action(
    root: Path,
) -> None:
    judge = Judge('{"ok": true}', 'Sure: {"ok": false, "reason": "[Scope] not asked for"}')
    policy = auto_policy(root, judge)
    assert (await call(policy, root, "Bash", command="make deploy"))[0]
    allowed, message = await call(policy, root, "Bash", command="rm -rf build")
    assert not allowed and "denied by auto mode: [Scope] not asked for" in message
    assert "clean up the build" in judge.asked[0] and "make deploy" in judge.asked[0]
    assert [d.tool_input["command"] for d in policy.denials] == ["rm -rf build"]


@pytest.mark.parametrize("failure", ["I think it is fine", OSError("connection refused")])
async def test_no_verdict_asks_the_user_and_never_allows_on_its_own(
    root: Path, failure: str | Exception
) -> None:
    asked: list[PermissionRequest] = []

    async def ask_user(request: PermissionRequest) -> Answer:
        asked.append(request)
        return Answer("deny", "no")

    policy = auto_policy(root, Judge(failure), ask_user=ask_user)
    allowed, _ = await call(policy, root, "Bash", command="rm -rf build")
    assert not allowed and len(asked) == 1
    # Nobody to ask: denied, saying why.
    headless = auto_policy(root, Judge(failure))
    allowed, message = await call(headless, root, "Bash", command="rm -rf build")
    assert not allowed and "Auto mode could not judge the call" in message


async def test_repeated_denials_pause_auto_mode_until_the_user_approves(root: Path) -> None:
    """Three denials in a row, as in Claude Code."""
    deny = '{"ok": false, "reason": "[Blocked] no"}'
    judge = Judge(deny, deny, deny, '{"ok": true}')
    answers = ["allow_once"]

    async def ask_user(request: PermissionRequest) -> Answer:
        return Answer(answers.pop(0))  # type: ignore[arg-type]

    policy = auto_policy(root, judge, ask_user=ask_user)
    for _ in range(3):
        assert not (await call(policy, root, "Bash", command="rm -rf build"))[0]
    assert policy.auto is not None and policy.auto.paused
    # Paused: the next call is the user's (the classifier is not asked), whose yes resumes it.
    assert (await call(policy, root, "Bash", command="make deploy"))[0]
    assert len(judge.asked) == 3 and not policy.auto.paused
    assert (await call(policy, root, "Bash", command="make deploy"))[0]  # the classifier again
    assert judge.answers == []


async def test_twenty_denials_in_all_pause_auto_mode_however_spaced(root: Path) -> None:
    """Claude Code's other threshold: 20 denials in one session, allows between them or not."""
    deny, allow = '{"ok": false, "reason": "[Blocked] no"}', '{"ok": true}'
    auto = AutoMode(Judge(*[deny, allow] * 20))
    for denials in range(1, 21):
        assert not (await auto.classify("Bash", {"command": "rm -r build"}, root, [root])).allowed
        assert auto.paused == (denials == 20), denials
        assert (await auto.classify("Bash", {"command": "make"}, root, [root])).allowed


async def test_ask_rules_keep_prompting_in_auto_mode(root: Path) -> None:
    judge = Judge()
    policy = auto_policy(root, judge, asked=["Bash(make deploy)"])
    allowed, message = await call(policy, root, "Bash", command="make deploy")
    assert not allowed and "cannot ask the user" in message and judge.asked == []


def test_auto_mode_rules_keep_their_sections_and_leave_out_defaults() -> None:
    text = AutoRules(environment=("$defaults", "git.corp is ours"), hard_deny=("no prod",)).text()
    assert "Trusted environment:\n- git.corp is ours" in text
    assert "Always block, whatever the user said:\n- no prod" in text
    assert "$defaults" not in text and "Also allow" not in text


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ("Bash", True),
        ("Bash(*)", True),
        ("Bash(python*)", True),
        ("Bash(python3:*)", True),
        ("Bash(npm run:*)", True),
        ("Bash(npx:*)", True),
        ("Agent", True),
        ("Task(explorer)", True),
        ("Bash(npm test)", False),
        ("Bash(npm test:*)", False),
        ("Bash(git status:*)", False),
        ("Read", False),
    ],
)
def test_allow_rules_that_run_any_code_are_set_aside(text: str, dropped: bool) -> None:
    assert runs_any_code(Rule.parse(text)) is dropped


async def test_a_blanket_bash_allow_does_not_skip_the_classifier(root: Path) -> None:
    judge = Judge('{"ok": false, "reason": "[Scope] no"}')
    policy = auto_policy(root, judge, allowed=["Bash", "Bash(make test)"])
    assert not (await call(policy, root, "Bash", command="rm -rf build"))[0]
    assert (await call(policy, root, "Bash", command="make test"))[0]  # narrow: kept
    assert len(judge.asked) == 1
    policy.mode = "default"  # leaving auto mode restores the rule
    assert (await call(policy, root, "Bash", command="rm -rf build"))[0]


async def test_a_sub_agents_task_is_judged_before_it_starts(root: Path) -> None:
    judge = Judge('{"ok": false, "reason": "[Scope] deleting remote branches"}')
    policy = auto_policy(root, judge)
    task = "delete every remote branch matching feature/*"
    allowed, message = await call(policy, root, "Agent", description="cleanup", prompt=task)
    assert not allowed and "[Scope] deleting remote branches" in message
    assert task in judge.asked[0]
    policy.mode = "default"  # elsewhere a delegation needs no approval itself
    assert (await call(policy, root, "Agent", description="cleanup", prompt=task))[0]


async def test_the_classifier_reads_the_projects_instructions(root: Path) -> None:
    judge = Judge('{"ok": true}')
    policy = Policy("auto", roots=[root])
    policy.auto = AutoMode(judge, instructions="Never push to the release branch.")
    assert (await call(policy, root, "Bash", command="make deploy"))[0]
    assert "Never push to the release branch." in judge.asked[0]
