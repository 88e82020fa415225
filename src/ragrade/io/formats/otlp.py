"""OTLP JSON: OpenTelemetry trace exports as the collector's file exporter writes them, one export request
(``{"resourceSpans": [{"resource": ..., "scopeSpans": [{"scope": ..., "spans": [...]}]}]}``) per line, the
attributes as ``[{"key": ..., "value": {"stringValue": ...}}]`` lists and the ids in hex (a file holding one
such request as a whole JSON document is read too).

The file is read in blocks of whole lines and each block parsed by Arrow's JSON reader against the OTLP
schema (C++, no Python object per span): memory holds one block, whatever the file's size. A block Arrow
cannot take (an int64 written as a number instead of a string, a NaN written as a string, a line that is
not JSON) is read again line by line with the json module, its values normalised; a line that is not an
export request is reported (``on_bad_line``) or is a :class:`~ragrade.errors.ParseError` naming it.

What the spans mean (retrieval calls, documents, conventions) is :mod:`ragrade.traces`'s business: this
module only turns the file into one row per span (:data:`SPAN_COLUMNS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ragrade.errors import ParseError
from ragrade.io.formats.base import Format

#: One row per span: the line of the file it was read from, its ids (hex, as written), name, start and end
#: (Unix nanoseconds, null when missing), the ``service.name`` of its resource, and its attributes as OTLP's
#: key/value list (values: stringValue, intValue (text), doubleValue, boolValue, arrayValue, kvlistValue).
SPAN_COLUMNS = ("line", "trace_id", "span_id", "parent_id", "name", "start", "end", "service", "attributes")

#: ``on_bad_line(line, message, text)``: told of a line that is not an export request (it is skipped).
BadLine = Callable[[int, str, str], None]

_SCALARS = (("stringValue", "string"), ("intValue", "string"), ("doubleValue", "float64"), ("boolValue", "bool_"),
            ("bytesValue", "string"))
_GROUP = 8
_START = re.compile(r'^\s*\{\s*"resourceSpans"')
_BLOCK = 1 << 20  # Arrow's parse of a block holds about 50 times its size: blocks stay small


def _schemas() -> tuple[Any, Any]:
    """``(request schema, attributes type)``: OTLP's AnyValue with two levels of nesting (an array of
    key/value lists holds GenAI's ``[{id, score}]`` documents)."""
    import pyarrow as pa

    scalars = [(name, getattr(pa, kind)()) for name, kind in _SCALARS]
    kv = pa.struct([("key", pa.string()), ("value", pa.struct(scalars))])
    kvlist = pa.struct([("values", pa.list_(kv))])
    inner = pa.struct([*scalars, ("kvlistValue", kvlist)])
    value = pa.struct([*scalars, ("arrayValue", pa.struct([("values", pa.list_(inner))])), ("kvlistValue", kvlist)])
    attributes = pa.list_(pa.struct([("key", pa.string()), ("value", value)]))
    span = pa.struct([("traceId", pa.string()), ("spanId", pa.string()), ("parentSpanId", pa.string()),
                      ("name", pa.string()), ("startTimeUnixNano", pa.string()), ("endTimeUnixNano", pa.string()),
                      ("attributes", attributes)])
    scope = pa.struct([("spans", pa.list_(span))])
    resource = pa.struct([("resource", pa.struct([("attributes", attributes)])), ("scopeSpans", pa.list_(scope))])
    return pa.schema([("resourceSpans", pa.list_(resource))]), attributes


class OtlpJson(Format):
    name = "otlp"
    aliases = ("otlp-json", "otlp_json")
    extensions = ()  # .json / .jsonl select JSON Lines: ragrade.traces tells an OTLP file by its first line
    sniff_order = 5  # before JSON Lines
    description = "OpenTelemetry trace exports (OTLP JSON, one export request per line, as the collector writes)"

    def sniff(self, head: bytes, line: str | None) -> bool:
        return line is not None and _START.match(line) is not None

    def column_names(self, path: str) -> list[str]:
        return list(SPAN_COLUMNS)

    def records(self, path: str, *, strings: bool = False) -> Any:
        import pyarrow as pa

        batches = list(self.batches(path))
        return pa.Table.from_batches(batches) if batches else pa.Table.from_batches([], schema=span_schema())

    def rows(self, path: str, *, names: list[str] | None = None) -> Iterator[tuple[dict[str, Any], int | None]]:
        """Each span as a dict (:data:`SPAN_COLUMNS`, the attributes as ``{key: value}``) with its line."""
        self._no_names(names)
        for batch in self.batches(path):
            for row in batch.to_pylist():
                row["attributes"] = {a["key"]: any_value(a["value"]) for a in row["attributes"] or ()}
                yield row, row["line"]

    def batches(self, path: str, columns: list[str] | None = None, *, names: list[str] | None = None,
                skip_rows: int = 0, block_size: int = _BLOCK, progress: Any = None,
                on_bad_line: BadLine | None = None) -> Iterator[Any]:
        """One record batch of spans (:data:`SPAN_COLUMNS`, or only ``columns``) per block of about
        ``block_size`` bytes of the file. A line that is not an export request is given to ``on_bad_line``
        and skipped; without it, it is a :class:`ParseError` naming the line. The ``line`` of a span counts
        the file's non-blank lines (its line number when the file has no blank line)."""
        import numpy as np
        import pyarrow as pa
        document = _whole_document(path)
        if document is not None:
            table, lines = _normalised([(1, document)], path, on_bad_line)
            yield from _select(_spans(table, lines), columns)
            return
        done = 0  # requests read by Arrow's streaming reader before it stopped, if it does
        stream = _stream(path, block_size, progress)
        while True:
            try:
                table = next(stream)
            except StopIteration:
                return
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                break  # a line Arrow cannot take: the rest is read block by block, line by line where needed
            lines = np.arange(done + 1, done + 1 + table.num_rows, dtype=np.int64)
            yield from _select(_spans(table, lines), columns)
            done += table.num_rows
            del table
            pa.default_memory_pool().release_unused()  # the allocator keeps a parsed block's pages else
        for first, block in _line_blocks(path, block_size, None, skip=done):
            table, lines = _parse_block(block, first, path, on_bad_line)
            if table is not None:
                yield from _select(_spans(table, lines), columns)
            pa.default_memory_pool().release_unused()


def span_schema() -> Any:
    """The Arrow schema of a batch of spans (:data:`SPAN_COLUMNS`)."""
    import pyarrow as pa

    _, attributes = _schemas()
    return pa.schema([("line", pa.int64()), ("trace_id", pa.string()), ("span_id", pa.string()),
                      ("parent_id", pa.string()), ("name", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                      ("service", pa.string()), ("attributes", attributes)])


def any_value(value: dict[str, Any] | None) -> Any:
    """The Python value of an OTLP AnyValue as Arrow read it (nulls for the absent members): a str, int,
    float, bool, list or dict; None when empty."""
    if not value:
        return None
    for name in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if value.get(name) is not None:
            return value[name]
    if value.get("intValue") is not None:
        text = str(value["intValue"])
        return int(text) if re.fullmatch(r"[+-]?\d+", text) else text
    array = value.get("arrayValue")
    if array is not None:
        return [any_value(v) for v in array.get("values") or ()]
    kvlist = value.get("kvlistValue")
    if kvlist is not None:
        return {kv["key"]: any_value(kv["value"]) for kv in kvlist.get("values") or ()}
    return None


def _select(batch: Any, columns: list[str] | None) -> Iterator[Any]:
    if batch.num_rows:
        yield batch if columns is None else batch.select(columns)


def _whole_document(path: str) -> Any:
    """The file's one JSON document when it is not one request per line (a request written with indents),
    else None."""
    from ragrade.io._common import first_line, open_binary

    first = first_line(path)
    if first is None or not first.lstrip().startswith(("{", "[")):
        return None
    try:
        json.loads(first)
        return None
    except ValueError:
        pass
    stream, raw = open_binary(path)
    try:
        with stream:
            return json.loads(stream.read().decode("utf-8", errors="replace"))
    except ValueError as exc:
        raise ParseError(f"not OTLP JSON: neither one export request per line nor one JSON document ({exc})",
                         path=path) from None
    finally:
        raw.close()


def _stream(path: str, block_size: int, progress: Any) -> Iterator[Any]:
    """Tables of export requests, Arrow's streaming JSON reader over the whole file (the fast path)."""
    import pyarrow as pa
    import pyarrow.json as pj

    from ragrade.io.formats.base import counting_stream

    schema, _ = _schemas()
    block_size = max(block_size, 2 * _longest_line(path, 8 << 20) + 2)  # Arrow's blocks hold whole lines
    src = counting_stream(path, progress)
    try:
        reader = pj.open_json(src, read_options=pj.ReadOptions(block_size=block_size),
                              parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
        pending: list[Any] = []
        for batch in reader:  # parsed in small blocks (Arrow's parse holds far more than the text), used in 8s
            pending.append(batch)
            if len(pending) == _GROUP:
                yield pa.Table.from_batches(pending)
                pending = []
        if pending:
            yield pa.Table.from_batches(pending)
    finally:
        src.close()


def _longest_line(path: str, head: int) -> int:
    """The longest line among the file's first ``head`` bytes (the whole first line, however long)."""
    from ragrade.io.formats.base import counting_stream

    src = counting_stream(path)
    try:
        data = src.read(head)
        while b"\n" not in data:
            more = src.read(head)
            if not more:
                break
            data += more
    finally:
        src.close()
    lines = data.split(b"\n")
    return max(len(line) for line in (lines[:-1] or lines))


def _line_blocks(path: str, block_size: int, progress: Any, skip: int = 0) -> Iterator[tuple[int, bytes]]:
    """``(number of the first line, whole lines)`` blocks of about ``block_size`` bytes, after the first
    ``skip`` non-blank lines."""
    from ragrade.io._common import MAX_LINE_BYTES, line_too_long
    from ragrade.io.formats.base import counting_stream

    src = counting_stream(path, progress)
    carry, line = b"", 1
    try:
        while True:
            chunk = src.read(block_size)
            data = carry + chunk
            cut = data.rfind(b"\n") if chunk else len(data) - 1
            if chunk and cut < 0:
                if len(data) > MAX_LINE_BYTES:
                    raise line_too_long(path, line)
                carry = data
                continue
            block, carry = data[:cut + 1], data[cut + 1:]
            if skip:
                block, skipped, skip = _skip_lines(block, skip)
                line += skipped
            if block.strip():
                yield line, block
            line += block.count(b"\n")
            if not chunk:
                return
    finally:
        src.close()


def _skip_lines(block: bytes, skip: int) -> tuple[bytes, int, int]:
    """``(rest of the block, lines dropped, still to skip)`` after dropping ``skip`` non-blank lines."""
    import numpy as np

    raw = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    solid = np.flatnonzero(~np.isin(raw, np.frombuffer(b" \t\r\n", dtype=np.uint8)))
    line_of = np.unique(np.searchsorted(ends, solid))  # the lines holding something
    if len(line_of) <= skip:
        return b"", block.count(b"\n"), skip - len(line_of)
    cut = int(ends[line_of[skip] - 1]) + 1 if line_of[skip] > 0 else 0
    return block[cut:], block[:cut].count(b"\n"), 0


def _parse_block(block: bytes, first: int, path: str, on_bad_line: BadLine | None) -> tuple[Any, Any]:
    """``(table of requests, the line of each)``: Arrow's parse, or line by line where Arrow refuses."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.json as pj

    raw = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    if len(ends) == 0 or ends[-1] != len(raw) - 1:
        ends = np.append(ends, len(raw))
    starts = np.concatenate(([0], ends[:-1] + 1))
    opens = (starts < len(raw)) & (raw[np.minimum(starts, len(raw) - 1)] == ord("{"))
    lines = first + np.flatnonzero(opens)
    longest = int((ends - starts).max()) if len(ends) else 0
    schema, _ = _schemas()
    try:
        table = pj.read_json(pa.BufferReader(block), read_options=pj.ReadOptions(block_size=max(1 << 20, longest + 2)),
                             parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
        if table.num_rows == len(lines):
            return table, lines
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    texts = [(first + i, bytes(raw[s:e])) for i, (s, e) in enumerate(zip(starts, ends, strict=True))]
    parsed = []
    for number, text in texts:
        if not text.strip():
            continue
        try:
            parsed.append((number, json.loads(text)))
        except ValueError as exc:
            _bad(path, number, f"not a complete JSON object ({exc})", text, on_bad_line)
    return _normalised(parsed, path, on_bad_line)


def _bad(path: str, line: int, message: str, text: bytes | str, on_bad_line: BadLine | None) -> None:
    shown = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    if on_bad_line is None:
        raise ParseError(message, path=path, line=line, text=shown[:200])
    on_bad_line(line, message, shown)


def _normalised(parsed: list[tuple[int, Any]], path: str, on_bad_line: BadLine | None) -> tuple[Any, Any]:
    """The requests of ``(line, JSON value)`` pairs with OTLP's types made uniform (int64 as text, NaN and
    infinities as numbers): the table Arrow's parse gives."""
    import numpy as np
    import pyarrow as pa

    rows, lines = [], []
    for number, obj in parsed:
        requests = obj if isinstance(obj, list) else [obj]
        for request in requests:
            try:
                rows.append(_request(request))
                lines.append(number)
            except (TypeError, ValueError, AttributeError, KeyError) as exc:
                _bad(path, number, f"not an OTLP export request ({exc})", json.dumps(request)[:200], on_bad_line)
    if not rows:
        return None, None
    schema, _ = _schemas()
    return pa.Table.from_pylist(rows, schema=schema), np.asarray(lines, dtype=np.int64)


def _request(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict) or not isinstance(obj.get("resourceSpans"), list):
        raise ValueError('no "resourceSpans" list')
    out = []
    for rs in obj["resourceSpans"]:
        resource = rs.get("resource") or {}
        scopes = [{"spans": [_span(s) for s in (ss.get("spans") or [])]} for ss in rs.get("scopeSpans") or []]
        out.append({"resource": {"attributes": _attributes(resource.get("attributes"))}, "scopeSpans": scopes})
    return {"resourceSpans": out}


def _span(s: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: None if s.get(k) is None else str(s[k])
                           for k in ("traceId", "spanId", "parentSpanId", "name")}
    for k in ("startTimeUnixNano", "endTimeUnixNano"):
        out[k] = None if s.get(k) is None else str(int(s[k]))
    out["attributes"] = _attributes(s.get("attributes"))
    return out


def _attributes(attrs: Any) -> list[dict[str, Any]]:
    return [{"key": str(a["key"]), "value": _value(a.get("value") or {}, 2)} for a in attrs or ()]


def _value(v: dict[str, Any], depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if v.get("stringValue") is not None:
        out["stringValue"] = str(v["stringValue"])
    if v.get("intValue") is not None:
        out["intValue"] = str(int(v["intValue"]))
    if v.get("doubleValue") is not None:
        out["doubleValue"] = float(v["doubleValue"])
    if v.get("boolValue") is not None:
        out["boolValue"] = bool(v["boolValue"])
    if v.get("bytesValue") is not None:
        out["bytesValue"] = str(v["bytesValue"])
    if depth == 0 and ("arrayValue" in v or "kvlistValue" in v):  # deeper than the schema: kept as JSON text
        out["stringValue"] = json.dumps(any_value_json(v))
    elif depth > 0:
        if isinstance(v.get("kvlistValue"), dict):
            out["kvlistValue"] = {"values": [{"key": str(kv["key"]), "value": _value(kv.get("value") or {}, 0)}
                                             for kv in v["kvlistValue"].get("values") or ()]}
        if depth == 2 and isinstance(v.get("arrayValue"), dict):
            out["arrayValue"] = {"values": [_value(x, 1) for x in v["arrayValue"].get("values") or ()]}
    return out


def any_value_json(v: dict[str, Any]) -> Any:
    """An AnyValue as written in the file (any depth), as a plain JSON value."""
    if "arrayValue" in v:
        return [any_value_json(x) for x in (v["arrayValue"] or {}).get("values") or ()]
    if "kvlistValue" in v:
        return {kv["key"]: any_value_json(kv.get("value") or {}) for kv in (v["kvlistValue"] or {}).get("values") or ()}
    return any_value(v)


def _spans(table: Any, lines: Any) -> Any:
    """One record batch, a row per span, from a table of export requests (``lines``: each request's line)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    requests = table.column("resourceSpans").combine_chunks()
    resources = pc.list_flatten(requests)
    scopes = pc.list_flatten(resources.field("scopeSpans"))
    spans = pc.list_flatten(scopes.field("spans"))
    scope_of = np.asarray(pc.list_parent_indices(scopes.field("spans")))
    resource_of = np.asarray(pc.list_parent_indices(resources.field("scopeSpans")))[scope_of]
    request_of = np.asarray(pc.list_parent_indices(requests))[resource_of]
    service = _service(resources.field("resource").field("attributes"))
    columns = [pa.array(np.asarray(lines)[request_of], type=pa.int64()), spans.field("traceId"),
               spans.field("spanId"), spans.field("parentSpanId"), spans.field("name"),
               _nanos(spans.field("startTimeUnixNano")), _nanos(spans.field("endTimeUnixNano")),
               service.take(pa.array(resource_of, type=pa.int64())), spans.field("attributes")]
    return pa.RecordBatch.from_arrays(columns, schema=span_schema())


def _service(attributes: Any) -> Any:
    """The ``service.name`` of every resource (null where it has none)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = pc.list_flatten(attributes)
    owner = np.asarray(pc.list_parent_indices(attributes))
    names = np.full(len(attributes), None, dtype=object)
    pick = np.flatnonzero(np.asarray(pc.equal(flat.field("key"), "service.name").fill_null(False)))
    names[owner[pick]] = np.asarray(flat.field("value").field("stringValue").take(pa.array(pick)), dtype=object)
    return pa.array(names, type=pa.string())


def _nanos(column: Any) -> Any:
    """Nanosecond timestamps written as text, as int64 (null where missing or not an integer)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ok = pc.match_substring_regex(column, r"^\s*[+-]?\d+\s*$").fill_null(False)
    clean = pc.if_else(ok, pc.utf8_trim_whitespace(column), pa.scalar(None, pa.string()))
    return pc.cast(clean, pa.int64())


OTLP = OtlpJson()
