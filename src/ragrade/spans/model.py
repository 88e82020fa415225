"""The data of span evaluation (docs/spans.md): gold spans, chunk maps and the documents they point into.

* :class:`SpanTruth` — ground truth that survives re-chunking: rows ``(query, doc, start, end[, grade])``,
  offsets in code points of the document's text, half-open (``text[start:end]``), optionally with the
  span's text (checked against the document) and each query's question.
* :class:`ChunkMap` — a chunking: rows ``(chunk_id, doc, start, end)`` (optionally the chunk's text).
* :class:`Corpus` — the documents: ``{doc id: text}`` in a stable order.

All three are immutable columnar objects (NumPy arrays, never mutated); ``rows`` keeps the 1-based record
number of each row in its file, so that every error names the row.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragrade.errors import InputError, RagradeWarning


def _frozen(a: Any, dtype: Any) -> np.ndarray:
    out = np.array(a, dtype=dtype)
    out.setflags(write=False)
    return out


def _where(source: str, rows: np.ndarray | None, i: int) -> str:
    row = int(rows[i]) if rows is not None else i + 1
    return f"{source}, row {row}" if source else f"row {row}"


class Corpus(Mapping[str, str]):
    """The documents spans and chunks point into: ``{doc id: text}`` (a mapping, in its order). Offsets are
    code points of these texts. ``source`` names where they came from (a folder, a file)."""

    def __init__(self, texts: Mapping[str, str], source: str = "") -> None:
        bad = next((d for d, t in texts.items() if not isinstance(t, str)), None)
        if bad is not None:
            raise InputError("every document's text must be a string", item=str(bad),
                             value=type(texts[bad]).__name__)
        self._texts = {str(d): t for d, t in texts.items()}
        self.source = source

    def __getitem__(self, doc: str) -> str:
        return self._texts[doc]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    @property
    def characters(self) -> int:
        """The total length of the documents (code points)."""
        return sum(len(t) for t in self._texts.values())

    def empty_documents(self) -> list[str]:
        return [d for d, t in self._texts.items() if not t]

    def __repr__(self) -> str:
        return f"Corpus({len(self)} documents, {self.characters} characters)"


@dataclass(frozen=True, eq=False)
class SpanTruth:
    """Gold character spans: one row per span (see the module docstring). ``questions``: query id -> the
    question's text, where the input has it (Chroma's ``questions_df.csv``)."""

    query: np.ndarray
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    grade: np.ndarray
    text: np.ndarray | None = None
    questions: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    rows: np.ndarray | None = None

    @classmethod
    def from_columns(cls, query: Any, doc: Any, start: Any, end: Any, grade: Any = None, text: Any = None, *,
                     questions: Mapping[str, str] | None = None, source: str = "",
                     rows: Any = None) -> SpanTruth:
        """From per-row columns (validated: ``0 <= start < end`` integers, non-empty ids)."""
        n = len(query)
        if not (len(doc) == len(start) == len(end) == n) or (grade is not None and len(grade) != n) or \
                (text is not None and len(text) != n):
            raise InputError("span columns must have the same length")
        rows_a = None if rows is None else _frozen(rows, np.int64)
        q, q_arrow = _ids_and_arrow(query, "query id", source, rows_a)
        d, d_arrow = _ids_and_arrow(doc, "document id", source, rows_a)
        s, e = _offsets(start, end, source, rows_a, q, d)
        g = _frozen(np.ones(n) if grade is None else _grades(grade, source, rows_a), np.float64)
        t = None if text is None else _frozen([None if x is None else str(x) for x in text], object)
        out = cls(q, d, s, e, g, t, dict(questions or {}), source, rows_a)
        # derived views kept beside the frozen fields, as functools.cached_property keeps its values
        out.__dict__["_coded"] = (Coded.of(q, q_arrow), Coded.of(d, d_arrow))
        return out

    # -- views ----------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.query)

    @property
    def queries(self) -> list[str]:
        """The query ids in order of first appearance."""
        return self.query_codes.names.tolist()

    @property
    def documents(self) -> list[str]:
        return self.doc_codes.names.tolist()

    @property
    def query_codes(self) -> Coded:
        """The query ids dictionary-encoded (made once, with the truth)."""
        return self._codes()[0]

    @property
    def doc_codes(self) -> Coded:
        """The document ids dictionary-encoded (made once, with the truth)."""
        return self._codes()[1]

    def extents(self) -> np.ndarray:
        """The furthest end of each document's spans, per document of :attr:`doc_codes` (made once)."""
        return _group_max(self, self.doc_codes, self.end)

    def _codes(self) -> tuple[Coded, Coded]:
        cached = self.__dict__.get("_coded")
        if cached is None:
            cached = (Coded.of(self.query), Coded.of(self.doc))
            self.__dict__["_coded"] = cached
        return cached

    def where(self, i: int) -> str:
        """Where row ``i`` came from (``spans.jsonl, row 12``)."""
        return _where(self.source, self.rows, i)

    def to_rows(self) -> list[dict[str, Any]]:
        out = []
        for i in range(len(self)):
            row: dict[str, Any] = {"query": self.query[i], "doc": self.doc[i], "start": int(self.start[i]),
                                   "end": int(self.end[i]), "grade": float(self.grade[i])}
            if self.text is not None and self.text[i] is not None:
                row["text"] = self.text[i]
            out.append(row)
        return out

    # -- checks ---------------------------------------------------------------------------------------
    def check(self, corpus: Mapping[str, str] | None = None, *, overlapping: str = "note") -> None:
        """Check the spans against the documents (when given): a span of an unknown document, past the end
        of its document, or whose text differs from the document's is an :class:`InputError` naming the row,
        query, document and offsets. Overlapping spans of one query: ``overlapping`` = ``"note"`` (a
        :class:`RagradeWarning` naming the rows), ``"error"`` or ``"ignore"``."""
        if corpus is not None:
            _check_against(self, corpus)
        elif self.text is not None:
            _check_text_lengths(self)
        if overlapping != "ignore":
            _check_overlaps(self, overlapping)

    def __repr__(self) -> str:
        return f"SpanTruth({len(set(self.query.tolist()))} queries, {len(self)} spans)"


@dataclass(frozen=True, eq=False)
class ChunkMap:
    """A chunking: where every chunk lies, ``(chunk_id, doc, start, end)`` per row (see the module
    docstring). ``name``: the chunking's name (a chunker's description, a file name)."""

    chunk_id: np.ndarray
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    text: np.ndarray | None = None
    name: str = ""
    source: str = ""
    rows: np.ndarray | None = None
    #: how the chunks were located (:func:`ragrade.spans.locate_chunks`; None for a given map)
    report: Any = None

    @classmethod
    def from_columns(cls, chunk_id: Any, doc: Any, start: Any, end: Any, text: Any = None, *, name: str = "",
                     source: str = "", rows: Any = None, report: Any = None) -> ChunkMap:
        """From per-row columns (validated: distinct chunk ids, ``0 <= start <= end`` integers)."""
        n = len(chunk_id)
        if not (len(doc) == len(start) == len(end) == n) or (text is not None and len(text) != n):
            raise InputError("chunk map columns must have the same length")
        rows_a = None if rows is None else _frozen(rows, np.int64)
        c, c_arrow = _ids_and_arrow(chunk_id, "chunk id", source, rows_a)
        d, d_arrow = _ids_and_arrow(doc, "document id", source, rows_a)
        s, e = _offsets(start, end, source, rows_a, None, d, allow_empty=True)
        _check_distinct(c, source, rows_a, c_arrow)
        t = None if text is None else _frozen([None if x is None else str(x) for x in text], object)
        out = cls(c, d, s, e, t, name, source, rows_a, report)
        if c_arrow is not None:
            out.__dict__["_ids"] = c_arrow
        out.__dict__["_coded"] = Coded.of(d, d_arrow)
        return out

    def __len__(self) -> int:
        return len(self.chunk_id)

    @property
    def lengths(self) -> np.ndarray:
        return self.end - self.start

    @property
    def index_characters(self) -> int:
        """The characters an index of these chunks holds (overlaps counted every time)."""
        return int(self.lengths.sum())

    @property
    def mean_length(self) -> float:
        return float(self.lengths.mean()) if len(self) else float("nan")

    def where(self, i: int) -> str:
        return _where(self.source, self.rows, i)

    def positions(self, ids: Any) -> np.ndarray:
        """The row of each chunk id (-1 where the map has no such chunk): one hash lookup per id (Arrow)."""
        from ragrade.spans.lookup import positions_of

        return positions_of(ids, self.id_array)

    @property
    def doc_codes(self) -> Coded:
        """The document ids dictionary-encoded (made once, with the map)."""
        cached = self.__dict__.get("_coded")
        if cached is None:
            cached = Coded.of(self.doc)
            self.__dict__["_coded"] = cached
        return cached

    def extents(self) -> np.ndarray:
        """The furthest end of each document's chunks, per document of :attr:`doc_codes` (made once)."""
        return _group_max(self, self.doc_codes, self.end)

    @property
    def id_array(self) -> Any:
        """The chunk ids as an Arrow string array (built once, for lookups)."""
        cached = self.__dict__.get("_ids")
        if cached is None:
            import pyarrow as pa

            cached = pa.array(self.chunk_id.tolist(), type=pa.string())
            self.__dict__["_ids"] = cached
        return cached

    def check(self, corpus: Mapping[str, str]) -> None:
        """A chunk of an unknown document, past its end, or whose text differs from the document's is an
        :class:`InputError` naming the row."""
        for i in range(len(self)):
            doc, s, e = self.doc[i], int(self.start[i]), int(self.end[i])
            if doc not in corpus:
                raise InputError(f"{self.where(i)}: chunk {self.chunk_id[i]!r} points into document {doc!r}, "
                                 "which the corpus does not have")
            if e > len(corpus[doc]):
                raise InputError(f"{self.where(i)}: chunk {self.chunk_id[i]!r} ends at {e}, past the end of "
                                 f"document {doc!r} ({len(corpus[doc])} characters)")
            if self.text is not None and self.text[i] is not None and corpus[doc][s:e] != self.text[i]:
                raise InputError(f"{self.where(i)}: the text of chunk {self.chunk_id[i]!r} is not the text of "
                                 f"document {doc!r} at [{s}, {e})")

    def __repr__(self) -> str:
        nm = f"{self.name!r}, " if self.name else ""
        return f"ChunkMap({nm}{len(self)} chunks over {len(set(self.doc.tolist()))} documents)"


# -- validation helpers ------------------------------------------------------------------------------------

def _fast_strings(values: Any) -> np.ndarray | None:
    """The values as an object array of non-empty strings in one vectorised pass (strings only, no blank
    one), else None (the row-by-row check then names the bad row)."""
    arr = _fast_arrow(values)
    return None if arr is None else np.asarray(arr.to_numpy(zero_copy_only=False), dtype=object)


def _fast_arrow(values: Any) -> Any:
    """The values as an Arrow string array when they are all non-blank strings (one vectorised pass), else
    None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, np.ndarray) and values.dtype.kind not in "OU":
        return None
    try:
        arr = pa.array(values, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count or (len(arr) and pc.any(pc.equal(pc.utf8_trim_whitespace(arr), "")).as_py()):
        return None
    return arr


@dataclass(frozen=True, eq=False)
class Coded:
    """Ids dictionary-encoded: ``codes[i]`` is row ``i``'s position in ``names`` (the distinct ids in order of
    first appearance); ``arrow``: ``names`` as an Arrow string array (for hash lookups)."""

    codes: np.ndarray
    names: np.ndarray
    arrow: Any

    @classmethod
    def of(cls, ids: np.ndarray, arrow: Any = None) -> Coded:
        """From an object array of str (and the same ids as an Arrow array, when at hand)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = pa.array(ids.tolist(), type=pa.string()) if arrow is None else arrow
        enc = pc.dictionary_encode(arr)
        codes = _frozen(enc.indices.to_numpy(zero_copy_only=False), np.int64)
        names = _frozen(enc.dictionary.to_numpy(zero_copy_only=False), object)
        return cls(codes, names, enc.dictionary)


def _group_max(owner: Any, coded: Coded, values: np.ndarray) -> np.ndarray:
    """The largest of ``values`` per id of ``coded`` (0 at least), kept on ``owner`` (immutable) once made."""
    cached = owner.__dict__.get("_extents")
    if cached is None:
        cached = np.zeros(len(coded.names), dtype=np.int64)
        if len(coded.names) <= 8:  # (a few passes beat ufunc.at, whose speed varies)
            for d in range(len(coded.names)):
                cached[d] = values[coded.codes == d].max(initial=0)
        else:
            np.maximum.at(cached, coded.codes, values)
        cached.setflags(write=False)
        owner.__dict__["_extents"] = cached
    return cached


def _ids_and_arrow(values: Any, what: str, source: str, rows: np.ndarray | None) -> tuple[np.ndarray, Any]:
    """:func:`_ids`, and the same ids as an Arrow string array when the fast path made one (else None)."""
    arrow = _fast_arrow(values)
    if arrow is None:
        return _ids(values, what, source, rows), None
    out = np.asarray(arrow.to_numpy(zero_copy_only=False), dtype=object)
    out.setflags(write=False)
    return out, arrow


def _ids(values: Any, what: str, source: str, rows: np.ndarray | None) -> np.ndarray:
    out = _fast_strings(values)
    if out is None:
        out = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):
            if v is None or (isinstance(v, float) and v != v) or str(v).strip() == "":
                raise InputError(f"{_where(source, rows, i)}: empty {what}")
            out[i] = str(v)
    out.setflags(write=False)
    return out


def _integer(v: Any, what: str, where: str) -> int:
    if isinstance(v, bool):
        raise InputError(f"{where}: {what} must be an integer offset", value=v)
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v.strip())
    raise InputError(f"{where}: {what} must be an integer offset", value=v)


def _fast_integers(values: Any) -> np.ndarray | None:
    """Integer offsets as int64 in one pass (an integer array, or digits as text), else None."""
    arr = np.asarray(values) if not isinstance(values, list) or not values or not isinstance(values[0], str) \
        else np.asarray(values, dtype=object)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f" and np.isfinite(arr).all() and (arr == np.floor(arr)).all():
        return arr.astype(np.int64)
    if arr.dtype.kind in "OU" and len(arr):
        import pyarrow as pa
        import pyarrow.compute as pc

        try:
            text = pa.array(arr.tolist(), type=pa.string())
            if text.null_count or not pc.all(pc.match_substring_regex(text, r"^\s*-?\d+\s*$")).as_py():
                return None
            return np.asarray(pc.cast(pc.utf8_trim_whitespace(text), pa.int64()).to_numpy(), dtype=np.int64)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            return None
    return None if len(arr) else np.zeros(0, dtype=np.int64)


def _offsets(start: Any, end: Any, source: str, rows: np.ndarray | None, query: np.ndarray | None,
             doc: np.ndarray, allow_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
    s, e = _fast_integers(start), _fast_integers(end)
    if s is None or e is None:
        s = np.array([_integer(a, "start", _where(source, rows, i)) for i, a in enumerate(start)], dtype=np.int64)
        e = np.array([_integer(b, "end", _where(source, rows, i)) for i, b in enumerate(end)], dtype=np.int64)
    bad = np.flatnonzero((s < 0) | (s > e) | ((s == e) & (not allow_empty)))
    if len(bad):
        i = int(bad[0])
        where = _where(source, rows, i)
        who = (f"query {query[i]!r}, " if query is not None else "") + f"document {doc[i]!r}"
        if s[i] < 0:
            raise InputError(f"{where}: negative start offset ({who})", value=int(s[i]))
        if s[i] > e[i]:
            raise InputError(f"{where}: start {s[i]} is after end {e[i]} ({who})")
        raise InputError(f"{where}: empty span [{s[i]}, {e[i]}) ({who}); a gold span holds at least one character")
    s.setflags(write=False)
    e.setflags(write=False)
    return s, e


def _grades(values: Any, source: str, rows: np.ndarray | None) -> np.ndarray:
    arr = np.asarray(values) if isinstance(values, np.ndarray) else None
    if arr is not None and arr.dtype.kind in "iuf" and np.isfinite(arr).all():
        return arr.astype(np.float64)
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        try:
            out[i] = 1.0 if v is None or v == "" else float(v)
        except (TypeError, ValueError):
            raise InputError(f"{_where(source, rows, i)}: the grade must be a number", value=v) from None
        if not np.isfinite(out[i]) or isinstance(v, bool):
            raise InputError(f"{_where(source, rows, i)}: the grade must be a finite number", value=v)
    return out


def _check_distinct(ids: np.ndarray, source: str, rows: np.ndarray | None, arrow: Any = None) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(ids.tolist(), type=pa.string()) if arrow is None and len(ids) >= 2 else arrow
    if len(ids) < 2 or len(pc.unique(arr)) == len(ids):
        return
    seen: dict[str, int] = {}
    for i, c in enumerate(ids.tolist()):
        if c in seen:
            raise InputError(f"{_where(source, rows, i)}: chunk id {c!r} appears twice (first at "
                             f"{_where(source, rows, seen[c])})")
        seen[c] = i


def _check_against(truth: SpanTruth, corpus: Mapping[str, str]) -> None:
    for i in range(len(truth)):
        q, d, s, e = truth.query[i], truth.doc[i], int(truth.start[i]), int(truth.end[i])
        if d not in corpus:
            raise InputError(f"{truth.where(i)}: query {q!r} has a span in document {d!r}, which the corpus does "
                             "not have")
        n = len(corpus[d])
        if n == 0:
            raise InputError(f"{truth.where(i)}: query {q!r} has a span in document {d!r}, which is empty")
        if e > n:
            raise InputError(f"{truth.where(i)}: query {q!r}: span [{s}, {e}) of document {d!r} ends past the end "
                             f"of the document ({n} characters)")
        if truth.text is not None and truth.text[i] is not None and corpus[d][s:e] != truth.text[i]:
            found = corpus[d][s:e]
            raise InputError(f"{truth.where(i)}: query {q!r}: the span's text does not match document {d!r} at "
                             f"[{s}, {e}): the span says {_cut(truth.text[i])!r}, the document has {_cut(found)!r}")


def _check_text_lengths(truth: SpanTruth) -> None:
    assert truth.text is not None
    for i in range(len(truth)):
        t = truth.text[i]
        if t is not None and len(t) != int(truth.end[i] - truth.start[i]):
            raise InputError(f"{truth.where(i)}: query {truth.query[i]!r}: the span's text has {len(t)} characters "
                             f"but [{truth.start[i]}, {truth.end[i]}) spans {truth.end[i] - truth.start[i]}")


def overlapping_rows(query: np.ndarray, doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The rows (sorted) whose span overlaps an earlier-starting span of the same query and document."""
    if len(query) < 2:
        return np.zeros(0, dtype=np.int64)
    _, qc = np.unique(query.astype(str), return_inverse=True)
    _, dc = np.unique(doc.astype(str), return_inverse=True)
    group = qc.astype(np.int64) * (int(dc.max()) + 1) + dc
    order = np.lexsort((start, group))
    width = int(end.max()) + 1
    gs = group[order] * width + start[order]
    ge = group[order] * width + end[order]
    top = np.maximum.accumulate(ge)  # groups sorted apart: an earlier group's ends stay below this group's keys
    return np.sort(order[np.flatnonzero(gs[1:] < top[:-1]) + 1])


def _check_overlaps(truth: SpanTruth, how: str) -> None:
    bad = overlapping_rows(truth.query, truth.doc, truth.start, truth.end)
    if len(bad) == 0:
        return
    i = int(bad[0])
    msg = (f"{truth.where(i)}: query {truth.query[i]!r} has overlapping gold spans in document {truth.doc[i]!r} "
           f"({len(bad)} such span{'s' if len(bad) != 1 else ''} in all)")
    if how == "error":
        raise InputError(msg + "; this profile needs disjoint gold spans")
    warnings.warn(msg + ": the default measures take their union (the chroma profile sums them)", RagradeWarning,
                  stacklevel=3)


def _cut(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


__all__ = ["ChunkMap", "Coded", "Corpus", "SpanTruth"]
