"""One JSON document holding many records: an array of objects (``[{...}, {...}]``), or an object whose
``data`` array holds them (an API page such as Langfuse's ``{"data": [...], "meta": {...}}``; another key
whose value is the first array of objects at the top level is taken when there is no ``data``).

The records are streamed with ijson (a small, well-kept incremental JSON parser with a C backend): memory
holds one record, whatever the document's size. ijson is installed with ``pip install 'ragrade[traces]'``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragrade.errors import ParseError, require
from ragrade.io.formats.base import Format

_ROWS = 8192


class JsonDocument(Format):
    name = "jsondoc"
    aliases = ("json-document", "json_document")
    extensions = ()  # .json selects JSON Lines (which reads a small array whole); name this format to stream
    description = "one JSON document: an array of objects, or an object whose 'data' array holds them (streamed)"

    def rows(self, path: str, *, names: list[str] | None = None) -> Iterator[tuple[dict[str, Any], int | None]]:
        """Each object of the document's array (no line numbers: a document is not line-oriented)."""
        self._no_names(names)
        ijson = require("ijson", extra="traces", purpose="streaming a JSON document of records (Langfuse exports)")
        prefix = _prefix(path, ijson)
        from ragrade.io._common import open_binary

        stream, raw = open_binary(path)
        try:
            with stream:
                for item in ijson.items(stream, prefix, use_float=True):
                    if not isinstance(item, dict):
                        raise ParseError(f"the array holds a {type(item).__name__}, not objects", path=path)
                    yield item, None
        except ijson.JSONError as exc:
            raise ParseError(f"invalid JSON ({exc})", path=path) from None
        finally:
            raw.close()

    def records(self, path: str, *, strings: bool = False) -> Any:
        import pyarrow as pa

        return pa.Table.from_pylist([row for row, _ in self.rows(path)])

    def batches(self, path: str, columns: list[str] | None = None, *, names: list[str] | None = None,
                skip_rows: int = 0, block_size: int = 1 << 20, progress: Any = None) -> Iterator[Any]:
        """Record batches of about 8192 objects (``columns``: only these)."""
        import pyarrow as pa

        self._no_names(names, skip_rows)
        chunk: list[dict[str, Any]] = []
        for row, _ in self.rows(path):
            chunk.append(row if columns is None else {c: row.get(c) for c in columns})
            if len(chunk) == _ROWS:
                yield pa.RecordBatch.from_pylist(chunk)
                chunk = []
        if chunk:
            yield pa.RecordBatch.from_pylist(chunk)

    def column_names(self, path: str) -> list[str]:
        for row, _ in self.rows(path):
            return list(row)
        return []


def _prefix(path: str, ijson: Any) -> str:
    """ijson's prefix of the records: ``item`` (a top-level array), ``data.item``, or the first top-level key
    holding an array."""
    from ragrade.io._common import open_binary

    stream, raw = open_binary(path)
    try:
        with stream:
            events = ijson.parse(stream)
            _, event, _ = next(events, (None, None, None))
            if event == "start_array":
                return "item"
            if event != "start_map":
                raise ParseError("a JSON document of records must be an array or an object", path=path)
            return _array_key(events, path)
    except ijson.JSONError as exc:
        raise ParseError(f"invalid JSON ({exc})", path=path) from None
    finally:
        raw.close()


def _array_key(events: Iterator[tuple[str, str, Any]], path: str) -> str:
    first: str | None = None
    key = None
    for prefix, event, value in events:
        if prefix == "" and event == "map_key":
            key = value
        elif event == "start_array" and prefix == key and key is not None:
            if key == "data":
                return "data.item"
            first = first or f"{key}.item"
        elif prefix == "" and event == "end_map":
            break
    if first is None:
        raise ParseError("the JSON object holds no array of records (expected a 'data' array)", path=path)
    return first


def _head(path: str, size: int = 1 << 12) -> str:
    """The first ``size`` bytes of a (decompressed) file, as text."""
    from ragrade.io._common import open_binary

    stream, raw = open_binary(path)
    try:
        with stream:
            return stream.read(size).decode("utf-8", errors="replace")
    finally:
        raw.close()


def json_layout(path: str) -> str:
    """How a JSON file holds its records, from its first line: ``"otlp"`` (OTLP export requests, one per
    line), ``"jsondoc"`` (one document: an array, an object written over several lines, or an API page
    ``{"data": [...]}`` on one line) or ``"jsonl"`` (one object per line)."""
    import json

    from ragrade.io._common import first_line
    from ragrade.io.formats.otlp import OTLP

    line = (first_line(path) or "").lstrip()
    if OTLP.sniff(b"", line) or (line.startswith("{") and OTLP.sniff(b"", _head(path))):
        return "otlp"  # one request per line, or one written over several lines
    if line.startswith("["):
        return "jsondoc"
    if line.startswith("{"):
        try:
            value = json.loads(line)
        except ValueError:
            return "jsondoc"  # an object written over several lines
        if isinstance(value, dict) and isinstance(value.get("data"), list):
            return "jsondoc"
    return "jsonl"


JSONDOC = JsonDocument()
