"""Telemetry settings as Claude Code's users write them, and what a tool call counts as."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from codeloop.telemetry import start_telemetry
from codeloop.telemetry.activity import is_commit, is_pull_request, language, lines_changed
from codeloop.telemetry.config import load_config, telemetry_enabled
from codeloop.types import ToolUseBlock


def test_off_unless_asked_for() -> None:
    assert not telemetry_enabled({"OTEL_METRICS_EXPORTER": "otlp"})
    assert telemetry_enabled({"CLAUDE_CODE_ENABLE_TELEMETRY": "1"})
    assert telemetry_enabled({"CODELOOP_ENABLE_TELEMETRY": "true"})
    assert not telemetry_enabled({"CLAUDE_CODE_ENABLE_TELEMETRY": "0"})
    assert start_telemetry({"OTEL_METRICS_EXPORTER": "otlp"}, "s", "m", "fresh").observer is None


def test_endpoints_protocols_and_headers_per_signal() -> None:
    config = load_config(
        {
            "OTEL_METRICS_EXPORTER": "otlp,console",
            "OTEL_LOGS_EXPORTER": "otlp",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
            "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc,x-team=a",
            "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "x-team=b",
            "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://logs:4317",
            "OTEL_METRIC_EXPORT_INTERVAL": "10000",
        }
    )
    metrics, logs = config.signals["metrics"], config.signals["logs"]
    assert "traces" not in config.signals
    assert metrics.exporters == ("otlp", "console") and metrics.protocol == "http/protobuf"
    assert metrics.endpoint == "http://collector:4318/v1/metrics" and metrics.interval_ms == 10_000
    assert metrics.headers == {"Authorization": "Bearer abc", "x-team": "a"}
    assert (logs.protocol, logs.endpoint) == ("grpc", "http://logs:4317")
    assert logs.headers == {"Authorization": "Bearer abc", "x-team": "b"}  # merged, signal wins
    assert logs.interval_ms == 5_000 and config.warnings == ()


def test_what_cannot_be_honoured_is_said() -> None:
    config = load_config(
        {
            "OTEL_METRICS_EXPORTER": "prometheus,otlp",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "json",
            "OTEL_LOGS_EXPORT_INTERVAL": "soon",
            "OTEL_LOGS_EXPORTER": "console",
            "OTEL_RESOURCE_ATTRIBUTES": "team=a,broken",
        }
    )
    assert config.signals["metrics"].protocol == "http/protobuf"
    text = " ".join(config.warnings)
    for expected in ("'prometheus' exporter", "'json'", "'soon'", "'broken'"):
        assert expected in text
    assert config.resource_attributes == {"team": "a"}


def test_http_json_for_all_signals_or_per_signal() -> None:
    everything = {f"OTEL_{s}_EXPORTER": "otlp" for s in ("METRICS", "LOGS", "TRACES")}
    config = load_config(everything | {"OTEL_EXPORTER_OTLP_PROTOCOL": " HTTP/JSON "})
    assert {s.protocol for s in config.signals.values()} == {"http/json"}
    assert config.signals["logs"].endpoint == "http://localhost:4318/v1/logs"
    assert config.warnings == ()
    config = load_config(
        everything
        | {
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/json",
        }
    )
    protocols = {name: s.protocol for name, s in config.signals.items()}
    assert protocols == {"metrics": "http/json", "logs": "http/json", "traces": "grpc"}
    assert config.signals["traces"].endpoint == "http://localhost:4317"


def test_a_protocol_that_is_none_is_named_and_passed_over() -> None:
    everything = {f"OTEL_{s}_EXPORTER": "otlp" for s in ("METRICS", "LOGS", "TRACES")}
    config = load_config(
        everything
        | {
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/jsn",  # falls back to the generic
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "  ",  # unset
        }
    )
    assert {s.protocol for s in config.signals.values()} == {"http/json"}
    assert config.warnings == (
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL='http/jsn' is not an OTLP protocol "
        "(http/protobuf, http/json or grpc); using http/json",
    )
    config = load_config(everything | {"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"})
    assert {s.protocol for s in config.signals.values()} == {"http/protobuf"}
    assert len(config.warnings) == 1  # said once, not once per signal
    assert "OTEL_EXPORTER_OTLP_PROTOCOL='thrift'" in config.warnings[0]


def test_compression_is_read_per_signal_and_a_bad_value_is_named() -> None:
    everything = {f"OTEL_{s}_EXPORTER": "otlp" for s in ("METRICS", "LOGS", "TRACES")}
    config = load_config(
        everything
        | {
            "OTEL_EXPORTER_OTLP_COMPRESSION": "GZIP",
            "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION": "none",
            "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "brotli",  # falls back to the generic
        }
    )
    compressions = {name: s.compression for name, s in config.signals.items()}
    assert compressions == {"metrics": "gzip", "logs": "none", "traces": "gzip"}
    assert config.warnings == (
        "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION='brotli' is not an OTLP compression "
        "(none, gzip or deflate); using gzip",
    )
    assert {s.compression for s in load_config(everything).signals.values()} == {"none"}


def test_tls_files_reach_the_http_exporters_from_the_sessions_environment() -> None:
    """Claude Code documents OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY and _CLIENT_CERTIFICATE for
    mTLS: set in a settings file's env they are in no os.environ the exporter could read, so
    the exporter must be handed them."""
    from codeloop.telemetry.providers import _otlp_options

    env = {
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_CERTIFICATE": "/etc/ca.pem",
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY": "/keys/metrics.key",
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": "/keys/metrics.pem",
    }
    signals = load_config(env).signals
    metrics = _otlp_options("metrics", signals["metrics"])
    assert metrics["certificate_file"] == "/etc/ca.pem"
    assert metrics["client_key_file"] == "/keys/metrics.key"
    assert metrics["client_certificate_file"] == "/keys/metrics.pem"
    logs = _otlp_options("logs", signals["logs"])
    assert logs["certificate_file"] == "/etc/ca.pem"
    assert "client_key_file" not in logs and "client_certificate_file" not in logs


def test_a_missing_exporter_package_is_said_and_nothing_is_left_running(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An install without the gRPC exporter: metrics over http/protobuf could start, but a
    half-configured export is not started, and the user is told what to install."""
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc", None)
    threads = threading.active_count()
    started = start_telemetry(
        {
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
            "OTEL_METRICS_EXPORTER": "otlp",
            "OTEL_LOGS_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
            "CODELOOP_HOME": str(tmp_path),
        },
        "s",
        "m",
        "fresh",
    )
    running = threading.active_count()
    if started.observer is not None:
        started.observer.close()
    assert started.observer is None and running == threads
    (warning,) = started.warnings
    assert "opentelemetry.exporter.otlp.proto.grpc" in warning and "not installed" in warning
    assert "pip install 'codeloop[otel]'" in warning


def test_resource_attributes_and_privacy_switches() -> None:
    config = load_config(
        {
            "OTEL_RESOURCE_ATTRIBUTES": "department=eng,org.name=John%27s%20Org,service.name=cc",
            "OTEL_LOG_USER_PROMPTS": "1",
            "OTEL_METRICS_INCLUDE_SESSION_ID": "false",
            "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "cumulative",
        }
    )
    assert config.resource_attributes == {"department": "eng", "org.name": "John's Org"}
    assert config.service_name == "cc" and config.log_user_prompts and not config.log_tool_details
    assert not config.metrics_session_id and config.temporality == "cumulative"


def use(name: str, **args: object) -> ToolUseBlock:
    return ToolUseBlock("t1", name, dict(args))


def test_lines_changed_by_an_edit_and_a_write() -> None:
    edit = use("Edit", old_string="a\nb\nc\n", new_string="a\nB\nc\nd\n")
    assert lines_changed(edit) == (2, 1)
    assert lines_changed(use("Write", content="one\ntwo")) == (2, 0)
    assert lines_changed(use("Read", file_path="x")) == (0, 0)


def test_commits_and_pull_requests_are_recognised_in_commands() -> None:
    assert is_commit("git commit -m 'x'") and is_commit("cd src && git -C . commit -qam x")
    assert is_commit("git -c user.name=a commit --amend")
    assert not is_commit("git log --grep commit") and not is_commit("echo git commit")
    assert is_pull_request("gh pr create --fill") and not is_pull_request("gh pr view 3")
    assert language("src/app.tsx") == "TypeScript" and language("Makefile") == "unknown"
