"""OTLP/JSON as codeloop sends it: the official OTLP/HTTP exporter, its body written as
OTLP/JSON on the way out, taken by a receiver that reads only JSON, whatever the exporter's
compression."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from codeloop.telemetry.otlp_json import JsonSession
from codeloop.testing.otlp_receiver import OtlpReceiver


@pytest.mark.parametrize("compression", list(Compression))
def test_spans_reach_a_json_only_receiver_with_their_ids(compression: Compression) -> None:
    with OtlpReceiver("json") as otlp:
        exporter = OTLPSpanExporter(
            endpoint=f"{otlp.url}/v1/traces",
            compression=compression,
            session=JsonSession("traces"),
        )
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = tracer_provider.get_tracer("t")
        with (
            tracer.start_as_current_span("outer") as outer,
            tracer.start_as_current_span("inner", attributes={"n": 2, "b": [True]}),
        ):
            pass
        tracer_provider.shutdown()
    received = otlp.received
    assert received.refused == []
    assert all(h["content-type"] == "application/json" for h in received.headers)
    coding = {h.get("content-encoding", "none") for h in received.headers}
    assert coding == {compression.value}
    inner, sent_outer = received.spans
    context = outer.get_span_context()
    assert sent_outer.span_id == context.span_id.to_bytes(8, "big")
    assert inner.trace_id == context.trace_id.to_bytes(16, "big")
    assert inner.parent_span_id == sent_outer.span_id
    assert inner.attributes == {"n": 2, "b": [True]}
