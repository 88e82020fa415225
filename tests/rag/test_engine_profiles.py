"""Engine profiles against the real pytrec_eval (installed with ragrade's test extra): float32 scores
turn near-equal scores into ties, and only queries on both sides are averaged."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ragrade
from ragrade.errors import RagradeWarning

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {"ap": "map", "ndcg@10": "ndcg_cut_10", "rr": "recip_rank", "P@5": "P_5", "recall@10": "recall_10"}


def _random(seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for qi in range(120):
        q = f"q{qi}"
        docs = [f"d{j}" for j in range(30)]
        if qi % 10:
            qrels[q] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 6, replace=False)}
        if qi % 7:
            # near-equal scores: distinct in float64, often equal in float32
            base = rng.integers(0, 5, size=15) / 10
            run[q] = {d: float(s + rng.integers(0, 3) * 1e-9) for d, s in zip(rng.choice(docs, 15, replace=False),
                                                                          base, strict=True)}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pytrec_eval_profile_equals_pytrec_eval(seed):
    qrels, run = _random(seed)
    peer = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        ours = ragrade.evaluate(qrels, run, list(MEASURES), profile="pytrec_eval")
    assert set(ours.per_query.index) == set(peer)
    for label, name in MEASURES.items():
        for q, vals in peer.items():
            assert ours.per_query.loc[q, label] == pytest.approx(vals[name], abs=1e-12), (label, q)
        assert ours.means[label] == pytest.approx(np.mean([v[name] for v in peer.values()]), abs=1e-12)


def test_float32_example_from_spec():
    qrels = {"q": {"d1": 1}}
    run = {"q": {"d1": 0.30000002, "d2": 0.30000001}}
    assert ragrade.evaluate(qrels, run, ["rr"], profile="pytrec_eval").means["rr"] == 0.5
    assert ragrade.evaluate(qrels, run, ["rr"], profile="trec_eval").means["rr"] == 1.0


def test_beir_profile_rounds_drops_identical_ids_and_uses_its_mrr():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": {"q1": 9.0, "x": 1.0, "d1": 1.0}, "q2": {"d2": 1.0}}
    r = ragrade.evaluate(qrels, run, ["ndcg@10", "rr@10"], profile="beir")
    # q1: "q1" dropped (identical id); x and d1 tie -> BEIR keeps input order -> d1 at rank 2
    assert r.per_query.loc["q1", "rr@10"] == 0.5
    assert r.means["rr@10"] == round((0.5 + 1.0 + 0.0) / 3, 5)  # / every qrels query
    # ndcg through pytrec_eval conventions: id descending on the tie -> x before d1 as well
    assert r.means["ndcg@10"] == round((1 / np.log2(3) + 1.0) / 2, 5)


@pytest.mark.parametrize("seed", [3, 4])
def test_ir_measures_profile_equals_ir_measures(seed):
    irm = pytest.importorskip("ir_measures")
    qrels, run = _random(seed)
    measures = {"ap": irm.AP, "ndcg@10": irm.nDCG @ 10, "rr": irm.RR, "P@5": irm.P @ 5, "recall@10": irm.R @ 10}
    peer = irm.calc_aggregate(list(measures.values()), qrels, run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        ours = ragrade.evaluate(qrels, run, list(measures), profile="ir_measures")
    for label, m in measures.items():
        assert ours.means[label] == pytest.approx(peer[m], abs=1e-12), label


@pytest.mark.parametrize("profile", ["trec_eval", "pytrec_eval"])
def test_a_gain_for_a_negative_grade_is_refused_under_trec_eval_names(profile):
    """trec_eval reads ndcg.-1=2 as the gain of retrieved documents without a judgment (-2: those judged with a
    negative grade); ragrade.evaluate reads gains per judged grade, so under a profile whose names are trec_eval's
    such a map is refused (ragrade trec_eval computes trec_eval's reading); without a profile it is a map."""
    from ragrade.errors import MetricError

    qrels, run = {"q": {"a": 1, "d": -1}}, {"q": {"x": 2.0, "d": 1.5, "a": 1.0}}
    with pytest.raises(MetricError, match="ragrade trec_eval"):
        ragrade.evaluate(qrels, run, ["ndcg.-1=2"], profile=profile)
    assert ragrade.evaluate(qrels, run, ["ndcg.1=3"], profile=profile).means["ndcg_1=3"] == pytest.approx(0.5)
    assert 0 < ragrade.evaluate(qrels, run, ["ndcg(gains={-1:2})"]).means["ndcg(gains={-1:2})"] < 1
