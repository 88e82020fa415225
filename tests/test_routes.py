"""The routes of ground truths beyond judged ids (ragrade.evaluation.ROUTES): the first route that claims a
plan evaluates it, its keywords (engine/plan.py TRUTH_OPTIONS) reach it through every entry point, and a plan
no route claims goes to the engine as before."""

from __future__ import annotations

import sys
import types

import pytest

import ragrade
from ragrade import evaluation
from ragrade.engine import plan as plan_module
from ragrade.engine.result import QueryColumns, Result, Summary
from ragrade.errors import UnknownNameError
from ragrade.policies import Policies


@pytest.fixture
def toy_route(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    seen: list[object] = []
    module = types.ModuleType("toy_route")

    def claims(plan: plan_module.EvalPlan) -> bool:
        return "toy_truth" in plan.extras

    def run(plan: plan_module.EvalPlan) -> dict[str, Result]:
        seen.append(plan)
        import numpy as np

        out = {}
        for name, _ in plan.runs:
            frame = QueryColumns(np.array(["q1"], dtype=object), {"P@1": np.array([0.25])})
            out[name] = Result(frame, dict(plan.labels), Summary(qrels_queries=1, run_queries=1, evaluated=1),
                               Policies())
        return out

    module.claims, module.run = claims, run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toy_route", module)
    monkeypatch.setattr(evaluation, "ROUTES", ("toy_route",))
    monkeypatch.setitem(plan_module.TRUTH_OPTIONS, "toy_truth", "a toy ground truth")
    return seen


def test_a_route_claims_the_plan_and_gets_its_keyword(toy_route: list[object]) -> None:
    res = ragrade.evaluate({"q1": {"d1": 1}}, {"q1": ["d1"]}, ["P@1"], toy_truth="x")
    assert res.means == {"P@1": 0.25}
    assert toy_route[0].extras == {"toy_truth": "x"}  # type: ignore[attr-defined]


def test_compare_passes_the_keyword_to_the_route(toy_route: list[object]) -> None:
    ragrade.compare({"q1": {"d1": 1}}, {"a": {"q1": ["d1"]}, "b": {"q1": ["d1"]}}, ["P@1"], toy_truth="x")
    assert len(toy_route) == 1 and [n for n, _ in toy_route[0].runs] == ["a", "b"]  # type: ignore[attr-defined]


def test_unclaimed_plans_go_to_the_engine(toy_route: list[object]) -> None:
    res = ragrade.evaluate({"q1": {"d1": 1}}, {"q1": ["d1", "d2"]}, ["P@2"])
    assert res.means == {"P@2": 0.5} and not toy_route


def test_an_unknown_keyword_is_refused() -> None:
    with pytest.raises(UnknownNameError, match="toy_truth"):
        ragrade.evaluate({"q1": {"d1": 1}}, {"q1": ["d1"]}, ["P@1"], toy_truth="x")
