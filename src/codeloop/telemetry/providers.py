"""The OpenTelemetry SDK set up for one session: a meter, a logger and a tracer provider, each
with the exporters the configuration names. Imported only when telemetry is on.

Nothing global is touched: the providers belong to the session and are shut down (flushing
what is left) when it closes. Endpoints and headers come from the configuration, which read
the session's environment (settings files' `env` included), never from os.environ behind its
back.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    ConsoleLogRecordExporter,
)
from opentelemetry.sdk.metrics import (
    Counter,
    Histogram,
    MeterProvider,
    ObservableCounter,
    ObservableGauge,
    ObservableUpDownCounter,
    UpDownCounter,
)
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    ConsoleMetricExporter,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

from codeloop._version import __version__
from codeloop.system.valueclass import valueclass
from codeloop.telemetry.config import Signal, TelemetryConfig

METER_NAME = "com.anthropic.claude_code"
LOGGER_NAME = "com.anthropic.claude_code.events"
TRACER_NAME = "com.anthropic.claude_code.tracing"
# How long shutting down may wait for an export (a collector that is down must not hang us).
EXPORT_TIMEOUT_S = 5.0


@valueclass(frozen=False)
class Providers:
    meters: MeterProvider | None
    loggers: LoggerProvider | None
    tracers: TracerProvider | None

    def shutdown(self) -> None:
        for provider in (self.meters, self.loggers, self.tracers):
            if provider is not None:
                provider.shutdown()


def build_providers(config: TelemetryConfig) -> Providers:
    resource = Resource(
        {
            **config.resource_attributes,
            "service.name": config.service_name,
            "service.version": __version__,
            "os.type": sys.platform.removesuffix("32") if sys.platform != "darwin" else "darwin",
            "os.version": platform.release(),
            "host.arch": _arch(),
        }
    )
    signals = config.signals
    otlp = _otlp_classes(signals)
    meters = loggers = tracers = None
    if "metrics" in signals:
        signal = signals["metrics"]
        temporality = (
            AggregationTemporality.DELTA
            if config.temporality == "delta"
            else AggregationTemporality.CUMULATIVE
        )
        preferred: dict[type, AggregationTemporality] = {
            kind: temporality for kind in (Counter, Histogram, ObservableCounter)
        } | {
            kind: AggregationTemporality.CUMULATIVE
            for kind in (UpDownCounter, ObservableUpDownCounter, ObservableGauge)
        }
        readers = [
            PeriodicExportingMetricReader(exporter, export_interval_millis=signal.interval_ms)
            for exporter in _exporters(
                "metrics", signal, otlp.get("metrics"), preferred_temporality=preferred
            )
        ]
        meters = MeterProvider(metric_readers=readers, resource=resource)
    if "logs" in signals:
        signal = signals["logs"]
        loggers = LoggerProvider(resource=resource)
        for log_exporter in _exporters("logs", signal, otlp.get("logs")):
            loggers.add_log_record_processor(
                BatchLogRecordProcessor(log_exporter, schedule_delay_millis=signal.interval_ms)
            )
    if "traces" in signals:
        signal = signals["traces"]
        tracers = TracerProvider(resource=resource)
        for span_exporter in _exporters("traces", signal, otlp.get("traces")):
            tracers.add_span_processor(
                BatchSpanProcessor(span_exporter, schedule_delay_millis=signal.interval_ms)
            )
    return Providers(meters, loggers, tracers)


# Per signal: the OTLP exporter's module (under opentelemetry.exporter.otlp.proto.<transport>)
# and class; the console exporter writes to stderr, since stdout carries the answer (or the
# JSON a script reads).
_OTLP = {
    "metrics": ("metric_exporter", "OTLPMetricExporter", ConsoleMetricExporter),
    "logs": ("_log_exporter", "OTLPLogExporter", ConsoleLogRecordExporter),
    "traces": ("trace_exporter", "OTLPSpanExporter", ConsoleSpanExporter),
}


def _otlp_classes(signals: dict[str, Signal]) -> dict[str, Any]:
    """Each OTLP signal's exporter class, imported before any provider starts: a package that
    is missing (ImportError) then leaves nothing running behind. OTLP/JSON goes through the
    OTLP/HTTP exporter (see otlp_json)."""
    classes: dict[str, Any] = {}
    for kind, signal in signals.items():
        if signal.otlp:
            transport = "grpc" if signal.protocol == "grpc" else "http"
            module, name, _ = _OTLP[kind]
            path = f"opentelemetry.exporter.otlp.proto.{transport}.{module}"
            classes[kind] = getattr(importlib.import_module(path), name)
    return classes


def _exporters(kind: str, signal: Signal, otlp: Any, **extra: Any) -> list[Any]:
    console = _OTLP[kind][2]
    return [
        console(out=sys.stderr, **extra)
        if exporter == "console"
        else otlp(**_otlp_options(kind, signal), **extra)
        for exporter in signal.exporters
    ]


def _otlp_options(kind: str, signal: Signal) -> dict[str, Any]:
    if signal.protocol == "grpc":
        return _grpc(signal)
    from opentelemetry.exporter.otlp.proto.http import Compression

    options = {
        "endpoint": signal.endpoint,
        "headers": signal.headers,
        "timeout": EXPORT_TIMEOUT_S,
        "compression": Compression(signal.compression),
        **signal.tls_files,
    }
    if signal.protocol == "http/json":
        from codeloop.telemetry.otlp_json import JsonSession

        options["session"] = JsonSession(kind)
    return options


def _grpc(signal: Signal) -> dict[str, Any]:
    from grpc import Compression

    endpoint = signal.endpoint
    return {
        "endpoint": endpoint,
        "insecure": endpoint.startswith("http://"),
        # gRPC metadata keys must be lower case ("Authorization" is refused outright).
        "headers": {k.lower(): v for k, v in signal.headers.items()},
        "timeout": EXPORT_TIMEOUT_S,
        "compression": getattr(Compression, _GRPC_COMPRESSION[signal.compression]),
    }


# The grpc.Compression member for each OTEL_EXPORTER_OTLP_COMPRESSION value.
_GRPC_COMPRESSION = {"none": "NoCompression", "gzip": "Gzip", "deflate": "Deflate"}


def _arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine or os.name)
