"""OpenTelemetry settings, read from the environment the way Claude Code reads them.

Off unless CLAUDE_CODE_ENABLE_TELEMETRY (or CODELOOP_ENABLE_TELEMETRY) is set; then each
signal is exported only when its exporter is named (OTEL_METRICS_EXPORTER, OTEL_LOGS_EXPORTER,
OTEL_TRACES_EXPORTER: `otlp`, `console`, comma-separated, `none` to turn one off). OTLP goes
where OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal endpoint) says, over
OTEL_EXPORTER_OTLP_PROTOCOL or the per-signal OTEL_EXPORTER_OTLP_{METRICS,LOGS,TRACES}_PROTOCOL
(`http/protobuf`, the OpenTelemetry default, `http/json` or `grpc`), with the headers the
OTEL_EXPORTER_OTLP_*HEADERS variables give, the compression OTEL_EXPORTER_OTLP_COMPRESSION
(or the per-signal one) names and the TLS files of OTEL_EXPORTER_OTLP_[SIGNAL_]CERTIFICATE,
_CLIENT_KEY and _CLIENT_CERTIFICATE. Every one of them is read here, from the session's environment
(settings files' `env` included), and handed to the exporters: they would otherwise read
os.environ and miss what the settings set. Nothing here imports OpenTelemetry: a session with
telemetry off never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from urllib.parse import unquote

from codeloop.system.env_values import milliseconds
from codeloop.system.valueclass import valueclass

SIGNALS = ("metrics", "logs", "traces")
EXPORTERS = ("otlp", "console")
PROTOCOLS = ("http/protobuf", "http/json", "grpc")
DEFAULT_PROTOCOL = "http/protobuf"
COMPRESSIONS = ("none", "gzip", "deflate")
# Per signal: the exporter variable, the export interval variable and its default (ms), the
# path an OTLP/HTTP endpoint gets.
_SIGNAL_VARS = {
    "metrics": ("OTEL_METRICS_EXPORTER", "OTEL_METRIC_EXPORT_INTERVAL", 60_000, "v1/metrics"),
    "logs": ("OTEL_LOGS_EXPORTER", "OTEL_LOGS_EXPORT_INTERVAL", 5_000, "v1/logs"),
    "traces": ("OTEL_TRACES_EXPORTER", "OTEL_TRACES_EXPORT_INTERVAL", 5_000, "v1/traces"),
}
_DEFAULT_ENDPOINTS = {
    "http/protobuf": "http://localhost:4318",
    "http/json": "http://localhost:4318",
    "grpc": "http://localhost:4317",
}
_TRUE = frozenset({"1", "true", "yes", "on"})


@valueclass
class Signal:
    """Where one signal (metrics, logs or traces) goes."""

    exporters: tuple[str, ...]
    protocol: str
    endpoint: str  # for OTLP/HTTP the full URL, path included
    headers: dict[str, str]
    interval_ms: int
    compression: str = "none"
    # The OTLP/HTTP exporter's TLS files (certificate_file, client_key_file,
    # client_certificate_file), for a collector with its own CA or mTLS.
    tls_files: dict[str, str] = field(default_factory=dict)

    @property
    def otlp(self) -> bool:
        return "otlp" in self.exporters


@valueclass
class TelemetryConfig:
    signals: dict[str, Signal]
    resource_attributes: dict[str, str] = field(default_factory=dict)
    service_name: str = "codeloop"
    log_user_prompts: bool = False
    log_tool_details: bool = False
    # Claude Code's cardinality controls: which standard attributes metrics carry.
    metrics_session_id: bool = True
    metrics_version: bool = False
    metrics_resource_attributes: bool = True
    temporality: str = "delta"
    # What could not be honoured, for the user to see (never silently dropped).
    warnings: tuple[str, ...] = ()


def telemetry_enabled(env: Mapping[str, str]) -> bool:
    return any(
        _flag(env, key) for key in ("CLAUDE_CODE_ENABLE_TELEMETRY", "CODELOOP_ENABLE_TELEMETRY")
    )


def load_config(env: Mapping[str, str]) -> TelemetryConfig:
    warnings: list[str] = []
    signals: dict[str, Signal] = {}
    for name in SIGNALS:
        signal = _signal(env, name, warnings)
        if signal is not None:
            signals[name] = signal
    resource = _pairs(env.get("OTEL_RESOURCE_ATTRIBUTES", ""), "OTEL_RESOURCE_ATTRIBUTES", warnings)
    service = env.get("OTEL_SERVICE_NAME", "").strip() or resource.pop("service.name", "codeloop")
    temporality = env.get("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta").lower()
    if temporality not in ("delta", "cumulative"):
        warnings.append(
            f"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE={temporality!r} is not delta or "
            "cumulative; using delta"
        )
        temporality = "delta"
    return TelemetryConfig(
        signals,
        resource,
        service,
        log_user_prompts=_flag(env, "OTEL_LOG_USER_PROMPTS"),
        log_tool_details=_flag(env, "OTEL_LOG_TOOL_DETAILS"),
        metrics_session_id=_flag(env, "OTEL_METRICS_INCLUDE_SESSION_ID", True),
        metrics_version=_flag(env, "OTEL_METRICS_INCLUDE_VERSION", False),
        metrics_resource_attributes=_flag(env, "OTEL_METRICS_INCLUDE_RESOURCE_ATTRIBUTES", True),
        temporality=temporality,
        warnings=tuple(dict.fromkeys(warnings)),  # a generic variable is read per signal
    )


def _signal(env: Mapping[str, str], name: str, warnings: list[str]) -> Signal | None:
    exporter_var, interval_var, default_interval, path = _SIGNAL_VARS[name]
    named = [e.strip().lower() for e in env.get(exporter_var, "").split(",") if e.strip()]
    exporters = tuple(dict.fromkeys(e for e in named if e in EXPORTERS))
    for other in sorted(set(named) - {*EXPORTERS, "none"}):
        warnings.append(
            f"{exporter_var}: the {other!r} exporter is not supported (use otlp or console)"
        )
    if not exporters:
        return None
    upper = name.upper()
    protocol = _choice(env, upper, "PROTOCOL", PROTOCOLS, DEFAULT_PROTOCOL, warnings)
    compression = _choice(env, upper, "COMPRESSION", COMPRESSIONS, "none", warnings)
    endpoint = env.get(f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT", "").strip()
    if not endpoint:
        base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or _DEFAULT_ENDPOINTS[protocol]
        # The generic endpoint is a base URL: OTLP/HTTP adds each signal's path to it.
        endpoint = base if protocol == "grpc" else f"{base.rstrip('/')}/{path}"
    headers = _pairs(
        env.get("OTEL_EXPORTER_OTLP_HEADERS", ""), "OTEL_EXPORTER_OTLP_HEADERS", warnings
    )
    headers |= _pairs(
        env.get(f"OTEL_EXPORTER_OTLP_{upper}_HEADERS", ""),
        f"OTEL_EXPORTER_OTLP_{upper}_HEADERS",
        warnings,
    )
    interval = milliseconds(env, interval_var, default_interval, warnings)
    tls_files = {
        argument: path
        for argument, setting in _TLS_FILES.items()
        if (path := _own_or_generic(env, upper, setting))
    }
    return Signal(exporters, protocol, endpoint, headers, interval, compression, tls_files)


# The exporter's argument for each TLS file variable (OTEL_EXPORTER_OTLP_[SIGNAL_]<name>).
_TLS_FILES = {
    "certificate_file": "CERTIFICATE",
    "client_key_file": "CLIENT_KEY",
    "client_certificate_file": "CLIENT_CERTIFICATE",
}


def _own_or_generic(env: Mapping[str, str], upper: str, setting: str) -> str:
    """OTEL_EXPORTER_OTLP_{signal}_{setting}, else OTEL_EXPORTER_OTLP_{setting} ("": neither)."""
    own = env.get(f"OTEL_EXPORTER_OTLP_{upper}_{setting}", "").strip()
    return own or env.get(f"OTEL_EXPORTER_OTLP_{setting}", "").strip()


def _choice(
    env: Mapping[str, str],
    upper: str,
    setting: str,
    choices: tuple[str, ...],
    default: str,
    warnings: list[str],
) -> str:
    """One of `choices` for OTEL_EXPORTER_OTLP_{signal}_{setting}, which wins, or the generic
    OTEL_EXPORTER_OTLP_{setting}. A value that names none of them is said, with the variable
    holding it, and passed over as if unset."""
    chosen, refused = default, []
    for key in (f"OTEL_EXPORTER_OTLP_{upper}_{setting}", f"OTEL_EXPORTER_OTLP_{setting}"):
        raw = env.get(key, "").strip()
        if raw.lower() in choices:
            chosen = raw.lower()
            break
        if raw:
            refused.append(f"{key}={raw!r}")
    listed = f"{', '.join(choices[:-1])} or {choices[-1]}"
    what = f"an OTLP {setting.lower()}"
    warnings.extend(f"{bad} is not {what} ({listed}); using {chosen}" for bad in refused)
    return chosen


def _pairs(text: str, source: str, warnings: list[str]) -> dict[str, str]:
    """`key1=value1,key2=value2`, values percent-decoded (W3C baggage, as OpenTelemetry)."""
    out: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            warnings.append(f"{source}: {item.strip()!r} is not key=value; skipped")
            continue
        out[unquote(key.strip())] = unquote(value.strip())
    return out


def _flag(env: Mapping[str, str], key: str, default: bool = False) -> bool:
    raw = env.get(key, "").strip().lower()
    if not raw:
        return default
    return raw in _TRUE
