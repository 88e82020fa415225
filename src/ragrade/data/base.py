"""Shared columnar storage of :class:`~ragrade.data.Qrels` and :class:`~ragrade.data.Run`.

Rows are grouped by query: the rows of query ``i`` are ``offsets[i]:offsets[i+1]``. Document ids are
kept either raw (one string per row: a NumPy object array, an Arrow string array for data read from
files, or a :class:`~ragrade._arrays.Utf8Column` for TREC files the C tokenizer read, seen as Arrow through
``raw_docs`` and as NumPy buffers through ``raw_utf8``) or integer-coded (``doc_codes`` into ``doc_vocab``); raw ids are coded lazily, on first use.
Arrays are made read-only, so an object can be shared between evaluations and threads; constructors
copy what the caller passed rather than keeping a view that the caller could later change.

The columnar view (``offsets``, ``raw_docs``, ``raw_is_arrow``, ``doc_codes``, ``doc_vocab``,
``docs_at``, ``per_row_docs``, ``per_row_queries``, ``segments``) is the small internal API through
which the engine and the readers use the storage (``docs/architecture.md``); nothing outside ``data/``
reads the underscored attributes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ragrade import _arrays
from ragrade.data.columns import check_query_ids, check_vocab, encode, group_rows, segment_ids
from ragrade.data.ids import id_array as as_object_strings
from ragrade.errors import InputError


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _take_arrow(arr: Any, rows: np.ndarray) -> np.ndarray:
    """``arr[rows]`` as an object array of str; a chunked array is taken chunk by chunk (Arrow's own
    ``take`` on a chunked array concatenates every chunk first)."""
    import pyarrow as pa

    small = _arrays.take_decoded(arr, rows)  # a few rows while pandas is not imported
    if small is not None:
        return small
    if not isinstance(arr, pa.ChunkedArray) or arr.num_chunks <= 1:
        src = arr.chunk(0) if isinstance(arr, pa.ChunkedArray) and arr.num_chunks == 1 else arr
        return np.asarray(src.take(pa.array(rows)).to_numpy(zero_copy_only=False), dtype=object)
    bounds = np.cumsum([0] + [len(c) for c in arr.chunks])
    which = np.searchsorted(bounds, rows, side="right") - 1
    by_chunk = np.argsort(which, kind="stable")
    cut = np.searchsorted(which[by_chunk], np.arange(arr.num_chunks + 1))
    out = np.empty(len(rows), dtype=object)
    for c in range(arr.num_chunks):  # one take per chunk touched
        if cut[c] == cut[c + 1]:
            continue
        sel = by_chunk[cut[c]: cut[c + 1]]
        local = rows[sel] - bounds[c]
        out[sel] = arr.chunk(c).take(pa.array(local)).to_numpy(zero_copy_only=False)
    return out


class ColumnarTable:
    """Base of Qrels and Run: query-grouped rows of (doc, value)."""

    _value_name = "value"

    __slots__ = ("_codes", "_offsets", "_qindex", "_query_ids", "_raw", "_values", "_vocab")

    def __init__(
        self,
        query_ids: np.ndarray,
        offsets: np.ndarray,
        doc_codes: np.ndarray | None,
        doc_vocab: np.ndarray | None,
        values: np.ndarray | None,
        *,
        raw_docs: Any = None,
    ) -> None:
        """Either ``doc_codes`` + ``doc_vocab`` (integer-coded ids) or ``raw_docs`` (one str per row,
        coded lazily on first use: inputs that never need the codes, such as a dict evaluated once,
        skip the cost of hashing every id)."""
        if (doc_codes is None) != (doc_vocab is None) or (doc_codes is None and raw_docs is None):
            raise ValueError("give doc_codes and doc_vocab, or raw_docs")
        self._query_ids = _frozen(query_ids)
        self._offsets = _frozen(offsets)
        self._codes = None if doc_codes is None else _frozen(doc_codes)
        self._vocab = None if doc_vocab is None else _frozen(doc_vocab)
        if raw_docs is not None and isinstance(raw_docs, np.ndarray):
            raw_docs = _frozen(raw_docs)
        self._raw = raw_docs  # numpy object array of str, an Arrow string array or a Utf8Column (immutable)
        self._values = None if values is None else _frozen(values)
        self._qindex: dict[str, int] | None = None

    # -- columnar view (the engine's internal API) ------------------------------------------------
    @property
    def offsets(self) -> np.ndarray:
        """int64[n_queries + 1]: the rows of query ``i`` are ``offsets[i]:offsets[i+1]`` (read-only)."""
        return self._offsets

    @property
    def raw_docs(self) -> Any:
        """The raw document ids (an object array of str or an Arrow string array), or None when the
        table was built from codes."""
        if isinstance(self._raw, _arrays.Utf8Column):
            return self._raw.arrow()
        return self._raw

    @property
    def raw_is_arrow(self) -> bool:
        """Whether the raw ids are an Arrow array (data read from a file)."""
        return self._raw is not None and not isinstance(self._raw, np.ndarray)

    @property
    def raw_utf8(self) -> _arrays.Utf8Column | None:
        """The raw ids as the C tokenizer read them (:class:`ragrade._arrays.Utf8Column`: NumPy buffers, no
        pyarrow), or None when they are held otherwise."""
        return self._raw if isinstance(self._raw, _arrays.Utf8Column) else None

    @property
    def is_coded(self) -> bool:
        """Whether the ids are integer-coded already (raw ids are coded on first use of the codes)."""
        return self._codes is not None

    @property
    def doc_codes(self) -> np.ndarray:
        """Integer code of every row's document id (coded on first use)."""
        if self._codes is None:
            self._encode()
        assert self._codes is not None
        return self._codes

    @property
    def doc_vocab(self) -> np.ndarray:
        """The distinct document ids, indexed by :attr:`doc_codes`."""
        if self._vocab is None:
            self._encode()
        assert self._vocab is not None
        return self._vocab

    def _encode(self) -> None:
        assert self._raw is not None
        if self.raw_is_arrow:
            import pyarrow.compute as pc

            enc = pc.dictionary_encode(self.raw_docs)
            if hasattr(enc, "combine_chunks"):
                enc = enc.combine_chunks()
            codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
            vocab = np.asarray(enc.dictionary.to_numpy(zero_copy_only=False), dtype=object)
        else:
            codes, vocab = encode(self._raw)
        self._codes, self._vocab = _frozen(codes), _frozen(vocab)

    # -- construction from per-row columns --------------------------------------------------------
    @classmethod
    def _rows_to_columns(
        cls, queries: Any, docs: Any, values: np.ndarray | None, *, what: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        q = as_object_strings(queries, f"{what} query ids", check_nul=False)  # checked once coded, below
        d = as_object_strings(docs, f"{what} document ids", check_nul=False)
        if len(q) != len(d) or (values is not None and len(values) != len(q)):
            extra = "" if values is None else f", {len(values)} values"
            raise InputError(f"{what}: the columns have different lengths ({len(q)} query ids, {len(d)} document "
                             f"ids{extra})")
        qids, offsets, perm = group_rows(q)
        check_query_ids(qids)
        if perm is not None:
            d = d[perm]
            values = None if values is None else values[perm]
        codes, vocab = encode(d)
        check_vocab(vocab, codes, "document id", qids, offsets)
        return qids, offsets, codes, vocab, values

    # -- basic accessors --------------------------------------------------------------------------
    @property
    def query_ids(self) -> np.ndarray:
        """Query ids in storage order (first appearance), read-only object array of str."""
        return self._query_ids

    @property
    def n_queries(self) -> int:
        return len(self._query_ids)

    @property
    def n_rows(self) -> int:
        return int(self._offsets[-1])

    def __len__(self) -> int:
        return self.n_queries

    def __contains__(self, query_id: object) -> bool:
        return str(query_id) in self._query_index()

    def __iter__(self) -> Iterator[str]:
        return iter(self._query_ids.tolist())

    def _query_index(self) -> dict[str, int]:
        if self._qindex is None:
            self._qindex = {q: i for i, q in enumerate(self._query_ids.tolist())}
        return self._qindex

    def _slice(self, query_id: str) -> slice:
        try:
            i = self._query_index()[str(query_id)]
        except KeyError:
            raise KeyError(f"query {query_id!r} is not in this {type(self).__name__}") from None
        return slice(int(self._offsets[i]), int(self._offsets[i + 1]))

    def docs_of(self, query_id: str) -> list[str]:
        """Document ids of one query in storage (input) order."""
        s = self._slice(query_id)
        return self.per_row_docs()[s].tolist()

    def segments(self) -> np.ndarray:
        """Query index (0..n_queries-1) of every row."""
        return segment_ids(self._offsets)

    def per_row_queries(self) -> np.ndarray:
        """Query id of every row."""
        return self._query_ids[self.segments()]

    def docs_at(self, rows: np.ndarray) -> np.ndarray:
        """Document ids (str) of the given storage rows."""
        if isinstance(self._raw, _arrays.Utf8Column):
            return self._raw.decoded(np.asarray(rows, dtype=np.int64))
        if self.raw_is_arrow:
            return _take_arrow(self._raw, np.asarray(rows, dtype=np.int64))
        if self._raw is not None:
            return self._raw[rows]
        return self.doc_vocab[self.doc_codes[rows]]

    def per_row_docs(self) -> np.ndarray:
        """Document id of every row (object array of str)."""
        raw: Any = self.raw_docs
        if self.raw_is_arrow:
            return np.asarray(raw.to_numpy(zero_copy_only=False), dtype=object)
        if raw is not None:
            return raw
        return self.doc_vocab[self.doc_codes]

    def _nested(self, values: np.ndarray) -> dict[str, dict[str, Any]]:
        docs = self.per_row_docs().tolist()
        vals = values.tolist()
        off = self._offsets.tolist()
        return {q: dict(zip(docs[off[i] : off[i + 1]], vals[off[i] : off[i + 1]], strict=True))
                for i, q in enumerate(self._query_ids.tolist())}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, dict[str, Any]]:  # pragma: no cover - overridden
        raise NotImplementedError
