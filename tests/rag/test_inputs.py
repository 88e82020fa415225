"""Input forms and errors of the RAG entry points."""

from __future__ import annotations

import dataclasses
import math
import warnings

import pytest

import ragrade
from ragrade.errors import InputError, RagradeWarning
from reference import evaluate_profile, evaluate_rag


def _q(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return fn(*a, **kw)


def test_same_numbers_from_lists_dicts_and_objects():
    gold = {"a": ["d1", "d2"], "b": ["d3"]}
    ret = {"a": ["d2", "x", "d1"], "b": ["y"]}
    lists = evaluate_profile(list(gold.values()), list(ret.values()), ["ap", "ndcg"], "llamaindex").means
    dicts = evaluate_profile(gold, ret, ["ap", "ndcg"], "llamaindex").means
    objs = evaluate_profile(ragrade.Qrels.from_dict({q: dict.fromkeys(v, 1) for q, v in gold.items()}),
                            ragrade.Run.from_ranked(ret), ["ap", "ndcg"], "llamaindex").means
    assert lists == dicts == objs


def test_scored_run_is_ranked_before_profiles_see_it():
    r = evaluate_profile({"q": {"d1": 1}}, {"q": {"x": 0.1, "d1": 0.9}}, ["rr"], "llamaindex")
    assert r.means["rr"] == 1.0


def test_missing_and_extra_queries():
    r = _q(evaluate_profile, {"a": ["d1"], "b": ["d2"]}, {"a": ["d1"], "zz": ["d9"]}, ["recall"], "remem")
    assert r.per_query["recall"].to_dict() == {"a": 1.0, "b": 0.0}
    assert r.summary.missing_from_run == ["b"] and r.summary.only_in_run == ["zz"]
    d = _q(evaluate_rag, {"a": ["t one here"], "b": ["t two here"]}, {"a": ["t one here"]}, ["recall"],
           matcher="exact")
    assert d.per_query["recall"].to_dict() == {"a": 1.0, "b": 0.0}  # missing_run="zero" (default policy)
    d = _q(evaluate_rag, {"a": ["t one here"], "b": ["t two here"]}, {"a": ["t one here"]}, ["recall"],
           matcher="exact", missing_run="drop")
    assert list(d.per_query.index) == ["a"]


def test_empty_ground_truth_text_query_follows_no_relevant_policy():
    d = _q(evaluate_rag, [["gold text here"], []], [["gold text here"], ["x"]], ["recall"], matcher="exact")
    assert d.means["recall"] == 1.0 and math.isnan(d.per_query["recall"].iloc[1])


@pytest.mark.parametrize(("truth", "run"), [
    ([["a"]], [[None]]),
    ([[{"x": 1}]], [["a"]]),
    ("notalist", [["a"]]),
    ([["a"]], ["abc"]),
])
def test_bad_inputs_raise_typed_errors(truth, run):
    with pytest.raises(InputError):
        evaluate_profile(truth, run, ["recall"], "llamaindex")


def test_duplicate_query_in_ground_truth():
    with pytest.raises(InputError, match="twice"):
        evaluate_profile({1: ["x"], "1": ["y"]}, {"1": ["x"]}, ["recall"], "llamaindex")


def test_profile_and_matcher_errors():
    with pytest.raises(ragrade.UnknownNameError, match="unknown profile"):
        ragrade.evaluate([["a"]], [["a"]], ["recall"], profile="autoRAGs")
    with pytest.raises(InputError, match="list profiles"):
        ragrade.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["rr"], profile="pytrec_eval", matcher="exact")
    with pytest.raises(ragrade.UnknownNameError):
        evaluate_profile([["a"]], [["a"]], ["nonsense@3"], "autorag")
    with pytest.raises(ragrade.MetricError, match="no metric parameters"):
        evaluate_profile([["a"]], [["a"]], ["ndcg(gain=exp)@3"], "autorag")


def test_get_profile_aliases():
    assert ragrade.get_profile("CE").name == "continuous-eval"
    assert ragrade.get_profile("mteb").name == "beir"
    p = ragrade.get_profile("ragas")
    assert p == ragrade.get_profile(p) and p.convention("ap").rule.epsilon == 1e-10
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.rounding = 3  # type: ignore[misc]
