"""The reproduction of numba's default np.argsort (ranx's tie order): C helper and pure Python, against
numba itself on arrays with many ties, short (insertion sort) and long (quicksort) ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.fusion._numba_sort import argsort_segments, quicksort_argsort

from ._gen import need


@pytest.fixture(scope="module")
def numba_argsort():
    numba = need("numba", "numba comes with ranx (test extra)")

    @numba.njit
    def f(a):
        return np.argsort(a)

    return f


def test_equals_numba_on_random_arrays(numba_argsort) -> None:
    rng = np.random.default_rng(0)
    for _ in range(400):
        n = int(rng.integers(0, 300))
        a = rng.integers(0, int(rng.integers(1, 12)), n).astype(float) if rng.random() < 0.7 else rng.random(n)
        ref = numba_argsort(a) if n else np.empty(0, dtype=np.int64)
        assert quicksort_argsort(a) == ref.tolist()
        for accel in (True, False):
            assert argsort_segments(a, np.array([0, n]), use_accel=accel).tolist() == ref.tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), max_size=60), min_size=1, max_size=6))
def test_segments_sorted_independently(numba_argsort, segs: list[list[int]]) -> None:
    keys = np.array([x for s in segs for x in s], dtype=float)
    off = np.cumsum([0] + [len(s) for s in segs])
    expected = np.concatenate([numba_argsort(np.array(s, dtype=float)) + off[i] if s else np.empty(0, dtype=np.int64)
                               for i, s in enumerate(segs)]) if len(keys) else np.empty(0, dtype=np.int64)
    for accel in (True, False):
        assert argsort_segments(keys, off, use_accel=accel).tolist() == expected.tolist()


def test_a_tie_of_forty_is_not_stable(numba_argsort) -> None:
    a = np.zeros(40)
    order = argsort_segments(a, np.array([0, 40]))
    assert order.tolist() == numba_argsort(a).tolist() != list(range(40))


def test_long_segments_and_sorted_inputs_equal_numba(numba_argsort) -> None:
    """Deep partitions (lists of thousands), few or many distinct keys, inputs already in order or in
    reverse order, zeros of both signs: the C helper's branch-free partition and counting leaf sort
    give numba's permutation, and the descending variant gives it for the negated keys."""
    from ragrade.kernels.tie_orders import argsort_segments_desc

    rng = np.random.default_rng(7)
    segs = []
    for _ in range(120):
        n = int(rng.integers(0, 4000))
        kind = rng.integers(0, 5)
        if kind == 0:
            a = rng.integers(0, int(rng.integers(1, 50)), n).astype(float)
        elif kind == 1:
            a = np.sort(np.round(rng.random(n), 2))
        elif kind == 2:
            a = np.sort(np.round(rng.random(n), 1))[::-1].copy()
        elif kind == 3:
            a = rng.choice([0.0, -0.0, 1.0], n)
        else:
            a = rng.random(n)
        segs.append(a)
    keys = np.concatenate(segs)
    off = np.cumsum([0] + [len(s) for s in segs])
    expected = np.concatenate([numba_argsort(s) + off[i] if len(s) else np.empty(0, dtype=np.int64)
                               for i, s in enumerate(segs)])
    for accel in (True, False):
        assert argsort_segments(keys, off, use_accel=accel).tolist() == expected.tolist()
    expected_desc = np.concatenate([numba_argsort(-s) + off[i] if len(s) else np.empty(0, dtype=np.int64)
                                    for i, s in enumerate(segs)])
    for accel in (True, False):
        perm, vals = argsort_segments_desc(keys, off, use_accel=accel)
        assert perm.tolist() == expected_desc.tolist()
        assert np.array_equal(vals, keys[expected_desc]) and np.array_equal(np.signbit(vals),
                                                                             np.signbit(keys[expected_desc]))
