"""Ingestion of nested dicts: one pass over ``{query: {doc: value}}`` into flat arrays.

Uses the optional C helpers of :mod:`ragrade._accel` when they were built, else equivalent
pure-Python code (C-level iterators, no bytecode per item). Both give identical results; the tests run
both. ``RAGRADE_NO_ACCEL=1`` in the environment forces the fallback. When the build fell back, the
first use warns once (see :mod:`ragrade._native`).

The wrappers check what the C functions rely on before calling them (C-contiguous arrays of the right
dtype, sorted lookups), and the C functions check their buffers again and raise ``ValueError`` rather
than read or write out of bounds.
"""

from __future__ import annotations

import os
from itertools import chain, islice, pairwise, repeat
from typing import Any

import numpy as np

from ragrade import _native
from ragrade._arrays import Utf8Column, _string_chunk

_accel = _native.accel  # None: not built, or turned off by RAGRADE_NO_ACCEL

OK, NOT_DICT, NON_STR_KEY, NON_NUMERIC, EMPTY_KEY, CHANGED, NUL_KEY = 0, 1, 2, 3, 4, 5, 6
_BOOLS = frozenset((bool, np.bool_))  # not numbers, though Python and NumPy convert them (ragrade.data.ids)


def has_accel() -> bool:
    return _accel is not None


def c_helper() -> Any:
    """The C helper module in use (None: not built, turned off, or set aside by a test)."""
    return _accel


def _warn_if_fallback() -> None:
    if _accel is None:
        _native.warn_fallback()


def scan_values(dicts: list, use_accel: bool | None = None) -> tuple[int, np.ndarray, np.ndarray]:
    """``(status, counts, values)`` for a list of dicts: list lengths and every value as float64 in
    insertion order. ``status`` is OK or the first problem met (then the arrays are not meaningful):
    NOT_DICT, NON_STR_KEY (a key that is not exactly ``str``), NON_NUMERIC (a boolean included: ``True``
    and ``numpy.True_`` are not grades or scores), EMPTY_KEY, CHANGED (a dict changed size), NUL_KEY (a key
    holding a NUL character, which no id holds). The caller then takes its careful path, which says
    which query, document and value."""
    status, counts, values, _ = scan_items(dicts, use_accel, keys=False)
    return status, counts, values


def scan_items(dicts: list, use_accel: bool | None = None,
               keys: bool = True) -> tuple[int, np.ndarray, np.ndarray, np.ndarray | None]:
    """As :func:`scan_values`, plus every key as an object array (``keys=True``)."""
    _warn_if_fallback()
    accel = _accel if use_accel is None or use_accel else None
    if accel is not None:
        status, counts, values, key_arr, _ = _c_scan(dicts, keys, np.zeros(0, np.int64), np.zeros(0, dtype=object),
                                                     np.zeros(0, np.int64))
        return status, counts, values, key_arr if status == OK else None
    if not all(map(isinstance, dicts, repeat(dict))):
        return NOT_DICT, np.zeros(0, np.int64), np.zeros(0), None
    counts = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
    n = int(counts.sum())
    values = np.empty(n, dtype=np.float64)
    status, counts, values = _scan_values_py(dicts, counts, values)
    key_arr = np.fromiter(chain.from_iterable(dicts), dtype=object, count=n) if keys and status == OK else None
    return status, counts, values, key_arr


def _c_scan(dicts: list, want_keys: bool, which: np.ndarray, find: np.ndarray,
            find_idx: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """The C helper's one-call scan: (status, counts, values, keys or None, found), looking up
    ``find[find_idx[j]]`` in ``dicts[which[j]]``. The keys are written straight into an object array, which
    the scan asks for once it has counted them (no pass of the caller's own over the dicts)."""
    if type(dicts) is not list:
        dicts = list(dicts)
    assert _accel is not None
    got = _accel.scan(dicts, _object_array if want_keys else None, np.ascontiguousarray(which, dtype=np.int64),
                      np.ascontiguousarray(find, dtype=object), np.ascontiguousarray(find_idx, dtype=np.int64))
    status, counts, values, found = got[:4]
    keys = got[4] if want_keys else None
    return (status, np.frombuffer(counts, dtype=np.int64), np.frombuffer(values, dtype=np.float64), keys,
            np.frombuffer(found, dtype=np.float64))


def _object_array(n: int) -> np.ndarray:
    return np.empty(n, dtype=object)


def _scan_values_py(dicts: list, counts: np.ndarray, values: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    n = len(values)
    try:  # a dict's keys joined: raises TypeError on a non-str key; holds "\x00" iff a key does
        if any(map(str.__contains__, map("".join, dicts), repeat("\x00"))):
            return NUL_KEY, counts, values
    except TypeError:
        return NON_STR_KEY, counts, values
    if any(map(dict.__contains__, dicts, repeat(""))):
        return EMPTY_KEY, counts, values
    try:
        values[:] = np.fromiter(chain.from_iterable(map(dict.values, dicts)), dtype=np.float64, count=n)
    except (TypeError, ValueError, OverflowError):  # (an int beyond float64 is not a number either)
        return NON_NUMERIC, counts, values
    if np.isnan(values).any():  # NumPy reads None as NaN: let the checking path say which it was
        return NON_NUMERIC, counts, values
    if _has_boolean(dicts, counts, values):
        return NON_NUMERIC, counts, values  # NumPy read True as 1.0
    return OK, counts, values


def _has_boolean(dicts: list, counts: np.ndarray, values: np.ndarray) -> bool:
    """Whether a value of the dicts is a boolean (``values``: the same values read as float64). A boolean
    reads as 0.0 or 1.0, so only those are looked at: none in most runs (one vectorised comparison), one
    by one when they are few, all in one C-level pass over the types when they are many (grades)."""
    maybe = np.flatnonzero((values == 0.0) | (values == 1.0))
    if len(maybe) == 0:
        return False
    if len(maybe) > max(len(values) // 64, 64):
        return not _BOOLS.isdisjoint(map(type, chain.from_iterable(map(dict.values, dicts))))
    ends = np.cumsum(counts)
    owner = np.searchsorted(ends, maybe, side="right")
    for pos, i in zip(maybe.tolist(), owner.tolist(), strict=True):
        local = pos - int(ends[i] - counts[i])
        if type(next(islice(iter(dicts[i].values()), local, None))) in _BOOLS:
            return True
    return False


def lookup(dicts: list, which: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``out[i] = float(dicts[which[i]].get(keys[i], nan))`` for str keys (pure Python, C-level iterators)."""
    arr = np.fromiter(dicts, dtype=object, count=len(dicts))
    return np.fromiter(map(dict.get, arr[which], keys, repeat(np.nan)), dtype=np.float64, count=len(keys))


def scan_join(dicts: list, which: np.ndarray, keys: np.ndarray, use_accel: bool | None = None,
              key_rows: np.ndarray | None = None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`scan_values` and :func:`lookup` in one pass: ``(status, counts, values, found)``.

    The j-th lookup is ``keys[j]`` (or ``keys[key_rows[j]]``: no gathered copy is made) in
    ``dicts[which[j]]``. With the C helper, each dict's lookups run right after its values are read,
    while it is in cache (rows are visited in ``which`` order; any order is accepted)."""
    _warn_if_fallback()
    accel = _accel if use_accel is None or use_accel else None
    if key_rows is None:
        key_rows = np.arange(len(keys), dtype=np.int64)
    if accel is None:
        status, counts, values = scan_values(dicts, use_accel=False)
        found = lookup(dicts, which, keys[key_rows]) if status == OK else np.zeros(0)
        return status, counts, values, found
    which = np.ascontiguousarray(which, dtype=np.int64)
    order = None
    if len(which) > 1 and (np.diff(which) < 0).any():
        order = np.argsort(which, kind="stable")
        which, key_rows = which[order], key_rows[order]
    status, counts, values, _, found = _c_scan(dicts, False, which, keys, key_rows)
    if order is not None:
        unsorted = np.empty_like(found)
        unsorted[order] = found
        found = unsorted
    return status, counts, values, found


def rank_in_segments(sorted_desc: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: np.ndarray,
                     use_accel: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Within each descending segment ``sorted_desc[lo:hi]``: the first index whose value is
    ``<= target`` (items ranked above) and the first whose value is ``< target`` (end of the ties)."""
    accel = _accel if use_accel is None or use_accel else None
    lo = np.ascontiguousarray(lo, dtype=np.int64)
    hi = np.ascontiguousarray(hi, dtype=np.int64)
    target = np.ascontiguousarray(target, dtype=np.float64)
    if accel is not None:
        above = np.empty(len(target), dtype=np.int64)
        upto = np.empty(len(target), dtype=np.int64)
        accel.rank_in_segments(np.ascontiguousarray(sorted_desc, dtype=np.float64), lo, hi, target, above, upto)
        return above, upto
    above = _search(sorted_desc, lo, hi, target, strict=True)
    return above, _search(sorted_desc, above, hi, target, strict=False)


def _search(sorted_desc: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, strict: bool) -> np.ndarray:
    """Vectorised binary search in descending segments [lo, hi): first index whose value is <= target
    (``strict``: passes over values > target) or < target (passes over values >= target)."""
    lo = lo.copy()
    hi = hi.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        v = sorted_desc[np.where(active, mid, 0)] if len(sorted_desc) else np.zeros(len(mid))
        go_right = ((v > target) if strict else (v >= target)) & active
        lo = np.where(go_right, mid + 1, lo)
        hi = np.where(active & ~go_right, mid, hi)


def arrow_strings(arr) -> tuple[np.ndarray, object] | None:
    """``(int64 offsets, data buffer)`` of an Arrow string array (chunks combined), or None."""
    col = Utf8Column.from_arrow(arr)
    return None if col is None else col.contiguous()


def match_segments(run_strings, seg_offsets: np.ndarray, seg_to_group: np.ndarray, group_offsets: np.ndarray,
                   gold_strings, workers: int | None = None) -> np.ndarray | None:
    """Per run row, the index of the equal string among its segment's gold group (-1 if none), by a
    linear scan in C (groups are a query's few positive judgments). The run's Arrow chunks are read in
    place (no concatenation, 32- or 64-bit offsets). Either side may be a :class:`~ragrade._arrays.Utf8Column`
    (read without pyarrow). None without the C helper."""
    if _accel is None:
        _native.warn_fallback()
        return None
    parts: list[tuple[np.ndarray, object, int] | None]
    if isinstance(run_strings, Utf8Column):
        parts = [(off, data, 8) for off, data in run_strings.chunks]
    else:
        import pyarrow as pa

        chunks = run_strings.chunks if isinstance(run_strings, pa.ChunkedArray) else [run_strings]
        parts = [_string_chunk(c) for c in chunks]
    gold = gold_strings.contiguous() if isinstance(gold_strings, Utf8Column) else arrow_strings(gold_strings)
    if gold is None or any(p is None for p in parts):
        return None
    gold_prefix = np.empty(len(gold[0]) - 1, dtype=np.uint64)
    _accel.prefixes8(gold[0], gold[1], gold_prefix)
    lengths = np.array([len(p[0]) - 1 for p in parts if p is not None], dtype=np.int64)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    n = int(bounds[-1])
    out = np.empty(n, dtype=np.int64)
    seg_offsets = np.ascontiguousarray(seg_offsets, dtype=np.int64)
    seg_to_group = np.ascontiguousarray(seg_to_group, dtype=np.int64)
    group_offsets = np.ascontiguousarray(group_offsets, dtype=np.int64)
    if len(parts) > 1:  # cut segments at chunk boundaries: each piece then lies in one chunk
        cuts = np.sort(np.concatenate((seg_offsets, bounds[(bounds > seg_offsets[0]) & (bounds < seg_offsets[-1])])))
        cuts = cuts[np.concatenate(([True], cuts[1:] != cuts[:-1]))]  # (union1d's result, without its imports)
        seg_to_group = seg_to_group[np.searchsorted(seg_offsets, cuts[:-1], side="right") - 1]
        seg_offsets = cuts
    nseg = len(seg_to_group)
    # The first segment of each chunk; then work pieces of about equal rows, never across a chunk.
    chunk_first = np.searchsorted(seg_offsets[:-1], bounds[:-1], side="left")
    chunk_first = np.append(chunk_first, nseg)
    if workers is None:
        workers = min(os.cpu_count() or 1, 4, max(1, n // 1_000_000))
    per_piece = max(n // max(workers, 1), 1)
    pieces: list[tuple[int, int, int]] = []
    for c in range(len(parts)):
        a, z = int(chunk_first[c]), int(chunk_first[c + 1])
        while a < z:
            target = seg_offsets[a] + per_piece
            b = min(max(int(np.searchsorted(seg_offsets, target, side="left")), a + 1), z)
            pieces.append((c, a, b))
            a = b

    accel = _accel

    def part(piece: tuple[int, int, int]) -> None:
        c, a, b = piece
        got = parts[c]
        assert got is not None
        off, data, width = got
        accel.match_segments(off, data, width, int(bounds[c]), seg_offsets, seg_to_group, group_offsets,
                             gold[0], gold[1], gold_prefix, out, a, b)

    if workers <= 1 or len(pieces) <= 1:
        for piece in pieces:
            part(piece)
    else:  # the C scan releases the GIL: split the queries across cores
        from ragrade._threads import each

        each(part, pieces)
    return out


def sort_segments_desc(scores: np.ndarray, offsets: np.ndarray, workers: int | None = None) -> np.ndarray | None:
    """Permutation ordering each segment's rows by descending score, equal scores in row order (a merge
    sort per segment in C, the segments split across cores). None without the C helper."""
    if _accel is None:
        _native.warn_fallback()
        return None
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n, nseg = len(scores), len(offsets) - 1
    out = np.empty(n, dtype=np.int64)
    if workers is None:
        workers = min(os.cpu_count() or 1, 4, max(1, n // 1_000_000))
    workers = max(1, min(workers, max(nseg, 1)))
    if workers == 1:
        _accel.sort_segments_desc(scores, offsets, out, 0, nseg)
        return out
    # cut at segment starts near equal row counts
    cuts = np.searchsorted(offsets, np.linspace(0, n, workers + 1)[1:-1]).tolist()
    bounds = list(pairwise([0, *cuts, nseg]))
    from ragrade._threads import each

    each(lambda b: _accel.sort_segments_desc(scores, offsets, out, b[0], b[1]), bounds)
    return out
