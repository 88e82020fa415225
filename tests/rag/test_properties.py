"""Properties: bounds with duplicates, empty strings never match, batch invariance."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragrade.errors import RagradeWarning
from ragrade.matching import Containment, Exact, Fuzzy, NormalizedExact, RougeL, TokenF1
from reference import evaluate_profile, evaluate_rag

METRICS = ["P@3", "recall@3", "f1@3", "ap", "ndcg", "rr", "hit_rate@2", "recall_all", "r_precision",
           "context_precision", "ndcg@2", "ap@2"]
ids = st.sampled_from(["a", "b", "c", "d", "e"])
texts = st.sampled_from(["Paris is the capital of France.", "Lyon is a city.", "the capital", "Paris",
                         "", " ", "France is large.", "paris is the capital of france"])
SET = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return fn(*a, **kw)


def _bounded(res):
    for col in res.per_query.columns:
        for v in res.per_query[col].tolist():
            assert math.isnan(v) or 0.0 <= v <= 1.0 + 1e-12, (col, v)


@SET
@given(st.lists(st.lists(st.lists(ids, min_size=1, max_size=3), min_size=1, max_size=3), min_size=1, max_size=4),
       st.lists(st.lists(ids, max_size=7), min_size=4, max_size=4))
def test_default_groups_bounded_with_duplicates(groups, lists):
    res = _quiet(evaluate_rag, groups, lists[: len(groups)], METRICS)
    _bounded(res)


@SET
@given(st.lists(st.lists(texts, min_size=1, max_size=4), min_size=1, max_size=3),
       st.lists(st.lists(texts, max_size=6), min_size=3, max_size=3),
       st.sampled_from(["exact", "normalized_exact", "containment", "levenshtein", "rouge_l", "token_f1"]))
def test_default_texts_bounded_with_duplicate_chunks_and_gold(gold, lists, matcher):
    res = _quiet(evaluate_rag, gold, lists[: len(gold)], METRICS, matcher=matcher)
    _bounded(res)


OWN = [Exact(), NormalizedExact(), Containment(), Containment(min_length=1), Fuzzy(threshold=0.0),
       Fuzzy(scorer="jaro_winkler", threshold=0.0), Fuzzy(scorer="ratio", threshold=0.0, op=">="),
       RougeL(threshold=0.0), RougeL(variant="standard", threshold=0.0), TokenF1(threshold=0.0)]


@pytest.mark.parametrize("matcher", OWN, ids=lambda m: m.describe())
@SET
@given(other=st.text(max_size=30), blank=st.sampled_from(["", " ", "\n\t "]))
def test_no_matcher_matches_an_empty_string(matcher, other, blank):
    assert not matcher.match([blank], [other])[0]
    assert not matcher.match([other], [blank])[0]
    assert not matcher.match([blank], [blank])[0]


PROFILE_METRICS = {"autorag": ["precision", "recall", "f1", "rr", "ap", "ndcg"],
                   "llamaindex": ["hit_rate", "rr", "precision", "recall", "ap", "ndcg"],
                   "ragas": ["context_precision", "precision", "recall"],
                   "continuous-eval": ["precision", "recall", "f1", "ap", "rr", "ndcg"],
                   "remem": ["recall@2", "recall_all@2", "ndcg@2", "ndcg"],
                   "deepeval": ["context_precision"]}


@pytest.mark.parametrize("profile", list(PROFILE_METRICS))
@SET
@given(st.lists(st.lists(ids, max_size=4), min_size=1, max_size=4),
       st.lists(st.lists(ids, max_size=6), min_size=4, max_size=4))
def test_batch_equals_one_query_at_a_time(profile, gold, lists):
    lists = lists[: len(gold)]
    units = [[[g] for g in gl] for gl in gold]
    metrics = PROFILE_METRICS[profile]
    together = _quiet(evaluate_profile, units, lists, metrics, profile).per_query
    for i in range(len(gold)):
        alone = _quiet(evaluate_profile, [units[i]], [lists[i]], metrics, profile).per_query
        for m in metrics:
            a, b = together[m].iloc[i], alone[m].iloc[0]
            assert (math.isnan(a) and math.isnan(b)) or a == b, (profile, m, gold[i], lists[i])


@SET
@given(st.lists(st.lists(texts, min_size=1, max_size=3), min_size=1, max_size=3),
       st.lists(st.lists(texts, max_size=5), min_size=3, max_size=3))
def test_text_batch_equals_one_query_at_a_time(gold, lists):
    lists = lists[: len(gold)]
    together = _quiet(evaluate_rag, gold, lists, METRICS, matcher="rouge_l").per_query
    for i in range(len(gold)):
        alone = _quiet(evaluate_rag, [gold[i]], [lists[i]], METRICS, matcher="rouge_l").per_query
        for m in METRICS:
            a, b = together[m].iloc[i], alone[m].iloc[0]
            assert (math.isnan(a) and math.isnan(b)) or a == b


def test_matrix_agrees_with_pairs():
    ret = ["Paris is the capital of France.", "Lyon", ""]
    gt = ["Paris is the capital of France and more.", "Lyon is a city."]
    for m in OWN:
        mat = m.matrix(ret, gt)
        for i, r in enumerate(ret):
            for j, g in enumerate(gt):
                assert mat[i, j] == m.match([r], [g])[0]


def _reference_greedy(gold: list[str], ret: list[str], matcher) -> list[int]:
    """Per row: index of the credited unit or -1 (plain Python, for checking the batched version)."""
    units = list(dict.fromkeys(gold))
    credited: set[int] = set()
    out = []
    seen: set[str] = set()
    for r in ret:
        got = -1
        if r in seen:  # a repeated text is a duplicate item: credited once (at its first rank)
            out.append(got)
            continue
        seen.add(r)
        for j, g in enumerate(units):
            if j not in credited and matcher.match([r], [g])[0]:
                got = j
                credited.add(j)
                break
        out.append(got)
    return out


@SET
@given(st.lists(texts, min_size=1, max_size=4), st.lists(texts, max_size=6),
       st.sampled_from(["containment", "levenshtein", "rouge_l", "normalized_exact"]))
def test_greedy_crediting_matches_reference(gold, ret, matcher_name):
    from ragrade.matching import get_matcher

    m = get_matcher(matcher_name)
    credit = _reference_greedy(gold, ret, m)
    r_units = len(dict.fromkeys(gold))
    hits = sum(c >= 0 for c in credit)
    res = _quiet(evaluate_rag, [gold], [ret], ["recall", "ap", "rr"], matcher=m).per_query.iloc[0]
    assert res["recall"] == pytest.approx(hits / r_units)
    ranks = [i + 1 for i, c in enumerate(credit) if c >= 0]
    assert res["rr"] == (1 / ranks[0] if ranks else 0.0)
    assert res["ap"] == pytest.approx(sum((n + 1) / rk for n, rk in enumerate(ranks)) / r_units)
