"""The parity vectors of docs/parity-vectors.md that belong to the default convention (profile ``default``)."""

from __future__ import annotations

import math

import pytest

import ragrade
from ragrade import Qrels, Run

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")


def means(qrels, run, metrics, **policies):
    return ragrade.evaluate(qrels, run, metrics, **policies).means


def test_three_relevant_run_t1_p1_t2_p3():
    qrels = {"q": {"t1": 1, "t2": 1, "t3": 1}}
    run = {"q": {"t1": 4.0, "p1": 3.0, "t2": 2.0, "p3": 1.0}}
    m = means(qrels, run, ["ndcg@4", "ap@4", "recall@4", "P@4", "P@10", "rr"])
    assert m["ndcg@4"] == pytest.approx(0.7039180890341347, abs=1e-15)
    assert m["ap@4"] == pytest.approx(0.5555555555555555, abs=1e-15)
    assert m["recall@4"] == pytest.approx(2 / 3, abs=1e-15)
    assert m["P@4"] == 0.5
    assert m["P@10"] == 0.2
    assert m["rr"] == 1.0


def test_same_vector_as_ranked_lists_in_the_seed_shape():
    """The seeds' aligned-list shape gives the same numbers as the scored dict."""
    q = Qrels.from_lists([["t1", "t2", "t3"]])
    r = Run.from_lists([["t1", "p1", "t2", "p3"]])
    m = means(q, r, ["ndcg@4", "ap@4", "recall@4", "P@4", "P@10", "rr"])
    assert m == pytest.approx({"ndcg@4": 0.7039180890341347, "ap@4": 5 / 9, "recall@4": 2 / 3, "P@4": 0.5,
                               "P@10": 0.2, "rr": 1.0}, abs=1e-15)


def test_graded_linear_and_exponential_gain():
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    m = means(qrels, run, ["ndcg@2", "ndcg(gain=exp)@2"])
    assert round(m["ndcg@2"], 4) == 0.8597
    assert round(m["ndcg(gain=exp)@2"], 4) == 0.7967
    # Exact values: linear (1 + 2/log2 3) / (2 + 1/log2 3); exponential (1 + 3/log2 3) / (3 + 1/log2 3).
    l3 = math.log2(3)
    assert m["ndcg@2"] == pytest.approx((1 + 2 / l3) / (2 + 1 / l3), abs=1e-15)
    assert m["ndcg(gain=exp)@2"] == pytest.approx((1 + 3 / l3) / (3 + 1 / l3), abs=1e-15)


def test_three_relevant_one_retrieved_at_rank_one_ndcg():
    m = means({"q": {"a": 1, "b": 1, "c": 1}}, {"q": ["a"]}, ["ndcg@10"])
    assert round(m["ndcg@10"], 4) == 0.4693
    assert m["ndcg@10"] == pytest.approx(1 / (1 + 1 / math.log2(3) + 0.5), abs=1e-15)


def test_four_relevant_only_first_retrieved_ap():
    m = means({"q": {"a": 1, "b": 1, "c": 1, "d": 1}}, {"q": ["a", "x", "y"]}, ["ap", "ap@2"])
    assert m == {"ap": 0.25, "ap@2": 0.25}


def test_precision_divides_by_k_when_fewer_retrieved():
    m = means({"q": {"a": 1}}, {"q": ["x", "a", "y"]}, ["P@10", "precision"])
    assert m["P@10"] == pytest.approx(0.1, abs=1e-15)
    assert m["precision"] == pytest.approx(1 / 3, abs=1e-15)  # k = None: divides by len(L)


def test_r_precision_two_relevant_one_among_three():
    m = means({"q": {"a": 1, "b": 1}}, {"q": ["a", "x", "y"]}, ["r_precision"])
    assert m["r_precision"] == 0.5


def test_tied_scores_rank_by_doc_id_descending():
    qrels = {"q": {"d1": 1}}
    run = {"q": {"d1": 1.0, "d2": 1.0, "d3": 1.0}}
    assert means(qrels, run, ["rr"])["rr"] == pytest.approx(1 / 3, abs=1e-15)
    assert Run.from_dict(run).to_lists()["q"] == ["d3", "d2", "d1"]


def test_d9_ranks_before_d10_when_tied():
    """Ids compare as strings: "d9" > "d10", so d9 ranks first under the descending rule."""
    run = Run.from_dict({"q": {"d10": 1.0, "d9": 1.0}})
    assert run.to_lists()["q"] == ["d9", "d10"]
    assert means({"q": {"d9": 1}}, run, ["rr"])["rr"] == 1.0
    assert means({"q": {"d10": 1}}, run, ["rr"])["rr"] == 0.5


def test_zero_and_negative_grades():
    qrels = {"q": {"a": 0, "b": -1, "c": 1}}
    run = {"q": ["a", "b", "c"]}
    m = means(qrels, run, ["rr", "P@3", "ap", "hits", "recall"])
    assert m["rr"] == pytest.approx(1 / 3, abs=1e-15)
    assert m["P@3"] == pytest.approx(1 / 3, abs=1e-15)
    assert m["ap"] == pytest.approx(1 / 3, abs=1e-15)  # R = 1: only c counts
    assert m["hits"] == 1.0 and m["recall"] == 1.0


def test_blog_post_ap_as_a_ranked_list():
    """Relevance [1, 0, 0, 1] against 2 relevant ids: (1/1 + 2/4) / 2 = 0.75."""
    m = means({"q": {"r1": 1, "r2": 1}}, {"q": ["r1", "x1", "x2", "r2"]}, ["ap"])
    assert m["ap"] == 0.75


def test_context_precision_at_3():
    """Kalyan KS: relevance [1, 0, 0] -> context_precision@3 = 1.0 (divides by relevant retrieved)."""
    m = means({"q": {"r1": 1, "r9": 1}}, {"q": ["r1", "x1", "x2"]}, ["context_precision@3", "ap@3"])
    assert m["context_precision@3"] == 1.0
    assert m["ap@3"] == 0.5  # AP divides by R = 2 instead
