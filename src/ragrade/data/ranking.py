"""Ranking: turn query-grouped (doc, score) rows into rank order, vectorised.

Rule (trec_eval): score descending; equal scores broken by document id, descending, compared as
strings (code points, which is byte order for UTF-8). Alternatives: ``"input"`` (stable, the order the
items were given) and ``"docid_asc"``.

Cost: an O(n) check finds already-sorted input (most runs are written best-first), and only the tied
rows are re-ordered by id; otherwise a sort within each query (:func:`argsort_desc_within`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _segments(offsets: np.ndarray) -> np.ndarray:
    counts = np.diff(offsets)
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def positions(offsets: np.ndarray) -> np.ndarray:
    """0-based position of every row within its query segment."""
    counts = np.diff(offsets)
    return np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], counts)


def tie_runs(sorted_scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``eq[i]`` is True when row ``i+1`` has the same score as row ``i`` in the same segment."""
    n = len(sorted_scores)
    if n < 2:
        return np.zeros(max(n - 1, 0), dtype=bool)
    eq = sorted_scores[1:] == sorted_scores[:-1]
    starts = offsets[1:-1]
    starts = starts[(starts > 0) & (starts < n)]
    eq[starts - 1] = False  # never tie across queries
    return eq


def argsort_desc_within(scores: np.ndarray, offsets: np.ndarray, seg: np.ndarray | None = None) -> np.ndarray:
    """Stable order of the rows by descending score within each segment (segments stay in place): a
    merge sort per segment in C; without it, one NumPy sort per row of a (queries x k) matrix when every
    segment has k rows, else a ``lexsort`` over (segment, -score)."""
    from ragrade._ingest import sort_segments_desc

    perm = sort_segments_desc(scores, offsets)
    if perm is not None:
        return perm
    counts = np.diff(offsets)
    if len(counts) and counts[0] > 0 and (counts == counts[0]).all():
        k = int(counts[0])
        local = np.argsort(-scores.reshape(-1, k), axis=1, kind="stable")
        return (local + offsets[:-1, None]).ravel().astype(np.int64, copy=False)
    if seg is None:
        seg = _segments(offsets)
    return np.lexsort((-scores, seg)).astype(np.int64)


def rank_rows(
    offsets: np.ndarray,
    scores: np.ndarray | None,
    docs_at: Callable[[np.ndarray], Any],
    ties: str = "docid_desc",
) -> np.ndarray | None:
    """Permutation of rows into rank order; rows remain grouped by segment (query).

    ``docs_at(rows)`` returns the document ids (an object array of str, or an Arrow string array) of the
    given rows; it is called only for rows
    whose scores are tied. Returns None when the rows are already in rank order (the common case: no
    permutation array is made).
    """
    return rank_rows_sparse(offsets, scores, docs_at, ties)[0]


def rank_rows_sparse(
    offsets: np.ndarray,
    scores: np.ndarray | None,
    docs_at: Callable[[np.ndarray], Any],
    ties: str = "docid_desc",
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(permutation, moved)``: as :func:`rank_rows`, plus, when the scores already descend and only
    tied rows were reordered, the sorted positions of those rows (``perm[i] == i`` everywhere else, and
    ``scores[perm] == scores``); None when there is no permutation or it is a full sort."""
    n = int(offsets[-1])
    if scores is None or n == 0:
        return None, None
    starts = offsets[1:-1]
    starts = starts[(starts > 0) & (starts < n)]
    out_of_order = scores[1:] > scores[:-1]
    out_of_order[starts - 1] = False
    if out_of_order.any():
        perm = argsort_desc_within(scores, offsets)  # stable: input order within equal scores
        s = scores[perm]
    else:
        perm = None
        s = scores
    if ties == "input":
        return perm, None
    eq = tie_runs(s, offsets)
    e = np.flatnonzero(eq)
    if len(e) == 0:
        return perm, None
    full_sort = perm is not None
    if perm is None:
        perm = np.arange(n, dtype=np.int64)
    # Rows in a tie run (only these are touched) and an id per run.
    in_tie = np.zeros(n, dtype=bool)
    in_tie[e] = True
    in_tie[e + 1] = True
    idx = np.flatnonzero(in_tie)
    prev_linked = np.zeros(len(idx), dtype=bool)
    has_prev = idx > 0
    prev_linked[has_prev] = eq[idx[has_prev] - 1]
    run_id = np.cumsum(~prev_linked)
    # Order of the tied ids as strings (code points = UTF-8 byte order, as strcmp).
    key = string_ranks(docs_at(perm[idx]))
    width = int(key.max()) + 1 if len(key) else 1
    if ties == "docid_desc":
        key = (width - 1) - key
    # (run, key) as one int64: runs come in ascending order, so this stable sort meets long sorted stretches
    order = np.argsort(run_id.astype(np.int64) * width + key, kind="stable")
    perm[idx] = perm[idx][order]
    return perm, None if full_sort else idx


def string_ranks(values: Any) -> np.ndarray:
    """Dense rank (int64, from 0) of every string in code-point order (``np.unique(values,
    return_inverse=True)[1]``), for an object array of str or an Arrow string array: the strings are hashed
    to their distinct values first, and only those are sorted (a run's tied ids repeat a few thousand
    distinct documents). Arrow compares UTF-8 bytes, which is code-point order."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    if not isinstance(values, np.ndarray):
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(values)
        if hasattr(enc, "combine_chunks"):
            enc = enc.combine_chunks()
        codes = enc.indices.to_numpy(zero_copy_only=False)
        order = pc.sort_indices(enc.dictionary).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        from ragrade._arrays import factorize

        codes, uniques = factorize(values)
        distinct = list(uniques)
        if any("\x00" in s for s in distinct):  # NumPy's fixed-width strings drop trailing NULs
            order = np.array(sorted(range(len(distinct)), key=distinct.__getitem__), dtype=np.int64)
        else:
            order = np.argsort(np.array(distinct, dtype=str), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank[np.asarray(codes, dtype=np.int64)]


def inverse_at(perm: np.ndarray, moved: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
    """Rank positions of storage ``rows`` under ``perm`` (``inverse(perm)[rows]``); with ``moved`` (see
    :func:`rank_rows_sparse`) only the moved rows are looked up, without inverting the whole permutation."""
    if moved is None:
        inverse = np.empty(len(perm), dtype=np.int64)
        inverse[perm] = np.arange(len(perm), dtype=np.int64)
        return inverse[rows]
    # perm maps the positions `moved` onto the same set of rows: invert it on that set alone.
    src = perm[moved]
    by_row = np.argsort(src, kind="stable")  # src[by_row] == moved (both are the same sorted set)
    out = np.asarray(rows, dtype=np.int64).copy()
    if len(moved) == 0 or len(out) == 0:
        return out
    t = np.minimum(np.searchsorted(moved, out), len(moved) - 1)
    hit = moved[t] == out
    out[hit] = moved[by_row[t[hit]]]
    return out


def ties_straddling(sorted_scores: np.ndarray | None, offsets: np.ndarray, k: int,
                    segments: np.ndarray | None = None) -> int:
    """How many queries (of ``segments``, a bool mask; default all) have equal scores at ranks k and
    k+1 (their value at cutoff k depends on the tie rule)."""
    if sorted_scores is None:
        return 0
    counts = np.diff(offsets)
    has = counts > k
    if segments is not None:
        has &= segments
    if not has.any():
        return 0
    a = offsets[:-1][has] + k - 1
    return int(np.count_nonzero(sorted_scores[a] == sorted_scores[a + 1]))
