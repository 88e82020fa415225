"""Results: query -> ranked items, with scores or as already-ranked lists."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from ragrade.data.base import ColumnarTable
from ragrade.data.columns import (
    _all_str,
    check_raw,
    check_vocab,
    distinct,
    encode,
    first_duplicate,
    need_mapping,
    need_sequence,
    numeric_column,
    offsets_from_counts,
)
from ragrade.data.ids import id_array as as_object_strings
from ragrade.errors import InputError, PolicyError

TIE_POLICIES = ("docid_desc", "input", "docid_asc")


class Run(ColumnarTable):
    """What a retriever returned, stored columnar and immutable.

    With scores (``from_dict``, TREC run files, a score column), items are ranked by score descending,
    ties broken by the tie policy (default: document id descending, trec_eval's rule). Without scores
    (``from_lists``, ``from_ranked``), the given order *is* the ranking.

    >>> r = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5}})
    >>> r.ranked("q1")
    [('d2', 0.9), ('d3', 0.5), ('d1', 0.5)]
    >>> Run.from_lists([["a", "b"]]).ranked("0")
    [('a', None), ('b', None)]

    A run may also carry the **text** of every retrieved item (``texts=``, as :func:`ragrade.retrieve`
    keeps it when the retriever returns it, and as JSONL/Parquet files store it in a ``text`` column).
    Metrics still score the ids; the text matchers and the token-overlap metrics read the texts
    (:meth:`text_lists`).

    >>> r = Run.from_lists([["d1", "d2"]], texts=[["Paris is in France.", "Lyon too."]])
    >>> r.text_lists()
    {'0': ['Paris is in France.', 'Lyon too.']}
    """

    __slots__ = ("_cache", "_has_duplicates", "_texts", "name")

    def __init__(self, query_ids, offsets, doc_codes, doc_vocab, scores, *, name: str | None = None,
                 unique: bool | None = None, raw_docs: Any = None,
                 texts: np.ndarray | None = None) -> None:
        super().__init__(query_ids, offsets, doc_codes, doc_vocab, scores, raw_docs=raw_docs)
        self.name = name
        self._has_duplicates = None if unique is None else not unique
        self._cache: dict[Any, Any] = {}
        self._texts = None if texts is None else _text_column(texts, int(self._offsets[-1]))

    # -- constructors ------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]], name: str | None = None) -> Run:
        """From ``{query_id: {doc_id: score}}`` (pytrec_eval, ranx, ir-measures shape).

        A query mapped to an empty dict is kept (an empty retrieved list).
        """
        if isinstance(run, Run):
            return run
        if not isinstance(run, Mapping):
            raise InputError(f"run must be a mapping of query id -> {{doc id: score}}, got {type(run).__name__}")
        from ragrade.data.qrels import _flatten_dicts

        qids: list[Any] = list(run.keys())
        values = list(run.values())
        if all(map(isinstance, values, repeat(dict))):
            fast = _flatten_dicts(values)  # type: ignore[arg-type]
            if fast is not None and not np.isnan(fast[2]).any():
                return cls._from_grouped(qids, fast[0], fast[1], fast[2], name=name, unique=True, source="run",
                                         docs_are_str=True)
        counts: list[int] = []
        docs: list[Any] = []
        scores: list[Any] = []
        for q, ranked in zip(qids, values, strict=True):
            if not isinstance(ranked, Mapping):
                raise InputError("run: each query must map to {doc id: score}; for ranked lists use "
                                 "Run.from_ranked", query=str(q), value=type(ranked).__name__)
            counts.append(len(ranked))
            docs.extend(ranked.keys())
            scores.extend(ranked.values())
        ends = np.cumsum(counts)

        def where(row: int) -> tuple[str, str]:
            return str(qids[int(np.searchsorted(ends, row, side="right"))]), str(docs[row])

        s = _scores_array(scores, "run", where)
        # Keys that are not all str may collide once converted (1 and "1"): let the duplicates policy see them.
        all_str = _all_str(docs)
        return cls._from_grouped(qids, counts, docs, s, name=name, unique=True if all_str else None, source="run")

    @classmethod
    def from_ranked(cls, run: Mapping[str, Sequence[Any]], name: str | None = None) -> Run:
        """From ``{query_id: [doc ids in rank order]}``."""
        need_mapping(run, "run")
        qids = list(run.keys())
        lists = [run[q] for q in qids]
        return cls.from_lists(lists, query_ids=qids, name=name)

    @classmethod
    def from_lists(
        cls,
        retrieved: Sequence[Sequence[Any]],
        query_ids: Sequence[Any] | None = None,
        scores: Sequence[Sequence[float]] | None = None,
        name: str | None = None,
        texts: Sequence[Sequence[str | None]] | None = None,
    ) -> Run:
        """From aligned ranked lists (``retrieved=[["d1","d3"],["d4"]]``); query ids default to
        ``"0", "1", ...``. Duplicates in a list are kept (the duplicates policy decides at evaluation).
        ``texts``, shaped as ``retrieved``, gives each item's text (None where an item has none)."""
        lists = list(need_sequence(retrieved, "retrieved"))
        qids = [str(i) for i in range(len(lists))] if query_ids is None else list(need_sequence(query_ids,
                                                                                                "query_ids"))
        if len(qids) != len(lists):
            raise InputError(f"query_ids has {len(qids)} entries but retrieved has {len(lists)}")
        counts = []
        docs: list[Any] = []
        for q, lst in zip(qids, lists, strict=True):
            if isinstance(lst, str | bytes) or not isinstance(lst, Sequence | np.ndarray):
                raise InputError("retrieved: each entry must be a list of ids", query=str(q), value=lst)
            counts.append(len(lst))
            docs.extend(lst)
        s = None
        if scores is not None:
            flat = [x for row in scores for x in row]
            if len(flat) != len(docs):
                raise InputError("scores must have the same shape as retrieved")
            s = _scores_array(flat, "run")
        t = None
        if texts is not None:
            rows = list(need_sequence(texts, "texts"))
            if len(rows) != len(lists) or any(len(r) != c for r, c in zip(rows, counts, strict=True)):
                raise InputError("texts must have the same shape as retrieved")
            t = [x for row in rows for x in row]
        return cls._from_grouped(qids, counts, docs, s, name=name, unique=None, source="retrieved", texts=t)

    @classmethod
    def from_columns(
        cls, query_ids: Any, doc_ids: Any, scores: Any = None, *, name: str | None = None, source: str = "run",
        texts: Any = None,
    ) -> Run:
        """From per-row columns. Without scores, rows keep their order within each query. ``texts``: one
        text (or None) per row."""
        from ragrade.data.qrels import list_at

        need_sequence(query_ids, f"{source}: query ids")
        need_sequence(doc_ids, f"{source}: document ids")

        def where(row: int) -> tuple[str, str]:
            return str(list_at(query_ids, row)), str(list_at(doc_ids, row))

        s = None if scores is None else _scores_array(need_sequence(scores, f"{source}: scores"), source, where)
        t = None
        if texts is not None:
            t = _text_column(need_sequence(texts, f"{source}: texts"), len(need_sequence(doc_ids, "")))
            # the row order within each query is kept by grouping: carry the texts in the values column
            index = np.arange(len(t), dtype=np.float64)
            vals = index[:, None] if s is None else np.c_[s, index]
            q, offsets, codes, vocab, v = cls._rows_to_columns(query_ids, doc_ids, vals, what=source)
            assert v is not None
            s = None if s is None else np.ascontiguousarray(v[:, 0])
            t = t[v[:, -1].astype(np.int64)]
            return cls(q, offsets, codes, vocab, s, name=name, texts=t)
        q, offsets, codes, vocab, s = cls._rows_to_columns(query_ids, doc_ids, s, what=source)
        return cls(q, offsets, codes, vocab, s, name=name)

    @classmethod
    def _from_grouped(cls, qids, counts, docs, scores, *, name, unique, source, docs_are_str=False,
                      texts=None) -> Run:
        q = as_object_strings(qids, f"{source} query ids")
        if not distinct(q, already_unique=bool(unique) and _all_str(qids)):
            per_row = np.repeat(q, counts)
            return cls.from_columns(per_row, docs, scores, name=name, source=source, texts=texts)
        # (ids holding a NUL: checked by the scan of dicts, check_raw or check_vocab below)
        d = docs if docs_are_str else as_object_strings(docs, f"{source} document ids", check_nul=False)
        offsets = offsets_from_counts(counts)
        if unique:
            if not docs_are_str:
                check_raw(d, "document id", q, offsets)
            return cls(q, offsets, None, None, scores, name=name, unique=True, raw_docs=d, texts=texts)
        codes, vocab = encode(d)
        check_vocab(vocab, codes, "document id", q, offsets)
        return cls(q, offsets, codes, vocab, scores, name=name, unique=unique, texts=texts)

    @classmethod
    def from_pandas(cls, df: Any, query: str = "query", doc: str = "doc", score: str | None = "score",
                    name: str | None = None) -> Run:
        """From a pandas DataFrame. With ``score=None`` the row order within a query is the ranking."""
        from ragrade.data.qrels import _need_columns

        if score is not None and score not in df.columns and "rank" in df.columns:
            df = df.sort_values([query, "rank"], kind="stable")
            score = None
        _need_columns(df, [query, doc] + ([score] if score else []), "run DataFrame")
        s = None if score is None else df[score].to_numpy()
        return cls.from_columns(df[query], df[doc], s, name=name, source="run DataFrame")

    @classmethod
    def from_polars(cls, df: Any, query: str = "query", doc: str = "doc", score: str | None = "score",
                    name: str | None = None) -> Run:
        from ragrade.data.qrels import _need_columns

        _need_columns(df, [query, doc] + ([score] if score else []), "run DataFrame")
        s = None if score is None else df[score].to_numpy()
        return cls.from_columns(df[query].to_numpy(), df[doc].to_numpy(), s, name=name, source="run DataFrame")

    # -- accessors ---------------------------------------------------------------------------------
    @property
    def scores(self) -> np.ndarray | None:
        """Scores in storage order, or None for ranked lists."""
        return self._values

    @property
    def has_scores(self) -> bool:
        return self._values is not None

    @property
    def nonfinite_scores(self) -> int:
        """How many scores are +inf or -inf (an overflowing number such as ``1e400`` reads as inf). They
        are ranked like any score (+inf first, -inf last) and should be counted in the result's summary
        with a note, as NaN scores are refused. 0 for ranked lists.

        >>> Run.from_dict({"q1": {"a": float("inf"), "b": 0.5, "c": float("-inf")}}).nonfinite_scores
        2
        """
        if self._values is None:
            return 0
        key = "nonfinite"
        if key not in self._cache:
            self._cache[key] = int(np.count_nonzero(np.isinf(self._values)))
        return self._cache[key]

    def derived(self, key: Any, make: Callable[[], Any]) -> Any:
        """A value derived from this run (``make()``), computed on first use and kept with the run under
        ``key`` (the run is immutable: the value stays true). Callers name their keys (``("fusion", ...)``)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def with_name(self, name: str) -> Run:
        return Run(self._query_ids, self._offsets, self._codes, self._vocab, self._values, name=name,
                   unique=None if self._has_duplicates is None else not self._has_duplicates, raw_docs=self._raw,
                   texts=self._texts)

    # -- retrieved texts ---------------------------------------------------------------------------
    @property
    def texts(self) -> np.ndarray | None:
        """The text of every row in storage order (object array of str, None where an item has no
        text), or None when the run carries no texts (read-only)."""
        return self._texts

    @property
    def has_texts(self) -> bool:
        return self._texts is not None

    def with_texts(self, texts: Any) -> Run:
        """A copy carrying ``texts`` (one per row, storage order; None where an item has none)."""
        return Run(self._query_ids, self._offsets, self._codes, self._vocab, self._values, name=self.name,
                   unique=None if self._has_duplicates is None else not self._has_duplicates, raw_docs=self._raw,
                   texts=np.asarray(need_sequence(texts, "texts"), dtype=object))

    def without_texts(self) -> Run:
        """A copy without the texts (ids and scores only)."""
        return Run(self._query_ids, self._offsets, self._codes, self._vocab, self._values, name=self.name,
                   unique=None if self._has_duplicates is None else not self._has_duplicates, raw_docs=self._raw)

    def text_lists(self, ties: str = "docid_desc") -> dict[str, list[str]]:
        """``{query: [texts in rank order]}``: the shape the text matchers, the token-overlap metrics and
        the judges take. An item without a text is an :class:`~ragrade.errors.InputError` (its
        query and id named): scoring it as an empty text would be a silent zero."""
        if self._texts is None:
            raise InputError("this run carries no texts (retrieve them with ragrade.retrieve, or read a run "
                             "file with a 'text' column)")
        order = self.ranking(ties)
        texts = self._texts[order]
        missing = np.flatnonzero([t is None for t in texts.tolist()])
        if len(missing):
            row = int(order[missing[0]])
            raise InputError(f"{len(missing)} retrieved item(s) have no text",
                             query=str(self.per_row_queries()[row]), item=str(self.docs_at(np.array([row]))[0]))
        values = texts.tolist()
        off = self._offsets.tolist()
        return {q: values[off[i]: off[i + 1]] for i, q in enumerate(self._query_ids.tolist())}

    @property
    def duplicates_known(self) -> bool:
        """Whether it is already known if some query lists a document twice (dict input: never; a scan
        done once: the answer is kept)."""
        return self._has_duplicates is not None

    def duplicate_mask(self) -> np.ndarray:
        """Rows whose document already appeared earlier (storage order) in the same query's list."""
        key = "dupmask"
        if key not in self._cache:
            if self._has_duplicates is False:
                self._cache[key] = np.zeros(self.n_rows, dtype=bool)
            else:
                m = first_duplicate(self.segments(), self.doc_codes, len(self.doc_vocab))
                self._has_duplicates = bool(m.any())
                self._cache[key] = m
        return self._cache[key]

    def ranking(self, ties: str = "docid_desc") -> np.ndarray:
        """Permutation of storage rows into rank order (rows stay grouped by query). Cached per policy."""
        perm = self._ranking(ties)
        return np.arange(self.n_rows, dtype=np.int64) if perm is None else perm

    def _ranking(self, ties: str = "docid_desc") -> np.ndarray | None:
        """As :meth:`ranking`, but None when storage order already is rank order."""
        return self.ranking_sparse(ties)[0]

    def ranking_sparse(self, ties: str = "docid_desc") -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(permutation or None, moved rows or None)``, see :func:`ragrade.data.ranking.rank_rows_sparse`."""
        if ties not in TIE_POLICIES:
            raise PolicyError(f"ties must be one of {', '.join(TIE_POLICIES)}; got {ties!r}")
        key = ("ranking", ties)
        if key not in self._cache:
            from ragrade.data.ranking import rank_rows_sparse

            self._cache[key] = rank_rows_sparse(self._offsets, self._values, self.docs_at, ties)
        return self._cache[key]

    def ranked(self, query_id: str, ties: str = "docid_desc") -> list[tuple[str, float | None]]:
        """``[(doc, score), ...]`` of one query in rank order (scores None for ranked lists)."""
        s = self._slice(query_id)
        rows = self.ranking(ties)[s]
        docs = self.per_row_docs()[rows].tolist()
        sc = [None] * len(docs) if self._values is None else self._values[rows].tolist()
        return list(zip(docs, sc, strict=True))

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{query: {doc: score}}``. Ranked lists get descending pseudo-scores ``n - position``.
        A duplicated document keeps its best (first) entry."""
        if self._values is None:
            pos = np.arange(self.n_rows) - np.repeat(self._offsets[:-1], np.diff(self._offsets))
            n = np.repeat(np.diff(self._offsets), np.diff(self._offsets))
            vals = (n - pos).astype(np.float64)
        else:
            vals = self._values
        keep = ~self.duplicate_mask()
        if keep.all():
            return self._nested(vals)
        out: dict[str, dict[str, Any]] = {q: {} for q in self._query_ids.tolist()}
        qs = self.per_row_queries()
        docs = self.per_row_docs()
        for i in np.flatnonzero(keep):
            out[qs[i]][docs[i]] = vals[i].item()
        return out

    def to_lists(self, ties: str = "docid_desc") -> dict[str, list[str]]:
        """``{query: [docs in rank order]}``."""
        order = self.ranking(ties)
        docs = self.per_row_docs()[order].tolist()
        off = self._offsets.tolist()
        return {q: docs[off[i]: off[i + 1]] for i, q in enumerate(self._query_ids.tolist())}

    def to_pandas(self, ties: str = "docid_desc"):
        """Rows in rank order with columns query, doc, rank (1-based) and score (if any)."""
        import pandas as pd

        order = self.ranking(ties)
        pos = np.arange(self.n_rows) - np.repeat(self._offsets[:-1], np.diff(self._offsets))
        data = {"query": self.per_row_queries(), "doc": self.per_row_docs()[order], "rank": pos + 1}
        if self._values is not None:
            data["score"] = self._values[order]
        return pd.DataFrame(data)

    def __repr__(self) -> str:
        nm = f"{self.name!r}, " if self.name else ""
        kind = "scored" if self.has_scores else "ranked lists"
        return f"Run({nm}{self.n_queries} queries, {self.n_rows} items, {kind})"


def _text_column(texts: Any, n_rows: int) -> np.ndarray:
    """One text per row (str, or None for an item without text), as a read-only object array."""
    arr = np.asarray(texts, dtype=object) if not isinstance(texts, np.ndarray) else texts.astype(object)
    if arr.ndim != 1 or len(arr) != n_rows:
        raise InputError(f"texts must hold one entry per retrieved item ({n_rows}), got shape {arr.shape}")
    bad = [i for i, t in enumerate(arr.tolist()) if t is not None and not isinstance(t, str)]
    if bad:
        raise InputError("a retrieved text must be a string (or None for an item without text)",
                         value=arr[bad[0]])
    out = arr.copy()
    out.setflags(write=False)
    return out


def _scores_array(scores: Any, source: str, where: Any = None) -> np.ndarray:
    """float64 scores (a copy); a missing, non-numeric or NaN score is an InputError."""
    return numeric_column(scores, source, "score", where)
