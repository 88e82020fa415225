"""Array helpers shared by every kernel module: grouped counting, safe division, ranked precision.

Each formula that several kernels need lives here once: the default kernels
(:mod:`ragrade.kernels.metrics`), the list-profile kernels (:mod:`ragrade.kernels.profile_kernels`) and
the judge formulas (:mod:`ragrade.judges.metrics`) all divide with :func:`safe_div` and compute
weighted precision (AP's and context precision's numerator) with :func:`precision_sum`.
"""

from __future__ import annotations

import numpy as np


def rank_within_group(q: np.ndarray) -> np.ndarray:
    """1-based index of each element within its run of equal (sorted) values."""
    n = len(q)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.ones(n, dtype=bool)
    start[1:] = q[1:] != q[:-1]
    first = np.flatnonzero(start)
    counts = np.diff(np.append(first, n))
    return np.arange(n, dtype=np.int64) - np.repeat(first, counts) + 1


def sum_by_query(q: np.ndarray, w: np.ndarray, nq: int, mask: np.ndarray | None = None) -> np.ndarray:
    """``sum of w`` per query (``q`` the query of each element), optionally over ``mask`` only."""
    if mask is not None:
        q, w = q[mask], w[mask]
    return np.bincount(q, weights=w, minlength=nq).astype(np.float64, copy=False)


def safe_div(a: np.ndarray, b: np.ndarray, *, eps: float = 0.0, empty: float = 0.0) -> np.ndarray:
    """``a / (b + eps)`` element-wise, ``empty`` where ``b + eps`` is not positive (0/0 conventions are
    the callers' policy, so they say what the empty case is worth)."""
    a = np.asarray(a, dtype=np.float64)
    den = np.asarray(b, dtype=np.float64) + eps if eps else np.asarray(b, dtype=np.float64)
    out = np.full(np.broadcast(a, den).shape, empty, dtype=np.float64)
    np.divide(a, den, out=out, where=den > 0)
    return out


def precision_sum(q: np.ndarray, pos: np.ndarray, nq: int, k: int | None = None,
                  hitnum: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted precision per query over relevant rows sorted by (query, position): ``(sum over rows with
    pos < k of hits_so_far / (pos + 1), number of such rows)``. AP divides the first by R, context
    precision by the second. ``hitnum`` (:func:`rank_within_group` of ``q``) may be passed if known."""
    if hitnum is None:
        hitnum = rank_within_group(q)
    mask = None if k is None else pos < k
    num = sum_by_query(q, hitnum / (pos + 1.0), nq, mask)
    hits = sum_by_query(q, np.ones(len(q)), nq, mask)
    return num, hits
