"""Malformed settings fail closed: a value that restricts and cannot be read stops the session
(naming the file and the key); one that only widens is skipped with a warning. Real files in a
temporary HOME, project and managed folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.errors import UnsafeSettingsError
from codeloop.settings.settings_files import load_settings


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home"), "CODELOOP_MANAGED_DIR": str(tmp_path / "managed")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project" / ".claude").mkdir(parents=True)
    return tmp_path / "project"


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def refusal(project: Path, env: dict[str, str]) -> str:
    with pytest.raises(UnsafeSettingsError) as caught:
        load_settings(project, env=env)
    assert caught.value.exit_status == 2
    return str(caught.value)


@pytest.mark.parametrize("kind", ["deny", "ask"])
def test_a_deny_or_ask_rule_written_as_a_string_is_a_list_of_one(
    project: Path, env: dict[str, str], kind: str
) -> None:
    path = write(
        project / ".claude" / "settings.json",
        {"permissions": {"allow": ["Bash"], kind: "Bash(rm:*)"}},
    )
    settings = load_settings(project, env=env)
    assert getattr(settings.permissions, kind) == ("Bash(rm:*)",)
    assert getattr(settings.rule_sets[0], kind) == ("Bash(rm:*)",)
    (warning,) = settings.warnings
    assert warning.startswith(f"{path}: permissions.{kind}: ")
    assert 'read as the list ["Bash(rm:*)"]' in warning


RESTRICTING_DAMAGE = [
    ({"permissions": {"deny": {"Bash(rm:*)": True}}}, "permissions.deny"),
    ({"permissions": {"deny": 5}}, "permissions.deny"),
    ({"permissions": {"deny": None}}, "permissions.deny"),
    ({"permissions": {"deny": [["Bash(rm:*)"]]}}, "permissions.deny[0]"),
    ({"permissions": {"deny": ["Read", 7]}}, "permissions.deny[1]"),
    ({"permissions": {"deny": ["  "]}}, "permissions.deny[0]"),
    ({"permissions": {"deny": ["Bash(rm:*"]}}, "permissions.deny[0]"),
    ({"permissions": {"deny": ["Bash(rm:*), Read(.env)"]}}, "permissions.deny[0]"),
    ({"permissions": {"deny": ["WebFetch(evil.example)"]}}, "permissions.deny[0]"),
    ({"permissions": {"ask": True}}, "permissions.ask"),
    ({"permissions": {"ask": ["Bash(:*)"]}}, "permissions.ask[0]"),
    ({"permissions": "deny everything"}, "permissions"),
    ({"permissions": {"defaultMode": "plna"}}, "permissions.defaultMode"),
    ({"permissions": {"disableBypassPermissionsMode": "yes"}}, "disableBypassPermissionsMode"),
    ({"permissions": {"disableAutoMode": ["disable"]}}, "permissions.disableAutoMode"),
    ({"permissions": {"Deny": ["Bash"]}}, "permissions.Deny"),
    ({"permissions": {"denyRules": ["Bash"]}}, "permissions.denyRules"),
    ({"permission": {"deny": ["Bash"]}}, "permission"),
    ({"disableBypassPermissionsMode": 1}, "disableBypassPermissionsMode"),
    ({"disableAutoMode": "on"}, "disableAutoMode"),
    ({"sandbox": True}, "sandbox"),
    ({"sandbox": {"enabled": "true"}}, "sandbox.enabled"),
    ({"sandbox": {"enabled": True, "failIfUnavailable": 1}}, "sandbox.failIfUnavailable"),
    ({"allowManagedHooksOnly": "true"}, "allowManagedHooksOnly"),
    ({"allowManagedPermissionRulesOnly": 1}, "allowManagedPermissionRulesOnly"),
    ({"allowManagedMcpServersOnly": "yes"}, "allowManagedMcpServersOnly"),
    ({"deniedMcpServers": ["evil"]}, "deniedMcpServers[0]"),
    ({"deniedMcpServers": {"serverName": "evil"}}, "deniedMcpServers"),
    ({"deniedMcpServers": [{"name": "evil"}]}, "deniedMcpServers[0]"),
    ({"deniedMcpServers": [{"serverCommand": ["npx", 1]}]}, "deniedMcpServers[0]"),
    ({"deniedMcpServers": [{"serverName": "a", "serverCommand": 5}]}, "deniedMcpServers[0]"),
    ({"allowedMcpServers": "github"}, "allowedMcpServers"),
    ({"disabledMcpjsonServers": [1]}, "disabledMcpjsonServers[0]"),
    ({"blockedMarketplaces": ["evil/market"]}, "blockedMarketplaces[0]"),
    ({"strictKnownMarketplaces": {"source": "github"}}, "strictKnownMarketplaces"),
    ({"allowedHttpHookUrls": 5}, "allowedHttpHookUrls"),
    ({"httpHookAllowedEnvVars": {}}, "httpHookAllowedEnvVars"),
    ({"disableSkillShellExecution": "yes"}, "disableSkillShellExecution"),
    ({"autoMode": ["never delete"]}, "autoMode"),
    ({"autoMode": {"hard_deny": 5}}, "autoMode.hard_deny"),
    ({"autoMode": {"soft_deny": ["x", None]}}, "autoMode.soft_deny[1]"),
    ({"autoMode": {"hardDeny": ["never delete"]}}, "autoMode.hardDeny"),
    ({"hooks": []}, "hooks"),
    ({"hooks": {"PreToolUse": "guard.sh"}}, "hooks.PreToolUse"),
    ({"hooks": {"pretooluse": [{"hooks": ["guard.sh"]}]}}, "hooks.pretooluse"),
    ({"hooks": {"PreToolUSe": [{"hooks": ["guard.sh"]}]}}, "hooks.PreToolUSe"),
    ({"hooks": {"PreToolUse": [{"matcher": 5, "hooks": ["g.sh"]}]}}, "hooks.PreToolUse[0].matcher"),
    ({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": ["g.sh"]}]}}, "PreToolUse[0].matcher"),
    ({"hooks": {"PreToolUse": [{"hooks": [{"command": 5}]}]}}, "PreToolUse[0].hooks[0].command"),
    ({"hooks": {"PreToolUse": [{"hooks": [{"type": "shell"}]}]}}, "PreToolUse[0].hooks[0].type"),
    (
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": "x"}]}]}},
        "PreToolUse[0].hooks[0].url",
    ),
    (
        {
            "hooks": {
                "PreToolUse": [
                    {"hooks": [{"type": "http", "url": "http://h/", "headers": ["Auth"]}]}
                ]
            }
        },
        "PreToolUse[0].hooks[0].headers",
    ),
    (
        {"hooks": {"PreToolUse": [{"hooks": [{"command": "g.sh", "if": "Bash(rm"}]}]}},
        "PreToolUse[0].hooks[0].if",
    ),
    ({"hooks": {"PermissionRequest": [{"hooks": 5}]}}, "hooks.PermissionRequest[0].hooks"),
    ({"hooks": {"UserPromptSubmit": [5]}}, "hooks.UserPromptSubmit[0]"),
]


@pytest.mark.parametrize(("data", "key"), RESTRICTING_DAMAGE)
def test_a_restriction_that_cannot_be_read_stops_the_session_naming_file_and_key(
    project: Path, env: dict[str, str], data: dict[str, Any], key: str
) -> None:
    path = write(project / ".claude" / "settings.json", data)
    message = refusal(project, env)
    (line,) = [line for line in message.splitlines() if str(path) in line]
    assert key in line


WIDENING_DAMAGE = [
    ({"permissions": {"allow": "Bash"}}, "permissions.allow"),
    ({"permissions": {"allow": ["Bash(rm:*"]}}, "permissions.allow[0]"),
    ({"permissions": {"additionalDirectories": 5}}, "permissions.additionalDirectories"),
    ({"sandbox": {"allowNetwork": "yes"}}, "sandbox.allowNetwork"),
    ({"autoMode": {"allow": 5}}, "autoMode.allow"),
    ({"enabledMcpjsonServers": [1]}, "enabledMcpjsonServers[0]"),
    ({"enableAllProjectMcpServers": "yes"}, "enableAllProjectMcpServers"),
    ({"model": 5}, "model"),
    ({"hooks": {"PostToolUse": [{"matcher": "(", "hooks": ["g.sh"]}]}}, "PostToolUse[0].matcher"),
    ({"hooks": {"Notification": "notify.sh"}}, "hooks.Notification"),
    (
        {"hooks": {"PostToolUse": [{"hooks": [{"command": "log.sh", "if": "Bash(rm"}]}]}},
        "PostToolUse[0].hooks[0].if",
    ),
    ({"hooks": {"BeforeEverything": []}}, "hooks.BeforeEverything"),
]


@pytest.mark.parametrize(("data", "key"), WIDENING_DAMAGE)
def test_a_value_that_only_widens_is_skipped_with_a_warning(
    project: Path, env: dict[str, str], data: dict[str, Any], key: str
) -> None:
    path = write(project / ".claude" / "settings.local.json", data)
    (warning,) = load_settings(project, env=env).warnings
    assert warning.startswith(f"{path}: ") and key in warning and warning.endswith("ignored")


@pytest.mark.parametrize(
    "text",
    [
        '{"permissions": {"deny": ["Bash(rm:*)"],}}',  # a trailing comma
        '{permissions: {deny: ["Bash(rm:*)"]}}',  # JavaScript's unquoted keys
        '{"hooks": {"PreToolUse": [{"hooks": ["guard.sh"]}]}',  # a brace short
        '[{"sandbox": {"enabled": true}}]',  # not an object
        b'{"permissions": {"deny": ["Read(\xff)"]}}',  # not UTF-8
        '{"permissions": {"deny": ["Bash"]}, "permissions": {"allow": ["Bash"]}}',  # repeated
        '{"model": "opus", "perm',  # cut short: what the rest held is unknown
        '{"model": "opus"',
    ],
)
def test_a_file_that_cannot_be_parsed_and_could_restrict_stops_the_session(
    project: Path, env: dict[str, str], text: str | bytes
) -> None:
    path = write(project / ".claude" / "settings.local.json", text)
    assert str(path) in refusal(project, env)


def test_a_file_that_cannot_be_parsed_and_restricts_nothing_is_skipped(
    project: Path, env: dict[str, str]
) -> None:
    path = write(project / ".claude" / "settings.json", '{"permissions": {"allow": ["Read"],}}')
    write(project / ".claude" / "settings.local.json", '{"model": "a", "model": "b"}')
    settings = load_settings(project, env=env)
    assert settings.permissions.allow == () and settings.model == "b"
    skipped, repeated = settings.warnings
    assert skipped.startswith(f"{path}:1:") and "invalid JSON" in skipped
    assert "'model' appears twice" in repeated and repeated.endswith("the last one counts")


def test_a_settings_file_that_cannot_be_opened_stops_the_session(
    project: Path, env: dict[str, str]
) -> None:
    (project / ".claude" / "settings.local.json").mkdir()  # open() fails, whoever runs this
    assert "settings.local.json: cannot read" in refusal(project, env)


def test_a_managed_drop_in_that_cannot_be_read_stops_the_session(
    project: Path, env: dict[str, str]
) -> None:
    managed = Path(env["CODELOOP_MANAGED_DIR"])
    write(managed / "managed-settings.json", {"permissions": {"deny": ["WebFetch"]}})
    drop_in = write(managed / "managed-settings.d" / "50-org.json", {"sandbox": {"enabled": 1}})
    assert f"{drop_in}: sandbox.enabled" in refusal(project, env)


def test_every_problem_is_named_at_once_and_the_message_says_what_to_do(
    project: Path, env: dict[str, str]
) -> None:
    user = write(Path(env["HOME"]) / ".claude" / "settings.json", {"disableAutoMode": "yes"})
    local = write(project / ".claude" / "settings.json", {"permissions": {"deny": {"x": 1}}})
    message = refusal(project, env)
    assert f"{user}: disableAutoMode" in message
    assert f"{local}: permissions.deny: expected a list of rule strings, got an object" in message
    assert "Fix the file" in message


def test_valid_off_values_and_the_documented_spellings_load(
    project: Path, env: dict[str, str]
) -> None:
    write(
        project / ".claude" / "settings.json",
        {
            "permissions": {"disableAutoMode": "disable", "disableBypassPermissionsMode": None},
            "disableBypassPermissionsMode": True,
            "deniedMcpServers": [{"serverName": "a"}, {"serverCommand": ["npx", "b"]}],
            "allowedMcpServers": [{"serverUrl": "https://*.example.com"}],
        },
    )
    settings = load_settings(project, env=env)
    assert settings.warnings == () and settings.unsupported == ()
    assert settings.permissions.disable_auto and settings.permissions.disable_bypass
    assert len(settings.denied_mcp_servers) == 2
