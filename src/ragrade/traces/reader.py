"""``ragrade.read_traces``: traces in, :class:`~ragrade.traces.model.Traces` out (docs/traces.md).

Every file goes through the format registry (:mod:`ragrade.io.formats`): OTLP JSON (one export request
per line, :mod:`ragrade.io.formats.otlp`), JSON Lines / Parquet / CSV / Arrow of span rows (Phoenix,
the SDK's JSON) or of Langfuse observations, one JSON document of them (:mod:`ragrade.io.formats.jsondoc`,
streamed). What the file holds is told by its first line or its columns; each block read is reduced to
the normalised span tables at once (memory holds the spans that matter and their document ids, never the
parsed file).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from ragrade.errors import InputError, RagradeWarning, boundary
from ragrade.traces.build import KEY_MODES, assemble
from ragrade.traces.model import Traces
from ragrade.traces.notes import Notes
from ragrade.traces.records import Records

#: How trajectories are formed.
BY = ("trace", "session")


@boundary
def read_traces(source: Any, *, key: str | None = None, by: str | None = None, topics: Any = None,
                format: str | None = None, progress: Any = None) -> Traces:
    """Read traces (a file, a Phoenix span DataFrame, or a list of Langfuse observations) into runs.

    ``key`` is what joins a trace to the ground truth: ``"trace"`` (the trace id, the default),
    ``"session"`` (the session id), ``"question"`` (the trace's question, the root span's input, matched
    against ``topics``: a topics file or ``{query id: text}``, case and spacing ignored) or the name of a
    span attribute (``"example.id"``, ``"metadata.example_id"``: a dotted path into a JSON attribute works
    too). ``by``: ``"trace"`` (each trace is a trajectory) or ``"session"`` (each session is one; the
    default when ``key="session"``). ``format``: the registry's name of the file's format (default: told by
    its extension and content); ``progress(done, total)`` is told of bytes read.

    Notes about what the traces hold that was odd (truncated lines, spans without documents, documents as
    JSON strings, conventions mixed, times backwards, traces without key) are counted, naming spans, in
    ``traces.notes``, and emitted once as a :class:`~ragrade.errors.RagradeWarning`.
    """
    mode = _check(key, by)
    topic_map = _topics(topics) if key == "question" else None
    notes = Notes()
    user_key = None if key in KEY_MODES or key is None else key
    blocks = list(_blocks(source, user_key, notes, format, progress, question=key == "question"))
    spans, docs = _concat(blocks)
    del blocks
    if spans.num_rows == 0 or not (spans.column("role").to_numpy() > 0).any():
        where = f"{os.fspath(source)}: " if isinstance(source, str | os.PathLike) else ""
        raise InputError(f"{where}no retrieval or reranker span found (OpenInference RETRIEVER/RERANKER, "
                         "GenAI retrieval, Langfuse RETRIEVER); see docs/traces.md" + _said(notes))
    traces = assemble(spans, docs, key=key, by=mode, topics=topic_map, notes=notes)
    _release()
    if traces.notes:
        warnings.warn("; ".join(traces.notes), RagradeWarning, stacklevel=3)
    return traces


def _said(notes: Notes) -> str:
    lines = notes.lines()
    return f" ({'; '.join(lines)})" if lines else ""


def _release() -> None:
    """Give the pages Arrow's allocator keeps after a block back to the system."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _check(key: str | None, by: str | None) -> str:
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise InputError("key must be 'trace', 'session', 'question' or the name of a span attribute", value=key)
    if by is None:
        return "session" if key == "session" else "trace"
    if by not in BY:
        raise InputError("by must be 'trace' or 'session'", value=by)
    return by


def _topics(topics: Any) -> dict[str, str]:
    if topics is None:
        raise InputError("key='question' matches each trace's question against topics: give topics= (a topics "
                         "file or {query id: text})")
    if isinstance(topics, Mapping):
        return {str(k): str(v) for k, v in topics.items()}
    from ragrade.io.texts import read_queries

    return read_queries(topics)


def _concat(blocks: list[tuple[Any, Any]]) -> tuple[Any, Any]:
    """The blocks' span tables and document tables, each document's span renumbered to the whole table."""
    import numpy as np
    import pyarrow as pa

    from ragrade.traces.records import doc_schema, span_schema

    spans, docs, offset = [], [], 0
    for s, d in blocks:
        spans.append(s)
        docs.append(d.set_column(0, "span", pa.array(np.asarray(d.column("span"), dtype=np.int64) + offset,
                                                        type=pa.int64())))
        offset += s.num_rows
    if not spans:
        return span_schema().empty_table(), doc_schema().empty_table()
    return pa.concat_tables(spans), pa.concat_tables(docs)  # (chunked: no copy)


def _blocks(source: Any, user_key: str | None, notes: Notes, format: str | None, progress: Any,
            question: bool = False) -> Iterator[tuple[Any, Any]]:
    """The normalised tables of ``source``, block by block."""
    from ragrade.engine.inputs import is_path

    records = Records(user_key, notes, keep_roots=question)
    if is_path(source):
        yield from _file_blocks(os.fspath(source), user_key, notes, records, format, progress)
    elif hasattr(source, "itertuples") and hasattr(source, "columns"):
        from ragrade.traces.rows import frame_rows

        yield from _row_blocks(frame_rows(source), list(source.columns), records, notes)
    elif isinstance(source, list | tuple):
        rows = ((r, i + 1) for i, r in enumerate(source))
        first = source[0] if source and isinstance(source[0], Mapping) else {}
        yield from _row_blocks(rows, list(first), records, notes)
    else:
        raise InputError("traces must be a file, a Phoenix span DataFrame or a list of span or observation dicts",
                         value=type(source).__name__)


def _row_blocks(rows: Iterator[tuple[Mapping[str, Any], int | None]], names: list[str], records: Records,
                notes: Notes) -> Iterator[tuple[Any, Any]]:
    from ragrade.traces.langfuse import is_langfuse, observation_rows
    from ragrade.traces.rows import span_rows

    if is_langfuse(names):
        yield from observation_rows(rows, records, notes)
    else:
        yield from span_rows(rows, records, notes)


def _file_blocks(path: str, user_key: str | None, notes: Notes, records: Records, format: str | None,
                 progress: Any) -> Iterator[tuple[Any, Any]]:
    from ragrade.io import formats
    from ragrade.io.formats.otlp import OtlpJson

    fmt = formats.detect(path, format)
    if fmt.name == "jsonl" and format is None:
        fmt = _json_kind(path)
    if fmt.layout is not None:
        raise InputError(f"{path}: a {fmt.name} file holds no traces; read_traces reads OTLP JSON, spans as JSON "
                         "Lines, Parquet or CSV (Phoenix), Langfuse exports (docs/traces.md)")
    if isinstance(fmt, OtlpJson):
        from ragrade.traces.otlp import read_batch

        def bad(line: int, message: str, text: str) -> None:
            notes.add("bad_line", f"line {line}{_span_hint(text)}")

        for batch in fmt.batches(path, progress=progress, on_bad_line=bad):
            yield read_batch(batch, user_key, notes, records.keep_roots)
            del batch
            _release()
        return
    rows = _rows(fmt, path)
    first = next(rows, None)
    if first is None:
        return
    yield from _row_blocks(_chain(first, rows), list(first[0]), records, notes)


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _rows(fmt: Any, path: str) -> Iterator[tuple[dict[str, Any], int | None]]:
    """Records of a file of rows, as its format reads them (streamed where it streams)."""
    yield from fmt.rows(path)


def _json_kind(path: str) -> Any:
    """The format of a ``.json`` / ``.jsonl`` file of traces, told by its first line
    (:func:`ragrade.io.formats.jsondoc.json_layout`)."""
    from ragrade.io import formats
    from ragrade.io.formats.jsondoc import json_layout

    return formats.get(json_layout(path))


def _span_hint(text: str) -> str:
    """The first span id found in a line that could not be read (a hint, not a parse)."""
    import re

    m = re.search(r'"spanId"\s*:\s*"([0-9A-Za-z+/=]+)"', text)
    return f" (first span {m.group(1)})" if m else ""
