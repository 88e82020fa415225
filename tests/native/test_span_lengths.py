"""The C helper's span lengths (``ragrade._accel.span_lengths``, issue 35's speed): the same integers as the
NumPy path for random interval sets (overlapping, touching, nested, empty, repeated, in any order, both
layouts of the retrieved rows, every cutoff), and every precondition a caller could break refused with a
``ValueError`` before anything is read or written (CI runs this file under ASan and UBSan)."""

from __future__ import annotations

import numpy as np
import pytest

from ragrade import _native
from ragrade.kernels import spans as K

accel = _native.accel
needs_accel = pytest.mark.skipif(accel is None or not hasattr(accel, "span_lengths"),
                                 reason="the C helper is not built (or RAGRADE_NO_ACCEL is set)")
NAMES = ("inter", "gold_union", "ret_union", "gold_sum", "ret_sum", "gold_covered", "ret_covered")
I64 = np.int64


def _intervals(rng: np.random.Generator, n: int, top: int) -> tuple[np.ndarray, np.ndarray]:
    start = rng.integers(0, top, n)
    length = rng.choice([0, 1, 2, 5, 20, 60], n)
    return start.astype(I64), (start + length).astype(I64)


def _inputs(rng: np.random.Generator, nq: int, *, retrieved_layout: bool) -> K.SpanInputs:
    top = int(rng.choice([8, 50, 400]))
    g_per = rng.integers(0, 4, nq)
    gq = np.repeat(np.arange(nq, dtype=I64), g_per)
    gs, ge = _intervals(rng, len(gq), top)
    perm = rng.permutation(len(gq))  # gold rows in any order
    r_per = rng.integers(0, 12, nq)
    rq = np.repeat(np.arange(nq, dtype=I64), r_per)
    rank = np.concatenate([np.arange(c, dtype=I64) for c in r_per]) if nq else np.zeros(0, I64)
    rs, re = _intervals(rng, len(rq), top)
    if rng.random() < 0.3 and len(rs) > 2:  # one chunk retrieved twice
        rs[1], re[1] = rs[0], re[0]
    if not retrieved_layout:
        shuffle = rng.permutation(len(rq))
        return K.SpanInputs(nq, gq[perm], gs[perm], ge[perm], rq[shuffle], rank[shuffle], rs[shuffle], re[shuffle])
    # the same rows as indices into a table of distinct chunks (a repeat kept as the same interval index)
    table, row_iv = np.unique(np.stack([rs, re], axis=1), axis=0, return_inverse=True)
    row_iv = row_iv.reshape(-1).astype(np.int32 if rng.random() < 0.5 else I64)
    lo = np.concatenate([[0], np.cumsum(r_per)[:-1]]).astype(I64) if nq else np.zeros(0, I64)
    hi = np.cumsum(r_per).astype(I64)
    retrieved = K.Retrieved(lo, hi, row_iv, table[:, 0].astype(I64), table[:, 1].astype(I64))
    return K.SpanInputs(nq, gq[perm], gs[perm], ge[perm], retrieved=retrieved)


def _numpy_lengths(inp: K.SpanInputs, k: np.ndarray | None) -> dict[str, np.ndarray]:
    got = K.lengths(inp, K._mask(inp, k), None)
    return {n: np.asarray(getattr(got, n)) for n in NAMES}


@needs_accel
@pytest.mark.parametrize("seed", range(40))
def test_the_native_lengths_equal_numpys(seed):
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 30))
    inp = _inputs(rng, nq, retrieved_layout=bool(seed % 2))
    for k in (None, np.full(nq, 1, I64), rng.integers(0, 15, nq).astype(I64)):
        native = K._native_lengths(accel, inp, k, None)
        assert native is not None
        want = _numpy_lengths(inp, k)
        for name in NAMES:
            np.testing.assert_array_equal(np.asarray(getattr(native, name)), want[name], err_msg=f"{name} k={k}")


@needs_accel
def test_lengths_at_takes_the_native_path_and_numpy_without_it(monkeypatch):
    rng = np.random.default_rng(7)
    inp = _inputs(rng, 25, retrieved_layout=False)
    native = K.lengths_at(inp, None, None)
    assert isinstance(native, K.Counted)
    monkeypatch.setattr(K, "NATIVE", False)
    fallback = K.lengths_at(inp, None, None)
    assert not isinstance(fallback, K.Counted)
    for name in NAMES:
        np.testing.assert_array_equal(np.asarray(getattr(native, name)), np.asarray(getattr(fallback, name)))


def _valid() -> dict[str, np.ndarray]:
    return {"k": np.array([2, 5], I64), "seg_lo": np.array([0, 2], I64), "seg_hi": np.array([2, 3], I64),
            "row_iv": np.array([0, 1, 1], I64), "iv_start": np.array([0, 10], I64), "iv_end": np.array([5, 20], I64),
            "gold_lo": np.array([0, 1], I64), "gold_hi": np.array([1, 2], I64),
            "gold_start": np.array([3, 12], I64), "gold_end": np.array([8, 30], I64),
            "out": np.full(14, -7, I64)}


def _call(a: dict[str, np.ndarray], with_union: bool = True) -> int:
    order = ("k", "seg_lo", "seg_hi", "row_iv", "iv_start", "iv_end", "gold_lo", "gold_hi", "gold_start",
             "gold_end", "out")
    return accel.span_lengths(*(a[n] for n in order), with_union)


@needs_accel
def test_a_valid_call_fills_every_length():
    a = _valid()
    assert _call(a) == 0
    out = a["out"].reshape(7, 2)
    # query 0: chunks [0,5) and [10,20) against gold [3,8): inter 2; query 1: chunk [10,20) against [12,30)
    assert out[:, 0].tolist() == [2, 5, 15, 5, 15, 2, 2]
    assert out[:, 1].tolist() == [8, 18, 10, 18, 10, 8, 8]


BAD = {
    "a length that does not match": lambda a: a.update(seg_hi=np.array([2], I64)),
    "an output too short": lambda a: a.update(out=np.zeros(13, I64)),
    "a segment past its rows": lambda a: a.update(seg_hi=np.array([2, 4], I64)),
    "a segment ending before it starts": lambda a: a.update(seg_lo=np.array([0, 3], I64), seg_hi=np.array([2, 2], I64)),
    "a gold segment past the spans": lambda a: a.update(gold_hi=np.array([1, 3], I64)),
    "a row pointing past the intervals": lambda a: a.update(row_iv=np.array([0, 1, 2], I64)),
    "a row pointing before the intervals": lambda a: a.update(row_iv=np.array([0, -2, 1], I64)),
    "a negative start": lambda a: a.update(iv_start=np.array([-1, 10], I64)),
    "an interval ending before it starts": lambda a: a.update(gold_end=np.array([2, 30], I64)),
    "a negative cutoff": lambda a: a.update(k=np.array([-1, 5], I64)),
    "a float array": lambda a: a.update(iv_start=np.array([0.0, 10.0])),
    "a read-only output": lambda a: a.update(out=np.frombuffer(bytes(14 * 8), dtype=I64)),
}


@needs_accel
@pytest.mark.parametrize("what", sorted(BAD))
def test_every_precondition_is_refused(what):
    a = _valid()
    BAD[what](a)
    before = a["out"].copy()
    with pytest.raises((ValueError, TypeError)):
        _call(a)
    if "row pointing" not in what:  # checked up front: nothing written (a row's index is checked as it is read)
        np.testing.assert_array_equal(a["out"], before)


@needs_accel
def test_sums_that_could_overflow_are_left_to_numpy():
    # coordinates near 2**62: the helper says so (returns 1) and the caller computes with NumPy
    a = _valid()
    big = np.int64(2**61)
    a.update(iv_start=np.array([0, big], I64), iv_end=np.array([big, big + 10], I64))
    assert _call(a) == 1
    inp = K.SpanInputs(1, np.array([0], I64), np.array([0], I64), np.array([big], I64),
                       np.array([0, 0], I64), np.array([0, 1], I64), np.array([0, 5], I64), np.array([big, big], I64))
    got = K.lengths_at(inp, None, None)
    assert not isinstance(got, K.Counted)
    assert int(np.asarray(got.inter)[0]) == int(big)
