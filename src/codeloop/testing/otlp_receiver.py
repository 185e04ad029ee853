"""Tiny OTLP receivers on 127.0.0.1 (HTTP, and gRPC): what a collector would get from codeloop.

The HTTP one accepts `POST /v1/metrics`, `/v1/logs` and `/v1/traces` in one encoding,
protobuf or OTLP/JSON (gzip, deflate or not), and answers 415 to the other, as a collector
that speaks only one would; the gRPC one the three OTLP Export services. All decode into the
official `opentelemetry-proto` messages and keep every data point, log record and span in a
flat form tests can read; they also count connections, so a test can show that nothing
connected.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Callable
from concurrent import futures
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from codeloop.system.valueclass import valueclass
from codeloop.testing import otlp_json_reader
from codeloop.testing.loopback_http import LoopbackHttp, OwnedServer

Attributes = dict[str, Any]
M = TypeVar("M", bound=Message)
Encoding = Literal["protobuf", "json"]
_DECOMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.decompress,
    "deflate": zlib.decompress,
}
CONTENT_TYPES: dict[Encoding, str] = {
    "protobuf": "application/x-protobuf",
    "json": "application/json",
}


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    return getattr(value, kind)


def attributes_of(pairs: Any) -> Attributes:
    return {kv.key: value_of(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


@valueclass
class Point:
    """One metric data point (sums and gauges; histograms give their sum)."""

    metric: str
    unit: str
    value: float
    attributes: Attributes
    resource: Attributes
    scope: str
    temporality: int  # 1 delta, 2 cumulative (0 for gauges)


@valueclass
class LogRecord:
    event_name: str
    body: Any
    attributes: Attributes
    resource: Attributes
    scope: str


@valueclass
class SpanRecord:
    name: str
    span_id: bytes
    parent_span_id: bytes
    trace_id: bytes
    attributes: Attributes
    resource: Attributes
    status_code: int


@valueclass(frozen=False)
class Received:
    points: list[Point] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    spans: list[SpanRecord] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # per request, names lower-cased
    refused: list[int] = field(default_factory=list)  # the status of each request turned away
    connections: int = 0

    def metric(self, name: str) -> list[Point]:
        return [p for p in self.points if p.metric == name]

    def events(self, name: str) -> list[LogRecord]:
        return [r for r in self.logs if r.event_name == name]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OwnedServer[OtlpReceiver]

    def setup(self) -> None:
        super().setup()
        with self.server.owner.lock:
            self.server.owner.received.connections += 1

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read what was received."""

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("content-length") or 0))
        coding = self.headers.get("content-encoding")
        if coding in _DECOMPRESS:
            data = _DECOMPRESS[coding](data)
        receiver = self.server.owner
        content_type = CONTENT_TYPES[receiver.encoding]
        sent = (self.headers.get("content-type") or "").partition(";")[0].strip().lower()
        if sent != content_type:
            self._refuse(415, f"this receiver takes {content_type}, not {sent or 'nothing'}")
            return
        try:
            reply = receiver.take(self.path, data, {k.lower(): v for k, v in self.headers.items()})
        except (KeyError, DecodeError, otlp_json_reader.OtlpJsonError) as exc:
            self._refuse(400, f"cannot take {self.path}: {exc!r}")
            return
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def _refuse(self, status: int, why: str) -> None:
        with self.server.owner.lock:
            self.server.owner.received.refused.append(status)
        body = why.encode()
        self.send_response(status)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class OtlpReceiver:
    """`with OtlpReceiver() as otlp:` then set OTEL_EXPORTER_OTLP_ENDPOINT=otlp.url;
    `OtlpReceiver("json")` takes OTLP/JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) only."""

    def __init__(self, encoding: Encoding = "protobuf") -> None:
        self.encoding = encoding
        self.received = Received()
        self.lock = threading.Lock()
        self._http: LoopbackHttp[OtlpReceiver] | None = None

    @property
    def url(self) -> str:
        assert self._http is not None, "the receiver is not running"
        return self._http.url

    def __enter__(self) -> Self:
        self._http = LoopbackHttp(_Handler, self)
        self._http.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._http is not None
        self._http.stop()

    def take(self, path: str, data: bytes, headers: dict[str, str]) -> bytes:
        """Decode one export request; the reply is the (empty) export response."""
        kind = path.split("?", 1)[0]
        with self.lock:
            self.received.headers.append(headers)
            if kind == "/v1/metrics":
                self._metrics(self._decode(data, ExportMetricsServiceRequest))
                return self._encode(ExportMetricsServiceResponse())
            if kind == "/v1/logs":
                self._logs(self._decode(data, ExportLogsServiceRequest))
                return self._encode(ExportLogsServiceResponse())
            if kind == "/v1/traces":
                self._traces(self._decode(data, ExportTraceServiceRequest))
                return self._encode(ExportTraceServiceResponse())
        raise KeyError(kind)

    def _decode(self, data: bytes, message: type[M]) -> M:
        if self.encoding == "json":
            return otlp_json_reader.parse(data, message)
        return message.FromString(data)

    def _encode(self, reply: Message) -> bytes:
        if self.encoding == "json":
            return json_format.MessageToJson(reply).encode()
        return reply.SerializeToString()

    def _metrics(self, request: ExportMetricsServiceRequest) -> None:
        for rm in request.resource_metrics:
            resource = attributes_of(rm.resource.attributes)
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    kind = metric.WhichOneof("data")
                    if kind not in ("sum", "gauge"):
                        continue
                    data = getattr(metric, kind)
                    temporality = data.aggregation_temporality if kind == "sum" else 0
                    for dp in data.data_points:
                        number = dp.WhichOneof("value")
                        self.received.points.append(
                            Point(
                                metric.name,
                                metric.unit,
                                float(getattr(dp, number or "as_double")),
                                attributes_of(dp.attributes),
                                resource,
                                sm.scope.name,
                                temporality,
                            )
                        )

    def _logs(self, request: ExportLogsServiceRequest) -> None:
        for rl in request.resource_logs:
            resource = attributes_of(rl.resource.attributes)
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    self.received.logs.append(
                        LogRecord(
                            record.event_name,
                            value_of(record.body),
                            attributes_of(record.attributes),
                            resource,
                            sl.scope.name,
                        )
                    )

    def _traces(self, request: ExportTraceServiceRequest) -> None:
        for rs in request.resource_spans:
            resource = attributes_of(rs.resource.attributes)
            for ss in rs.scope_spans:
                for span in ss.spans:
                    self.received.spans.append(
                        SpanRecord(
                            span.name,
                            span.span_id,
                            span.parent_span_id,
                            span.trace_id,
                            attributes_of(span.attributes),
                            resource,
                            span.status.code,
                        )
                    )


class OtlpGrpcReceiver(OtlpReceiver):
    """The same, over OTLP/gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc): `url` is its endpoint."""

    def __init__(self) -> None:
        super().__init__()
        self._grpc: grpc.Server | None = None
        self._port = 0

    @property
    def url(self) -> str:
        assert self._grpc is not None, "the receiver is not running"
        return f"http://127.0.0.1:{self._port}"

    def __enter__(self) -> Self:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        receiver = self

        def take(decode: Any, reply: Any) -> Any:
            def export(request: Any, context: grpc.ServicerContext) -> Any:
                with receiver.lock:
                    receiver.received.connections += 1
                    receiver.received.headers.append(
                        {k.lower(): str(v) for k, v in context.invocation_metadata()}
                    )
                    decode(request)
                return reply()

            return export

        handlers: dict[str, tuple[Any, Any, Any]] = {
            "opentelemetry.proto.collector.metrics.v1.MetricsService": (
                self._metrics,
                ExportMetricsServiceRequest,
                ExportMetricsServiceResponse,
            ),
            "opentelemetry.proto.collector.logs.v1.LogsService": (
                self._logs,
                ExportLogsServiceRequest,
                ExportLogsServiceResponse,
            ),
            "opentelemetry.proto.collector.trace.v1.TraceService": (
                self._traces,
                ExportTraceServiceRequest,
                ExportTraceServiceResponse,
            ),
        }
        for service, (decode, request, reply) in handlers.items():
            method = grpc.unary_unary_rpc_method_handler(
                take(decode, reply),
                request_deserializer=request.FromString,
                response_serializer=reply.SerializeToString,
            )
            server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(service, {"Export": method}),)
            )
        self._port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self._grpc = server
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._grpc is not None
        self._grpc.stop(grace=None).wait()
