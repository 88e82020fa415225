"""The C helpers of ``ragrade.compat.pytrec_eval``'s fast path (``pytrec_join``, ``nested_dicts``) against their
pure-Python fallbacks: the same results on random rankings (ties, float32 collisions, infinities, non-ASCII
ids, many judged documents), the same refusals, and ValueError / TypeError rather than out-of-bounds access on
inconsistent buffers. These tests run in the sanitizer step of ``.ci/run`` (ASan/UBSan); they do not call
pytrec_eval itself, whose C++ is not built for the sanitizers.
"""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade import _ingest
from ragrade.compat import _native
from ragrade.compat.pytrec_eval import nested_dicts, pytrec_join

accel = _native.speedups  # the drop-ins' C helpers (ragrade.compat._speedups)
engine_accel = _ingest._accel
needs_accel = pytest.mark.skipif(accel is None, reason="the C helper is not built (RAGRADE_NO_ACCEL or no compiler)")

IDS = ["a", "b", "c", "d", "é", "z", "ab", "B", "\u4e2d", "d10", "d9", "d1"]


def layout(judged, offset=0):
    """The judged ids as the join takes them: one list (after ``offset`` unrelated ids), each query's range."""
    docs = [f"pad{i}" for i in range(offset)] + [d for j in judged for d in j]
    jcounts = np.array([len(j) for j in judged], dtype=np.int64)
    starts = offset + np.concatenate([[0], np.cumsum(jcounts)[:-1]]).astype(np.int64)
    return docs, starts, jcounts


def both(runs, judged, offset=0):
    docs, starts, jcounts = layout(judged, offset)
    fast = pytrec_join(runs, docs, starts, jcounts, use_accel=True) if accel is not None else None
    slow = pytrec_join(runs, docs, starts, jcounts, use_accel=False)
    return fast, slow


def assert_same(fast, slow):
    if accel is None:
        return
    if slow is None:
        assert fast is None
        return
    assert fast is not None
    for x, y in zip(fast[:3], slow[:3], strict=True):
        assert np.array_equal(x, y), (x, y)
    assert fast[3] == slow[3]


def random_case(rng: np.random.Generator, n_queries: int, many: bool):
    runs, judged = [], []
    pool = [f"d{i}" for i in range(120)] + IDS
    scores = [0.5, 0.25, 1.0, 1.0 + 1e-9, 1.0 - 1e-9, 3, -2, 0.0, -0.0, math.inf, -math.inf, 1e30]
    for _ in range(n_queries):
        docs = rng.choice(pool, int(rng.integers(0, 100 if many else 30)), replace=False).tolist()
        runs.append({d: (scores[int(rng.integers(len(scores)))] if rng.random() < 0.5 else float(rng.random()))
                     for d in docs})
        jd = rng.choice(pool, int(rng.integers(1, 90 if many else 12)), replace=False).tolist()
        judged.append({d: int(rng.integers(-1, 4)) for d in jd})
    return runs, judged


@pytest.mark.parametrize("seed", range(6))
def test_join_equals_the_fallback_on_random_rankings(seed):
    rng = np.random.default_rng(seed)
    runs, judged = random_case(rng, 40, many=seed % 2 == 1)  # odd seeds: > 32 judged (binary search)
    fast, slow = both(runs, judged)
    _, starts, _ = layout(judged)
    assert slow is not None
    assert_same(fast, slow)
    rows, pos, counts, _ = slow
    assert counts.tolist() == [len(r) for r in runs]
    # each found judgment's rank is its place in the ranking sorted as trec_eval sorts (float32 scores)
    where = {}
    for i, (r, j) in enumerate(zip(runs, judged, strict=True)):
        order = sorted(r, key=lambda d, r=r: (np.float32(r[d]), d), reverse=True)
        for t, d in enumerate(j):
            if d in r:
                where[int(starts[i]) + t] = order.index(d)
    assert dict(zip(rows.tolist(), pos.tolist(), strict=True)) == where


def test_join_ranks_ties_by_id_descending_in_code_point_order():
    runs = [{"a": 1.0, "é": 1.0, "z": 1.0, "\u4e2d": 1.0, "b": 2.0}]
    judged = [{"a": 1, "é": 1, "z": 0, "\u4e2d": 2, "x": 1}]
    fast, slow = both(runs, judged)
    assert_same(fast, slow)
    rows, pos, _, _ = slow
    # b (2.0) first, then the tied ids descending: 中 > é > z > a
    assert dict(zip(rows.tolist(), pos.tolist(), strict=True)) == {3: 1, 1: 2, 2: 3, 0: 4}


def test_join_rounds_scores_to_float32():
    runs = [{"a": 1.0, "b": 1.0 + 1e-12}]  # equal in float32: the tie goes by id (b before a)
    fast, slow = both(runs, [{"a": 1, "b": 1}])
    assert_same(fast, slow)
    assert slow is not None and slow[1].tolist() == [0, 1] and slow[0].tolist() == [1, 0]


@pytest.mark.parametrize("ranking", [
    {"a": math.nan}, {"a": True}, {"a": "1.0"}, {"a": None}, {1: 1.0}, {"a": 10 ** 400}, {"a": 1e39},
    {"a": np.float64(1.0)},
])
def test_join_refuses_what_the_general_path_reads(ranking):
    fast, slow = both([{"x": 1.0}, ranking], [{"x": 1}, {"a": 1}])
    assert slow is None
    assert_same(fast, slow)


def test_join_refuses_a_ranking_that_is_not_a_dict():
    fast, slow = both([[("a", 1.0)]], [{"a": 1}])
    assert slow is None and fast is None


def test_join_counts_infinities_and_takes_ints():
    fast, slow = both([{"a": math.inf, "b": -math.inf, "c": 3, "d": 2.5}], [{"b": 1, "c": 1, "a": 0}], offset=5)
    assert_same(fast, slow)
    assert slow is not None
    rows, pos, counts, n_inf = slow
    assert (rows.tolist(), pos.tolist(), counts.tolist(), n_inf) == ([7, 6, 5], [0, 1, 3], [4], 2)


@needs_accel
def test_join_checks_its_buffers():
    assert accel is not None
    runs, docs = [{"a": 1.0}], ["a", "b"]
    i64 = np.int64

    def call(docs=docs, starts=(0,), jcounts=(2,), rows=2, pos=2, counts=1):
        return accel.pytrec_join(runs, docs, np.array(starts, i64), np.array(jcounts, i64), np.empty(rows, i64),
                                 np.empty(pos, i64), np.empty(counts, i64), True)

    assert call() == (0, 1, 0)
    for bad in (dict(rows=1), dict(pos=1), dict(counts=0), dict(starts=()), dict(jcounts=()), dict(starts=(1,)),
                dict(starts=(-1,)), dict(jcounts=(3,)), dict(jcounts=(-1,)), dict(starts=(3,), jcounts=(0,))):
        with pytest.raises(ValueError):
            call(**bad)
    with pytest.raises(ValueError):
        call(docs=["a", 1])
    with pytest.raises(BufferError):  # a read-only output
        accel.pytrec_join(runs, docs, np.zeros(1, i64), np.full(1, 2, i64), b"readonly-bytes-16", np.empty(2, i64),
                          np.empty(1, i64), True)
    with pytest.raises(TypeError):
        accel.pytrec_join(runs, ("a", "b"), np.zeros(1, i64), np.full(1, 2, i64), np.empty(2, i64), np.empty(2, i64),
                          np.empty(1, i64), True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(IDS), st.sampled_from([0.0, 1.0, 0.5, 2.0, -1.0, 1e-40]),
                                max_size=8), min_size=1, max_size=4),
       st.lists(st.dictionaries(st.sampled_from(IDS), st.integers(-1, 3), max_size=8), min_size=4, max_size=4))
def test_join_property(runs, judged):
    judged = judged[:len(runs)]
    fast, slow = both(runs, judged)
    assert_same(fast, slow)
    assert slow is not None
    rows, pos, counts, _ = slow
    assert len(rows) == sum(len(set(r) & set(j)) for r, j in zip(runs, judged, strict=True))
    assert ((pos >= 0) & (pos < np.repeat(counts, [len(set(r) & set(j)) for r, j in zip(runs, judged, strict=True)]))
            ).all()


@needs_accel
@pytest.mark.parametrize("qrels,status", [
    ([{"a": 1, "b": -2}, {}, {"c": 3}], 0), ([{"a": 1}, [("b", 1)]], 1), ([{"a": 1}, {2: 1}], 2),
    ([{"a": True}], 3), ([{"a": 1.0}], 3), ([{"a": 2 ** 70}], 3), ([{"a": np.int64(1)}], 3),
])
def test_qrels_reader(qrels, status):
    assert accel is not None
    counts = np.full(len(qrels), -1, dtype=np.int64)
    grades = np.full(8, np.nan)
    got, docs = accel.pytrec_qrels(qrels, counts, grades)
    assert got == status
    if status == 0:
        assert docs == ["a", "b", "c"]
        assert counts.tolist() == [2, 0, 1] and grades[:3].tolist() == [1.0, -2.0, 3.0]
        assert not gc.is_tracked(docs)  # ids only: the cycle collector has nothing to walk in it
        gc.collect()
        assert docs == ["a", "b", "c"]
    else:
        assert docs is None
    with pytest.raises(ValueError):
        accel.pytrec_qrels([{"a": 1, "b": 2}], np.empty(1, np.int64), np.empty(1))
    with pytest.raises(ValueError):
        accel.pytrec_qrels([{"a": 1}], np.empty(0, np.int64), np.empty(1))


@pytest.mark.parametrize("by_name", [False, True])
@pytest.mark.parametrize("shape", [(3, 4), (0, 4), (3, 0), (1, 1)])
def test_nested_dicts_equal_the_fallback(shape, by_name):
    rng = np.random.default_rng(1)
    table = rng.choice([0.0, -0.0, 1.0, 0.5, math.nan, math.inf, 1 / 3, 0.25], shape)
    queries = [f"q{i}" for i in range(shape[0])]
    names = [f"m{j}" for j in range(shape[1])]
    slow = nested_dicts(queries, names, table, use_accel=False)
    fast = nested_dicts(queries, names, table.T.copy() if by_name else table, by_name=by_name)
    assert fast == nested_dicts(queries, names, table.T.copy() if by_name else table, use_accel=False,
                                by_name=by_name) or any(v != v for d in slow.values() for v in d.values())
    assert list(fast) == list(slow)
    for q in slow:
        assert list(fast[q]) == list(slow[q])
        for n in slow[q]:
            a, b = fast[q][n], slow[q][n]
            assert type(a) is float and (a == b or (math.isnan(a) and math.isnan(b)))
            assert math.copysign(1.0, a) == math.copysign(1.0, b)


def test_nested_dicts_with_repeated_keys_keep_the_last_value():
    table = np.arange(6, dtype=np.float64).reshape(3, 2)
    for use in (False, None):
        assert nested_dicts(["a", "b", "a"], ["x", "x"], table, use_accel=use) == {"a": {"x": 5.0}, "b": {"x": 3.0}}


def test_nested_dicts_many_values_share_nothing_mutable():
    table = np.tile(np.array([0.0, 1.0, 0.5]), (2000, 1))
    out = nested_dicts([f"q{i}" for i in range(2000)], ["a", "b", "c"], table)
    out["q0"]["a"] = 9.0
    assert out["q1"] == {"a": 0.0, "b": 1.0, "c": 0.5} and out["q0"]["a"] == 9.0


@needs_accel
def test_nested_dicts_checks_its_arguments():
    assert accel is not None
    with pytest.raises(ValueError):
        accel.nested_dicts(["a", "b"], ["x"], np.zeros(3))
    with pytest.raises(ValueError):
        accel.nested_dicts(["a"], ["x", "y"], np.zeros(1))
    with pytest.raises(TypeError):
        accel.nested_dicts([1], ["x"], np.zeros(1))
    with pytest.raises(TypeError):
        accel.nested_dicts(["a"], [None], np.zeros(1))
    with pytest.raises(TypeError):
        accel.nested_dicts(("a",), ["x"], np.zeros(1))


@pytest.mark.parametrize("measures", [{"all_trec"}, {"map_cut.1,10,1000", "ndcg_cut.1,10,1000", "P.5", "recall.10"}])
def test_the_evaluator_with_and_without_the_helper(measures, monkeypatch):
    from ragrade.compat.pytrec_eval import RelevanceEvaluator

    rng = np.random.default_rng(11)
    runs, judged = random_case(rng, 30, many=True)
    qrels = {f"q{i}": {d: max(g, 0) for d, g in j.items()} for i, j in enumerate(judged)}
    run = {f"q{i}": r for i, r in enumerate(runs)}
    with_c = RelevanceEvaluator(qrels, measures).evaluate(run)
    monkeypatch.setattr(_ingest, "_accel", None)
    without = RelevanceEvaluator(qrels, measures).evaluate(run)
    assert list(with_c) == list(without)
    for q, values in with_c.items():
        assert list(values) == list(without[q])
        for k, v in values.items():
            assert v == without[q][k] or (math.isnan(v) and math.isnan(without[q][k])), (q, k)


def test_nested_dicts_with_keys_that_are_not_str_take_the_fallback():
    assert nested_dicts(["a", "b"], [1, "x"], np.array([[1.0, 2.0], [3.0, 4.0]])) == {"a": {1: 1.0, "x": 2.0},
                                                                                      "b": {1: 3.0, "x": 4.0}}


@needs_accel
@pytest.mark.parametrize("seed", range(5))
def test_kahan_cumsum_runs_makes_pandas_additions(seed):
    """The C running sums within runs are pandas' grouped cumsum (compensated) to the last bit, and so the
    NumPy way of ``cumsum_within`` without the helper."""
    import pandas as pd

    from ragrade.kernels import common

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4000))
    q = np.sort(rng.integers(0, max(n // int(rng.integers(1, 40)), 1), n)).astype(np.int64)
    w = rng.choice([-1.0, 1.0], n) * rng.random(n) * 10.0 ** rng.integers(-12, 12, n)
    out = np.empty(n)
    assert engine_accel.kahan_cumsum_runs(q, w, out) == 0
    want = pd.Series(w).groupby(q, sort=False).cumsum().to_numpy(dtype=np.float64)
    assert out.tobytes() == want.tobytes()
    runs = common._runs_matrix(q)
    if runs is not None:
        assert common._kahan_cumsum_rows(runs, w).tobytes() == out.tobytes()


@needs_accel
def test_kahan_cumsum_runs_refuses_what_it_cannot_sum():
    q = np.zeros(3, dtype=np.int64)
    out = np.empty(3)
    for bad in (math.nan, math.inf, -math.inf):
        assert engine_accel.kahan_cumsum_runs(q, np.array([1.0, bad, 2.0]), out) == 1
    assert engine_accel.kahan_cumsum_runs(np.zeros(0, dtype=np.int64), np.zeros(0), np.empty(0)) == 0
    with pytest.raises(ValueError):
        engine_accel.kahan_cumsum_runs(q, np.zeros(4), out)
    with pytest.raises(ValueError):
        engine_accel.kahan_cumsum_runs(q, np.zeros(3), np.empty(2))
    with pytest.raises(ValueError):
        engine_accel.kahan_cumsum_runs(np.zeros(3, dtype=np.int8), np.zeros(3), out)
    with pytest.raises((ValueError, BufferError)):  # a read-only output
        engine_accel.kahan_cumsum_runs(q, np.zeros(3), np.broadcast_to(np.zeros(1), (3,)))

