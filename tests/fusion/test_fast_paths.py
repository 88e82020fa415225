"""The fast paths of fusion give the values of the general ones, exactly:

* the C helper's pair numbering and fused layout against the NumPy code (RAGRADE_NO_ACCEL's path);
* ranx's order of every input run, kept with the run after the first fusion, against a fresh run;
* optimize_fusion's direct scoring of a configuration against evaluating its fused run;
* the C helper's bounds checks (these tests run under ASan/UBSan in ``.ci/run``).
"""

from __future__ import annotations

import numpy as np
import pytest

import ragrade
import ragrade._native as native
from ragrade.data import Run
from ragrade.engine.inputs import as_qrels
from ragrade.fusion import optimize as opt
from ragrade.fusion._lists import align
from ragrade.fusion.methods import combine, prepare

from ._gen import random_qrels, random_runs


def _rows(run: Run) -> list[tuple[str, list[tuple[str, float | None]]]]:
    return [(q, run.ranked(q, ties="input")) for q in run.query_ids.tolist()]


def _with_gaps(seed: int) -> list[dict]:
    """Random runs where some queries are missing from some runs and one run repeats a document."""
    runs = random_runs(seed, n_runs=3, n_queries=8)
    del runs[1]["q2"]
    del runs[2]["q5"]
    return runs


CASES = [("rrf", "min-max"), ("mnz", "zmuv"), ("wsum", "min-max-inverted"), ("isr", "rank"), ("med", "sum"),
         ("rbc", None), ("log_isr", "max"), ("bordafuse", "min-max"), ("anz", "borda")]


@pytest.mark.skipif(native.accel is None, reason="the C helper is not built (RAGRADE_NO_ACCEL=1 or no compiler)")
@pytest.mark.parametrize("method,norm", CASES)
def test_c_layout_equals_numpy(method: str, norm: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    params = {"phi": 0.7} if method == "rbc" else ({"weights": [0.2, 0.5, 0.3]} if method == "wsum" else None)
    for seed in range(4):
        runs = _with_gaps(seed)
        with_c = ragrade.fuse([Run.from_dict(r) for r in runs], method=method, norm=norm, params=params)
        with monkeypatch.context() as m:
            m.setattr(native, "accel", None)
            without = ragrade.fuse([Run.from_dict(r) for r in runs], method=method, norm=norm, params=params)
        a, b = _rows(with_c), _rows(without)
        assert [(q, [d for d, _ in rows]) for q, rows in a] == [(q, [d for d, _ in rows]) for q, rows in b]
        assert [v for _, rows in a for _, v in rows] == [v for _, rows in b for _, v in rows]  # bit for bit


def test_order_kept_with_the_run_gives_the_same_fusion() -> None:
    runs = random_runs(11, n_runs=3, n_queries=10)
    kept = [Run.from_dict(r) for r in runs]
    first = ragrade.fuse(kept, method="rrf")
    again = ragrade.fuse(kept, method="rrf")  # ranx's order of every run now comes from the run
    fresh = ragrade.fuse([Run.from_dict(r) for r in runs], method="rrf")
    assert _rows(first) == _rows(again) == _rows(fresh)
    codes, scores = kept[0]._cache[("fusion", "ranx_order")]
    assert not codes.flags.writeable and not scores.flags.writeable
    # the run itself is unchanged: its own rank order and values are those of a fresh copy
    assert _rows(kept[0]) == _rows(Run.from_dict(runs[0]))


@pytest.mark.parametrize("profile", ["ranx", "ragrade"])
def test_direct_scoring_equals_evaluating_the_fused_run(profile: str) -> None:
    runs = random_runs(5, n_runs=3, n_queries=12)
    qrels = random_qrels(5, n_queries=12)
    if profile == "ragrade":
        del qrels["q3"]  # a run query without judgments
    q = as_qrels(qrels)
    space, lists = align([Run.from_dict(r) for r in runs], ["a", "b", "c"], same_queries=False)
    prep = prepare(space, lists, "rrf")
    compared = 0
    for metric in ["ndcg@100", "ndcg@5", "map", "mrr", "P@5", "recall@20", "rbp", "bpref", "ndcg", "hits@3"]:
        assert opt._Scorer.applies(profile, q, metric)
        scorer = opt._Scorer(space, prep, q, metric, profile)
        for k in (1, 10, 60):
            fused = combine(prep, "rrf", {"k": k})
            mean, rows = scorer.score(fused)
            ref_mean, ref_rows, _ = opt._score_fused(space, prep, fused, q, metric, profile)
            assert mean == ref_mean
            assert list(rows.index) == list(ref_rows.index)
            assert np.array_equal(rows.to_numpy(), ref_rows.to_numpy(), equal_nan=True)
            compared += len(rows)
    assert compared > 300


@pytest.mark.skipif(native.accel is None, reason="the C helper is not built (RAGRADE_NO_ACCEL=1 or no compiler)")
def test_c_fusion_helpers_check_their_bounds() -> None:
    a = native.accel
    i64 = np.int64
    docs = (np.array([0, 1, 2], dtype=i64), np.array([2, 3], dtype=i64))
    offs = (np.array([0, 2, 3], dtype=i64), np.array([0, 1, 2], dtype=i64))
    rp = (np.empty(3, dtype=i64), np.empty(2, dtype=i64))
    pair_doc, pair_off = np.empty(5, dtype=i64), np.empty(3, dtype=i64)
    n = a.fusion_pairs(docs, offs, 4, rp, pair_doc, pair_off)
    # query 0: run 0 has d0 d1, run 1 has d2; query 1: run 0 has d2, run 1 has d3
    assert n == 5 and pair_off.tolist() == [0, 3, 5] and pair_doc.tolist() == [0, 1, 2, 2, 3]
    assert rp[0].tolist() == [0, 1, 3] and rp[1].tolist() == [2, 4]
    with pytest.raises(ValueError):
        a.fusion_pairs(docs, offs, 3, rp, pair_doc, pair_off)  # document code 3 out of range
    with pytest.raises(ValueError):
        a.fusion_pairs(docs, (offs[0], np.array([0, 1, 5], dtype=i64)), 4, rp, pair_doc, pair_off)
    with pytest.raises(ValueError):
        a.fusion_pairs(docs, (offs[0], np.array([0, 2, 1], dtype=i64)), 4, rp, pair_doc, pair_off)
    with pytest.raises(ValueError):
        a.fusion_pairs(docs, offs, 4, rp, np.empty(2, dtype=i64), pair_off)  # pair_doc too short
    with pytest.raises(ValueError):
        a.fusion_pairs(docs, offs, 4, (rp[0], np.empty(1, dtype=i64)), pair_doc, pair_off)
    with pytest.raises(ValueError):
        a.fusion_pairs(docs, offs[:1], 4, rp, pair_doc, pair_off)  # fewer offsets than runs
    # the same pairs, run 1 listing query 0's pair before run 0 does in query 1
    pairs = (np.array([1, 0, 3], dtype=i64), np.array([2, 4], dtype=i64))
    u_pair, u_off = np.empty(5, dtype=i64), np.empty(3, dtype=i64)
    at, pos = np.empty((2, 5), dtype=i64), np.empty((2, 5), dtype=i64)
    u = a.fusion_layout(pairs, offs, 5, u_pair, u_off, at, pos)
    assert u == 5 and u_pair.tolist() == [1, 0, 2, 3, 4] and u_off.tolist() == [0, 3, 5]
    assert at.tolist() == [[0, 1, -1, 2, -1], [-1, -1, 0, -1, 1]]
    assert pos.tolist() == [[0, 1, -1, 0, -1], [-1, -1, 0, -1, 0]]
    only_pos = np.empty((2, 5), dtype=i64)
    assert a.fusion_layout(pairs, offs, 5, u_pair, u_off, None, only_pos) == 5 and only_pos.tolist() == pos.tolist()
    only_at = np.empty((2, 5), dtype=i64)
    assert a.fusion_layout(pairs, offs, 5, u_pair, u_off, only_at, None) == 5 and only_at.tolist() == at.tolist()
    with pytest.raises(ValueError):
        a.fusion_layout(pairs, offs, 5, u_pair, u_off, None, None)
    with pytest.raises(ValueError):
        a.fusion_layout(pairs, offs, 5, u_pair, u_off, None, np.empty((2, 2), dtype=i64))
    with pytest.raises(ValueError):
        a.fusion_layout(pairs, offs, 4, u_pair, u_off, at, pos)  # pair 4 out of range
    with pytest.raises(ValueError):
        a.fusion_layout(pairs, offs, 5, u_pair, u_off, np.empty((2, 2), dtype=i64), pos)  # at too small
    with pytest.raises(ValueError):
        a.fusion_layout(pairs, offs, 5, u_pair, u_off, at, np.empty((2, 2), dtype=i64))  # pos too small
    with pytest.raises(ValueError):
        a.fusion_layout(pairs, offs, 5, np.empty(1, dtype=i64), u_off, at, pos)
    with pytest.raises(ValueError):
        a.fusion_layout((), (), 5, u_pair, u_off, at, pos)
    with pytest.raises(TypeError):
        a.fusion_layout([pairs[0]], offs, 5, u_pair, u_off, at, pos)
    with pytest.raises(ValueError):
        a.numba_argsort_segments(np.zeros(3), np.array([0, 4], dtype=i64), np.empty(3, dtype=i64))
    with pytest.raises(ValueError):
        a.numba_argsort_segments(np.zeros(3), np.array([0, 3], dtype=i64), np.empty(3, dtype=i64), np.empty(2), True)


def test_weighted_values_in_one_gather_equal_weights_times_values() -> None:
    runs = _with_gaps(3)
    space, lists = align([Run.from_dict(r) for r in runs], ["a", "b", "c"], same_queries=False)
    w = np.array([0.3, -0.7, 0.0])
    gathered = prepare(space, lists, "wsum").weighted_values(w)
    prep = prepare(space, lists, "wsum")
    product = w[:, None] * prep.V  # V computed: the product itself
    assert np.array_equal(gathered, product) and np.array_equal(np.signbit(gathered), np.signbit(product))
    assert np.array_equal(prep.weighted_values(w), product)
