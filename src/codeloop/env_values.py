"""Numbers read from environment variables (MCP_TIMEOUT, OTEL_*_EXPORT_INTERVAL, ...), one
way for every reader: a bad value is a warning and the default stands (a leaf module)."""

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
