"""OTLP spans (:mod:`ragrade.io.formats.otlp`'s batches) read into the normalised span tables, column by
column: the attribute keys of a batch are dictionary-coded once, each distinct key is classified once
(:func:`ragrade.traces.conventions.classify`), and every value is then taken by NumPy and Arrow indexing,
with no Python object per span or per document.

A span that needs more than a column lookup is handed to the record reader (:mod:`ragrade.traces.records`)
with its attributes as a dict: documents written as one JSON string or as OTLP's array of key/value lists
(GenAI), documents without ``document.id`` (LangChain's instrumentor: the ids are in ``output.value``), a
join key inside a JSON attribute (``metadata.example_id``), a query written as JSON (LlamaIndex's inner
retriever span).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ragrade.traces import conventions as cv
from ragrade.traces.notes import Notes
from ragrade.traces.records import Records, doc_schema, span_schema

_MAX_POSITION = 1 << 24


class _Attrs(NamedTuple):
    """The attributes of a batch, flattened: one row per (span, attribute)."""

    owner: np.ndarray  # the span of each attribute
    role: np.ndarray
    list: np.ndarray
    position: np.ndarray
    field: np.ndarray
    values: Any  # the value structs (Arrow)


def read_batch(batch: Any, user_key: str | None, notes: Notes, keep_roots: bool = False) -> tuple[Any, Any]:
    """``(spans, documents)``: the normalised tables of one batch of OTLP spans (``keep_roots``: root spans
    are kept even when they carry nothing else, for their question)."""
    import pyarrow as pa

    n = batch.num_rows
    a = _attributes(batch.column("attributes"), user_key)
    special = _special(a, n)
    records = Records(user_key, notes, keep_roots)
    if special.any():
        _records(batch, a, np.flatnonzero(special), records)
    spans, docs = _columns(batch, a, ~special, keep_roots)
    extra_spans, extra_docs = records.block()
    if extra_spans.num_rows:
        extra_docs = extra_docs.set_column(0, "span", pa.array(np.asarray(extra_docs.column("span")) +
                                                               spans.num_rows, type=pa.int64()))
        spans = pa.concat_tables([spans, extra_spans])
        docs = pa.concat_tables([docs, extra_docs])
    return spans, docs


def _attributes(column: Any, user_key: str | None) -> _Attrs:
    import pyarrow.compute as pc

    flat = pc.list_flatten(column)
    owner = np.asarray(pc.list_parent_indices(column), dtype=np.int64)
    encoded = pc.dictionary_encode(flat.field("key"))
    codes = np.asarray(encoded.indices.fill_null(-1), dtype=np.int64)
    meanings = [cv.classify(str(k), user_key) for k in encoded.dictionary.to_pylist()] + [cv.Meaning(cv.NONE)]
    table = np.asarray(meanings, dtype=np.int64).reshape(-1, 4)
    role, lst, pos, fld = (table[codes, i] for i in range(4))
    return _Attrs(owner, role, lst, pos, fld, flat.field("value"))


def _first(a: _Attrs, mask: np.ndarray, n: int) -> np.ndarray:
    """Per span, the first attribute row where ``mask`` holds (-1 where none)."""
    rows = np.flatnonzero(mask)
    out = np.full(n, -1, dtype=np.int64)
    out[a.owner[rows][::-1]] = rows[::-1]
    return out


def _text(values: Any, rows: np.ndarray) -> Any:
    """The values of attribute ``rows`` as text (null at -1): a string, an int, a float or a bool."""
    import pyarrow as pa
    import pyarrow.compute as pc

    idx = pa.array(rows, type=pa.int64(), mask=rows < 0)
    parts = [values.field("stringValue").take(idx), values.field("intValue").take(idx),
             pc.cast(values.field("doubleValue").take(idx), pa.string()),
             pc.cast(values.field("boolValue").take(idx), pa.string())]
    return pc.coalesce(*parts)


def _number(values: Any, rows: np.ndarray) -> np.ndarray:
    """The values of attribute ``rows`` as float64 (NaN at -1 or where not a number)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    idx = pa.array(rows, type=pa.int64(), mask=rows < 0)
    out = np.array(values.field("doubleValue").take(idx).fill_null(np.nan), dtype=np.float64)  # a writable copy
    ints = values.field("intValue").take(idx)
    has = np.asarray(ints.is_valid())
    if has.any():
        text = pc.if_else(pc.match_substring_regex(ints, r"^[+-]?\d+$").fill_null(False), ints, None)
        out[has] = np.asarray(pc.cast(text, pa.float64()).fill_null(np.nan))[has]
    return out


def _special(a: _Attrs, n: int) -> np.ndarray:
    """Spans the record reader reads (see the module's docstring)."""
    import pyarrow.compute as pc

    out = np.zeros(n, dtype=bool)
    out[a.owner[(a.role == cv.DOCS) | (a.role == cv.KEY_PART)]] = True
    docs = np.flatnonzero(a.role == cv.DOC)
    if len(docs):  # a list whose documents have contents, metadata or scores but fewer ids
        group = a.owner[docs] * 3 + a.list[docs]
        field = a.field[docs]
        width = 3 * n
        ids = np.bincount(group[field == 0], minlength=width)
        most = np.max([np.bincount(group[field == f], minlength=width) for f in (1, 2, 3)], axis=0)
        out[np.flatnonzero(most > ids) // 3] = True
    text = _text(a.values, _first(a, a.role == cv.QUERY, n))
    out |= np.asarray(pc.match_substring_regex(text, r"^\s*[\[{]").fill_null(False))
    return out


def _doc_keys(a: _Attrs, mask: np.ndarray) -> np.ndarray:
    """One int64 per (span, list, position) of the document attributes in ``mask``."""
    return (a.owner[mask] * 3 + a.list[mask]) * _MAX_POSITION + np.minimum(a.position[mask], _MAX_POSITION - 1)


def _records(batch: Any, a: _Attrs, spans: np.ndarray, records: Records) -> None:
    """The special ``spans`` of the batch, read one by one as flattened attributes."""
    import pyarrow as pa

    from ragrade.io.formats.otlp import any_value

    wanted = np.zeros(batch.num_rows, dtype=bool)
    wanted[spans] = True
    rows = np.flatnonzero(wanted[a.owner])
    keys = batch.column("attributes").flatten().field("key").take(pa.array(rows)).to_pylist()
    values = a.values.take(pa.array(rows)).to_pylist()
    attrs: dict[int, dict[str, Any]] = {int(s): {} for s in spans}
    for owner, key, value in zip(a.owner[rows].tolist(), keys, values, strict=True):
        if key is not None:
            attrs[owner][key] = any_value(value)
    meta = batch.select(["line", "trace_id", "span_id", "parent_id", "name", "start", "end"]).take(pa.array(spans))
    for s, row in zip(spans.tolist(), meta.to_pylist(), strict=True):
        records.add(line=row["line"], trace=row["trace_id"], span=row["span_id"], parent=row["parent_id"],
                    name=row["name"], start=row["start"], end=row["end"], attrs=attrs[s])


def _role(a: _Attrs, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each span's role and convention from its kind (OpenInference) and operation (GenAI) attributes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = pc.utf8_upper(pc.utf8_trim_whitespace(_text(a.values, _first(a, a.role == cv.KIND, n))))
    op = pc.utf8_lower(pc.utf8_trim_whitespace(_text(a.values, _first(a, a.role == cv.OPERATION, n))))

    def eq(arr: Any, *words: str) -> np.ndarray:
        return np.asarray(pc.is_in(arr, value_set=pa.array(list(words))).fill_null(False))

    has_kind = np.asarray(kind.is_valid())
    has_op = np.asarray(op.is_valid())
    role = np.zeros(n, dtype=np.int8)
    role[eq(op, "retrieval")] = cv.RETRIEVAL
    role[eq(op, "rerank", "reranking")] = cv.RERANKER
    role[has_kind] = cv.OTHER
    role[eq(kind, "RETRIEVER")] = cv.RETRIEVAL
    role[eq(kind, "RERANKER")] = cv.RERANKER
    convention = np.where(has_kind, cv.OPENINFERENCE, np.where(has_op, cv.GENAI, 0)).astype(np.int8)
    return role, convention


def _columns(batch: Any, a: _Attrs, use: np.ndarray, keep_roots: bool) -> tuple[Any, Any]:
    """The normalised tables of the spans in ``use`` that matter (the columnar path)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = batch.num_rows
    role, convention = _role(a, n)
    session = _text(a.values, _first(a, a.role == cv.SESSION, n))
    key = _text(a.values, _first(a, a.role == cv.KEY, n))
    tokens = _number(a.values, _first(a, (a.role == cv.TOKENS) & (a.field != 1), n))
    part_rows = np.flatnonzero((a.role == cv.TOKENS) & (a.field == 1))
    parts = np.bincount(a.owner[part_rows], weights=np.nan_to_num(_number(a.values, part_rows)), minlength=n)
    has_parts = np.bincount(a.owner[part_rows], minlength=n) > 0
    tokens = np.where(np.isnan(tokens) & has_parts, parts, tokens)
    cost = _number(a.values, _first(a, a.role == cv.COST, n))
    parent = batch.column("parent_id")
    root = np.asarray(pc.equal(parent, "").fill_null(True))
    keep = use & ((role != cv.OTHER) | np.asarray(session.is_valid()) | np.asarray(key.is_valid())
                  | ~np.isnan(tokens) | ~np.isnan(cost) | (root & keep_roots))
    take = pa.array(np.flatnonzero(keep), type=pa.int64())
    query = _text(a.values, _first(a, a.role == cv.QUERY, n))
    rerank_query = _text(a.values, _first(a, a.role == cv.RERANK_QUERY, n))
    query = pc.coalesce(rerank_query, query)
    cols = [batch.column("line"), batch.column("trace_id"), batch.column("span_id"),
            pc.if_else(pa.array(root), pa.scalar(None, pa.string()), parent), batch.column("name"),
            batch.column("start"), batch.column("end"), pa.array(role), pa.array(convention), query, session, key,
            pa.array(tokens, from_pandas=True), pa.array(cost, from_pandas=True),
            _text(a.values, _first(a, a.role == cv.SOURCE, n))]
    spans = pa.Table.from_arrays([c.take(take) for c in cols], schema=span_schema())
    return spans, _docs(a, keep)


def _docs(a: _Attrs, keep: np.ndarray) -> Any:
    """The documents (id and score by position) of the kept spans, renumbered to their rows."""
    import pyarrow as pa

    row_of = np.cumsum(keep) - 1
    kept = keep[a.owner] & (a.role == cv.DOC)
    id_mask = kept & (a.field == 0)
    score_mask = kept & (a.field == 1)
    ids = np.flatnonzero(id_mask)
    scores = _lookup(_doc_keys(a, score_mask), np.flatnonzero(score_mask), _doc_keys(a, id_mask))
    order = np.lexsort((a.position[ids], a.list[ids], a.owner[ids]))
    ids, scores = ids[order], scores[order]
    return pa.Table.from_arrays(
        [pa.array(row_of[a.owner[ids]], type=pa.int64()), pa.array(a.list[ids].astype(np.int8)),
         pa.array(a.position[ids].astype(np.int32)), _text(a.values, ids),
         pa.array(_number(a.values, scores), from_pandas=True)], schema=doc_schema())


def _lookup(keys: np.ndarray, rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each of ``wanted``, the row whose key equals it (-1 where none)."""
    if len(keys) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], wanted), len(order) - 1)
    return np.where(keys[order][at] == wanted, rows[order][at], -1)
