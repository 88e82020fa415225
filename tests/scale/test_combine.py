"""scale/combine.py: a collection split by query, evaluated part by part and combined, equals the
collection evaluated whole, for every registry metric and every policy; every Summary field and Result
argument has a merge rule."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scale_metrics import METRICS

import ragrade
from ragrade.engine.result import Result, Summary
from ragrade.scale.combine import (
    RESULT_ARGUMENTS,
    SUMMARY_RULES,
    check_rules,
    combine,
    merge_summaries,
    part_state,
    result_from_state,
)
from reference import random_case


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def split(case, n_parts: int, seed: int):
    """Parts by a function of the query id: each query, on both sides, in one part."""
    queries = list(dict.fromkeys([*case.qrels, *case.run]))
    part = {q: int(v) for q, v in zip(queries, np.random.default_rng(seed).integers(0, n_parts, len(queries)),
                                       strict=True)}
    return [({q: j for q, j in case.qrels.items() if part[q] == p}, {q: r for q, r in case.run.items() if part[q] == p})
            for p in range(n_parts)]


def orders(case):
    return (pd.Series(np.arange(len(case.qrels)), index=pd.Index(list(case.qrels), dtype=object)),
            pd.Series(np.arange(len(case.run)), index=pd.Index(list(case.run), dtype=object)))


def evaluable_parts(case, n_parts: int, seed: int):
    """The parts of :func:`split`, each with ground truth: a part with queries only in the run gives them
    to the first part (the split stays by query)."""
    pieces = [(dict(q), dict(r)) for q, r in split(case, n_parts, seed)]
    keep = [p for p in pieces if p[0]]
    for q, r in pieces:
        if not q:
            keep[0][1].update(r)
    return keep


def assert_same(got, want):
    pd.testing.assert_frame_equal(got.per_query, want.per_query, check_exact=True)
    assert got.summary == want.summary
    assert dict(got.means) == pytest.approx(dict(want.means), abs=0, nan_ok=True)
    assert dict(got.counts) == dict(want.counts)
    assert (got.hole_rate is None) == (want.hole_rate is None)
    if want.hole_rate is not None:
        pd.testing.assert_series_equal(got.hole_rate.per_query, want.hole_rate.per_query, check_exact=True)
        assert got.hole_rate.by_k == want.hole_rate.by_k
        assert got.hole_rate.only_relevant_judged == want.hole_rate.only_relevant_judged
    assert (got.upper is None) == (want.upper is None)
    if want.upper is not None:
        pd.testing.assert_frame_equal(got.upper, want.upper, check_exact=True)


@pytest.mark.parametrize("n_parts", [1, 3, 7])
@pytest.mark.parametrize("seed", range(5))
def test_every_registry_metric_by_parts(seed, n_parts):
    case = random_case(np.random.default_rng(seed), 60)
    want = quiet(ragrade.evaluate, case.qrels, case.run, METRICS)
    parts = [quiet(ragrade.evaluate, q, r, METRICS) for q, r in split(case, n_parts, seed) if q]
    qo, _ = orders(case)
    # Queries only in the run are in parts with ground truth here when they share a part; the rest
    # are summarised as the out-of-core path does.
    only = [q for q, _r in [(q, r) for qq, rr in split(case, n_parts, seed) if not qq for q, r in rr.items()]]
    if only:
        s = Summary(qrels_queries=0, run_queries=len(only), evaluated=0, only_in_run=only)
        parts.append(Result(parts[0].per_query.iloc[:0], parts[0].metrics, s, parts[0].policies))
    _, ro = orders(case)
    got = combine(parts, qrels_order=qo, run_order=ro, warn=False)
    assert_same(got, want)


@pytest.mark.parametrize("policies", [
    {"missing_run": "drop"}, {"no_relevant": "zero"}, {"no_relevant": "nan"}, {"ties": "input"},
    {"ties": "docid_asc"}, {"identical_ids": "drop"}, {"profile": "trec_eval"}, {"profile": "beir"},
    {"unjudged": "bounds", "upper_grade": 3}, {"unjudged": "condensed"}, {"max_docs": 4},
])
@pytest.mark.parametrize("n_parts", [2, 5])
def test_policies_by_parts(policies, n_parts):
    case = random_case(np.random.default_rng(3), 80)
    for q in list(case.run)[:10]:
        case.run[q][q] = 1.0  # identical ids
    metrics = ["ndcg@10", "map", "P@5", "rr", "recall@10"]
    want = quiet(ragrade.evaluate, case.qrels, case.run, metrics, **policies)
    qo, ro = orders(case)
    parts = [quiet(ragrade.evaluate, q, r, metrics, **policies) for q, r in evaluable_parts(case, n_parts, 11)]
    assert_same(combine(parts, qrels_order=qo, run_order=ro, warn=False), want)


def test_combined_warning_says_what_the_whole_says():
    case = random_case(np.random.default_rng(4), 50)
    qo, _ = orders(case)
    parts = [quiet(ragrade.evaluate, q, r, "ndcg@10") for q, r in split(case, 2, 0) if q]
    with pytest.warns(ragrade.RagradeWarning) as caught:
        combine(parts, qrels_order=qo, warn=True)
    assert len(caught) == 1 and "missing from the run" in str(caught[0].message)


def test_every_summary_field_and_result_argument_has_a_rule():
    check_rules()  # raises when Summary or Result grows a field combine does not handle
    assert set(SUMMARY_RULES) == {f.name for f in dataclasses.fields(Summary)}
    import inspect

    assert set(inspect.signature(Result.__init__).parameters) - {"self"} <= RESULT_ARGUMENTS


def test_a_field_without_a_rule_is_refused(monkeypatch):
    import ragrade.scale.combine as C

    monkeypatch.setattr(C, "SUMMARY_RULES", {k: v for k, v in SUMMARY_RULES.items() if k != "duplicate_items"})
    with pytest.raises(TypeError, match="duplicate_items"):
        C.check_rules()
    monkeypatch.setattr(C, "SUMMARY_RULES", SUMMARY_RULES)
    monkeypatch.setattr(C, "RESULT_ARGUMENTS", RESULT_ARGUMENTS - {"profile"})
    with pytest.raises(TypeError, match="profile"):
        C.check_rules()


def test_state_round_trip():
    case = random_case(np.random.default_rng(5), 40)
    r = quiet(ragrade.evaluate, case.qrels, case.run, ["ndcg@3", "P@3"], no_relevant="nan")
    back = result_from_state(r.per_query, part_state(r), r.metrics, r.policies)
    assert back.summary == r.summary
    assert dict(back.means) == pytest.approx(dict(r.means), nan_ok=True)


def test_merge_summaries_orders_and_sums():
    a = Summary(qrels_queries=2, run_queries=1, evaluated=2, missing_from_run=["q3"], no_relevant={"m": ["q3"]},
                ties_at_cutoff={5: 1})
    b = Summary(qrels_queries=1, run_queries=2, evaluated=1, missing_from_run=["q1"], only_in_run=["z"],
                ties_at_cutoff={5: 2, 10: 1}, duplicate_items=3)
    order = pd.Series([0, 1, 2], index=["q1", "q2", "q3"])
    m = merge_summaries([a, b], ["m"], qrels_order=order)
    assert m.missing_from_run == ["q1", "q3"] and m.ties_at_cutoff == {5: 3, 10: 1}
    assert (m.qrels_queries, m.run_queries, m.evaluated, m.duplicate_items) == (3, 3, 3, 3)
    assert m.no_relevant == {"m": ["q3"]} and m.only_in_run == ["z"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_parts=st.integers(1, 6))
def test_means_are_never_averaged_averages(seed, n_parts):
    """Parts of unequal sizes: the combined mean is the mean over queries, not the mean of part means."""
    case = random_case(np.random.default_rng(seed), 25)
    if not case.qrels:
        return
    want = quiet(ragrade.evaluate, case.qrels, case.run, ["ndcg@5", "rr"])
    parts = [quiet(ragrade.evaluate, q, r, ["ndcg@5", "rr"]) for q, r in evaluable_parts(case, n_parts, seed)]
    qo, ro = orders(case)
    assert_same(combine(parts, qrels_order=qo, run_order=ro, warn=False), want)
