"""Profiles on edge rows, against the peers' own code (issue 11, item 18): pytrec_eval/BEIR and a query
whose qrels entry is empty, continuous-eval's ROUGE matching on whitespace and punctuation, and ranx's
tie order (reproduced)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ragrade

pytrec_eval = pytest.importorskip("pytrec_eval")


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ragrade.evaluate(*args, **kwargs)


@pytest.mark.parametrize("profile", ["pytrec_eval", "beir"])
def test_a_query_with_an_empty_qrels_entry_is_left_out_as_pytrec_eval_does(profile):
    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(20, 4, replace=False)}
             for i in range(30)}
    for i in (3, 11, 29):
        qrels[f"q{i}"] = {}  # judged by nobody
    run = {f"q{i}": {f"d{j}": float(rng.random()) for j in range(20)} for i in range(30)}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.5", "recall.100"}).evaluate(run)
    res = _quiet(qrels, run, ["ndcg@10", "P@5", "recall@100"], profile=profile)
    assert set(res.per_query.index) == set(theirs) and {"q3", "q11", "q29"}.isdisjoint(res.per_query.index)
    for ours, key in (("ndcg@10", "ndcg_cut_10"), ("P@5", "P_5"), ("recall@100", "recall_100")):
        want = np.array([theirs[q][key] for q in res.per_query.index])
        got = res.per_query[ours].to_numpy()
        assert np.abs(got - want).max() < 1e-6  # float32 scores in both; BEIR rounds means only
        assert res.counts[ours] == len(theirs) == 27
    # The default convention keeps such a query (skipped in the means as R = 0, and reported).
    default = _quiet(qrels, run, ["ndcg@10"])
    assert "q3" in default.per_query.index and "q3" in default.summary.no_relevant["ndcg@10"]


def test_continuous_eval_rouge_matching_on_whitespace_and_punctuation(monkeypatch):
    monkeypatch.setenv("CONTINUOUS_EVAL_DO_NOT_TRACK", "true")  # no telemetry: tests touch no network
    pytest.importorskip("continuous_eval")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from continuous_eval.metrics.retrieval import PrecisionRecallF1
        from continuous_eval.metrics.retrieval.matching_strategy import RougeChunkMatch

    metric = PrecisionRecallF1(RougeChunkMatch())
    pairs = [(". .", "  "), (" . ", " "), ("a. .", " "), ("!!", " "), ("", ""), (" ", ""), ("", " "),
             (" ", " "), ("...", "\t"), ("a b. c", "a b"), ("x", "x.")]
    for retrieved, truth in pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = metric(retrieved_context=[retrieved], ground_truth_context=[truth])
        got = _quiet([[truth]], [[retrieved]], ["precision", "recall"], profile="continuous-eval",
                     matcher="profile").per_query.iloc[0]
        assert got["precision"] == want["context_precision"], (retrieved, truth)
        assert got["recall"] == want["context_recall"], (retrieved, truth)


def test_ranx_tie_order_is_reproduced_on_long_tied_lists():
    """docs/conventions.md (ranx, X1): ranx orders equal scores by numba's quicksort; the ranx profile
    replays it, so every query equals ranx (100 documents, one-decimal scores: many ties), while trec_eval's
    tie rule moves some queries."""
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(0)
    qrels, run = {}, {}
    for q in range(200):
        docs = [f"d{j}" for j in rng.permutation(300)[:100]]
        qrels[f"q{q}"] = {f"d{j}": int(rng.integers(1, 3)) for j in rng.choice(300, 8, replace=False)}
        run[f"q{q}"] = {d: float(x) for d, x in zip(docs, np.round(rng.gamma(2.0, 2.0, 100), 1), strict=True)}
    theirs = _ranx_per_query(ranx, qrels, run)
    ours = _quiet(qrels, run, ["ndcg@10"], profile="ranx").per_query["ndcg@10"].to_numpy()
    assert np.abs(np.asarray(theirs) - ours).max() < 1e-12
    trec = _quiet(qrels, run, ["ndcg@10"], no_relevant="zero").per_query["ndcg@10"].to_numpy()
    assert (~np.isclose(np.asarray(theirs), trec, atol=1e-12)).sum() > 0  # the tie rule matters here


def _ranx_per_query(ranx, qrels, run) -> np.ndarray:
    """ranx's per-query ndcg@10 in the run's query order (ranx keeps its own, sorted, order)."""
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, ["ndcg@10"], make_comparable=True)
    return np.array([r.scores["ndcg@10"][q] for q in run])
