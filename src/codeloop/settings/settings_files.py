"""Settings: Claude Code's settings files and codeloop's own, merged lowest to highest.

Sources, lowest first: ~/.claude/settings.json, ~/.codeloop/settings.json, .claude/settings.json,
.codeloop/settings.json, .claude/settings.local.json, .codeloop/settings.local.json, `--settings`
(a file or inline JSON), then the managed (system-wide) settings an organization deploys
(/etc/claude-code/managed-settings.json and managed-settings.d/*.json), which nothing overrides.
As in Claude Code, lists concatenate (without repeats), objects merge key by key and a scalar
from a higher source replaces a lower one, so hooks and permission rules from every file apply.

A file that is not valid JSON, or a value of the wrong kind (settings_checks.py checks each),
becomes a warning naming the file and the place; everything else still loads, so one typo never
costs the user their other settings. Where the value restricts (settings_safety.py) it is an
error instead: loading raises UnsafeSettingsError rather than let a session run with the
restriction dropped. Keys codeloop does not act on are listed in `unsupported` (settings_keys.py
says why) for the start-up report.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Literal

from codeloop.hooks.hook_config import HooksConfig, kind, merge_hooks, parse_hooks
from codeloop.settings.settings_checks import (
    AUTO_MODE_SECTIONS,
    RULE_KINDS,
    one_rule_lists,
    validated,
)
from codeloop.settings.settings_keys import Unsupported, unsupported_keys
from codeloop.settings.settings_safety import Problems
from codeloop.store.data_paths import codeloop_home, home_dir
from codeloop.system.valueclass import valueclass

CLI_SOURCE = "--settings"
SettingSource = Literal["user", "project", "local"]
SETTING_SOURCES: tuple[SettingSource, ...] = ("user", "project", "local")


@valueclass
class UserDirs:
    """Where the user's own files live; HOME, CLAUDE_CONFIG_DIR and CODELOOP_HOME move them."""

    home: Path
    claude: Path
    codeloop: Path


def user_dirs(env: Mapping[str, str] | None = None) -> UserDirs:
    env = os.environ if env is None else env
    home = home_dir(env)
    claude = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    return UserDirs(home, claude.expanduser(), codeloop_home(env))


def managed_dir(env: Mapping[str, str] | None = None) -> Path:
    """The system folder of managed settings, CLAUDE.md, agents and styles (Claude Code's);
    CODELOOP_MANAGED_DIR moves it (tests, containers)."""
    env = os.environ if env is None else env
    if env.get("CODELOOP_MANAGED_DIR"):
        return Path(env["CODELOOP_MANAGED_DIR"])
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode")
    return Path("/etc/claude-code")


@valueclass
class Permissions:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    default_mode: str | None = None
    additional_directories: tuple[str, ...] = ()
    # `permissions.disableBypassPermissionsMode: "disable"`: bypassPermissions is refused.
    disable_bypass: bool = False
    # `disableAutoMode: "disable"`: auto mode is refused.
    disable_auto: bool = False


@valueclass
class RuleSet:
    """One source's permission rules: a rule engine tags each rule with the file it came from
    (messages name it; path patterns may be relative to it)."""

    source: str
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()


@valueclass
class CheckpointSettings:
    """`checkpoints`: snapshots before each writing turn, for rewind (checkpoints/)."""

    enabled: bool = True
    # Bigger files are recorded as skipped (named at rewind, never changed by one).
    max_file_mb: float = 16
    # Past this many files a snapshot records the remaining folders as skipped.
    max_files: int = 100_000


@valueclass
class Marketplace:
    """A marketplace a settings file declares (`extraKnownMarketplaces`)."""

    name: str
    source: Mapping[str, Any]
    declared_in: str


@valueclass
class Settings:
    model: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    # The merged view; `rule_sets` has the same rules with their sources, lowest first.
    permissions: Permissions = field(default_factory=Permissions)
    rule_sets: tuple[RuleSet, ...] = ()
    hooks: HooksConfig = field(default_factory=dict)
    # Run Bash under bubblewrap (settings key `sandbox.enabled`), with or without network.
    sandbox: bool = False
    sandbox_network: bool = False
    # `sandbox.failIfUnavailable`: refuse to start rather than run Bash unsandboxed.
    sandbox_required: bool = False
    checkpoints: CheckpointSettings = field(default_factory=CheckpointSettings)
    api_key_helper: str | None = None
    cleanup_period_days: int | None = None
    # Commit and pull-request attribution text (`attribution`, or includeCoAuthoredBy false).
    commit_attribution: str | None = None
    pr_attribution: str | None = None
    enabled_plugins: Mapping[str, bool] = field(default_factory=dict)
    marketplaces: tuple[Marketplace, ...] = ()
    blocked_marketplaces: tuple[Mapping[str, Any], ...] = ()
    # None: every marketplace source may be added; else only these.
    strict_marketplaces: tuple[Mapping[str, Any], ...] | None = None
    output_style: str | None = None
    agent: str | None = None
    claude_md_excludes: tuple[str, ...] = ()
    # Managed-settings CLAUDE.md text (`claudeMd`, honoured from managed settings only).
    managed_claude_md: str | None = None
    autocompact: bool | None = None
    fallback_models: tuple[str, ...] = ()
    # `maxTurns` (codeloop's own key): the turn limit of a prompt's run, as --max-turns sets.
    max_turns: int | None = None
    allowed_http_hook_urls: tuple[str, ...] | None = None
    http_hook_env_vars: tuple[str, ...] | None = None
    skill_shell_disabled: bool = False
    skill_overrides: Mapping[str, str] = field(default_factory=dict)
    # For MCP support (issue 19): which .mcp.json servers the project may start.
    enable_all_project_mcp_servers: bool | None = None
    enabled_mcpjson_servers: tuple[str, ...] = ()
    disabled_mcpjson_servers: tuple[str, ...] = ()
    # The MCP allowlist (None: none anywhere) and denylist (mcp/server_policy.py reads them).
    allowed_mcp_servers: tuple[Mapping[str, Any], ...] | None = None
    denied_mcp_servers: tuple[Mapping[str, Any], ...] = ()
    # Thinking: `effortLevel` (low … max) and `alwaysThinkingEnabled`.
    effort_level: str | None = None
    # `compactProfile`: on, off or auto (tools/profile.py).
    compact_profile: str | None = None
    always_thinking: bool = False
    # `autoMemoryEnabled` (None: unset, auto memory on unless the environment turns it off).
    auto_memory_enabled: bool | None = None
    # `autoMemoryDirectory`, `~` expanded: the auto-memory folder in place of the project's
    # default one; never from shared project settings (None: the default).
    auto_memory_directory: Path | None = None
    # `requestOverrides` (codeloop's own key): extra request fields and headers per provider or
    # model, checked by models/shaping.py, which owns their meaning.
    request_overrides: Mapping[str, Any] = field(default_factory=dict)
    # The terminal UI: `statusLine`'s command (its first line of output replaces the footer),
    # and `editorMode` (vim: vi key bindings in the input).
    status_line: str | None = None
    editor_mode: str | None = None
    # `webSearch.url` (codeloop's own key): a SearXNG-compatible JSON search endpoint for the
    # WebSearch tool, used on any provider (Anthropic's server-side search is the default).
    web_search_url: str | None = None
    # The sources that loaded (file paths, or "--settings" for inline JSON), lowest first.
    sources: tuple[str, ...] = ()
    # One line each, naming the file and the place; meant for the user.
    warnings: tuple[str, ...] = ()
    # Keys set somewhere that codeloop does not act on, for the start-up report.
    unsupported: tuple[Unsupported, ...] = ()
    # Plugins' hooks may run (neither allowManagedHooksOnly nor disableAllHooks is set).
    plugin_hooks: bool = True
    # `autoMode`'s prose by section, from every scope but the shared project settings.
    auto_mode: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@valueclass
class _Source:
    label: str
    text: str
    scope: str  # user, project, local, cli, managed


def settings_files(cwd: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The settings files in the order they apply, lowest first (existing or not)."""
    return [path for path, _ in _files(cwd, env)]


def _files(cwd: Path, env: Mapping[str, str] | None) -> list[tuple[Path, SettingSource]]:
    dirs = user_dirs(env)
    project = [cwd / ".claude", cwd / ".codeloop"]
    return [
        (dirs.claude / "settings.json", "user"),
        (dirs.codeloop / "settings.json", "user"),
        *((d / "settings.json", "project") for d in project),
        *((d / "settings.local.json", "local") for d in project),
    ]


_CHANGE_SOURCES = {
    "user": "user_settings",
    "project": "project_settings",
    "local": "local_settings",
}


def config_sources(
    cwd: Path, env: Mapping[str, str] | None = None
) -> Callable[[], dict[Path, str]]:
    """Every settings and skill file as ConfigChange names its source (the files that exist
    at each call, and the settings files that could appear). The settings paths are built once:
    ConfigChange asks after every tool round, and building them again cost more than the stats.
    """
    fixed = {path: _CHANGE_SOURCES[scope] for path, scope in _files(cwd, env)}
    skills = (cwd / ".claude" / "skills", cwd / ".codeloop" / "skills")

    def found() -> dict[Path, str]:
        now = fixed | {path: "policy_settings" for path in managed_files(env)}
        for folder in skills:
            if folder.is_dir():
                now |= {path: "skills" for path in sorted(folder.rglob("SKILL.md"))}
        return now

    return found


def managed_files(env: Mapping[str, str] | None = None) -> list[Path]:
    """managed-settings.json, then every managed-settings.d/*.json in name order."""
    root = managed_dir(env)
    drop_ins = root / "managed-settings.d"
    found = drop_ins.glob("*.json") if drop_ins.is_dir() else ()
    extra = sorted(p for p in found if not p.name.startswith("."))
    return [root / "managed-settings.json", *extra]


def load_settings(
    cwd: Path,
    *,
    cli: str | None = None,
    env: Mapping[str, str] | None = None,
    sources: Iterable[str] | None = None,
) -> Settings:
    """Every source merged; problems come back in `warnings`, except that a restriction that
    cannot be read raises UnsafeSettingsError (naming every one, file and key).

    `cli` is the `--settings` value: inline JSON when it starts with `{`, else a file path
    (relative to `cwd`). `sources` (`--setting-sources`) limits the files read to those scopes
    (user, project, local); `--settings` and managed settings always apply.
    """
    problems = Problems()
    wanted = set(SETTING_SOURCES if sources is None else sources)
    merged: dict[str, Any] = {}
    managed: dict[str, Any] = {}
    loaded: list[str] = []
    rule_sets: list[RuleSet] = []
    hooks: list[tuple[str, HooksConfig]] = []
    raw_seen: list[tuple[str, Mapping[str, Any]]] = []
    auto_rules: dict[str, Any] = {}
    memory_folder: Path | None = None
    for source in _read_sources(cwd, cli, env, problems, wanted):
        data = _parse(source.label, source.text, problems)
        if data is None:
            continue
        loaded.append(source.label)
        raw_seen.append((source.label, data))
        clean = validated(source.label, one_rule_lists(source.label, data, problems), problems)
        if source.scope == "managed":
            managed = _merge(managed, clean)
        merged = _merge(merged, clean)
        if "fallbackModel" in clean:  # an ordered chain: the highest file gives all of it
            merged["fallbackModel"] = clean["fallbackModel"]
        rules = {k: tuple(v) for k, v in clean.get("permissions", {}).items() if k in RULE_KINDS}
        if rules:
            rule_sets.append(RuleSet(source.label, **rules))
        if "hooks" in data:
            hooks.append((source.scope, _hooks_of(source.label, data["hooks"], problems)))
        if "autoMode" in clean and source.scope == "project":
            problems.warnings.append(
                f"{source.label}: autoMode is not read from shared project settings (a "
                "repository cannot widen its own auto-mode trust); put it in "
                "settings.local.json or your user settings"
            )
        elif "autoMode" in clean:
            auto_rules = _merge(auto_rules, clean["autoMode"])
        if "autoMemoryDirectory" in clean:
            memory_folder = _memory_folder(source, clean, cwd, env, problems) or memory_folder
    problems.check()
    if managed.get("allowManagedPermissionRulesOnly") is True:
        managed_labels = set(_managed_labels(env))
        rule_sets = [r for r in rule_sets if r.source in managed_labels]
    only_managed_hooks = managed.get("allowManagedHooksOnly") is True
    hook_configs = [h for scope, h in hooks if scope == "managed" or not only_managed_hooks]
    if merged.get("disableAllHooks") is True:
        # Only a managed disableAllHooks turns off managed hooks.
        keep = "managed" if managed.get("disableAllHooks") is not True else None
        hook_configs = [h for scope, h in hooks if scope == keep]
    built = _build(
        merged,
        managed,
        tuple(rule_sets),
        merge_hooks(*hook_configs),
        tuple(loaded),
        tuple(problems.warnings),
        tuple(unsupported_keys(raw_seen)),
    )
    plugin_hooks = not only_managed_hooks and merged.get("disableAllHooks") is not True
    auto = {name: tuple(auto_rules.get(name, ())) for name in AUTO_MODE_SECTIONS}
    return replace(
        built, plugin_hooks=plugin_hooks, auto_mode=auto, auto_memory_directory=memory_folder
    )


def _memory_folder(
    source: _Source,
    clean: Mapping[str, Any],
    cwd: Path,
    env: Mapping[str, str] | None,
    problems: Problems,
) -> Path | None:
    """A source's `autoMemoryDirectory` as an absolute folder, or None (said in a warning)
    when it cannot be one. The model writes there without asking, so, as in Claude Code, a
    shared repository's settings may not choose it, and neither may a relative path (relative
    to wherever the session starts) nor a folder holding the home folder, the working folder
    or the agent's own configuration."""
    raw: str = clean["autoMemoryDirectory"]
    dirs = user_dirs(os.environ if env is None else env)
    home = dirs.home
    expanded = home / raw[2:] if raw.startswith("~/") else home if raw == "~" else Path(raw)
    folder = Path(os.path.normpath(expanded))
    held = {"your home folder": home, "the working folder": cwd}
    held |= {f"the configuration folder {dirs.claude}": dirs.claude}
    held |= {f"the configuration folder {dirs.codeloop}": dirs.codeloop}
    real = Path(os.path.realpath(folder))  # compared resolved: a link to the project is it
    holds = next(
        (what for what, inner in held.items() if inner.resolve().is_relative_to(real)), None
    )
    if source.scope == "project":
        why = (
            "is not read from shared project settings (a repository could aim the memory "
            "writes allowed without asking at any folder); put it in settings.local.json or "
            "your user settings"
        )
    elif not folder.is_absolute():
        why = f"{raw!r} is a relative path; give an absolute one or one under ~/"
    elif holds is not None:
        why = f"{raw!r} holds {holds}: every file there would be writable unasked"
    else:
        return folder
    problems.warnings.append(f"{source.label}: autoMemoryDirectory {why}; ignored")
    return None


def _managed_labels(env: Mapping[str, str] | None) -> list[str]:
    return [str(p) for p in managed_files(env)]


def _read_sources(
    cwd: Path,
    cli: str | None,
    env: Mapping[str, str] | None,
    problems: Problems,
    wanted: set[str],
) -> Iterable[_Source]:
    for path, scope in _files(cwd, env):
        if scope not in wanted:
            continue
        text = _read(path, problems, missing_ok=True)
        if text is not None:
            yield _Source(str(path), text, scope)
    if cli is not None:
        if cli.lstrip().startswith("{"):
            yield _Source(CLI_SOURCE, cli, "cli")
        else:
            path = (cwd / Path(cli).expanduser()).resolve()
            text = _read(path, problems, missing_ok=False)
            if text is not None:
                yield _Source(str(path), text, "cli")
    for path in managed_files(env):
        text = _read(path, problems, missing_ok=True)
        if text is not None:
            yield _Source(str(path), text, "managed")


def _read(path: Path, problems: Problems, *, missing_ok: bool) -> str | None:
    """The file's text. One that cannot be read is skipped only when it restricts nothing: a
    missing --settings file, or one codeloop may not open, could hold deny rules."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if not missing_ok:
            problems.unreadable(f"{CLI_SOURCE} {path}", "no such file", None)
        return None
    except OSError as exc:
        problems.unreadable(str(path), f"cannot read: {exc.strerror or exc}", None)
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        problems.unreadable(str(path), f"cannot read: not UTF-8 at byte {exc.start}", text)
        return None


def _parse(label: str, text: str, problems: Problems) -> dict[str, Any] | None:
    if not text.strip():
        return None  # an empty file is no settings, not an error
    repeated: list[str] = []
    try:
        data = json.loads(text, object_pairs_hook=lambda pairs: _object_of(pairs, repeated))
    except json.JSONDecodeError as exc:
        where = f"{label}:{exc.lineno}:{exc.colno}"
        if _cut_short(text, exc):  # what the lost part held is unknown: it could restrict
            problems.unreadable(where, f"invalid JSON: {exc.msg} (the file ends early)", None)
        else:
            problems.unreadable(where, f"invalid JSON: {exc.msg}", text)
        return None
    if not isinstance(data, dict):
        problems.unreadable(label, f"settings must be a JSON object, not {kind(data)}", text)
        return None
    if repeated:
        # JSON keeps the last value of a repeated key: a rule list written twice loses one.
        problem = f"the key {repeated[0]!r} appears twice in one object"
        problems.unreadable(label, problem, text, then="the last one counts")
    return data


def _cut_short(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the text looks like the start of a file whose end was lost (a full disk, an
    editor that crashed): the error is at its end, or it does not end with the object's `}`."""
    whole = text.rstrip()
    return exc.pos >= len(whole) or not whole.endswith("}")


def _object_of(pairs: list[tuple[str, Any]], repeated: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            repeated.append(key)
        out[key] = value
    return out


def _hooks_of(label: str, raw: Any, problems: Problems) -> HooksConfig:
    def warn(where: str, problem: str) -> None:
        problems.found(label, where, problem)

    return parse_hooks(raw, warn)


# --- merging and the typed result ------------------------------------------------------------


def _merge(low: Any, high: Any) -> Any:
    """Claude Code's rule: objects merge, lists concatenate without repeats, scalars override."""
    if isinstance(low, dict) and isinstance(high, dict):
        out = dict(low)
        for key, value in high.items():
            out[key] = _merge(low[key], value) if key in low else value
        return out
    if isinstance(low, list) and isinstance(high, list):
        return low + [item for item in high if item not in low]
    return high


def _build(
    merged: Mapping[str, Any],
    managed: Mapping[str, Any],
    rule_sets: tuple[RuleSet, ...],
    hooks: HooksConfig,
    sources: tuple[str, ...],
    warnings: tuple[str, ...],
    unsupported: tuple[Unsupported, ...],
) -> Settings:
    perms = merged.get("permissions", {})
    sandbox = merged.get("sandbox", {})
    bypass_off = "disable" in (
        merged.get("disableBypassPermissionsMode"),
        perms.get("disableBypassPermissionsMode"),
    )
    auto_off = "disable" in (merged.get("disableAutoMode"), perms.get("disableAutoMode"))
    commit, pr = _attributions(merged)
    marketplaces = {
        **merged.get("additionalMarketplaces", {}),
        **merged.get("extraKnownMarketplaces", {}),
    }
    strict = merged.get("strictKnownMarketplaces", merged.get("allowedMarketplaces"))
    fallback = merged.get("fallbackModel", [])
    return Settings(
        model=merged.get("model"),
        env=dict(merged.get("env", {})),
        permissions=Permissions(
            allow=tuple(perms.get("allow", ())),
            deny=tuple(perms.get("deny", ())),
            ask=tuple(perms.get("ask", ())),
            default_mode=perms.get("defaultMode"),
            additional_directories=tuple(perms.get("additionalDirectories", ())),
            disable_bypass=bypass_off,
            disable_auto=auto_off,
        ),
        rule_sets=rule_sets,
        hooks=hooks,
        sandbox=sandbox.get("enabled", False),
        sandbox_network=sandbox.get("allowNetwork", False),
        sandbox_required=sandbox.get("failIfUnavailable", False),
        checkpoints=_checkpoint_settings(merged.get("checkpoints", {})),
        api_key_helper=merged.get("apiKeyHelper"),
        cleanup_period_days=merged.get("cleanupPeriodDays"),
        commit_attribution=commit,
        pr_attribution=pr,
        enabled_plugins=dict(merged.get("enabledPlugins", {})),
        marketplaces=tuple(
            Marketplace(name, entry["source"], "settings") for name, entry in marketplaces.items()
        ),
        blocked_marketplaces=tuple(managed.get("blockedMarketplaces", ())),
        strict_marketplaces=None if strict is None else tuple(strict),
        output_style=merged.get("outputStyle"),
        agent=merged.get("agent"),
        status_line=merged.get("statusLine"),
        editor_mode=merged.get("editorMode"),
        claude_md_excludes=tuple(merged.get("claudeMdExcludes", ())),
        managed_claude_md=managed.get("claudeMd"),
        autocompact=merged.get("autoCompactEnabled"),
        fallback_models=tuple(fallback),
        max_turns=merged.get("maxTurns"),
        allowed_http_hook_urls=_optional(merged, "allowedHttpHookUrls"),
        http_hook_env_vars=_optional(merged, "httpHookAllowedEnvVars"),
        skill_shell_disabled=merged.get("disableSkillShellExecution") is True,
        skill_overrides=dict(merged.get("skillOverrides", {})),
        enable_all_project_mcp_servers=merged.get("enableAllProjectMcpServers"),
        enabled_mcpjson_servers=tuple(merged.get("enabledMcpjsonServers", ())),
        disabled_mcpjson_servers=tuple(merged.get("disabledMcpjsonServers", ())),
        allowed_mcp_servers=_mcp_allowlist(merged, managed),
        denied_mcp_servers=tuple(merged.get("deniedMcpServers", ())),
        effort_level=merged.get("effortLevel"),
        compact_profile=merged.get("compactProfile"),
        always_thinking=merged.get("alwaysThinkingEnabled") is True,
        auto_memory_enabled=merged.get("autoMemoryEnabled"),
        request_overrides=dict(merged.get("requestOverrides", {})),
        web_search_url=(merged.get("webSearch") or {}).get("url"),
        sources=sources,
        warnings=warnings,
        unsupported=unsupported,
    )


def _mcp_allowlist(
    merged: Mapping[str, Any], managed: Mapping[str, Any]
) -> tuple[Mapping[str, Any], ...] | None:
    """Every source's allowedMcpServers, or only the managed ones with
    allowManagedMcpServersOnly; None when no list is set."""
    source = managed if managed.get("allowManagedMcpServersOnly") is True else merged
    found = source.get("allowedMcpServers")
    return None if found is None else tuple(found)


def _checkpoint_settings(raw: Mapping[str, Any]) -> CheckpointSettings:
    default = CheckpointSettings()
    return CheckpointSettings(
        enabled=raw.get("enabled", default.enabled),
        max_file_mb=raw.get("maxFileSizeMB", default.max_file_mb),
        max_files=raw.get("maxFiles", default.max_files),
    )


def _optional(merged: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    return tuple(merged[key]) if key in merged else None


def _attributions(merged: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """`attribution.commit`/`.pr` win; else includeCoAuthoredBy false hides both (""); else
    None: codeloop's own default, which adds no byline."""
    attribution = merged.get("attribution", {})
    if "commit" in attribution or "pr" in attribution:
        return attribution.get("commit"), attribution.get("pr")
    if merged.get("includeCoAuthoredBy") is False:
        return "", ""
    return None, None
