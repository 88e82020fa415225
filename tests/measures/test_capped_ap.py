"""capped_ap@k (AP@k over min(k, R)) on hand-computed cases: where it differs from ap@k, where it equals it,
and that a cutoff is required. The kernel is checked against tests/reference.py under every policy by the
registry-wide property tests, and against Spark MLlib in tests/parity/test_spark_ranking_metrics.py."""

from __future__ import annotations

import pytest

import ragrade
from ragrade.errors import MetricError, RagradeError

QRELS = {"q1": {"a": 1, "b": 1, "c": 1, "d": 0}, "q2": {"x": 2}}
RUN = {"q1": {"a": 3.0, "d": 2.0, "b": 1.0}, "q2": {"y": 2.0, "x": 1.0}}


def test_hand_computed_values():
    got = ragrade.evaluate(QRELS, RUN, ["capped_ap@2", "capped_ap@3", "ap@2", "capped_ap(rel=2)@1"]).per_query
    # q1: relevant at ranks 1 and 3 (R = 3); q2: relevant at rank 2 (R = 1)
    assert got.loc["q1", "capped_ap@2"] == pytest.approx(1.0 / 2)  # (1/1) / min(2, 3)
    assert got.loc["q1", "capped_ap@3"] == pytest.approx((1.0 + 2.0 / 3) / 3)
    assert got.loc["q1", "ap@2"] == pytest.approx(1.0 / 3)  # trec_eval's map_cut divides by R
    assert got.loc["q2", "capped_ap@2"] == pytest.approx(0.5)
    # rel=2: q1 has no relevant document at grade 2 (not counted), q2's x is not in the top 1
    assert got.loc["q2", "capped_ap(rel=2)@1"] == 0.0


def test_a_perfect_top_k_scores_one_whatever_r():
    qrels = {"q": {f"d{i}": 1 for i in range(20)}}
    run = {"q": {f"d{i}": float(20 - i) for i in range(20)}}
    res = ragrade.evaluate(qrels, run, ["capped_ap@5", "ap@5"]).means
    assert res["capped_ap@5"] == 1.0
    assert res["ap@5"] == pytest.approx(5 / 20)


def test_equals_ap_when_r_is_at_most_k():
    res = ragrade.evaluate(QRELS, RUN, ["capped_ap@10", "ap@10"]).per_query
    assert res["capped_ap@10"].tolist() == pytest.approx(res["ap@10"].tolist())


def test_a_cutoff_is_required():
    with pytest.raises(MetricError, match="needs a cutoff"):
        ragrade.evaluate(QRELS, RUN, ["capped_ap"])
    with pytest.raises(RagradeError):
        ragrade.evaluate(QRELS, RUN, ["capped_ap@0"])
