"""Rule syntax and matching, modes, sources, and the ask / allow-always API of the Policy."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from codeloop.errors import UnsafeSettingsError
from codeloop.permissions.decision import Decision
from codeloop.permissions.policy import (
    Answer,
    PermissionRequest,
    Policy,
    settings_rules,
    split_rules,
)
from codeloop.permissions.rules import BashPattern, PathPattern, Rule, RuleError, domain_matches
from codeloop.settings.settings_files import RuleSet
from codeloop.tools.base import Tool, ToolContext, ToolResult, Workspace
from codeloop.tools.input import ToolInput
from codeloop.tools.registry import default_tools

TOOLS = default_tools()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "src").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("hunter2")
    (root / "src" / "app.py").write_text("print('hi')\n")
    return root


def decide(policy: Policy, tool: str, cwd: Path, **raw: Any) -> Decision:
    t = TOOLS[tool]
    return policy.decide(t, t.parse(raw), Workspace(cwd=cwd))


# --- syntax ---------------------------------------------------------------------------------


def test_rule_parsing() -> None:
    assert Rule.parse("Bash").specifier is None
    rule = Rule.parse("Bash(npm run test:*)", "project settings")
    assert (rule.tool, rule.specifier, rule.source) == (
        "Bash",
        "npm run test:*",
        "project settings",
    )
    assert Rule.parse("Bash(*)").specifier is None
    assert Rule.parse("mcp__github__create_issue").tool == "mcp__github__create_issue"
    for bad in ("Bash(ls", "(ls)", "Ba sh", ""):
        with pytest.raises(RuleError):
            Rule.parse(bad)


def test_flag_values_split_on_commas_and_spaces_outside_parentheses() -> None:
    assert split_rules(["Bash(git diff:*),Edit", "Read Bash(ls -la)"]) == [
        "Bash(git diff:*)",
        "Edit",
        "Read",
        "Bash(ls -la)",
    ]


@pytest.mark.parametrize(
    "bad",
    [
        "Bash(rm:*), Read(.env)",  # two rules run together in one string
        "Bash(rm:*) Read(.env)",
        "Bash(:*)",  # a prefix of no words: would match no command
        "WebFetch(example.com)",  # a host without domain: would match no URL
        "WebFetch(domain:)",
        "WebFetch(domain:*)",
    ],
)
def test_a_rule_that_could_match_nothing_is_refused(bad: str) -> None:
    with pytest.raises(RuleError):
        Rule.parse(bad)


def test_quoted_parentheses_and_domains_parse() -> None:
    assert Rule.parse('Bash(python -c "print(1)")').specifier == 'python -c "print(1)"'
    assert Rule.parse("WebFetch(domain:*.example.com)").specifier == "domain:*.example.com"


@pytest.mark.parametrize("rule", ["bash(rm:*)", "Bassh(rm:*)", "WEBFETCH", "read(./secrets/**)"])
def test_a_deny_or_ask_rule_naming_a_misspelt_tool_is_an_error(rule: str) -> None:
    source = "/p/.claude/settings.json"
    for kind in ("deny", "ask"):
        with pytest.raises(UnsafeSettingsError, match=rf"{source}: permissions\.{kind}: .*mean"):
            settings_rules([RuleSet(source, **{kind: (rule,)})], Path("/p"), TOOLS)
    # An allow rule that matches nothing only fails to widen.
    settings_rules([RuleSet(source, allow=(rule,))], Path("/p"), TOOLS)
    # Tools codeloop does not have (Claude Code's LSP), MCP tools and patterns are left alone.
    settings_rules([RuleSet(source, deny=("LSP", "mcp__x__y", "mcp__*"))], Path("/p"), TOOLS)


def test_settings_rules_are_tagged_with_their_file_and_based_at_its_project() -> None:
    rule_sets = [
        RuleSet("/p/.claude/settings.json", allow=("Read",), deny=("Edit(/secrets/**)",)),
        RuleSet("--settings", ask=("Bash(git push:*)",)),
    ]
    rules = settings_rules(rule_sets, Path("/work"), TOOLS)
    (deny,) = rules["deny"]
    assert (deny.source, deny.base) == ("/p/.claude/settings.json", Path("/p"))
    (ask,) = rules["ask"]
    assert (ask.source, ask.base) == ("--settings", Path("/work"))
    assert [r.text for r in rules["allow"]] == ["Read"]


@pytest.mark.parametrize(
    ("spec", "argv", "matches"),
    [
        ("npm run test:*", ["npm", "run", "test"], True),
        ("npm run test:*", ["npm", "run", "test", "--watch"], True),
        ("npm run test:*", ["npm", "run", "testing"], False),
        ("npm run test:*", ["npm", "run"], False),
        ("git diff:*", ["git", "diff", "HEAD~1"], True),
        ("ls -la", ["ls", "-la"], True),
        ("ls -la", ["ls", "-la", "/"], False),
        ("git commit *", ["git", "commit", "-m", "x"], True),
        ("git commit *", ["git", "commit"], True),
        ("git commit *", ["git", "commitx"], False),
        ("ls *", ["lsof"], False),
    ],
)
def test_bash_patterns(spec: str, argv: list[str], matches: bool) -> None:
    pattern = BashPattern.parse(spec)
    assert pattern.matches(argv, [False] * len(argv), open_args=False, loose=False) is matches


def test_bash_allow_patterns_never_match_a_dynamic_prefix_or_an_exact_with_unknown_words() -> None:
    prefix = BashPattern.parse("git diff:*")
    assert not prefix.matches(["git", "$X"], [False, True], open_args=False, loose=False)
    assert prefix.matches(["git", "diff", "$X"], [False, False, True], open_args=False, loose=False)
    exact = BashPattern.parse("rm build")
    assert not exact.matches(["rm", "build"], [False, False], open_args=True, loose=False)
    assert not exact.matches(["rm", "$D"], [False, True], open_args=False, loose=False)


def test_deny_patterns_match_look_alikes_and_case() -> None:
    pattern = BashPattern.parse("git push:*")
    fullwidth = ["ｇｉｔ", "PUSH"]
    assert pattern.matches(fullwidth, [False, False], open_args=False, loose=True)
    assert not pattern.matches(fullwidth, [False, False], open_args=False, loose=False)


@pytest.mark.parametrize(
    ("spec", "path", "matches"),
    [
        ("./secrets/**", "project/secrets/key", True),
        ("./secrets/**", "project/secrets", True),
        ("secrets", "project/secrets/key", True),  # a matched directory covers its contents
        ("*.env", "project/a/b/.env", True),  # as in gitignore, `*` matches a leading dot
        ("*.env", "project/a/b/prod.env", True),  # no slash: any depth
        (".env", "project/deep/.env", True),
        ("src/**/*.py", "project/src/a/b.py", True),
        ("src/**/*.py", "project/src/b.py", True),
        ("src/*.py", "project/src/a/b.py", False),
        ("/src/**", "project/src/x", True),  # relative to the rule's base (the project)
        ("//etc/shadow", "/etc/shadow", True),
        ("~/.ssh/**", "HOME/.ssh/id_rsa", True),
        ("./secrets/**", "project/other/secrets/key", False),
    ],
)
def test_path_patterns(tmp_path: Path, spec: str, path: str, matches: bool) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    pattern = PathPattern.parse(spec, project=project, home=home, base=None)
    full = path.replace("HOME", str(home)) if path.startswith(("HOME", "/")) else tmp_path / path
    assert pattern.matches(Path(os.path.realpath(full)), loose=False) is matches


def test_domains() -> None:
    assert domain_matches("domain:example.com", "https://example.com/x")
    assert domain_matches("domain:example.com", "https://docs.Example.com/x")
    assert not domain_matches("domain:example.com", "https://example.com.evil.net/")
    assert not domain_matches("domain:example.com", "https://notexample.com/")


# --- decisions ------------------------------------------------------------------------------


def test_deny_beats_ask_beats_allow_and_each_decision_names_its_rule(project: Path) -> None:
    allow = Rule.parse("Bash(git:*)", "user settings")
    ask = Rule.parse("Bash(git push:*)", "project settings")
    deny = Rule.parse("Bash(git push --force:*)", "--disallowedTools")
    policy = Policy("default", [allow], [deny], [ask], roots=[project])
    assert decide(policy, "Bash", project, command="git fetch").rule == allow
    asked = decide(policy, "Bash", project, command="git push origin")
    assert (asked.behavior, asked.rule) == ("ask", ask)
    denied = decide(policy, "Bash", project, command="git push --force origin")
    assert (denied.behavior, denied.rule) == ("deny", deny)
    assert "--disallowedTools" in denied.explain()


def test_a_prefix_rule_allows_only_when_every_subcommand_is_allowed(project: Path) -> None:
    policy = Policy("default", ["Bash(npm run test:*)"], roots=[project])
    assert decide(policy, "Bash", project, command="npm run test -- -x").behavior == "allow"
    assert decide(policy, "Bash", project, command="npm run test && ls src").behavior == "allow"
    mixed = decide(policy, "Bash", project, command="npm run test && npm publish")
    assert mixed.behavior == "ask"
    assert "npm publish" in mixed.reason and mixed.suggestions == ("Bash(npm publish:*)",)


def test_wrappers_are_judged_by_what_they_run(project: Path) -> None:
    policy = Policy("default", ["Bash(make test:*)"], ["Bash(rm:*)"], roots=[project])
    for command in ("timeout 5 make test", "nice -n 5 make test", "env CI=1 make test"):
        assert decide(policy, "Bash", project, command=command).behavior == "allow", command
    for command in ("timeout 5 rm x", "xargs rm", "command rm x", "bash -c 'rm x'"):
        assert decide(policy, "Bash", project, command=command).behavior == "deny", command
    assert decide(policy, "Bash", project, command="sudo make test").behavior == "ask"
    risky = decide(policy, "Bash", project, command="LD_PRELOAD=/x.so make test")
    assert risky.behavior == "ask"


def test_modes(project: Path) -> None:
    write = {"file_path": "src/new.py", "content": "x"}
    expected = {
        "default": "ask",
        "acceptEdits": "allow",
        "plan": "deny",
        "bypassPermissions": "allow",
    }
    for mode, behavior in expected.items():
        policy = Policy(mode, roots=[project])  # type: ignore[arg-type]
        assert decide(policy, "Write", project, **write).behavior == behavior, mode
        assert decide(policy, "Read", project, file_path="src/app.py").behavior == "allow"
        assert decide(policy, "Bash", project, command="ls src").behavior == "allow"
    plan = Policy("plan", ["Bash"], roots=[project])
    assert decide(plan, "Bash", project, command="touch src/x").behavior == "deny"
    accept = Policy("acceptEdits", roots=[project])
    assert decide(accept, "Bash", project, command="mkdir -p src/a && touch src/a/b").behavior == (
        "allow"
    )
    assert decide(accept, "Bash", project, command="rm src/app.py").behavior == "ask"


def test_bypass_still_honours_deny_and_ask_rules(project: Path) -> None:
    policy = Policy("bypassPermissions", [], ["Read(./secrets/**)"], ["Bash(git push:*)"])
    policy = Policy(
        "bypassPermissions",
        disallowed=["Read(./secrets/**)"],
        asked=["Bash(git push:*)"],
        roots=[project],
    )
    assert decide(policy, "Read", project, file_path="secrets/key").behavior == "deny"
    assert decide(policy, "Bash", project, command="cat secrets/key").behavior == "deny"
    assert decide(policy, "Bash", project, command="git push").behavior == "ask"
    assert decide(policy, "Bash", project, command="rm -rf /tmp/x").behavior == "allow"


def test_writes_outside_the_workspace_are_asked_even_in_accept_edits(project: Path) -> None:
    extra = project.parent / "extra"
    extra.mkdir()
    policy = Policy("acceptEdits", roots=[project, extra])
    outside = decide(policy, "Write", project, file_path="../x.txt", content="x")
    assert outside.behavior == "ask" and "outside the workspace" in outside.reason
    assert decide(policy, "Write", project, file_path="../extra/x.txt", content="").behavior == (
        "allow"
    )
    granted = Policy("acceptEdits", [f"Edit(/{project.parent}/**)"], roots=[project])
    assert decide(granted, "Write", project, file_path="../x.txt", content="").behavior == "allow"


def test_settings_and_hooks_files_need_approval_even_inside_the_workspace(project: Path) -> None:
    policy = Policy("acceptEdits", roots=[project])
    for path in (".codeloop/settings.local.json", ".claude/settings.json", ".git/hooks/pre-commit"):
        assert decide(policy, "Write", project, file_path=path, content="{}").behavior == "ask"
        assert decide(policy, "Bash", project, command=f"mkdir -p x && touch {path}").behavior == (
            "ask"
        )


def test_read_deny_holds_for_grep_glob_and_shell_commands(project: Path) -> None:
    policy = Policy("default", ["Bash"], ["Read(./secrets/**)"], roots=[project])
    assert decide(policy, "Read", project, file_path="secrets/key").behavior == "deny"
    assert decide(policy, "Read", project, file_path="src/../secrets/key").behavior == "deny"
    assert decide(policy, "Grep", project, pattern="x", path="secrets").behavior == "deny"
    whole = decide(policy, "Grep", project, pattern="hunter")
    assert whole.behavior == "deny" and "narrower" in whole.reason
    assert decide(policy, "Grep", project, pattern="x", path="src").behavior == "allow"
    assert decide(policy, "Glob", project, pattern="secrets/*").behavior == "deny"
    assert decide(policy, "Glob", project, pattern="**/*.py").behavior == "allow"
    assert decide(policy, "Bash", project, command="cat secrets/key").behavior == "deny"
    assert decide(policy, "Bash", project, command="cat secre*/k?y").behavior == "deny"
    assert decide(policy, "Bash", project, command="cd secrets && cat key").behavior == "deny"
    assert decide(policy, "Bash", project, command="cat src/app.py").behavior == "allow"
    assert decide(policy, "Bash", project, command="grep -rn hunter .").behavior == "deny"
    assert decide(policy, "Bash", project, command="grep -rn hunter src").behavior == "allow"
    assert decide(policy, "Bash", project, command="cd src && rg hunter").behavior == "allow"
    unknown = decide(policy, "Bash", project, command='cat "$F"')
    assert unknown.behavior == "ask" and "$F" in unknown.reason


def test_a_read_deny_over_a_tree_too_large_to_check_fails_closed(project: Path) -> None:
    """A rule whose files may be anywhere (`**/*.pem`) over a tree with more entries than the
    check walks: the recursive read is refused, never allowed for want of looking."""
    from codeloop.permissions.paths import WALK_LIMIT

    policy = Policy("default", ["Bash"], ["Read(**/*.pem)"], roots=[project])
    assert decide(policy, "Grep", project, pattern="x", path="src").behavior == "allow"
    big = project / "vendor"
    per_dir = 1000
    for d in range(WALK_LIMIT // per_dir + 1):
        folder = big / f"d{d}"
        folder.mkdir(parents=True)
        for f in range(per_dir):
            os.close(os.open(folder / f"f{f}.txt", os.O_CREAT | os.O_WRONLY))
    grep = decide(policy, "Grep", project, pattern="x", path="vendor")
    assert grep.behavior == "deny" and "too large to check" in grep.reason
    shell = decide(policy, "Bash", project, command="grep -rn hunter vendor")
    assert shell.behavior == "deny" and "too large to check" in shell.reason
    assert decide(policy, "Grep", project, pattern="x", path="src").behavior == "allow"


def test_mcp_and_other_tool_rules(project: Path) -> None:
    policy = Policy("default", ["mcp__github"], ["mcp__github__delete_repo"], roots=[project])
    assert decide_other(policy, "mcp__github__create_issue", project).behavior == "allow"
    assert decide_other(policy, "mcp__github__delete_repo", project).behavior == "deny"
    assert decide_other(policy, "mcp__slack__post", project).behavior == "ask"
    fetch = Policy("default", ["WebFetch(domain:example.com)"], roots=[project])
    assert decide_other(fetch, "WebFetch", project, url="https://example.com/a").behavior == (
        "allow"
    )
    assert decide_other(fetch, "WebFetch", project, url="https://evil.net/").behavior == "ask"


class _UrlInput(ToolInput):
    url: str = ""


class _FakeTool(Tool[_UrlInput]):
    """A tool that only has a name (MCP-like); never called."""

    description = "test"
    input_model = _UrlInput

    def __init__(self, name: str) -> None:
        self.name = name  # type: ignore[misc]

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise AssertionError("never called")


def decide_other(policy: Policy, name: str, cwd: Path, **raw: Any) -> Decision:
    tool = _FakeTool(name)
    return policy.decide(tool, tool.parse(raw), Workspace(cwd=cwd))


# --- asking ---------------------------------------------------------------------------------


async def test_headless_ask_is_a_denial_with_reason_and_hint(project: Path) -> None:
    policy = Policy("default", roots=[project])
    tool = TOOLS["Bash"]
    ctx = ToolContext(Workspace(cwd=project), tool_use_id="toolu_1")
    result = await policy.can_use_tool(tool, tool.parse({"command": "npm publish"}), ctx)
    assert not result.allowed
    assert "cannot ask" in result.message and "'Bash(npm publish:*)'" in result.message
    assert [(d.tool_name, d.tool_use_id) for d in policy.denials] == [("Bash", "toolu_1")]
    assert policy.denials[0].tool_input == {
        "command": "npm publish",
        "timeout": 120000,
        "run_in_background": False,
    }


async def test_ask_callback_allow_once_always_and_deny(project: Path) -> None:
    settings = project / ".codeloop" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "kept", "permissions": {"allow": ["Read"]}}))
    answers = [Answer("allow_once"), Answer("allow_always"), Answer("deny", "use make instead")]
    requests: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> Answer:
        requests.append(request)
        return answers.pop(0)

    policy = Policy("default", roots=[project], ask_user=ask)
    tool = TOOLS["Bash"]
    ctx = ToolContext(Workspace(cwd=project))
    args = tool.parse({"command": "npm run build --prod"})
    assert (await policy.can_use_tool(tool, args, ctx)).allowed
    assert (await policy.can_use_tool(tool, args, ctx)).allowed
    assert json.loads(settings.read_text()) == {
        "model": "kept",
        "permissions": {"allow": ["Read", "Bash(npm run build:*)"]},
    }
    # Remembered: no third question for the same command.
    assert (await policy.can_use_tool(tool, args, ctx)).allowed
    assert len(requests) == 2
    assert requests[0].decision.suggestions == ("Bash(npm run build:*)",)
    other = tool.parse({"command": "npm publish"})
    denied = await policy.can_use_tool(tool, other, ctx)
    assert not denied.allowed and "use make instead" in denied.message
    decision = decide(policy, "Bash", project, command="npm run build")
    assert decision.rule is not None and decision.rule.source == str(settings)


def test_roots_default_to_the_workspace_the_first_call_sees(project: Path) -> None:
    policy = Policy("acceptEdits")
    assert decide(policy, "Write", project, file_path="a.txt", content="").behavior == "allow"
    assert policy.roots == [project]
    # A later cd (the workspace's cwd moving) does not move the boundary.
    outside = decide(policy, "Write", project.parent, file_path="a.txt", content="")
    assert outside.behavior == "ask"


def test_suggestions_as_permission_updates(project: Path) -> None:
    """What a PermissionRequest hook and the Agent SDK's callback receive: Claude Code's
    update objects, a rule's content apart from its tool."""
    decision = decide(Policy("default"), "Bash", project, command="npm run build")
    assert decision.suggestions == ("Bash(npm run build:*)",)
    assert decision.suggested_updates("session") == [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "npm run build:*"}],
            "behavior": "allow",
            "destination": "session",
        }
    ]
    assert Decision("ask", "no rule").suggested_updates("session") == []
    whole_tool = Decision("ask", "r", suggestions=("WebSearch",)).suggested_updates("x")
    assert whole_tool[0]["rules"] == [{"toolName": "WebSearch"}]


@pytest.mark.parametrize(
    ("rule", "withheld", "offered"),
    [
        ("Bash", {"Bash"}, {"Read", "mcp__gh__issue"}),
        ("Bash(*)", {"Bash"}, {"Read"}),
        ("Bash(git push:*)", set(), {"Bash"}),  # a specifier: offered, its calls denied
        ("Read(./secrets/**)", set(), {"Read", "Grep"}),
        ("Task", {"Agent"}, {"Bash"}),  # Agent's earlier name
        ("mcp__gh", {"mcp__gh__issue", "mcp__gh__pr"}, {"mcp__ghx__issue", "Bash"}),
        ("mcp__gh__*", {"mcp__gh__issue", "mcp__gh__pr"}, {"mcp__ghx__issue"}),
        ("mcp__gh__issue", {"mcp__gh__issue"}, {"mcp__gh__pr"}),
    ],
)
def test_a_deny_rule_naming_a_whole_tool_withholds_it(
    project: Path, rule: str, withheld: set[str], offered: set[str]
) -> None:
    given = Policy("default", disallowed=[rule])
    later = Policy("default", roots=[project])  # bound: its rule book is made
    assert not any(later.withholds(name) for name in withheld | offered)
    later.add_rules("deny", [rule], "session")  # a rule added mid-session counts from then on
    for policy in (given, later):
        assert {name for name in withheld | offered if policy.withholds(name)} == withheld
