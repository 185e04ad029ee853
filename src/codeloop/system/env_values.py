"""Numbers and switches read from environment variables (MCP_TIMEOUT, OTEL_*_EXPORT_INTERVAL,
CLAUDE_CODE_ENABLE_TASKS, ...), one way for every reader: a bad number is a warning and the
default stands (a leaf module)."""

from __future__ import annotations

from collections.abc import Mapping


def milliseconds(env: Mapping[str, str], key: str, default: int, warnings: list[str]) -> int:
    """A positive whole number of milliseconds; unset or empty: `default`."""
    raw = env.get(key, "").strip()
    if not raw:
        return default
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    warnings.append(f"{key}={raw!r} is not a number of milliseconds; using {default}")
    return default


_TRUE = frozenset({"1", "true", "yes", "on"})


def flag(env: Mapping[str, str], key: str) -> bool:
    """A switch such as CLAUDE_CODE_ENABLE_TASKS=1: on for 1/true/yes/on, any case."""
    return env.get(key, "").strip().lower() in _TRUE
