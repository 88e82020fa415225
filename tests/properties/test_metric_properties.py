"""Metric properties (hypothesis), driven by the registry so that a new metric is covered automatically:
bounds, monotonicity in k, the ideal ranking, invariance to input order and to a constant score shift,
and duplicates never pushing a metric above 1."""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ragrade
from ragrade import RagradeWarning, Run
from ragrade.metrics import ID_FAMILIES
from reference import PROPERTY_SETTINGS

DOCS = [f"d{i}" for i in range(1, 13)]
SCORES = [i / 8 for i in range(0, 17)]  # exact in float32 and float64; +1.0 keeps them exact


def _judgments():
    return st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1, max_size=8)


def _scores():
    return st.dictionaries(st.sampled_from(DOCS), st.sampled_from(SCORES), min_size=0, max_size=10)


@st.composite
def cases(draw):
    """(qrels, run): 1-5 queries, graded judgments, tied scores, some queries on one side only."""
    qids = draw(st.lists(st.sampled_from([f"q{i}" for i in range(8)]), min_size=1, max_size=5, unique=True))
    qrels = {q: draw(_judgments()) for q in qids if draw(st.integers(0, 9)) > 0}
    run = {q: draw(_scores()) for q in qids if draw(st.integers(0, 9)) > 0}
    if not qrels:
        qrels = {qids[0]: draw(_judgments())}
    return qrels, run


def variants(d, cutoffs=(None, 1, 2, 3, 5, 10)):
    """Metric strings of one definition: its cutoffs (if allowed; a recall level for iprec) and its
    relevance, gain, gain-map and judged-only variants."""
    names = {p.name for p in d.params}
    params = [""]
    if "rel" in names:
        params.append("(rel=2)")
    if "gain" in names:
        params.append("(gain=exp)")
    if "gains" in names:
        params.append("(gains={1:2,2:5,3:9})")
    if "judged_only" in names:
        params.append("(judged_only=true)")
    if d.at_param is not None:
        return [f"{d.name}{p}@{x}" for p in params for x in (0.0, 0.3, 1.0)]
    cuts = [None] if d.cutoff == "none" else list(cutoffs)
    if d.cutoff == "required":
        cuts = [k for k in cuts if k is not None] or [10]
    return [f"{d.name}{p}" + ("" if k is None else f"@{k}") for p in params for k in cuts]


def evaluate(qrels, run, metrics, **policies):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return ragrade.evaluate(qrels, run, metrics, **policies).per_query


def ids(defs):
    return [d.name for d in defs]


BOUNDED = [d for d in ID_FAMILIES if d.bounded]
MONOTONE = [d for d in ID_FAMILIES if d.monotone_in_k]
IDEAL = [d for d in ID_FAMILIES if d.ideal_is_one]


def test_registry_flags_cover_the_issue_properties():
    """Guard against the property lists silently emptying (issue 2 names these metrics)."""
    assert {"recall", "hit_rate", "recall_all"} <= {d.name for d in MONOTONE}
    assert {"ndcg", "ap", "rr", "r_precision"} <= {d.name for d in IDEAL}
    assert len(BOUNDED) >= 8


@pytest.mark.parametrize("defn", BOUNDED, ids=ids(BOUNDED))
@PROPERTY_SETTINGS
@given(cases())
def test_bounded_metrics_lie_in_unit_interval(defn, case):
    qrels, run = case
    frame = evaluate(qrels, run, variants(defn), no_relevant="zero")
    values = frame.to_numpy().ravel()
    assert ((values >= 0.0) & (values <= 1.0)).all(), frame


@pytest.mark.parametrize("defn", MONOTONE, ids=ids(MONOTONE))
@PROPERTY_SETTINGS
@given(cases())
def test_monotone_metrics_never_decrease_with_k(defn, case):
    qrels, run = case
    ks = list(range(1, 13))
    for base in (v for v in variants(defn, cutoffs=(None,)) if "@" not in v):
        frame = evaluate(qrels, run, [f"{base}@{k}" for k in ks] + [base], no_relevant="zero")
        values = frame.to_numpy()  # lists hold at most 10 items: k=None comes last, like k >= 10
        assert (values[:, 1:] >= values[:, :-1]).all(), frame


def ideal_run(qrels):
    """Every positively graded document, by grade descending (then judged non-relevant ones)."""
    out = {}
    for q, judged in qrels.items():
        ranked = sorted(judged, key=lambda d: -judged[d])
        out[q] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return out


@pytest.mark.parametrize("defn", IDEAL, ids=ids(IDEAL))
@PROPERTY_SETTINGS
@given(cases())
def test_the_ideal_ranking_scores_one(defn, case):
    qrels, _ = case
    metrics = variants(defn, cutoffs=(None, 20))
    frame = evaluate(qrels, ideal_run(qrels), metrics)  # default: undefined (R = 0) queries are NaN
    for label in metrics:
        col = frame[label].dropna()
        assert (col.sub(1.0).abs() <= 1e-12).all(), (label, frame[label].to_dict(), qrels)


ALL = [m for d in ID_FAMILIES for m in variants(d, cutoffs=(None, 1, 3, 10))]


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.sort_index(), b.sort_index(), check_exact=True)


@PROPERTY_SETTINGS
@given(cases(), st.randoms(use_true_random=False))
def test_order_of_queries_and_rows_changes_nothing(case, rnd):
    qrels, run = case
    base = evaluate(qrels, run, ALL)

    def shuffled(nested):
        qs = list(nested)
        rnd.shuffle(qs)
        out = {}
        for q in qs:
            items = list(nested[q].items())
            rnd.shuffle(items)
            out[q] = dict(items)
        return out

    _same(evaluate(shuffled(qrels), run, ALL), base)
    _same(evaluate(qrels, shuffled(run), ALL), base)
    _same(evaluate(shuffled(qrels), shuffled(run), ALL), base)


@PROPERTY_SETTINGS
@given(cases(), st.sampled_from([1.0, 2.0, -3.0, 0.5]))
def test_adding_a_constant_to_all_scores_changes_nothing(case, shift):
    qrels, run = case
    moved = {q: {d: s + shift for d, s in docs.items()} for q, docs in run.items()}
    _same(evaluate(qrels, moved, ALL), evaluate(qrels, run, ALL))


@st.composite
def lists_with_duplicates(draw):
    qrels = {"q": draw(_judgments())}
    pool = [*qrels["q"], "x1", "x2"]
    ranked = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=12))
    return qrels, Run.from_lists([ranked], query_ids=["q"])


BOUNDED_ALL = [m for d in BOUNDED for m in variants(d)]


@pytest.mark.parametrize("policy", ["credit_once", "drop", "keep_last"])
@PROPERTY_SETTINGS
@given(lists_with_duplicates())
def test_duplicates_never_push_a_metric_above_one(policy, case):
    qrels, run = case
    frame = evaluate(qrels, run, BOUNDED_ALL, duplicates=policy)
    values = frame.to_numpy().ravel()
    values = values[~pd.isna(values)]
    assert ((values >= 0.0) & (values <= 1.0)).all(), frame
    # hits never exceed R (a unit is credited once).
    h = evaluate(qrels, run, ["hits"], duplicates=policy, no_relevant="zero")["hits"].iloc[0]
    assert h <= sum(1 for g in qrels["q"].values() if g >= 1)


@PROPERTY_SETTINGS
@given(cases())
def test_means_are_the_mean_of_counted_queries(case):
    qrels, run = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        res = ragrade.evaluate(qrels, run, ["ndcg@5", "ap", "P@3"])
    for label, mean in res.means.items():
        col = res.per_query[label].dropna()
        assert res.counts[label] == len(col)
        if len(col):
            assert math.isclose(mean, float(col.mean()), abs_tol=1e-15)
        else:
            assert math.isnan(mean)
