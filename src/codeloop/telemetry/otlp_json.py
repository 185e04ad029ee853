"""OTLP/HTTP with JSON bodies (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), for collectors that
take only JSON. Imported only when a signal is configured so.

OpenTelemetry's own JSON exporter (opentelemetry-exporter-otlp-json-http) is a beta that pins
the shared OTLP packages at versions the protobuf exporters of the same release have moved
past, so the two do not install together. Instead the official protobuf exporter does all the
work (batching, endpoint, headers, timeout, retries, compression, TLS) and its requests session,
a parameter it documents, writes each body as OTLP/JSON on the way out: the same official
messages, by protobuf's json_format, with OTLP/JSON's own rules (trace and span ids in hex,
enum values as integers, lowerCamelCase keys).
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from collections.abc import Callable
from typing import Any

import requests
from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from requests.structures import CaseInsensitiveDict

REQUESTS: dict[str, type[Message]] = {
    "metrics": ExportMetricsServiceRequest,
    "logs": ExportLogsServiceRequest,
    "traces": ExportTraceServiceRequest,
}
# The exporter's Content-Encoding: how its body is undone, and done again once rewritten.
_CODINGS: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "gzip": (gzip.decompress, gzip.compress),
    "deflate": (zlib.decompress, zlib.compress),
}
# The bytes fields OTLP/JSON writes in hex, where protobuf's JSON mapping has base64.
_HEX_IDS = frozenset({"traceId", "spanId", "parentSpanId"})


class JsonSession(requests.Session):
    """The session one signal's OTLP/HTTP exporter sends through: the protobuf body it is
    given goes out as OTLP/JSON, compressed as the exporter compressed it."""

    def __init__(self, signal: str) -> None:
        super().__init__()
        self._request_type = REQUESTS[signal]

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        headers = CaseInsensitiveDict(kwargs.get("headers") or {})
        # Older exporters set their headers on the session, newer ones on each request.
        coding = str(headers.get("content-encoding") or self.headers.get("content-encoding"))
        decompress, compress = _CODINGS.get(coding.lower(), (bytes, bytes))
        body = decompress(kwargs.get("data") or b"")
        kwargs["data"] = compress(as_otlp_json(body, self._request_type))
        headers["Content-Type"] = "application/json"
        kwargs["headers"] = headers
        return super().request(method, url, *args, **kwargs)


def as_otlp_json(body: bytes, request_type: type[Message]) -> bytes:
    """A serialized OTLP export request, rewritten in OTLP/JSON."""
    document = json_format.MessageToDict(request_type.FromString(body), use_integers_for_enums=True)
    _hex_ids(document)
    return json.dumps(document, separators=(",", ":")).encode()


def _hex_ids(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _HEX_IDS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)
