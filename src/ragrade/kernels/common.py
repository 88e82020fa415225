"""Array helpers shared by every kernel module: grouped counting, safe division, ranked precision.

Each formula that several kernels need lives here once: the default kernels
(:mod:`ragrade.kernels.metrics`), the list-profile kernels (:mod:`ragrade.kernels.profile_kernels`) and
the judge formulas (:mod:`ragrade.judges.metrics`) all divide with :func:`safe_div` and compute
weighted precision (AP's and context precision's numerator) with :func:`precision_sum`.
"""

from __future__ import annotations

import numpy as np

from ragrade import _arrays


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


def pick(mask: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """``a[mask]`` of each 1-D array: the same elements in the same order, taken at the mask's indices
    (boolean indexing mispredicts its branches on a mixed mask: several times slower)."""
    idx = np.flatnonzero(mask)
    return tuple(np.take(a, idx) for a in arrays)


def sum_by_query(q: np.ndarray, w: np.ndarray, nq: int, mask: np.ndarray | None = None) -> np.ndarray:
    """``sum of w`` per query (``q`` the query of each element), optionally over ``mask`` only."""
    if mask is not None:
        q, w = pick(mask, q, w)
    return np.bincount(q, weights=w, minlength=nq).astype(np.float64, copy=False)


def max_by_query(q: np.ndarray, w: np.ndarray, nq: int, fill: float) -> np.ndarray:
    """Each query's largest ``w`` (``fill`` for a query without rows): one ``maximum.reduceat`` when the rows come
    grouped by query in ascending order (the ground truth's units do), else ``maximum.at`` (several times slower)."""
    out = np.full(nq, fill, dtype=np.float64)
    if len(q) == 0:
        return out
    if bool((q[1:] >= q[:-1]).all()):
        starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
        out[q[starts]] = np.maximum(np.maximum.reduceat(w, starts), fill)
    else:
        np.maximum.at(out, q, w)
    return out


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


def group_starts(q: np.ndarray, nq: int) -> np.ndarray:
    """Index of the first element of each query's run in the sorted array ``q`` (``nq + 1`` entries; a
    query without elements starts where the next one does)."""
    return np.searchsorted(q, np.arange(nq + 1, dtype=np.int64)).astype(np.int64)


def cumsum_within(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum of ``w`` within each run of equal values of the sorted array ``q``, summed
    from each run's start (so a value does not depend on the other runs, to the last bit)."""
    n = len(q)
    w = np.asarray(w, dtype=np.float64)
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    if np.array_equal(w, np.round(w)) and n < (1 << 52):  # integer counts: the global sum is exact
        cs = np.cumsum(w)
        start = np.ones(n, dtype=bool)
        start[1:] = q[1:] != q[:-1]
        first = np.flatnonzero(start)
        return cs - np.repeat(cs[first] - w[first], np.diff(np.append(first, n)))
    from ragrade._ingest import _accel

    if _accel is not None:  # the same compensated additions in C, run after run
        out = np.empty(n, dtype=np.float64)
        if _accel.kahan_cumsum_runs(np.ascontiguousarray(q, dtype=np.int64), np.ascontiguousarray(w), out) == 0:
            return out
    runs = _runs_matrix(q)
    if runs is not None and runs[3] <= _KAHAN_MAX_COLUMNS and np.isfinite(w).all():
        return _kahan_cumsum_rows(runs, w)
    import pandas as pd

    return pd.Series(w).groupby(np.asarray(q), sort=False).cumsum().to_numpy(dtype=np.float64)


def _runs_matrix(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int] | None:
    """``(run of each element, its place in the run, number of runs, longest run)`` for the sorted array
    ``q``, when a runs x longest matrix is small and pandas is not imported (else None: pandas' grouped
    scans answer)."""
    n = len(q)
    if _arrays.use_pandas(n):
        return None
    col = rank_within_group(q) - 1
    row = np.cumsum(col == 0) - 1
    nrows, longest = int(row[-1]) + 1, int(col.max()) + 1
    if nrows * longest > 4 * _arrays.SMALL:
        return None
    return row, col, nrows, longest


#: The compensated sums loop over the columns (the longest run) in Python: beyond this, pandas is faster.
_KAHAN_MAX_COLUMNS = 4096


def _kahan_cumsum_rows(runs: tuple[np.ndarray, np.ndarray, int, int], w: np.ndarray) -> np.ndarray:
    """Compensated (Kahan) running sums within each run, one column of all runs at a time: the same
    additions in the same order as pandas' grouped ``cumsum``, so the same floats to the last bit
    (``tests/test_arrays.py``)."""
    row, col, nrows, longest = runs
    grid = np.zeros((nrows, longest), dtype=np.float64)
    grid[row, col] = w
    out = np.empty_like(grid)
    acc = np.zeros(nrows, dtype=np.float64)
    comp = np.zeros(nrows, dtype=np.float64)
    for j in range(longest):
        y = grid[:, j] - comp
        t = acc + y
        comp = (t - acc) - y
        acc = t
        out[:, j] = t
    return out[row, col]


def suffix_max_within(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``max(v[i:end of i's run])`` for each element of the sorted array ``q`` (exact: no offsets added)."""
    if len(q) == 0:
        return np.zeros(0, dtype=np.float64)
    runs = _runs_matrix(q)
    if runs is not None and not np.isnan(v).any():  # max is exact: a suffix maximum along each row of the padded matrix
        row, col, nrows, longest = runs
        grid = np.full((nrows, longest), -np.inf)
        grid[row, col] = v
        return np.maximum.accumulate(grid[:, ::-1], axis=1)[:, ::-1][row, col]
    import pandas as pd

    rev = pd.Series(np.asarray(v, dtype=np.float64)[::-1]).groupby(np.asarray(q)[::-1], sort=False).cummax()
    return rev.to_numpy(dtype=np.float64)[::-1].copy()


def value_at(q: np.ndarray, pos: np.ndarray, cum: np.ndarray, tq: np.ndarray, tpos: np.ndarray) -> np.ndarray:
    """For rows sorted by (q, pos) with inclusive per-query cumulative values ``cum``: the cumulative value
    of query ``tq`` through position ``tpos`` (0 when no row of the query lies at or above it)."""
    if len(q) == 0:
        return np.zeros(len(tq), dtype=np.float64)
    span = int(max(int(pos.max()) if len(pos) else 0, int(tpos.max()) if len(tpos) else 0)) + 2
    key = q.astype(np.int64) * span + pos
    at = np.searchsorted(key, tq.astype(np.int64) * span + np.minimum(tpos, span - 2), side="right") - 1
    ok = at >= 0
    ok[ok] &= q[at[ok]] == tq[ok]
    out = np.zeros(len(tq), dtype=np.float64)
    out[ok] = cum[at[ok]]
    return out
