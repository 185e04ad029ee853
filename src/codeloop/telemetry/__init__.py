"""OpenTelemetry export, as Claude Code exports it: the same metric and event names and
attributes, so dashboards and collectors built for Claude Code read codeloop's unchanged.

Off by default. `start_telemetry` is the one entry point: it reads the configuration, and only
when something is to be exported imports the OpenTelemetry SDK (the optional `codeloop[otel]`
packages) and returns the session observer that exports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from codeloop.system.valueclass import valueclass
from codeloop.telemetry.config import load_config, telemetry_enabled

if TYPE_CHECKING:
    from codeloop.session import SessionObserver

StartType = Literal["fresh", "resume", "continue"]


@valueclass
class Started:
    observer: SessionObserver | None
    warnings: tuple[str, ...] = ()


def start_telemetry(
    env: Mapping[str, str], session_id: str, model: str, start_type: StartType
) -> Started:
    """The observer that exports this session's telemetry, or None (with the reason, when
    telemetry was asked for) if there is nothing to export."""
    if not telemetry_enabled(env):
        return Started(None)
    config = load_config(env)
    warnings = list(config.warnings)
    if not config.signals:
        warnings.append(
            "telemetry is on but no exporter is set: set OTEL_METRICS_EXPORTER, "
            "OTEL_LOGS_EXPORTER or OTEL_TRACES_EXPORTER (otlp or console)"
        )
        return Started(None, tuple(warnings))
    try:  # the SDK, and the exporter package each configured protocol needs
        from codeloop.telemetry.exporter import SessionTelemetry

        observer = SessionTelemetry(config, env, session_id, model, start_type)
    except ImportError as exc:
        warnings.append(
            f"telemetry is on but {exc.name or 'OpenTelemetry'} is not installed: "
            "pip install 'codeloop[otel]'"
        )
        return Started(None, tuple(warnings))
    return Started(observer, tuple(warnings))


__all__ = ["StartType", "Started", "start_telemetry", "telemetry_enabled"]
