"""Kernels of the nugget measures (issue 38, docs/nuggets.md): how many of a query's nuggets the retrieved
context covers, and how much of it covers any.

Input is one matrix per run: ``values[n, i]`` is the support of nugget ``n`` by the passage at rank ``i``
(0-based) of its query's ranking — 1 (support), 0.5 (partial support), 0 (not support, no assignment, or
no passage at that rank) or NaN (the assignment failed: unknown). Rows are nuggets, ``owner[n]`` the
index of the query the nugget belongs to (rows of one query need not be adjacent), ``weights[n]`` its
weight. ``strict`` drops partial support (0.5 -> 0) before anything else.

* nugget recall@k = sum_n w_n max_{i<k} a(n, i) / sum_n w_n. NaN for a query whose weights sum to 0 (no
  nuggets, or no vital nugget under ``weight=vital``), and for a query where a failed assignment could
  change the value: a nugget whose best known support in the top k is below 1 while one of its top-k
  assignments failed.
* nugget precision@k = |{i < k : the passage at rank i supports at least one of the query's nuggets}| / k
  (k even when fewer passages were retrieved, as P@k). NaN for a query without nuggets and where a failed
  assignment decides whether a rank counts.

The joined-context mode of nugget recall (nuggets assigned to the concatenation of the top k) is the same
formula over a one-column matrix (the context's support): :func:`nugget_recall` with ``k=1``.

Pure NumPy over the whole matrix at once; no loop over queries.
"""

from __future__ import annotations

import numpy as np


def strict_values(values: np.ndarray, strict: bool) -> np.ndarray:
    """``values`` with partial support (0.5) counted as no support when ``strict`` (NaN stays NaN)."""
    if not strict:
        return values
    out = np.array(values, dtype=np.float64, copy=True)
    out[out == 0.5] = 0.0
    return out


def _rows(values: np.ndarray, n: int) -> np.ndarray:
    """``values`` as a matrix of ``n`` rows (a vector is one column)."""
    return values if values.ndim == 2 else values.reshape(n, -1 if n else 0)


def _top(values: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` columns (as many as there are)."""
    return values[:, : max(0, int(k))]


def nugget_recall(values: np.ndarray, owner: np.ndarray, weights: np.ndarray, n_queries: int, k: int,
                  strict: bool = False) -> np.ndarray:
    """Weighted share of each query's nuggets supported by its best passage in the top ``k``
    (float64[n_queries]; NaN where undefined, see the module docstring).

    >>> v = np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 1.0]])
    >>> nugget_recall(v, np.array([0, 0, 0]), np.ones(3), 1, 2).tolist()
    [0.5]
    >>> nugget_recall(v, np.array([0, 0, 0]), np.ones(3), 1, 2, strict=True).tolist()
    [0.3333333333333333]
    """
    v = strict_values(np.asarray(values, dtype=np.float64), strict)
    owner = np.asarray(owner, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    top = _top(_rows(v, len(owner)), k)
    if top.shape[1] == 0:
        best = np.zeros(len(owner))
        unknown = np.zeros(len(owner), dtype=bool)
    else:
        known = np.where(np.isnan(top), -np.inf, top)
        best = np.maximum(known.max(axis=1), 0.0)
        unknown = np.isnan(top).any(axis=1) & (best < 1.0)
    num = np.bincount(owner, weights=w * best, minlength=n_queries)
    den = np.bincount(owner, weights=w, minlength=n_queries)
    blocked = np.bincount(owner, weights=(unknown & (w > 0)).astype(np.float64), minlength=n_queries) > 0
    out = np.full(n_queries, np.nan)
    ok = (den > 0) & ~blocked
    out[ok] = num[ok] / den[ok]
    return out


def nugget_precision(values: np.ndarray, owner: np.ndarray, n_queries: int, k: int,
                     strict: bool = False) -> np.ndarray:
    """Share of the top ``k`` ranks whose passage supports at least one nugget of its query
    (float64[n_queries]; NaN for a query without nuggets, or where a failed assignment decides a rank).

    >>> v = np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.0]])
    >>> nugget_precision(v, np.array([0, 0]), 1, 3).tolist()
    [0.6666666666666666]
    >>> nugget_precision(v, np.array([0, 0]), 1, 3, strict=True).tolist()
    [0.3333333333333333]
    """
    v = strict_values(np.asarray(values, dtype=np.float64), strict)
    owner = np.asarray(owner, dtype=np.int64)
    top = _top(_rows(v, len(owner)), k)
    width = top.shape[1]
    support = np.zeros((n_queries, width), dtype=np.int64)
    failed = np.zeros((n_queries, width), dtype=np.int64)
    np.add.at(support, owner, (top > 0).astype(np.int64))
    np.add.at(failed, owner, np.isnan(top).astype(np.int64))
    hits = (support > 0).sum(axis=1).astype(np.float64)
    undecided = ((failed > 0) & (support == 0)).any(axis=1)
    has = np.bincount(owner, minlength=n_queries) > 0
    out = np.full(n_queries, np.nan)
    ok = has & ~undecided
    out[ok] = hits[ok] / float(max(1, int(k)))
    return out


__all__ = ["nugget_precision", "nugget_recall", "strict_values"]
