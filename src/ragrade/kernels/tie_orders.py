"""Peers' orders among equal scores that follow no stated rule, reproduced exactly.

ranx sorts each query's documents with numba's ``np.argsort`` (its default ``kind="quicksort"``) on the
negated scores. numba's quicksort is not stable: arrays of at most 15 items go through an insertion sort
(which keeps equal items in input order), longer ones are split by a median-of-three partition first, and
the partition moves equal items across each other. The order is fixed for one input order, but is no
rule one could state; :func:`numba_argsort` replays the algorithm step by step (written from numba's
description of it: ``numba/misc/quicksort.py``), with two shortcuts that do not change its result:

* a range whose values are all distinct ends sorted whatever the algorithm does inside it, so it is
  sorted directly (quicksort ranges hold exactly the values that end in them);
* a partition of a long range is computed with NumPy: the left scan stops at the values not below the
  pivot, the right scan at the values not above it, and the t-th stops of the two scans are swapped
  while they have not crossed.

ranx reaches three orders, depending on how the run is handed over (:func:`ranx_order`):

* ``"ranx"``: ``ranx.Run(dict)`` (and ``Run.from_file``/``from_df``) sort once;
* ``"ranx_comparable"``: ``evaluate(..., make_comparable=True)`` (and ``compare``) sort the sorted run
  again, which moves ties once more on lists longer than 15;
* ``"ranx_dict"``: a plain dict given to ``ranx.evaluate`` is sorted by ascending score and reversed.
"""

from __future__ import annotations

import os
from itertools import pairwise
from typing import Any

import numpy as np

#: numba's threshold: ranges of at most this many items are insertion-sorted.
SMALL = 15
_VECTOR = 96  # partitions of longer ranges are computed with NumPy

RANX_ORDERS = ("ranx", "ranx_comparable", "ranx_dict")


def _partition_py(a: list[float], r: list[int], low: int, high: int) -> int:
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


def _partition_np(a: np.ndarray, r: np.ndarray, low: int, high: int) -> int:
    mid = (low + high) >> 1
    if a[r[mid]] < a[r[low]]:
        r[low], r[mid] = r[mid], r[low]
    if a[r[high]] < a[r[mid]]:
        r[high], r[mid] = r[mid], r[high]
    if a[r[mid]] < a[r[low]]:
        r[low], r[mid] = r[mid], r[low]
    pivot = a[r[mid]]
    r[high], r[mid] = r[mid], r[high]
    v = a[r[low:high]]
    left = np.flatnonzero(~(v < pivot)) + low  # stops of the rising scan, in order
    right = np.flatnonzero(~(pivot < v))[::-1] + low  # stops of the falling scan, in order
    n = min(len(left), len(right))
    crossed = np.flatnonzero(left[:n] >= right[:n])
    t = int(crossed[0]) if len(crossed) else n  # the round in which the scans meet
    stop = int(left[t]) if t < len(left) else high
    if t > 0:
        stop = min(stop, int(right[t - 1]))  # that slot now holds a value not below the pivot
        li, ri = left[:t], right[:t]
        tmp = r[li].copy()
        r[li] = r[ri]
        r[ri] = tmp
    r[stop], r[high] = r[high], r[stop]
    return stop


def numba_argsort(values: np.ndarray) -> np.ndarray:
    """The permutation numba's ``np.argsort(values)`` (quicksort) returns, for finite float64 values."""
    a = np.asarray(values, dtype=np.float64)
    n = len(a)
    srt = np.sort(a)
    dup = np.zeros(n, dtype=np.int64)
    if n > 1:
        np.cumsum(srt[1:] == srt[:-1], out=dup[1:])
    if n < 2 or dup[-1] == 0 or n <= SMALL:
        return np.argsort(a, kind="stable")  # no tie, or the insertion sort (stable) alone
    r = np.arange(n, dtype=np.int64)
    a_list: list[float] | None = None
    r_list: list[int] | None = None
    stack = [(0, n - 1)]
    done: list[tuple[int, int]] = []
    while stack:
        low, high = stack.pop()
        while high - low >= SMALL and dup[high] - dup[low] > 0:
            if high - low >= _VECTOR:
                if r_list is not None:
                    r[:] = r_list
                    r_list = None
                i = _partition_np(a, r, low, high)
            else:
                if r_list is None:
                    r_list = r.tolist()
                    if a_list is None:
                        a_list = a.tolist()
                assert a_list is not None
                i = _partition_py(a_list, r_list, low, high)
            if high - i > i - low:
                if high > i:
                    stack.append((i + 1, high))
                high = i - 1
            else:
                if i > low:
                    stack.append((low, i - 1))
                low = i + 1
        done.append((low, high))
    if r_list is not None:
        r[:] = r_list
    for low, high in done:  # insertion sort (stable) or a range without ties
        if high > low:
            seg = r[low:high + 1]
            r[low:high + 1] = seg[np.argsort(a[seg], kind="stable")]
    return r


_PARALLEL_ROWS = 400_000  # below this, one thread


def _in_parts(sort: Any, offsets: np.ndarray) -> None:
    """``sort(offsets)`` over the whole range, or over consecutive groups of segments in threads (the C
    helper releases the GIL, and each call writes its own segments' rows only)."""
    n = int(offsets[-1] - offsets[0]) if len(offsets) else 0
    workers = min(os.cpu_count() or 1, 4, n // _PARALLEL_ROWS)
    if workers < 2 or len(offsets) < 3:
        sort(offsets)
        return
    from ragrade._threads import each

    cuts = np.searchsorted(offsets, np.linspace(offsets[0], offsets[-1], workers + 1)[1:-1])
    bounds = [0, *sorted(set(int(c) for c in cuts) - {0, len(offsets) - 1}), len(offsets) - 1]
    parts = [offsets[a: b + 1] for a, b in pairwise(bounds)]
    each(sort, parts)


def argsort_segments(keys: np.ndarray, offsets: np.ndarray, *, use_accel: bool = True) -> np.ndarray:
    """Global row indices putting every segment ``keys[offsets[i]:offsets[i+1]]`` in ascending order as
    numba's quicksort argsort does (ties in its order), all segments at once: the C helper runs the
    algorithm when it is built; otherwise segments without equal keys take NumPy's stable sort (the one
    permutation possible) and only segments with ties run :func:`numba_argsort`. ``keys`` float64,
    ``offsets`` int64."""
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n = len(keys)
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    if use_accel:
        from ragrade._native import accel

        if accel is not None and hasattr(accel, "numba_argsort_segments"):
            _in_parts(lambda off: accel.numba_argsort_segments(keys, off, out), offsets)
            return out
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(len(counts)), counts)
    order = np.lexsort((keys, seg))  # stable: the answer wherever a segment has no equal keys
    sk = keys[order]
    tied = (sk[1:] == sk[:-1]) & (seg[order][1:] == seg[order][:-1])
    out[:] = order
    for s in np.unique(seg[order][1:][tied]).tolist():
        a, b = int(offsets[s]), int(offsets[s + 1])
        out[a:b] = numba_argsort(keys[a:b]) + a
    return out


def argsort_segments_desc(values: np.ndarray, offsets: np.ndarray, *, use_accel: bool = True
                          ) -> tuple[np.ndarray, np.ndarray]:
    """``(perm, values[perm])``: :func:`argsort_segments` of ``-values`` (ranx's descending rank order,
    equal values in numba's order), and the values in that order (one pass in the C helper)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if use_accel and len(values):
        from ragrade._native import accel

        if accel is not None and hasattr(accel, "fusion_layout"):  # the build that negates and gathers
            perm = np.empty(len(values), dtype=np.int64)
            out = np.empty(len(values), dtype=np.float64)
            _in_parts(lambda off: accel.numba_argsort_segments(values, off, perm, out, True), offsets)
            return perm, out
    perm = argsort_segments(-values, offsets, use_accel=use_accel)
    return perm, values[perm]


def _one(scores: np.ndarray, kind: str) -> np.ndarray:
    if kind == "ranx":
        return numba_argsort(-scores)
    if kind == "ranx_comparable":
        first = numba_argsort(-scores)
        return first[numba_argsort(-scores[first])]
    if kind == "ranx_dict":
        return numba_argsort(scores)[::-1]
    raise ValueError(f"unknown tie order {kind!r}; known: {', '.join(RANX_ORDERS)}")


def ranx_order(scores: np.ndarray, offsets: np.ndarray, kind: str = "ranx",
               none_without_ties: bool = False) -> np.ndarray | None:
    """Row permutation putting each query segment (``offsets``) in ranx's rank order (``kind``: one of
    :data:`RANX_ORDERS`). Segments stay in place; segments without equal scores are only sorted.
    ``none_without_ties``: None when no segment has equal scores (any tie rule gives the same order)."""
    from ragrade.data.ranking import argsort_desc_within, tie_runs

    scores = np.asarray(scores, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if kind not in RANX_ORDERS:
        raise ValueError(f"unknown tie order {kind!r}; known: {', '.join(RANX_ORDERS)}")
    perm = argsort_desc_within(scores, offsets)
    eq = tie_runs(scores[perm], offsets)
    if not eq.any():
        return None if none_without_ties else perm
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    tied = np.unique(seg[1:][eq])
    perm = perm.copy()
    for q in tied.tolist():
        lo, hi = int(offsets[q]), int(offsets[q + 1])
        if hi - lo <= SMALL and kind != "ranx_dict":
            perm[lo:hi] = lo + np.argsort(-scores[lo:hi], kind="stable")
            continue
        perm[lo:hi] = lo + _one(scores[lo:hi], kind)
    return perm


__all__ = ["RANX_ORDERS", "argsort_segments", "argsort_segments_desc", "numba_argsort", "ranx_order"]
