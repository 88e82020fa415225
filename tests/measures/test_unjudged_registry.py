"""``unjudged=`` (nonrelevant, condensed, bounds) on every measure of the registry, and the hole rate in every
kind of result.

* every id family (at several cutoffs, rel levels, gain maps, judged_only): condensed and both bounds equal
  the slow reference of the tests, and condensed also equals scoring the run with its unjudged documents
  removed beforehand (an independent check of what "condensed" means);
* the diversity families: condensed equals ndeval (pyndeval) on the run with its unjudged documents
  removed, the upper bound equals scoring against subtopic judgments in which every unjudged retrieved
  document is relevant to every subtopic of its query;
* engine profiles keep the hole rate and the upper bound; list profiles, whose ground truth has no judged
  non-relevant item, refuse condensed and bounds with a PolicyError instead of ignoring them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragrade
from ragrade import PolicyError
from ragrade.metrics import ID_FAMILIES, REGISTRY
from reference import assert_same, frame_to_dict, metric_variants, random_case, rank, ref_evaluate, rows_of

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")


def id_metrics() -> list[str]:
    out = []
    for fam in ID_FAMILIES:
        names = {p.name for p in fam.params}
        variants = [""]
        if "rel" in names:
            variants.append("(rel=2)")
        if "gains" in names:
            variants.append("(gains={0:1,1:2,3:7})")
        if "judged_only" in names:
            variants.append("(judged_only=true)")
        out += metric_variants(fam, [None, 3, 10], variants)
    return [m for m in out if not m.startswith("utility")] + ["utility(d=0.5)"]


METRICS = id_metrics()


def test_every_id_family_is_covered():
    assert {m.split("(")[0].split("@")[0] for m in METRICS} == {f.name for f in ID_FAMILIES}


@pytest.mark.parametrize("policy", ["condensed", "bounds"])
@pytest.mark.parametrize("seed", range(3))
def test_every_id_measure_equals_the_reference(policy, seed):
    case = random_case(np.random.default_rng(900 + seed), n_queries=25)
    kw = dict(unjudged=policy, num_docs=200)
    res = ragrade.evaluate(case.qrels, case.run, METRICS, **kw)
    assert_same(frame_to_dict(res.per_query), ref_evaluate(case.qrels, rows_of(case.run), METRICS, **kw))
    if policy == "bounds":
        assert_same(frame_to_dict(res.upper),
                    ref_evaluate(case.qrels, rows_of(case.run), METRICS, upper=True, **kw))
    assert res.hole_rate is not None and len(res.hole_rate.per_query) == len(res.per_query)


@pytest.mark.parametrize("seed", range(3))
def test_condensed_is_scoring_without_the_unjudged_documents(seed):
    """Removing unjudged (and negative-grade: trec_eval's "not judged") documents from the run first and
    scoring under the default policy gives the condensed values of every id measure."""
    case = random_case(np.random.default_rng(950 + seed), n_queries=25)
    judged_run = {q: {d: s for d, s in docs.items() if case.qrels.get(q, {}).get(d, -1) >= 0}
                  for q, docs in case.run.items()}
    a = ragrade.evaluate(case.qrels, case.run, METRICS, unjudged="condensed", num_docs=200).per_query
    b = ragrade.evaluate(case.qrels, judged_run, METRICS, num_docs=200).per_query
    # utility's "non-relevant not retrieved" and num_ret-type counts read the list length: both lists are
    # the condensed one here, so every column must agree.
    assert list(a.columns) == list(b.columns)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=0, atol=1e-12, equal_nan=True)


def test_no_id_measure_moves_under_bounds_when_everything_is_judged():
    rng = np.random.default_rng(5)
    case = random_case(rng, n_queries=20)
    # every retrieved document judged, no negative grade (trec_eval counts those as not judged)
    full = {q: {**{d: 0 for d in case.run.get(q, {})}, **{d: max(g, 0) for d, g in docs.items()}}
            for q, docs in case.qrels.items()}
    res = ragrade.evaluate(full, case.run, METRICS, unjudged="bounds", num_docs=200)
    base = ragrade.evaluate(full, case.run, METRICS, num_docs=200).per_query
    np.testing.assert_allclose(res.per_query.to_numpy(), base.to_numpy(), rtol=0, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(res.upper.to_numpy(), base.to_numpy(), rtol=0, atol=1e-12, equal_nan=True)
    cond = ragrade.evaluate(full, case.run, METRICS, unjudged="condensed", num_docs=200).per_query
    np.testing.assert_allclose(cond.to_numpy(), base.to_numpy(), rtol=0, atol=1e-12, equal_nan=True)


# -- diversity -------------------------------------------------------------------------------------------


def subtopic_case(seed: int):
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    run: dict[str, dict[str, float]] = {}
    pool = [f"d{i}" for i in range(25)]
    for i in range(20):
        q = str(10 + i)
        subs = {}
        for s in range(1, int(rng.integers(2, 5))):
            docs = rng.choice(pool, int(rng.integers(1, 8)), replace=False)
            subs[str(s)] = {str(d): int(rng.choice([0, 0, 1, 2])) for d in docs}
        qrels[q] = subs
        docs = rng.choice(pool, int(rng.integers(1, 20)), replace=False)
        run[q] = {str(d): float(len(docs) - j) for j, d in enumerate(docs)}
    return qrels, run


DIVERSITY = ["alpha_ndcg@5", "alpha_ndcg@20", "alpha_ndcg(alpha=0.3)@10", "err_ia@5", "err_ia@20",
             # ndeval's other measures (issue 22)
             "alpha_dcg@10", "nerr_ia@10", "p_ia@5", "strecall@10", "ap_ia", "nrbp", "nnrbp"]


def test_every_diversity_family_is_covered():
    assert {m.split("(")[0].split("@")[0] for m in DIVERSITY} == {f.name for f in REGISTRY if f.kind == "diversity"}


@pytest.mark.parametrize("seed", range(3))
def test_diversity_condensed_and_bounds(seed):
    qrels, run = subtopic_case(70 + seed)
    judged = {q: {d for docs in subs.values() for d in docs} for q, subs in qrels.items()}
    judged_run = {q: {d: s for d, s in docs.items() if d in judged[q]} for q, docs in run.items()}
    cond = ragrade.evaluate(qrels, run, DIVERSITY, unjudged="condensed")
    want = ragrade.evaluate(qrels, judged_run, DIVERSITY)
    np.testing.assert_allclose(cond.per_query.to_numpy(), want.per_query.to_numpy(), rtol=0, atol=1e-12)
    bounds = ragrade.evaluate(qrels, run, DIVERSITY, unjudged="bounds")
    base = ragrade.evaluate(qrels, run, DIVERSITY)
    np.testing.assert_allclose(bounds.per_query.to_numpy(), base.per_query.to_numpy(), rtol=0, atol=1e-12)
    top = max(g for subs in qrels.values() for docs in subs.values() for g in docs.values())
    optimistic = {q: {s: {**docs, **{d: top for d in run[q] if d not in judged[q]}} for s, docs in subs.items()}
                  for q, subs in qrels.items()}
    up = ragrade.evaluate(optimistic, run, DIVERSITY)
    np.testing.assert_allclose(bounds.upper.to_numpy(), up.per_query.to_numpy(), rtol=0, atol=1e-12)
    # the hole rate: share of the top 20 (largest cutoff) without any subtopic judgment
    for q, docs in run.items():
        top20 = rank(list(docs.items()))[:20]
        want_rate = sum(d not in judged[q] for d in top20) / len(top20)
        assert math.isclose(base.hole_rate.per_query[q], want_rate, abs_tol=1e-12)
    assert base.hole_rate.k == 20


def test_diversity_condensed_equals_ndeval_on_the_condensed_run():
    pyndeval = pytest.importorskip("pyndeval")
    qrels, run = subtopic_case(99)
    judged = {q: {d for docs in subs.values() for d in docs} for q, subs in qrels.items()}
    judged_run = {q: {d: s for d, s in docs.items() if d in judged[q]} for q, docs in run.items()}
    triples = [pyndeval.SubtopicQrel(q, s, d, g) for q, subs in qrels.items() for s, docs in subs.items()
               for d, g in docs.items()]
    rows = [pyndeval.ScoredDoc(q, d, s) for q, docs in judged_run.items() for d, s in docs.items()]
    want = pyndeval.RelevanceEvaluator(triples, measures=["alpha-nDCG@10", "ERR-IA@10"]).evaluate(rows)
    got = ragrade.evaluate(qrels, run, ["alpha_ndcg@10", "err_ia@10"], unjudged="condensed",
                           no_relevant="zero").per_query
    n = 0
    for q, values in want.items():
        if q not in got.index:
            continue
        assert math.isclose(got.at[q, "alpha_ndcg@10"], values["alpha-nDCG@10"], abs_tol=1e-12), q
        assert math.isclose(got.at[q, "err_ia@10"], values["ERR-IA@10"], abs_tol=1e-12), q
        n += 2
    assert n > 20


# -- profiles --------------------------------------------------------------------------------------------


QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1}}
RUN = {"q1": {"x": 5.0, "a": 4.0, "y": 3.0, "b": 2.0, "c": 1.0}, "q2": {"z": 2.0, "w": 1.0}}


@pytest.mark.parametrize("profile", ["trec_eval", "pytrec_eval", "ir_measures", "ranx", "beir"])
def test_engine_profiles_keep_the_hole_rate_and_the_bounds(profile):
    base = ragrade.evaluate(QRELS, RUN, ["ndcg@5", "P@5"], profile=profile)
    assert base.hole_rate is not None and base.hole_rate.per_query["q1"] == pytest.approx(0.4)
    res = ragrade.evaluate(QRELS, RUN, ["ndcg@5", "P@5"], profile=profile, unjudged="bounds")
    assert res.upper is not None and res.upper.loc["q1", "P@5"] == pytest.approx(0.8)  # x, a, y, c: b is judged 0
    cond = ragrade.evaluate(QRELS, RUN, ["P@5"], profile=profile, unjudged="condensed")
    assert cond.per_query.loc["q1", "P@5"] == pytest.approx(2 / 5)  # a, b, c: 2 relevant of 5


@pytest.mark.parametrize("profile", ["autorag", "llamaindex"])
def test_list_profiles_refuse_condensed_and_bounds(profile):
    assert ragrade.evaluate(QRELS, RUN, ["recall@5"], profile=profile).per_query.shape == (2, 1)
    for policy in ("condensed", "bounds"):
        with pytest.raises(PolicyError, match="nothing to condense or bound"):
            ragrade.evaluate(QRELS, RUN, ["recall@5"], profile=profile, unjudged=policy)
