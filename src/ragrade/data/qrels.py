"""Ground truth: query -> unit -> grade.

A *unit* is what the ground truth counts (docs/conventions.md, Notation): one judged document id, or a *group* of ids
any one of which satisfies the same information need (AutoRAG's ``[["a", "b"], ["c"]]``). Each row of
the storage is one (query, doc id, grade, unit) judgment; plain qrels have one row per unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from ragrade.data.base import ColumnarTable, _frozen
from ragrade.data.columns import (
    encode,
    first_duplicate,
    need_sequence,
    numeric_column,
    offsets_from_counts,
)
from ragrade.data.ids import normalize_id as id_string
from ragrade.errors import InputError


class Qrels(ColumnarTable):
    """Relevance judgments, stored columnar and immutable.

    Build with :meth:`from_dict` (``{query: {doc: grade}}``, the pytrec_eval/ranx shape),
    :meth:`from_lists` (aligned lists of gold ids, seed shape), :meth:`from_groups` (AutoRAG groups),
    :meth:`from_pandas` / :meth:`from_polars`, or :func:`ragrade.read_qrels` for files.

    Grades: ``> 0`` relevant (at threshold ``rel=1``), ``0`` judged non-relevant, ``< 0`` judged
    unjudgeable (never relevant, not counted in R).

    >>> q = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}})
    >>> q.n_queries, q.n_rows
    (2, 3)
    >>> q.to_dict()["q1"]
    {'d1': 2, 'd2': 0}
    """

    __slots__ = ("_units",)

    def __init__(self, query_ids, offsets, doc_codes, doc_vocab, grades, units=None, *, raw_docs=None) -> None:
        super().__init__(query_ids, offsets, doc_codes, doc_vocab, grades, raw_docs=raw_docs)
        self._units = None if units is None else _frozen(units)

    # -- constructors ------------------------------------------------------------------------------
    @classmethod
    def from_columns(
        cls,
        query_ids: Any,
        doc_ids: Any,
        grades: Any = None,
        *,
        units: Any = None,
        source: str = "qrels",
    ) -> Qrels:
        """Build from per-row columns (sequences or arrays of equal length). Grades default to 1."""
        need_sequence(query_ids, f"{source}: query ids")
        n = len(need_sequence(doc_ids, f"{source}: document ids"))
        if grades is not None:
            need_sequence(grades, f"{source}: grades")

        def where(row: int) -> tuple[str, str]:
            return str(list_at(query_ids, row)), str(list_at(doc_ids, row))

        g: np.ndarray = np.ones(n, dtype=np.float64) if grades is None else _grades_array(grades, source, where)
        u = None if units is None else np.array(units, dtype=np.int64, copy=True)
        if u is not None:
            order_q, offsets, codes, vocab, g2 = cls._rows_to_columns(query_ids, doc_ids, np.c_[g, u], what=source)
            assert g2 is not None
            g, u = np.ascontiguousarray(g2[:, 0]), np.ascontiguousarray(g2[:, 1]).astype(np.int64)
        else:
            order_q, offsets, codes, vocab, g3 = cls._rows_to_columns(query_ids, doc_ids, g, what=source)
            assert g3 is not None
            g = g3
        seg = np.repeat(np.arange(len(order_q)), np.diff(offsets))
        dup = first_duplicate(seg, codes, len(vocab))
        if dup.any() and u is None:
            i = int(np.flatnonzero(dup)[0])
            raise InputError(
                f"{source}: the same document is judged twice for one query",
                query=str(order_q[seg[i]]),
                item=str(vocab[codes[i]]),
            )
        return cls(order_q, offsets, codes, vocab, g, u)

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, float]]) -> Qrels:
        """From ``{query_id: {doc_id: grade}}`` (pytrec_eval, ranx, ir-measures, BEIR shape)."""
        if isinstance(qrels, Qrels):
            return qrels
        if not isinstance(qrels, Mapping):
            raise InputError(f"qrels must be a mapping of query id -> {{doc id: grade}}, got {type(qrels).__name__}")
        qids = list(qrels.keys())
        values = list(qrels.values())
        if all(map(isinstance, values, repeat(dict))):
            fast = _flatten_dicts(values)  # type: ignore[arg-type]
            if fast is not None:
                return cls._from_grouped(qids, fast[0], fast[1], fast[2], "qrels", unique=True, has_empty=False,
                                         docs_are_str=True)
        docs: list[Any] = []
        grades: list[Any] = []
        counts: list[int] = []
        for q, judged in zip(qids, values, strict=True):
            if not isinstance(judged, Mapping):
                raise InputError("qrels: each query must map to {doc id: grade}", query=str(q), value=judged)
            counts.append(len(judged))
            docs.extend(judged.keys())
            grades.extend(judged.values())
        return cls._from_grouped(qids, counts, docs, grades, "qrels")

    @classmethod
    def _from_grouped(cls, qids, counts, docs, grades, source: str, units=None, unique: bool = False,
                      has_empty: bool | None = None, docs_are_str: bool = False) -> Qrels:
        from ragrade.data.columns import check_raw, check_vocab, distinct, nul_error
        from ragrade.data.ids import id_array as as_object_strings
        from ragrade.data.ids import str_ids

        listed = np.fromiter(qids, dtype=object, count=len(qids)) if isinstance(qids, list) else None
        all_str, nul = str_ids(listed) if listed is not None else (False, None)  # (one pass for both)
        # ids to convert (ints, ...): converted ids may collide, so check
        q: np.ndarray = listed if listed is not None and all_str else as_object_strings(qids, f"{source} query ids")
        if nul is not None:  # (as_object_strings checks the ids that are not all str)
            raise nul_error("query id", q[nul])
        if not distinct(q, already_unique=unique and all_str):
            # The same query id twice (e.g. 1 and "1"): merge through the row path, which groups them.
            per_row = np.repeat(q, counts)
            return cls.from_columns(per_row, docs, grades, units=units, source=source)
        # (ids holding a NUL: checked by the scan of dicts, check_raw or check_vocab below)
        d = docs if docs_are_str else as_object_strings(docs, f"{source} document ids", check_nul=False)
        ends = np.cumsum(counts)

        def where(row: int) -> tuple[str, str]:
            return str(q[int(np.searchsorted(ends, row, side="right"))]), str(d[row])

        g = _grades_array(grades, source, where)
        offsets = offsets_from_counts(counts)
        if unique and units is None:
            # Ids unique per query (dict keys): keep them raw, code them only if ever needed.
            if has_empty is not False:
                check_raw(d, "document id", q, offsets)
            return cls(q, offsets, None, None, g, None, raw_docs=d)
        codes, vocab = encode(d)
        check_vocab(vocab, codes, "document id", q, offsets)
        if units is None:
            seg = np.repeat(np.arange(len(q)), counts)
            dup = first_duplicate(seg, codes, len(vocab))
            if dup.any():
                i = int(np.flatnonzero(dup)[0])
                raise InputError(
                    f"{source}: the same document is listed twice for one query (ids are compared as strings)",
                    query=str(q[seg[i]]),
                    item=str(vocab[codes[i]]),
                )
        return cls(q, offsets, codes, vocab, g, None if units is None else np.array(units, dtype=np.int64, copy=True))

    @classmethod
    def from_lists(
        cls,
        gold_docs: Sequence[Sequence[Any]],
        query_ids: Sequence[Any] | None = None,
        grades: Sequence[Sequence[float]] | None = None,
    ) -> Qrels:
        """From aligned lists of relevant ids, one list per query (``gold_docs=[["d1","d2"],["d3"]]``).

        Query ids default to ``"0", "1", ...`` (positions), matching :meth:`Run.from_lists`. A gold id
        listed twice for the same query is one unit (counted once).
        """
        gold = list(need_sequence(gold_docs, "gold_docs"))
        if grades is not None:
            need_sequence(grades, "grades")
        qids = [str(i) for i in range(len(gold))] if query_ids is None else list(query_ids)
        if len(qids) != len(gold):
            raise InputError(f"query_ids has {len(qids)} entries but gold_docs has {len(gold)}")
        rows_q: list[Any] = []
        rows_d: list[Any] = []
        rows_g: list[Any] = []
        for i, (q, docs) in enumerate(zip(qids, gold, strict=True)):
            if isinstance(docs, str | bytes) or not isinstance(docs, Sequence):
                raise InputError("gold_docs: each entry must be a list of ids", query=str(q), value=docs)
            seen: dict[Any, Any] = {}
            gi = None if grades is None else grades[i]
            for j, d in enumerate(docs):
                key = id_string(d, "gold_docs id", query=str(q))
                g = 1 if gi is None else gi[j]
                seen[key] = max(seen.get(key, g), g)
            rows_q.append(q)
            rows_d.extend(seen.keys())
            rows_g.append(list(seen.values()))
        counts = [len(g) for g in rows_g]
        flat_g = [x for g in rows_g for x in g]
        return cls._from_grouped(rows_q, counts, rows_d, flat_g, "gold_docs")

    @classmethod
    def from_groups(
        cls, groups: Sequence[Sequence[Sequence[Any]]], query_ids: Sequence[Any] | None = None
    ) -> Qrels:
        """From AutoRAG-style groups: per query a list of groups; every group is needed, any id in a
        group satisfies it. Each group is one unit (credited once, grade 1).

        >>> q = Qrels.from_groups([[["test-1", "test-2"], ["test-3"]]])
        >>> q.n_units("0")
        2

        An id that appears in two groups of one query satisfies the first of them (in input order).
        """
        all_groups = list(need_sequence(groups, "groups"))
        qids = [str(i) for i in range(len(all_groups))] if query_ids is None else list(query_ids)
        if len(qids) != len(all_groups):
            raise InputError(f"query_ids has {len(qids)} entries but groups has {len(all_groups)}")
        rows_d: list[Any] = []
        rows_u: list[int] = []
        counts = []
        unit = 0
        for q, qgroups in zip(qids, all_groups, strict=True):
            if isinstance(qgroups, str | bytes) or not isinstance(qgroups, Sequence):
                raise InputError("groups: each query needs a list of groups", query=str(q), value=qgroups)
            seen: set[str] = set()
            n = 0
            for grp in qgroups:
                if isinstance(grp, str | bytes) or not isinstance(grp, Sequence):
                    raise InputError("groups: each group must be a list of ids", query=str(q), value=grp)
                if len(grp) == 0:
                    raise InputError("groups: empty group (it could never be satisfied)", query=str(q))
                for d in grp:
                    key = id_string(d, "groups id", query=str(q))
                    if key in seen:
                        continue
                    seen.add(key)
                    rows_d.append(key)
                    rows_u.append(unit)
                    n += 1
                unit += 1
            counts.append(n)
        return cls._from_grouped(qids, counts, rows_d, np.ones(len(rows_d)), "groups", units=rows_u)

    @classmethod
    def from_pandas(cls, df: Any, query: str = "query", doc: str = "doc", grade: str | None = "grade") -> Qrels:
        """From a pandas DataFrame with query, doc and (optional) grade columns."""
        _need_columns(df, [query, doc] + ([grade] if grade else []), "qrels DataFrame")
        g = None if grade is None else df[grade].to_numpy()
        return cls.from_columns(df[query], df[doc], g, source="qrels DataFrame")

    @classmethod
    def from_polars(cls, df: Any, query: str = "query", doc: str = "doc", grade: str | None = "grade") -> Qrels:
        """From a polars DataFrame (converted through Arrow, no per-row Python objects for numbers)."""
        _need_columns(df, [query, doc] + ([grade] if grade else []), "qrels DataFrame")
        g = None if grade is None else df[grade].to_numpy()
        return cls.from_columns(df[query].to_numpy(), df[doc].to_numpy(), g, source="qrels DataFrame")

    # -- accessors ---------------------------------------------------------------------------------
    @property
    def grades(self) -> np.ndarray:
        assert self._values is not None
        return self._values

    @property
    def has_groups(self) -> bool:
        return self._units is not None

    def unit_ids(self) -> np.ndarray:
        """Global unit index of every row (rows of one group share it)."""
        if self._units is None:
            return np.arange(self.n_rows, dtype=np.int64)
        return self._units

    def n_units(self, query_id: str) -> int:
        s = self._slice(query_id)
        return len(np.unique(self.unit_ids()[s]))

    def without_empty_queries(self) -> Qrels:
        """The same judgments without the queries that have none (``{"q10": {}}`` in a dict): pytrec_eval
        and BEIR never see such a query. ``self`` when there is none.

        >>> Qrels.from_dict({"q1": {"d1": 1}, "q10": {}}).without_empty_queries().query_ids.tolist()
        ['q1']
        """
        keep = np.diff(self._offsets) > 0
        if keep.all():
            return self
        offsets = np.concatenate((self._offsets[:-1][keep], self._offsets[-1:]))
        return Qrels(self._query_ids[keep], offsets, self._codes, self._vocab, self._values, self._units,
                     raw_docs=self._raw)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{query: {doc: grade}}`` with integral grades as int. Groups are flattened (one row per id)."""
        g = self.grades
        vals = g.astype(np.int64) if np.all(np.mod(g, 1) == 0) else g
        return self._nested(vals)

    def to_groups(self) -> dict[str, list[list[str]]]:
        """``{query: [[ids of group 1], ...]}`` (plain qrels: one group per relevant doc, grade > 0)."""
        out: dict[str, list[list[str]]] = {}
        docs = self.per_row_docs()
        units = self.unit_ids()
        for i, q in enumerate(self._query_ids.tolist()):
            a, b = int(self._offsets[i]), int(self._offsets[i + 1])
            groups: dict[int, list[str]] = {}
            for j in range(a, b):
                if self.grades[j] > 0:
                    groups.setdefault(int(units[j]), []).append(docs[j])
            out[q] = list(groups.values())
        return out

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame(
            {"query": self.per_row_queries(), "doc": self.per_row_docs(), "grade": self.grades}
        )

    def __repr__(self) -> str:
        kind = "groups" if self.has_groups else "judgments"
        return f"Qrels({self.n_queries} queries, {self.n_rows} {kind})"


def _flatten_dicts(values: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """One pass over a list of dicts: (counts, keys, float values); None if anything is unusual (a
    non-str or empty key, a non-numeric value): the caller then takes the checking path, which says
    exactly where."""
    from ragrade._ingest import OK, scan_items

    status, counts, vals, docs = scan_items(values)
    if status != OK or docs is None:
        return None
    return counts, docs, vals


def list_at(values: Any, row: int) -> Any:
    """Element ``row`` of a list, array, pandas Series or polars Series (error paths only)."""
    if hasattr(values, "iloc"):
        return values.iloc[row]
    return values[row]


def _grades_array(grades: Any, source: str, where: Any = None) -> np.ndarray:
    return numeric_column(grades, source, "grade", where, finite=True)


def _need_columns(df: Any, cols: list[str], what: str) -> None:
    have = list(df.columns)
    missing = [c for c in cols if c not in have]
    if missing:
        raise InputError(f"{what} has no column {missing[0]!r} (columns: {have}); name them with query=, doc=, ...")
