"""Spans given as rows (dicts): Phoenix's span DataFrames and their Parquet, CSV or JSON exports, and the
OpenTelemetry SDK's JSON (``span.to_json()``), mapped onto the record reader.

Phoenix (``px.Client().get_spans_dataframe()``) has one row per span: ``context.trace_id``,
``context.span_id``, ``parent_id``, ``name``, ``span_kind``, ``start_time``, ``end_time`` and one
``attributes.<name>`` column per attribute, where ``<name>`` is a semantic convention's key
(``attributes.input.value``, ``attributes.retrieval.documents`` holding a list of ``{"document.id": ...}``
objects) or, for any other attribute, its first part holding the rest nested (``example.id`` is the column
``attributes.example`` holding ``{"id": ...}``). Nested values are flattened back into dotted keys here, so
that ``key="example.id"`` finds them. In a CSV export pandas wrote those lists and dicts as Python literals;
they are read back as such.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
from collections.abc import Iterator, Mapping
from typing import Any

from ragrade.traces.records import loads

_TRACE = ("context.trace_id", "trace_id", "traceId", "traceid")
_SPAN = ("context.span_id", "span_id", "spanId", "spanid")
_PARENT = ("parent_id", "parentSpanId", "parent_span_id", "parentId")
_START = ("start_time", "startTime", "start", "startTimeUnixNano")
_END = ("end_time", "endTime", "end", "endTimeUnixNano")
#: attribute keys that hold a whole list of documents (kept as a list, not flattened)
_LISTS = ("retrieval.documents", "reranker.input_documents", "reranker.output_documents", "gen_ai.retrieval.documents")


def is_phoenix_like(names: list[str] | set[str]) -> bool:
    """Whether a record with these fields is a span of Phoenix or the SDK (not a Langfuse observation)."""
    names = set(names)
    return bool(names & {"context.span_id", "context", "span_kind"}) or any(n.startswith("attributes.") for n in names)


def _pick(row: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for n in names:
        v = row.get(n)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            return v
    context = row.get("context")
    if isinstance(context, Mapping):
        for n in names:
            short = n.split(".")[-1]
            if context.get(short) is not None:
                return context[short]
    return None


def span_id(value: Any) -> str | None:
    """An id as text: hex stays hex, a leading ``0x`` (the SDK's JSON) is dropped."""
    if value is None:
        return None
    text = str(value)
    return text[2:] if text.startswith("0x") else text or None


def nanos(value: Any) -> int | None:
    """A time as Unix nanoseconds: a pandas Timestamp or datetime, an ISO 8601 string, or a number (ns,
    us, ms or s told by its size)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "value") and hasattr(value, "tz_localize"):  # pandas Timestamp
        return int(value.value) if str(value) != "NaT" else None
    if isinstance(value, _dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
        return int(stamp.timestamp() * 1_000_000) * 1000
    if isinstance(value, int | float) and not isinstance(value, bool):
        v = float(value)
        scale = 1 if v >= 1e17 else 1_000 if v >= 1e14 else 1_000_000 if v >= 1e11 else 1_000_000_000
        return int(v * scale)
    text = str(value).strip()
    if text.lstrip("+-").isdigit():
        return nanos(int(text))
    try:
        return nanos(_dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """Nested attribute values back into dotted keys (a list of documents stays a list)."""
    if isinstance(value, str) and prefix not in _LISTS and value[:1] in ("{", "[") and prefix != "input.value" \
            and prefix != "output.value":
        with contextlib.suppress(ValueError):
            value = loads(value)
    if isinstance(value, Mapping) and prefix not in _LISTS:
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
        return
    if hasattr(value, "tolist") and not isinstance(value, str):  # NumPy arrays from Parquet
        value = value.tolist()
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return  # (a CSV export's empty cell: no attribute)
    out[prefix] = value


def attributes_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """The flattened attributes of a row: its ``attributes`` mapping and its ``attributes.*`` columns, the
    span kind from Phoenix's ``span_kind`` column where the attributes lack it."""
    out: dict[str, Any] = {}
    nested = row.get("attributes")
    if isinstance(nested, str):
        try:
            nested = loads(nested)
        except ValueError:
            nested = None
    if isinstance(nested, Mapping):
        flatten(nested, "", out)
    for name, value in row.items():
        if name.startswith("attributes."):
            flatten(value, name[len("attributes."):], out)
    kind = row.get("span_kind")
    if "openinference.span.kind" not in out and isinstance(kind, str) and kind.upper() in ("RETRIEVER", "RERANKER"):
        out["openinference.span.kind"] = kind.upper()
    return out


def span_rows(rows: Iterator[tuple[Mapping[str, Any], int | None]], records: Any, notes: Any,
              size: int = 65536) -> Iterator[tuple[Any, Any]]:
    """Blocks of the normalised tables from span rows."""
    for row, line in rows:
        trace = span_id(_pick(row, _TRACE))
        if trace is None and not any(k.startswith("attributes") for k in row):
            notes.add("bad_record", f"line {line}" if line is not None else None)
            continue
        records.add(line=line, trace=trace, span=span_id(_pick(row, _SPAN)), parent=span_id(_pick(row, _PARENT)),
                    name=None if row.get("name") is None else str(row["name"]), start=nanos(_pick(row, _START)),
                    end=nanos(_pick(row, _END)), attrs=attributes_of(row))
        if len(records) >= size:
            yield records.block()
    if len(records):
        yield records.block()


def frame_rows(frame: Any) -> Iterator[tuple[dict[str, Any], int | None]]:
    """The rows of a pandas DataFrame as dicts (its index too, when it is named like a span id column)."""
    columns = list(frame.columns)
    index_name = frame.index.name
    add_index = index_name in _SPAN and index_name not in columns
    for i, values in enumerate(frame.itertuples(index=add_index, name=None)):
        if add_index:
            row = dict(zip([index_name, *columns], values, strict=True))
        else:
            row = dict(zip(columns, values, strict=True))
        yield row, i + 1

