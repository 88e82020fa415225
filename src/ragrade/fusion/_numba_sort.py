"""numba's default ``np.argsort`` (its quicksort), reproduced, for ranx's order among equal scores.

ranx ranks every list with ``np.argsort(-scores)`` compiled by numba, whose default kind is an
unstable quicksort: median-of-three partitioning, insertion sort once a part holds 15 items or fewer,
the larger part pushed on a stack. Equal scores therefore come back in an order that is fixed for one
input order but follows no rule (a tied list of 40 comes back d37, d2, d32, d27, ...). ranx's fused
values read these positions (rank normalisation, RRF, ISR, RBC, Borda, the trained methods), so
reproducing them exactly needs this very sort, applied to the same input order.

:func:`argsort_segments` sorts every segment of a flat array at once: the C helper runs the algorithm
when it is built; otherwise segments without equal keys take NumPy's stable sort (one permutation is
possible) and only segments with ties run :func:`quicksort_argsort`, the pure-Python version.
"""

from __future__ import annotations

import numpy as np

SMALL = 15  # numba's SMALL_QUICKSORT: parts this small or smaller are insertion-sorted


def _insertion(a: list[float], r: list[int], low: int, high: int) -> None:
    for i in range(low + 1, high + 1):
        k = r[i]
        v = a[k]
        j = i
        while j > low and v < a[r[j - 1]]:
            r[j] = r[j - 1]
            j -= 1
        r[j] = k


def _partition(a: list[float], r: list[int], low: int, high: int) -> int:
    mid = (low + high) >> 1
    if a[r[mid]] < a[r[low]]:
        r[low], r[mid] = r[mid], r[low]
    if a[r[high]] < a[r[mid]]:
        r[high], r[mid] = r[mid], r[high]
    if a[r[mid]] < a[r[low]]:
        r[low], r[mid] = r[mid], r[low]
    pivot = a[r[mid]]
    r[high], r[mid] = r[mid], r[high]
    i, j = low, high - 1
    while True:
        while i < high and a[r[i]] < pivot:
            i += 1
        while j >= low and pivot < a[r[j]]:
            j -= 1
        if i >= j:
            break
        r[i], r[j] = r[j], r[i]
        i += 1
        j -= 1
    r[i], r[high] = r[high], r[i]
    return i


def quicksort_argsort(keys: list[float] | np.ndarray) -> list[int]:
    """The permutation numba's ``np.argsort(keys)`` returns (ascending; pure Python)."""
    a = keys.tolist() if isinstance(keys, np.ndarray) else list(keys)
    n = len(a)
    r = list(range(n))
    if n < 2:
        return r
    stack = [(0, n - 1)]
    while stack:
        low, high = stack.pop()
        while high - low >= SMALL:
            i = _partition(a, r, low, high)
            if high - i > i - low:
                if high > i:
                    stack.append((i + 1, high))
                high = i - 1
            else:
                if i > low:
                    stack.append((low, i - 1))
                low = i + 1
        _insertion(a, r, low, high)
    return r


def argsort_segments(keys: np.ndarray, offsets: np.ndarray, *, use_accel: bool = True) -> np.ndarray:
    """Global row indices putting every segment ``keys[offsets[i]:offsets[i+1]]`` in ascending order as
    numba's quicksort argsort does (ties in its order). ``keys`` float64, ``offsets`` int64."""
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n = len(keys)
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    if use_accel:
        from ragrade._native import accel

        if accel is not None and hasattr(accel, "numba_argsort_segments"):
            accel.numba_argsort_segments(keys, offsets, out)
            return out
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(len(counts)), counts)
    order = np.lexsort((keys, seg))  # stable: the answer wherever a segment has no equal keys
    sk = keys[order]
    tied = (sk[1:] == sk[:-1]) & (seg[order][1:] == seg[order][:-1])
    out[:] = order
    for s in np.unique(seg[order][1:][tied]).tolist():
        a, b = int(offsets[s]), int(offsets[s + 1])
        out[a:b] = np.asarray(quicksort_argsort(keys[a:b]), dtype=np.int64) + a
    return out
