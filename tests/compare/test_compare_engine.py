"""ragrade.compare on qrels and runs through the engine, and side by side with ranx's compare."""

from __future__ import annotations

import numpy as np
import pytest

import ragrade
from ragrade.comparison import Comparison


def _data(n_queries: int = 150, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels, bm25, dense, noisy = {}, {}, {}, {}
    for qi in range(n_queries):
        q = f"q{qi}"
        docs = [f"d{qi}_{j}" for j in range(40)]
        grades = rng.choice([0, 0, 0, 1, 2], size=15)
        qrels[q] = {d: int(g) for d, g in zip(docs, grades, strict=False)}
        qrels[q][docs[int(rng.integers(15))]] = 1 + int(rng.integers(2))  # at least one relevant
        signal = np.array([qrels[q].get(d, 0) for d in docs], dtype=float)
        bm25[q] = {d: float(s) for d, s in zip(docs, rng.random(40) + 0.6 * signal, strict=True)}
        dense[q] = {d: float(s) for d, s in zip(docs, rng.random(40) + 1.2 * signal, strict=True)}
        noisy[q] = {d: float(s) for d, s in zip(docs, rng.random(40) + 0.62 * signal, strict=True)}
    return qrels, {"bm25": bm25, "dense": dense, "noisy": noisy}


METRICS = ["ndcg@10", "recall@5", "precision@5"]


@pytest.fixture(scope="module")
def data():
    return _data()


def test_compare_through_the_engine_matches_evaluate(data) -> None:
    qrels, runs = data
    cmp = ragrade.compare(qrels, runs, METRICS, baseline="bm25", n_resamples=500, seed=0)
    assert isinstance(cmp, Comparison)
    for name, run in runs.items():
        means = ragrade.evaluate(qrels, run, METRICS).means
        for m in METRICS:
            assert cmp.mean(m, name) == pytest.approx(means[m], rel=1e-12)
    assert cmp.pair("ndcg@10", "bm25", "dense")["significant"]


def test_runs_as_objects_and_as_a_list(data) -> None:
    qrels, runs = data
    objs = [ragrade.Run.from_dict(r) for r in runs.values()]
    cmp = ragrade.compare(ragrade.Qrels.from_dict(qrels), objs, "ndcg@10", n_resamples=100)
    assert cmp.runs == ["run_1", "run_2", "run_3"]
    ref = ragrade.compare(qrels, runs, "ndcg@10", n_resamples=100)
    np.testing.assert_allclose(cmp.summary["mean"].to_numpy(), ref.summary["mean"].to_numpy(), rtol=1e-12)


# ----------------------------------------------------------------------------------------------- ranx
ranx = pytest.importorskip("ranx", reason="ranx is not installed (it is in the test extra)")


@pytest.fixture(scope="module")
def ranx_report(data):
    qrels, runs = data
    return ranx.compare(
        qrels=ranx.Qrels(qrels),
        runs=[ranx.Run(r, name=n) for n, r in runs.items()],
        metrics=METRICS,
        stat_test="student",
        max_p=0.05,
        rounding_digits=12,
    )


def test_means_t_test_p_values_and_win_tie_loss_agree_with_ranx(data, ranx_report) -> None:
    pytest.importorskip("scipy")
    qrels, runs = data
    cmp = ragrade.compare(qrels, runs, METRICS, test="t", n_resamples=100)
    for m in METRICS:
        for name in runs:
            assert cmp.mean(m, name) == pytest.approx(ranx_report.results[name][m], abs=1e-9)
        for (metric, a, b), row in cmp.pairs.loc[[m]].iterrows():
            theirs = ranx_report.comparisons[frozenset((a, b))][metric]
            assert row["p_value"] == pytest.approx(theirs["p_value"], rel=1e-9)
            assert row["significant"] == bool(theirs["significant"])  # no correction, same alpha
            wtl = ranx_report.win_tie_loss[(a, b)][metric]  # ranx: W = control better
            assert (row["losses"], row["ties"], row["wins"]) == (wtl["W"], wtl["T"], wtl["L"])


def test_randomization_p_values_are_close_to_ranx_fisher(data) -> None:
    """Same test, different random streams and p-value estimator: agreement within Monte Carlo error."""
    qrels, runs = data
    report = ranx.compare(
        qrels=ranx.Qrels(qrels),
        runs=[ranx.Run(r, name=n) for n, r in runs.items()],
        metrics=["ndcg@10"],
        stat_test="fisher",
        n_permutations=5000,
        max_p=0.05,
        rounding_digits=12,
    )
    cmp = ragrade.compare(qrels, runs, ["ndcg@10"], test="randomization", n_resamples=5000, seed=0)
    for (_, a, b), row in cmp.pairs.iterrows():
        theirs = report.comparisons[frozenset((a, b))]["ndcg@10"]["p_value"]
        assert row["p_value"] == pytest.approx(theirs, abs=0.03)


@pytest.mark.filterwarnings("ignore:.*missing from the run:ragrade.errors.RagradeWarning")
def test_policies_reach_the_engine(data) -> None:
    qrels, runs = data
    short = {name: {q: docs for q, docs in run.items() if q != "q0"} for name, run in runs.items()}
    short["bm25"] = runs["bm25"]  # q0 only in bm25
    # default policy: a query missing from a run scores 0, so all 150 are compared
    assert ragrade.compare(qrels, short, ["ndcg@10"], n_resamples=50).summary["n"].eq(150).all()
    # missing_run="drop": q0 has a score in one run only and is left out, with a warning
    with pytest.warns(ragrade.RagradeWarning, match="some runs only"):
        cmp = ragrade.compare(qrels, short, ["ndcg@10"], n_resamples=50, missing_run="drop")
    assert cmp.summary["n"].eq(149).all()


def test_cutoff_lists_expand_like_evaluate(data) -> None:
    qrels, runs = data
    cmp = ragrade.compare(qrels, runs, ["P@[5,10]"], n_resamples=50)
    assert cmp.metrics == ["P@5", "P@10"]
    with pytest.raises(ragrade.UnknownNameError):
        ragrade.compare(qrels, runs, ["ndgc@10"], n_resamples=50)


def test_named_run_objects_keep_their_names(data) -> None:
    qrels, runs = data
    objs = [ragrade.Run.from_dict(r, name=n) for n, r in runs.items()]
    cmp = ragrade.compare(qrels, objs, "ndcg@10", n_resamples=50)
    assert cmp.runs == ["bm25", "dense", "noisy"]
    assert repr(cmp).startswith("Comparison(runs=['bm25', 'dense', 'noisy'], metrics=['ndcg@10']")
