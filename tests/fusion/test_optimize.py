"""optimize_fusion: under profile="ranx" the same grid, scores, choice (ties included) and trained
parameters as ranx.optimize_fusion; by default the whole simplex; cross-validation by query."""

from __future__ import annotations

import numpy as np
import pytest

import ragrade
from ragrade.fusion.optimize import ranx_weight_grid, simplex_grid

from ._gen import need, random_qrels, random_runs

ranx = need("ranx", "ranx is in the test extra")

SEARCHED = ["wsum", "mixed", "wmnz", "rrf", "probfuse", "slidefuse", "w_bordafuse", "w_condorcet"]
TRAINED_ONLY = ["posfuse", "segfuse", "bayesfuse", "mapfuse"]


def _ranx(method, runs, qrels, norm):
    rr = [ranx.Run(r) for r in runs]
    q = ranx.Qrels(qrels)
    if method in TRAINED_ONLY:
        return ranx.optimize_fusion(q, rr, norm=norm, method=method), None
    best, report = ranx.optimize_fusion(q, rr, norm=norm, method=method, metric="ndcg@10",
                                        return_optimization_report=True, show_progress=False)
    return best, report


@pytest.mark.parametrize("method", SEARCHED)
def test_search_equals_ranx(method: str) -> None:
    runs, qrels = random_runs(4, n_queries=8), random_qrels(4, n_queries=8)
    norm = "rank" if method in ("mixed", "rrf") else "min-max"
    best, report = _ranx(method, runs, qrels, norm)
    ours = ragrade.optimize_fusion(qrels, runs, method, metric="ndcg@10", norm=norm, profile="ranx",
                                   candidate_order="python_set")
    mine = [row["ndcg@10"] for row in ours.table]
    assert len(mine) == len(report.results)
    assert max(abs(a - b) for a, b in zip(mine, report.results, strict=True)) <= 1e-12
    assert ours.search_score == pytest.approx(max(report.results), abs=1e-12)
    if "weights" in best:
        assert ours.params["weights"] == [float(w) for w in best["weights"]]
    for key in ("k", "w"):
        if key in best:
            assert ours.params[key] == best[key]
    if method == "probfuse":
        assert all(np.allclose(a, b, rtol=0, atol=1e-12) for a, b in zip(ours.params["probs"], best["probs"],
                                                                         strict=True))


@pytest.mark.parametrize("method", TRAINED_ONLY)
def test_training_equals_ranx(method: str) -> None:
    runs, qrels = random_runs(6, n_queries=8), random_qrels(6, n_queries=8)
    best, _ = _ranx(method, runs, qrels, "min-max")
    ours = ragrade.optimize_fusion(qrels, runs, method, metric="ndcg@10", profile="ranx")
    (key,) = best.keys()
    for a, b in zip(ours.params[key], best[key], strict=True):
        assert np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=0, atol=1e-12)
    # and fusing with the learnt parameters gives ranx's run
    ref = ranx.fuse([ranx.Run(r) for r in runs], method=method, params=best).to_dict()
    got = ragrade.fuse(runs, method=method, params=ours.params)
    for q in ref:
        assert list(ref[q]) == [d for d, _ in got.ranked(q, ties="input")]


def test_ranx_grid_drops_float_sums_and_ties_go_to_the_last() -> None:
    assert len(ranx_weight_grid(3, 0.1)) == 62 and len(simplex_grid(3, 0.1)) == 66
    assert (0.1, 0.2, 0.7) in simplex_grid(3, 0.1)
    # identical runs: every weighting scores the same; ranx keeps the last, ragrade the first
    run = random_runs(2, n_runs=1, n_queries=6)[0]
    qrels = random_qrels(2, n_queries=6)
    rr = [ranx.Run(run), ranx.Run(run)]
    best = ranx.optimize_fusion(ranx.Qrels(qrels), rr, method="wsum", metric="ndcg@10", show_progress=False)
    ours = ragrade.optimize_fusion(qrels, [run, run], "wsum", metric="ndcg@10", profile="ranx")
    assert ours.params["weights"] == [float(w) for w in best["weights"]] == [1.0, 0.0]
    default = ragrade.optimize_fusion(qrels, [run, run], "wsum", metric="ndcg@10")
    assert default.params["weights"] == [0.0, 1.0] and len(default.table) == 11


def test_cross_validation_by_query() -> None:
    runs, qrels = random_runs(8, n_queries=12), random_qrels(8, n_queries=12)
    s = ragrade.optimize_fusion(qrels, runs, "wsum", metric="ndcg@10", cv=3, seed=1)
    assert s.cv == 3 and len(s.cv_folds) == 3
    assert sorted(s.cv_per_query) == sorted(qrels)
    assert sum(f["queries"] for f in s.cv_folds) == 12
    assert s.cv_score == pytest.approx(np.nanmean(list(s.cv_per_query.values())))
    # a method with nothing to choose: held-out scores are the plain scores
    plain = ragrade.optimize_fusion(qrels, runs, "sum", metric="ndcg@10", cv=4)
    assert plain.cv_score == pytest.approx(plain.score, abs=1e-12)
    assert len(plain.table) == 1


def test_returned_run_is_fuse_of_the_chosen_params() -> None:
    runs, qrels = random_runs(9, n_queries=8), random_qrels(9, n_queries=8)
    s = ragrade.optimize_fusion(qrels, runs, "rrf", metric="ndcg@10")
    again = ragrade.fuse(runs, method="rrf", params=s.params)
    assert s.run.to_lists(ties="input") == again.to_lists(ties="input")
    assert s.score == pytest.approx(s.search_score, abs=1e-12)
    assert "rrf" in repr(s) and len(s.to_pandas()) == 10
