"""``ragrade.compat._speedups.sort_segments_trec`` (trec_eval's rank order in C, used by ``ragrade trec_eval``) equals the ranking
kernel's order (score descending, ties by document id descending as strcmp compares), on random segments with
many ties, ids that are prefixes of others, non-ASCII ids, equal rows; and refuses every broken offset with
``ValueError`` before it writes (the sanitizer step of CI runs this file)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.compat import _native
from ragrade.compat.trec_eval_inputs import trec_order
from ragrade.data.ranking import rank_rows

accel = _native.speedups
needs_accel = pytest.mark.skipif(accel is None, reason="the C helper is not built (or RAGRADE_NO_ACCEL is set)")

I64 = np.int64


def strings_of(ids: list[str]) -> tuple[np.ndarray, bytes]:
    data = [s.encode("utf-8") for s in ids]
    off = np.zeros(len(data) + 1, dtype=I64)
    np.cumsum([len(b) for b in data], out=off[1:])
    return off, b"".join(data)


def kernel_order(ids: list[str], scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    arr = np.array(ids, dtype=object)
    perm = rank_rows(offsets, scores, lambda rows: arr[rows])
    return np.arange(len(ids)) if perm is None else perm


@needs_accel
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_trec_order_equals_the_ranking_kernel(workers):
    rng = np.random.default_rng(5)
    pool = ["d1", "d10", "d2", "D2", "é", "e", "ü1", "a", "ab", "abc", "z", "\U0001F600", "x y"]
    counts = rng.integers(0, 40, 300)
    offsets = np.zeros(len(counts) + 1, dtype=I64)
    np.cumsum(counts, out=offsets[1:])
    ids: list[str] = []
    for c in counts.tolist():
        ids += [pool[int(i)] + str(j % 3) for j, i in enumerate(rng.integers(0, len(pool), c))]
    scores = rng.integers(0, 4, len(ids)).astype(np.float64) / 2
    scores[rng.random(len(ids)) < 0.1] = -0.0
    got = trec_order(scores, offsets, strings_of(ids), workers=workers)
    assert got is not None
    assert (got == kernel_order(ids, scores, offsets)).all()


@needs_accel
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=4), st.sampled_from([0.0, 0.5, 1.0, -1.0, 1e300])),
                max_size=30), st.integers(0, 3))
def test_trec_order_on_any_ids(rows, cut):
    ids = [d for d, _ in rows]
    scores = np.array([s for _, s in rows], dtype=np.float64)
    n = len(ids)
    offsets = np.array(sorted({0, min(cut, n), min(2 * cut + 1, n), n}), dtype=I64)
    got = trec_order(scores, offsets, strings_of(ids), workers=1)
    assert got is not None
    want = kernel_order(ids, scores, offsets)
    # rows equal in score and id (a document listed twice) keep their row order in both
    assert (got == want).all()


@needs_accel
@pytest.mark.parametrize(("offsets", "str_off", "out_len", "segs"), [
    ([0, 3, 2], [0, 1, 2, 3, 4], 4, (0, 2)),  # segment offsets decrease
    ([0, 5], [0, 1, 2, 3, 4], 4, (0, 1)),  # a segment beyond the scores
    ([0, 4], [0, 1, 2, 3, 4], 3, (0, 1)),  # out too small
    ([0, 4], [0, 1, 2, 3], 4, (0, 1)),  # fewer strings than rows
    ([0, 4], [0, 1, 9, 3, 4], 4, (0, 1)),  # a string beyond the data
    ([0, 4], [0, 2, 1, 3, 4], 4, (0, 1)),  # a string ending before it starts
    ([0, 4], [-1, 1, 2, 3, 4], 4, (0, 1)),  # a negative string offset
    ([0, 4], [0, 1, 2, 3, 4], 4, (0, 2)),  # segments beyond the offsets
    ([0, 4], [0, 1, 2, 3, 4], 4, (-1, 1)),  # a negative first segment
    ([-1, 4], [0, 1, 2, 3, 4], 4, (0, 1)),  # a negative row offset
])
def test_sort_segments_trec_refuses_broken_offsets_before_writing(offsets, str_off, out_len, segs):
    out = np.full(out_len, -7, dtype=I64)
    with pytest.raises(ValueError, match="sort_segments_trec"):
        accel.sort_segments_trec(np.zeros(4), np.array(offsets, dtype=I64), np.array(str_off, dtype=I64),
                                 b"abcd", out, segs[0], segs[1])
    assert (out == -7).all()


@needs_accel
def test_trec_order_reads_arrow_ids_as_the_drop_in_does():
    ids = ["b", "a", "c", "a1", "é"]
    arr = pa.array(ids)
    strings = _native.arrow_strings(arr)
    assert strings is not None
    got = trec_order(np.array([1.0, 1.0, 0.5, 1.0, 1.0]), np.array([0, 5], dtype=I64), strings)
    assert got is not None
    assert [ids[i] for i in got] == ["é", "b", "a1", "a", "c"]


def test_trec_order_without_the_c_helper_is_none(monkeypatch):
    monkeypatch.setattr(_native, "speedups", None)
    assert trec_order(np.zeros(2), np.array([0, 2], dtype=I64), strings_of(["a", "b"])) is None


def _strings(items: list[bytes]) -> tuple[np.ndarray, bytes]:
    off = np.zeros(len(items) + 1, dtype=I64)
    np.cumsum([len(b) for b in items], out=off[1:])
    return off, b"".join(items)


@needs_accel
def test_trec_lines_writes_heads_queries_values_and_texts():
    ho, hd = _strings([b"map", b"rel"])
    qo, qd = _strings([b"q1", b"q2"])
    to, td = _strings([b"'1'", b"''"])
    values = np.array([0.5, -float("nan")])  # a NaN with its sign bit set (0 / 0 on x86-64) prints -nan
    out = accel.trec_lines(values, np.array([-1, 0], dtype=I64), ho, hd, qo, qd, to, td, 0, 2)
    assert out == b"map\tq1\t0.5000\nrel\tq1\t'1'\nmap\tq2\t  -nan\nrel\tq2\t''\n"
    values = np.array([0.5, float("nan")])  # one without (a gain given as nan) prints nan, as glibc does
    out = accel.trec_lines(values, np.array([-1, 0], dtype=I64), ho, hd, qo, qd, to, td, 0, 2)
    assert out == b"map\tq1\t0.5000\nrel\tq1\t'1'\nmap\tq2\t   nan\nrel\tq2\t''\n"
    assert accel.trec_lines(values, np.array([-1, 0], dtype=I64), ho, hd, qo, qd, to, td, 1, 1) == b""


@needs_accel
@pytest.mark.parametrize("case", ["kinds beyond floats", "kinds beyond texts", "huge kind", "huge negative kind",
                                  "heads count", "head offsets", "query offsets", "text offsets", "query range",
                                  "negative begin"])
def test_trec_lines_refuses_broken_inputs(case):
    ho, hd = _strings([b"map", b"rel"])
    qo, qd = _strings([b"q1", b"q2"])
    to, td = _strings([b"'1'", b"''"])
    values = np.array([0.5, 0.25])
    kinds = np.array([-1, 0], dtype=I64)
    begin, end = 0, 2
    if case == "kinds beyond floats":
        kinds = np.array([-2, 0], dtype=I64)
    elif case == "kinds beyond texts":
        kinds = np.array([-1, 1], dtype=I64)
    elif case == "huge kind":
        kinds = np.array([-1, 2**62], dtype=I64)
    elif case == "huge negative kind":
        kinds = np.array([-(2**63), 0], dtype=I64)
    elif case == "heads count":
        kinds = np.array([-1, 0, 0], dtype=I64)
    elif case == "head offsets":
        ho = np.array([0, 5, 3], dtype=I64)
    elif case == "query offsets":
        qo = np.array([0, 2, 99], dtype=I64)
    elif case == "text offsets":
        to = np.array([-1, 3, 5], dtype=I64)
    elif case == "query range":
        end = 3
    elif case == "negative begin":
        begin = -1
    with pytest.raises(ValueError, match="trec_lines"):
        accel.trec_lines(values, kinds, ho, hd, qo, qd, to, td, begin, end)
