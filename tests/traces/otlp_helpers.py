"""Helpers of the trace tests: a tracer provider with an in-memory exporter, and its spans encoded to OTLP
JSON as the OpenTelemetry collector's file exporter writes it (one export request per line, ids in hex,
int64 values as strings), from the protobuf classes of opentelemetry-proto through the exporter's encoder."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp, exporter


def _hex_ids(obj: Any) -> Any:
    """OTLP JSON writes trace and span ids in hex (protobuf's JSON mapping would write base64)."""
    if isinstance(obj, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_hex_ids(v) for v in obj]
    return obj


def request_json(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    """One export request, as the collector's JSON encoding writes it."""
    message = encode_spans(list(spans))
    return _hex_ids(MessageToDict(message, use_integers_for_enums=True))


def write_otlp(path: Path, batches: Iterable[Iterable[ReadableSpan]]) -> Path:
    """One line per batch of spans."""
    with path.open("w") as f:
        for spans in batches:
            f.write(json.dumps(request_json(spans), separators=(",", ":")) + "\n")
    return path


def hex_span(span: ReadableSpan) -> str:
    return f"{span.context.span_id:016x}"


def hex_trace(span: ReadableSpan) -> str:
    return f"{span.context.trace_id:032x}"
