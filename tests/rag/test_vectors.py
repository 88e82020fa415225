"""Every vector of docs/parity-vectors.md and docs/profiles.md that concerns RAG inputs and profiles, and the seeds' examples."""

from __future__ import annotations

import math

import pytest

import ragrade
from ragrade.compat import relevance as rel
from ragrade.compat.autorag import retrieval_f1, retrieval_map, retrieval_token_f1
from ragrade.compat.continuous_eval import PrecisionRecallF1, RankedRetrievalMetrics, RougeChunkMatch
from ragrade.compat.remem import RetrievalNDCGAny, RetrievalRecall, RetrievalRecallAll
from ragrade.matching import RougeL
from reference import evaluate_profile, evaluate_rag

AUTORAG = ["precision", "recall", "f1", "ndcg", "rr", "ap"]


@pytest.mark.parametrize(("gt", "pred", "expected"), [
    ([["test-1", "test-2"], ["test-3"]], ["test-1", "pred-1", "test-2", "pred-3"],
     (0.5, 0.5, 0.5, 0.7039180890341347, 0.5, 0.41666666666666663)),
    ([[4, 5], [6, 7], [8]], [6, "p", "p", "p"], (0.25, 1 / 3, 2 / 7, 0.3903800499921017, 1 / 3, 1 / 3)),
    ([[11], [12], [13]], [13, 12, "p", "p"], (0.5, 2 / 3, 4 / 7, 0.7653606369886217, 1 / 2, 1 / 2)),
    ([[15]], ["p", "p", 15], (1 / 3, 1, 0.5, 0.5, 1 / 3, 1 / 3)),
])
def test_autorag_vectors(gt, pred, expected):
    r = evaluate_profile([gt], [pred], AUTORAG, "autorag")
    for name, want in zip(AUTORAG, expected, strict=True):
        assert r.means[name] == pytest.approx(want, abs=1e-12), name


def test_autorag_basic_map_is_5_12_not_seed_slip():
    assert retrieval_map([[["test-1", "test-2"], ["test-3"]]], [["test-1", "pred-1", "test-2", "pred-3"]]) == [
        pytest.approx(5 / 12, abs=1e-15)]


def test_autorag_invalid_rows_have_no_score_and_are_skipped():
    vals = retrieval_f1([[["a"]], [["a"]], [["a"], []], [["a"]]], [["a"], [], ["a"], ["  "]])
    assert vals == [1.0, None, None, None]
    r = evaluate_profile([[["a"]], [["a"]]], [["a"], []], ["f1"], "autorag")
    assert r.means["f1"] == 1.0 and r.counts["f1"] == 1


def test_autorag_ndcg_can_exceed_one_only_in_profile():
    r = evaluate_profile([[["a"], ["b"]]], [["a", "a", "a"]], ["ndcg"], "autorag")
    assert r.means["ndcg"] > 1.0
    d = evaluate_rag([[["a"], ["b"]]], [["a", "a", "a"]], ["ndcg", "P", "recall"])
    assert all(0.0 <= v <= 1.0 for v in d.means.values())


def test_autorag_token_metrics():
    # "a cat sat" -> {cat, sat}; vs "the cat sat on the mat" -> {cat, sat, on, mat}: F1 2/3; "dog": 0
    assert retrieval_token_f1([[["The cat sat on the mat"]]], [["a cat sat", "dog"]]) == [
        pytest.approx(1 / 3, abs=1e-15)]


@pytest.mark.parametrize(("verdicts", "expected"), [([0, 1], 0.49999999995), ([1, 0, 1], 0.8333333332916666),
                                                    ([0, 0], 0.0)])
def test_ragas_context_precision_vectors(verdicts, expected):
    ret = [f"d{i}" for i in range(len(verdicts))]
    gold = [d for d, v in zip(ret, verdicts, strict=True) if v] or ["none"]
    r = evaluate_profile([gold], [ret], ["context_precision"], "ragas")
    assert r.means["context_precision"] == pytest.approx(expected, abs=1e-15)


def test_deepeval_has_no_epsilon():
    r = evaluate_profile([["d0", "d1"]], [["d0", "d1"]], ["context_precision"], "deepeval")
    assert r.means["context_precision"] == 1.0
    r = evaluate_profile([["d0"]], [["d0"]], ["context_precision"], "ragas")
    assert r.means["context_precision"] == pytest.approx(0.9999999999, abs=1e-15)


def test_ragas_id_metrics_nan_rules():
    r = evaluate_profile([["1", "2"], []], [["1", "1", "3"], ["x"]], ["precision", "recall"], "ragas")
    assert r.per_query["precision"].iloc[0] == 0.5  # sets: {1, 3} -> 1 / 2
    assert r.per_query["recall"].iloc[0] == 0.5
    assert math.isnan(r.per_query["recall"].iloc[1])
    assert r.counts["recall"] == 1


def test_continuous_eval_seed_example():
    datum = {"retrieved_contexts": ["Lyon is a major city in France.",
                                    "Paris is the capital of France and also the largest city in the country."],
             "ground_truth_contexts": ["Paris is the capital of France."]}
    out = RankedRetrievalMetrics(RougeChunkMatch()).calculate(**datum)
    assert out == {"average_precision": 0.5, "reciprocal_rank": 0.5, "ndcg": 0.6309297535714574}
    prf = PrecisionRecallF1(RougeChunkMatch()).calculate(**datum)
    assert prf["context_precision"] == 0.5 and prf["context_recall"] == 1.0
    assert prf["context_f1"] == pytest.approx(2 / 3, abs=1e-15)


def test_union_rouge_spec_example():
    s = RougeL().scores(["Paris is the largest city in France."], ["Paris is the capital of France."])
    assert s[0] == pytest.approx(2 / 3, abs=1e-15)
    assert not RougeL().match(["Paris is the largest city in France."], ["Paris is the capital of France."])[0]


def test_remem_ndcg_any_vectors():
    # relevance [0, 1] at k=2 -> 1.0; [1, 0, 1] at k=3 -> 0.8154648767857288
    _, ex = RetrievalNDCGAny().calculate_metric_scores([["g"]], [["x", "g"]], [2])
    assert ex[0]["NDCG_any@2"] == 1.0
    _, ex = RetrievalNDCGAny().calculate_metric_scores([["g", "h"]], [["g", "x", "h"]], [3])
    assert ex[0]["NDCG_any@3"] == pytest.approx(0.8154648767857288, abs=1e-15)


def test_remem_recall_pooled_rounding_and_empty_gold():
    pooled, ex = RetrievalRecall().calculate_metric_scores([["a", "b", "c"], []], [["a"], ["x"]], [5, 1])
    assert list(pooled) == ["Recall@1", "Recall@5"]
    assert ex[0]["Recall@1"] == pytest.approx(1 / 3) and ex[1]["Recall@1"] == 0.0
    assert pooled["Recall@1"] == 0.1667


def test_remem_recall_all_fuzzy_rule():
    gold = [["Alice met Bob in Paris. They talked.", "Carol stayed home."]]
    chunks = [["Date: 2024-01-01\nuser: Alice met Bob in Paris", "Carol stayed home."]]
    _, ex = RetrievalRecallAll().calculate_metric_scores(gold, chunks, [1, 2])
    assert ex[0] == {"Recall_all@1": 0.0, "Recall_all@2": 1.0}
    # duplicated gold doc can never be fully recalled (set vs list length), as in REMem
    _, ex = RetrievalRecallAll().calculate_metric_scores([["a", "a"]], [["a"]], [1])
    assert ex[0]["Recall_all@1"] == 0.0


def test_seed001_context_precision_at_3():
    r = ragrade.evaluate({"q": {"d0": 1}}, {"q": ["d0", "d1", "d2"]}, ["context_precision@3"])
    assert r.means["context_precision@3"] == 1.0


def test_seed002_functions():
    assert rel.average_precision([1, 0, 0, 1]) == 0.75
    assert rel.reciprocal_rank([0, 0, 1]) == pytest.approx(1 / 3)
    assert rel.precision_at_k([1, 0, 1, 0], 2) == 0.5
    assert rel.precision_at_k([1, 0], 5) == 0.5  # seed divides by min(k, len)
    assert rel.recall_at_k([1, 0, 1], 1) == 0.5
    assert rel.recall_at_k([1, 0, 1], 1, n_relevant=4) == 0.25
    assert rel.hit_rate_at_k([0, 1], 1) == 0.0 and rel.hit_rate_at_k([0, 1], 2) == 1.0
    assert rel.f1_at_k([1, 0, 1], 2) == pytest.approx(2 * 0.5 * 0.5 / 1.0)
    assert rel.ndcg_at_k([0, 1], 2) == pytest.approx(1 / math.log2(3))
    assert rel.mean_average_precision([[1, 0, 0, 1], [0]]) == 0.375
    with pytest.raises(ragrade.InputError):
        rel.precision_at_k([1], 0)


def test_default_groups_are_units_credited_once():
    r = evaluate_rag([[["test-1", "test-2"], ["test-3"]]], [["test-1", "pred-1", "test-2", "pred-3"]],
                             ["recall", "P@4", "ap", "rr"])
    assert r.means == {"recall": 0.5, "P@4": 0.25, "ap": 0.5, "rr": 1.0}


def test_evaluate_delegates_profile_and_matcher():
    r = ragrade.evaluate([[["a", "b"], ["c"]]], [["a", "x", "b"]], ["ap"], profile="autorag")
    assert r.means["ap"] == pytest.approx(5 / 12)
    t = ragrade.evaluate([["Paris is the capital of France."]],
                         [["Paris is the capital of France, and large."]], ["recall"], matcher="rouge_l")
    assert t.means["recall"] == 1.0


def test_engine_profiles():
    qrels = {"q1": {"d1": 1}, "q2": {"d9": 0}, "q3": {"d5": 1}}
    run = {"q1": {"d1": 0.30000002, "d2": 0.30000001}, "q2": {"d9": 1.0}}
    assert ragrade.evaluate(qrels, run, ["rr"], profile="trec_eval", duplicates="credit_once").means["rr"] == 0.5
    # pytrec_eval: float32 makes d1/d2 tie -> d2 first (id descending) -> rr 0.5 for q1; q2 R=0 scores 0
    assert ragrade.evaluate(qrels, run, ["rr"], profile="pytrec_eval").per_query.loc["q1", "rr"] == 0.5
    assert ragrade.evaluate(qrels, run, ["rr"]).per_query.loc["q1", "rr"] == 1.0
    beir = ragrade.evaluate(qrels, run, ["rr@10", "ndcg@10"], profile="beir")
    assert beir.means["rr@10"] == round(1 / 3, 5)  # input order on ties, / all 3 qrels queries
    with pytest.raises(ragrade.UnknownNameError):
        ragrade.evaluate(qrels, run, ["rr"], profile="nonesuch")


def test_profile_rejects_metric_peer_does_not_define():
    with pytest.raises(ragrade.MetricError, match="defines no"):
        evaluate_profile([["a"]], [["a"]], ["ndcg"], "ragas")
