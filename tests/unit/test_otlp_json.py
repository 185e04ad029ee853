"""The test receiver's OTLP/JSON reading holds exporters to the specification's own rules, so an
e2e test against it fails on what a strict collector would refuse."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from codeloop.testing.otlp_json_reader import OtlpJsonError, parse

TRACE_ID = "5b8efff798038103d269b633813fc60c"
SPAN_ID = "eee19b7ec3c1b174"


def request(**span: Any) -> bytes:
    base = {"traceId": TRACE_ID, "spanId": SPAN_ID, "name": "claude_code.tool", "kind": 1}
    scope_spans = [{"scope": {"name": "s"}, "spans": [base | span]}]
    return json.dumps({"resourceSpans": [{"scopeSpans": scope_spans}]}).encode()


def test_hex_ids_integer_enums_and_string_int64s_are_read() -> None:
    parsed = parse(
        request(startTimeUnixNano="1700000000000000000", status={"code": 2}, parentSpanId=""),
        ExportTraceServiceRequest,
    )
    (span,) = parsed.resource_spans[0].scope_spans[0].spans
    assert span.trace_id.hex() == TRACE_ID and span.span_id.hex() == SPAN_ID
    assert span.parent_span_id == b"" and span.kind == 1 and span.status.code == 2
    assert span.start_time_unix_nano == 1_700_000_000_000_000_000


def test_unknown_keys_are_ignored_as_the_specification_requires() -> None:
    parsed = parse(
        request(droppedLinksCount=0, someFutureField={"x": 1}), ExportTraceServiceRequest
    )
    assert parsed.resource_spans[0].scope_spans[0].spans[0].name == "claude_code.tool"


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (request(traceId="W47/95gDgQPSabYzgT/GDA=="), "hex digits"),  # protobuf's base64
        (request(spanId=SPAN_ID[:-2]), "hex digits"),
        (request(kind="SPAN_KIND_INTERNAL"), "integer"),  # an enum by name
        (request(status={"code": "STATUS_CODE_ERROR"}), "integer"),
        (request(start_time_unix_nano="1"), "lowerCamelCase"),  # the proto field name
        (b'{"resourceSpans": [', "not JSON"),
        (b"\x0a\x00", "not JSON"),  # protobuf
        (b"[]", "must be a JSON object"),
    ],
)
def test_what_the_specification_rules_out_is_refused(payload: bytes, why: str) -> None:
    with pytest.raises(OtlpJsonError, match=why):
        parse(payload, ExportTraceServiceRequest)
