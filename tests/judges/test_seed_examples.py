"""Seed 001's worked examples, reproduced with a scripted judge giving the seed's verdicts."""

from __future__ import annotations

import math

import pytest
from seed_data import ENTITIES, PRECISION, RECALL, RELEVANCY

from ragrade.judges import evaluate_judged


def _one(row, metric, judge, profile="default"):
    res = evaluate_judged([row], [metric], judge=judge, profile=profile, cache=False)
    return res.per_query.loc[row["id"], metric], res


def test_context_precision_at_3_is_one(seed_judge):
    value, res = _one(PRECISION, "llm_context_precision@3", seed_judge)
    assert value == 1.0
    assert [v["verdict"] for v in res.details["precision"]["llm_context_precision@3"]["verdicts"]] == [1, 0, 0]


def test_context_precision_profiles(seed_judge):
    assert _one(PRECISION, "llm_context_precision@3", seed_judge, "ragas")[0] == pytest.approx(1 / (1 + 1e-10), abs=0)
    assert _one(PRECISION, "llm_context_precision@3", seed_judge, "deepeval")[0] == 1.0


def test_context_recall_is_three_quarters(seed_judge):
    value, res = _one(RECALL, "context_recall", seed_judge)
    assert value == 0.75
    stmts = res.details["recall"]["context_recall"]["statements"]
    assert [s["attributed"] for s in stmts] == [1, 1, 1, 0]


def test_context_entities_recall_is_two_thirds(seed_judge):
    value, res = _one(ENTITIES, "context_entities_recall", seed_judge)
    assert value == pytest.approx(2 / 3, abs=1e-15)
    d = res.details["entities"]["context_entities_recall"]
    assert d["common"] == ["brasília", "brazil"]
    ragas, _ = _one(ENTITIES, "context_entities_recall", seed_judge, "ragas")
    assert ragas == 2 / (3 + 1e-8)


def test_context_relevancy_is_two_thirds(seed_judge):
    value, _ = _one(RELEVANCY, "context_relevancy", seed_judge)
    assert value == pytest.approx(2 / 3, abs=1e-15)


def test_all_metrics_all_rows_means_skip_nan(seed_judge):
    rows = [PRECISION, RECALL, ENTITIES, RELEVANCY, {**RECALL, "id": "noref", "reference": ""}]
    res = evaluate_judged(rows, None, judge=seed_judge, cache=False)
    assert list(res.per_query.index) == ["precision", "recall", "entities", "relevancy", "noref"]
    assert math.isnan(res.per_query.loc["noref", "context_recall"])
    assert res.summary["metrics"]["context_recall"]["missing"] == 1
    assert res.means["context_recall"] == pytest.approx(res.per_query["context_recall"].dropna().mean())
