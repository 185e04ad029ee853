"""The settings hierarchy: real files in a temporary HOME and project, merged like Claude Code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.errors import UnsafeSettingsError
from codeloop.hooks.hook_config import HookCommand, HookMatcher
from codeloop.hooks.hook_events import HOOK_EVENTS
from codeloop.settings.settings_files import RuleSet, load_settings, settings_files


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project, {"HOME": str(home)}


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))


def test_no_files_means_defaults(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    _, project, env = dirs
    settings = load_settings(project, env=env)
    assert settings.model is None
    assert settings.env == {} and settings.hooks == {} and settings.sources == ()
    assert settings.permissions.allow == () and settings.permissions.default_mode is None
    assert settings.warnings == ()


def test_order_lowest_to_highest(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    env["CODELOOP_HOME"] = str(home / "cl")
    files = settings_files(project, env)
    assert files == [
        home / ".claude" / "settings.json",
        home / "cl" / "settings.json",
        project / ".claude" / "settings.json",
        project / ".codeloop" / "settings.json",
        project / ".claude" / "settings.local.json",
        project / ".codeloop" / "settings.local.json",
    ]
    for i, path in enumerate(files):
        write(path, {"model": f"m{i}", "env": {f"V{i}": str(i), "SHARED": str(i)}})
    settings = load_settings(project, env=env, cli='{"model": "from-cli"}')
    assert settings.model == "from-cli"
    assert settings.env == {"SHARED": "5", **{f"V{i}": str(i) for i in range(6)}}
    assert settings.sources == (*map(str, files), "--settings")

    without_cli = load_settings(project, env=env)
    assert without_cli.model == "m5"


def test_permission_lists_concatenate_without_repeats_and_scalars_override(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = dirs
    write(
        home / ".claude" / "settings.json",
        {"permissions": {"allow": ["Read", "Bash(git diff:*)"], "defaultMode": "plan"}},
    )
    write(
        project / ".claude" / "settings.json",
        {
            "permissions": {
                "allow": ["Bash(git diff:*)", "Edit"],
                "deny": ["Bash(rm:*)"],
                "ask": ["Write"],
                "additionalDirectories": ["../shared"],
                "defaultMode": "acceptEdits",
            }
        },
    )
    perms = load_settings(project, env=env).permissions
    assert perms.allow == ("Read", "Bash(git diff:*)", "Edit")
    assert perms.deny == ("Bash(rm:*)",)
    assert perms.ask == ("Write",)
    assert perms.additional_directories == ("../shared",)
    assert perms.default_mode == "acceptEdits"
    user, proj = load_settings(project, env=env).rule_sets
    assert user == RuleSet(str(home / ".claude" / "settings.json"), allow=perms.allow[:2])
    assert proj == RuleSet(
        str(project / ".claude" / "settings.json"),
        allow=("Bash(git diff:*)", "Edit"),
        deny=("Bash(rm:*)",),
        ask=("Write",),
    )


def test_hooks_from_every_file_all_apply(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    user_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
    project_hook = {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": "fmt.sh", "timeout": 5}],
    }
    write(home / ".claude" / "settings.json", {"hooks": {"PreToolUse": [user_hook]}})
    write(
        project / ".claude" / "settings.json",
        {"hooks": {"PreToolUse": [user_hook], "PostToolUse": [project_hook]}},
    )
    write(
        project / ".claude" / "settings.local.json",
        {
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "check.sh"}]}],
                "PostToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": "log.sh"}]}
                ],
            }
        },
    )
    hooks = load_settings(project, env=env).hooks
    assert hooks["PreToolUse"] == (HookMatcher("Bash", (HookCommand("audit.sh"),)),)
    assert hooks["PostToolUse"] == (
        HookMatcher("Edit|Write", (HookCommand("fmt.sh", 5),)),
        HookMatcher("*", (HookCommand("log.sh"),)),
    )
    assert load_settings(project, env=env).warnings == ()
    assert hooks["Stop"] == (HookMatcher("", (HookCommand("check.sh"),)),)


def test_invalid_json_names_file_line_and_column_and_the_rest_loads(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = dirs
    broken = project / ".claude" / "settings.json"
    write(home / ".claude" / "settings.json", {"model": "user-model"})
    write(broken, '{\n  "model": "x",\n  "env": {"A": "1",}\n}\n')
    write(project / ".claude" / "settings.local.json", {"env": {"B": "2"}})
    settings = load_settings(project, env=env)
    assert settings.model == "user-model"
    assert settings.env == {"B": "2"}
    (warning,) = settings.warnings
    assert warning.startswith(f"{broken}:3:")
    assert "invalid JSON" in warning and "skipped" in warning


def test_wrong_values_that_restrict_nothing_are_dropped_with_their_key_path(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = dirs
    path = project / ".claude" / "settings.json"
    write(
        path,
        {
            "model": 42,
            "env": {"OK": "yes", "NUM": 3, "FLAG": True, "BAD": {"x": 1}},
            "permissions": {"allow": ["Read", 7], "deny": ["Bash(rm:*)"]},
            "hooks": {
                "PostToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "ok.sh"}]},
                    {"matcher": "(", "hooks": [{"type": "command", "command": "x.sh"}]},
                    {
                        "matcher": "Edit",
                        "hooks": [{"type": "mcp_tool", "server": "s", "tool": "t"}],
                    },
                    {"hooks": [{"type": "command", "command": "t.sh", "timeout": -1}]},
                ],
                "BeforeEverything": [],
            },
            "statusLine": {"type": "command", "command": "x"},  # Claude Code's; not ours
        },
    )
    settings = load_settings(project, env=env)
    assert settings.model is None
    assert settings.env == {"OK": "yes", "NUM": "3", "FLAG": "true"}
    assert settings.permissions.allow == ("Read",)
    assert settings.permissions.deny == ("Bash(rm:*)",)
    assert settings.hooks["PostToolUse"] == (
        HookMatcher("Bash", (HookCommand("ok.sh"),)),
        HookMatcher("", (HookCommand("t.sh"),)),
    )
    places = [w.split(": ")[1] for w in settings.warnings]
    assert places == [
        "model",
        "env.BAD",
        "permissions.allow[1]",
        "hooks.PostToolUse[1].matcher",
        "hooks.PostToolUse[2].hooks[0].type",
        "hooks.PostToolUse[3].hooks[0].timeout",
        "hooks.BeforeEverything",
    ]
    assert all(w.startswith(f"{path}: ") and w.endswith("ignored") for w in settings.warnings)


def test_top_level_must_be_an_object(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    _, project, env = dirs
    write(project / ".codeloop" / "settings.json", "[1, 2]")
    write(project / ".claude" / "settings.json", "")
    settings = load_settings(project, env=env)
    assert settings.sources == ()
    (warning,) = settings.warnings
    assert "must be a JSON object" in warning and ".codeloop" in warning


def test_cli_settings_file_relative_to_cwd_and_missing_file(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = dirs
    write(project / "ci-settings.json", {"permissions": {"allow": ["Bash"]}})
    settings = load_settings(project, env=env, cli="ci-settings.json")
    assert settings.permissions.allow == ("Bash",)
    with pytest.raises(UnsafeSettingsError, match=r"--settings .*nope.json: no such file"):
        load_settings(project, env=env, cli="nope.json")  # it could have held deny rules
    inline = load_settings(project, env=env, cli='{"model": }')
    assert inline.warnings[0].startswith("--settings:1:")


def test_claude_config_dir_moves_the_user_file(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / "elsewhere" / "settings.json", {"model": "moved"})
    env["CLAUDE_CONFIG_DIR"] = str(home / "elsewhere")
    assert load_settings(project, env=env).model == "moved"


def test_sandbox_setting_is_read_and_checked(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        '{"sandbox": {"enabled": true, "allowNetwork": "yes"}}'
    )
    settings = load_settings(project, env={"HOME": str(tmp_path / "home")})
    assert settings.sandbox is True
    assert settings.sandbox_network is False
    assert any("sandbox.allowNetwork" in w for w in settings.warnings)


def test_managed_settings_win_and_their_policy_keys_apply(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = dirs
    managed = home / "managed"
    env["CODELOOP_MANAGED_DIR"] = str(managed)
    write(managed / "managed-settings.json", {"model": "org-model", "allowManagedHooksOnly": True})
    write(managed / "managed-settings.d" / "20-rules.json", {"permissions": {"deny": ["Bash"]}})
    write(managed / "managed-settings.d" / ".hidden.json", {"model": "never"})
    hook = {"hooks": [{"type": "command", "command": "user.sh"}]}
    write(project / ".claude" / "settings.json", {"model": "mine", "hooks": {"Stop": [hook]}})
    settings = load_settings(project, env=env, cli='{"model": "cli"}')
    assert settings.model == "org-model"  # nothing overrides managed settings
    assert settings.permissions.deny == ("Bash",)
    assert settings.hooks == {}  # allowManagedHooksOnly: the project's hook does not run
    assert settings.sources[-2:] == (
        str(managed / "managed-settings.json"),
        str(managed / "managed-settings.d" / "20-rules.json"),
    )


def test_setting_sources_choose_the_files(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / ".claude" / "settings.json", {"env": {"U": "1"}})
    write(project / ".claude" / "settings.json", {"env": {"P": "1"}})
    write(project / ".claude" / "settings.local.json", {"env": {"L": "1"}})
    assert load_settings(project, env=env, sources=["project"]).env == {"P": "1"}
    assert load_settings(project, env=env, sources=[]).env == {}
    assert load_settings(project, env=env).env == {"U": "1", "P": "1", "L": "1"}


def test_claude_code_keys_are_typed_or_reported(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    write(home / ".claude" / "settings.json", {"fallbackModel": ["a", "b"], "theme": "dark"})
    write(
        project / ".claude" / "settings.json",
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "permissions": {"disableBypassPermissionsMode": "disable", "defaultMode": "manual"},
            "fallbackModel": ["c"],
            "includeCoAuthoredBy": False,
            "cleanupPeriodDays": 7,
            "enabledPlugins": {"fmt@team": True, "old@team": False},
            "extraKnownMarketplaces": {"team": {"source": {"source": "git", "url": "x.git"}}},
            "enableAllProjectMcpServers": True,
            "disabledMcpjsonServers": ["db"],
            "availableModels": ["sonnet"],
            "sandbox": {"enabled": True, "filesystem": {"denyRead": ["~/.ssh"]}},
            "spinnerVerbs": {"mode": "append", "verbs": ["Brewing"]},
        },
    )
    settings = load_settings(project, env=env)
    assert settings.warnings == ()
    assert settings.permissions.disable_bypass and settings.permissions.default_mode == "manual"
    assert settings.fallback_models == ("c",)  # a chain: the highest file gives all of it
    assert (settings.commit_attribution, settings.pr_attribution) == ("", "")
    assert settings.cleanup_period_days == 7
    assert settings.enabled_plugins == {"fmt@team": True, "old@team": False}
    assert [m.name for m in settings.marketplaces] == ["team"]
    assert settings.enable_all_project_mcp_servers is True
    assert settings.disabled_mcpjson_servers == ("db",)
    unsupported = {u.key: u for u in settings.unsupported}
    assert set(unsupported) == {"theme", "availableModels", "sandbox.filesystem", "spinnerVerbs"}
    assert unsupported["availableModels"].unsafe and unsupported["sandbox.filesystem"].unsafe
    assert not unsupported["theme"].unsafe
    assert unsupported["theme"].sources == (str(home / ".claude" / "settings.json"),)


def test_disable_all_hooks_spares_managed_hooks(dirs: tuple[Path, Path, dict[str, str]]) -> None:
    home, project, env = dirs
    env["CODELOOP_MANAGED_DIR"] = str(home / "managed")
    hook = {"hooks": [{"type": "command", "command": "org.sh"}]}
    write(home / "managed" / "managed-settings.json", {"hooks": {"Stop": [hook]}})
    write(
        project / ".claude" / "settings.json",
        {"disableAllHooks": True, "hooks": {"Stop": [{"hooks": [{"command": "mine.sh"}]}]}},
    )
    (group,) = load_settings(project, env=env).hooks["Stop"]
    assert group.hooks[0].command == "org.sh"


def test_a_hook_on_every_documented_event_loads_without_a_warning(
    dirs: tuple[Path, Path, dict[str, str]],
) -> None:
    """codeloop fires every event Claude Code documents: none is reported as skipped."""
    _, project, env = dirs
    hook = {"hooks": [{"type": "command", "command": "notify.sh"}]}
    hooks = {event: [hook] for event in HOOK_EVENTS}
    write(project / ".claude" / "settings.json", {"hooks": hooks})
    settings = load_settings(project, env=env)
    assert settings.warnings == ()
    assert set(settings.hooks) == set(HOOK_EVENTS)
