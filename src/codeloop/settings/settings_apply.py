"""Settings that act once, when a session is assembled: the environment (with the API key an
`apiKeyHelper` prints), the permission mode (refusing bypassPermissions where the settings
disable it), transcript retention, and the start-up report of keys codeloop does not act on.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from codeloop.errors import SettingsError
from codeloop.events import Notice
from codeloop.settings.settings_files import Settings

API_KEY_HELPER_TIMEOUT = 30.0
DISABLED_BYPASS = (
    "bypassPermissions mode is disabled by the settings "
    '(permissions.disableBypassPermissionsMode: "disable"); run without it, or with '
    "--permission-mode acceptEdits and --allowedTools for what the task needs"
)
DISABLED_AUTO = (
    'auto mode is disabled by the settings (disableAutoMode: "disable"); run without it, or '
    "with --permission-mode acceptEdits and --allowedTools for what the task needs"
)


def session_env(settings: Settings, base: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The process environment plus the settings' `env`; with an `apiKeyHelper` and no key in
    the environment, the key it prints (as Claude Code, a key already set wins)."""
    env = {**base, **settings.env}
    helper = settings.api_key_helper
    if helper and not (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")):
        env["ANTHROPIC_API_KEY"] = run_api_key_helper(helper, env, cwd)
    return env


def run_api_key_helper(command: str, env: Mapping[str, str], cwd: Path) -> str:
    try:
        done = subprocess.run(
            command,
            shell=True,
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=API_KEY_HELPER_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SettingsError(
            f"apiKeyHelper `{command}` did not answer in {API_KEY_HELPER_TIMEOUT:g} s"
        ) from None
    key = done.stdout.strip()
    if done.returncode != 0 or not key:
        detail = done.stderr.strip().splitlines()
        why = f"exit {done.returncode}" + (f": {detail[0]}" if detail else "")
        raise SettingsError(f"apiKeyHelper `{command}` gave no key ({why})")
    return key


def permission_mode(requested: str | None, settings: Settings, notices: list[Notice]) -> str:
    """The mode the session runs in. A bypassPermissions or auto the user asked for is refused
    when the settings disable it; one the settings' defaultMode asks for falls back to default.
    `manual` is Claude Code's alias for default."""
    mode = requested or settings.permissions.default_mode or "default"
    if mode == "manual":
        mode = "default"
    for name, disabled, why in (
        ("bypassPermissions", settings.permissions.disable_bypass, DISABLED_BYPASS),
        ("auto", settings.permissions.disable_auto, DISABLED_AUTO),
    ):
        if mode == name and disabled:
            if requested == name:
                raise SettingsError(why)
            notices.append(Notice("warning", f"{why}; running in default mode"))
            mode = "default"
    return mode


def sweep_transcripts(projects: Path, days: int, *, now: float | None = None) -> int:
    """Delete sessions not touched for `days` (cleanupPeriodDays): each transcript with its
    folder (spilled tool results, checkpoints, env file); returns how many."""
    limit = (now or time.time()) - days * 86_400
    removed = 0
    if not projects.is_dir():
        return 0
    for path in projects.glob("*/*.jsonl"):
        try:
            if path.stat().st_mtime < limit:
                path.unlink()
                shutil.rmtree(path.with_suffix(""), ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed


def unsupported_report(settings: Settings) -> list[Notice]:
    """One line per key codeloop does not act on: a warning when ignoring it leaves the user
    less protected than the file asks, else for --verbose only."""
    notices = []
    for item in settings.unsupported:
        where = ", ".join(item.sources)
        text = f"settings key {item.key} is not supported ({item.why}); set in {where}"
        notices.append(Notice("warning" if item.unsafe else "info", text))
    return notices
