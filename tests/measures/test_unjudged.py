"""Unjudged-aware evaluation: the hole rate of every result, the ``unjudged`` policy (nonrelevant,
condensed, bounds) on minimal inputs, against pytrec_eval's -J, and on random data against the reference."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ragrade
from ragrade import PolicyError, RagradeWarning
from reference import assert_same, frame_to_dict, random_case, ref_evaluate, rows_of

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1}}
RUN = {"q1": {"x": 5.0, "a": 4.0, "y": 3.0, "b": 2.0, "c": 1.0}, "q2": {"z": 2.0, "w": 1.0}}


def test_hole_rate_is_in_every_result():
    r = ragrade.evaluate(QRELS, RUN, ["P@3", "ndcg@5"])
    h = r.hole_rate
    assert h is not None and h.k == 5  # the largest cutoff asked
    assert h.per_query.to_dict() == {"q1": pytest.approx(2 / 5), "q2": 1.0}
    assert h.mean == pytest.approx(0.7)
    assert 1 - r.hole_rate.per_query["q1"] == pytest.approx(
        ragrade.evaluate(QRELS, RUN, ["judged@5"]).per_query.at["q1", "judged@5"])
    assert ragrade.evaluate(QRELS, RUN, ["ap"]).hole_rate.k == 10  # no cutoff: 10
    assert "hole rate@5: 70.0%" in "\n".join(r.summary_lines())
    d = r.to_dict(per_query=True)["hole_rate"]
    assert d["k"] == 5 and d["per_query"]["q2"] == 1.0


def test_hole_rate_of_an_empty_list_is_undefined_and_relevant_only_truth_is_flagged():
    r = ragrade.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0, "x": 0.5}}, ["rr"])
    assert math.isnan(r.hole_rate.per_query["q2"]) and r.hole_rate.queries == 1
    assert r.hole_rate.only_relevant_judged and not r.hole_rate.exceeds(0.1)
    assert ragrade.evaluate(QRELS, RUN, ["rr"]).hole_rate.exceeds(0.1)


def test_condensed_removes_unjudged_documents_before_scoring():
    r = ragrade.evaluate(QRELS, RUN, ["P@2", "rr", "ap"], unjudged="condensed").per_query
    # q1 becomes a, b, c: P@2 = 1/2, RR = 1, AP = (1 + 2/3) / 2
    assert r.loc["q1"].tolist() == pytest.approx([0.5, 1.0, (1 + 2 / 3) / 2])
    assert r.loc["q2"].tolist() == [0.0, 0.0, 0.0]
    judged_only = ragrade.evaluate(QRELS, RUN, ["P(judged_only=true)@2"]).per_query
    assert judged_only.iloc[0, 0] == 0.5


def test_bounds_give_lower_and_upper_values():
    r = ragrade.evaluate(QRELS, RUN, ["P@2", "recall@5"], unjudged="bounds")
    assert r.per_query.loc["q1"].tolist() == pytest.approx([0.5, 1.0])  # lower = nonrelevant
    # upper: x and y relevant (grade 2, the highest): q1's list holds 4 relevant of R = 4
    assert r.upper.loc["q1"].tolist() == pytest.approx([1.0, 1.0])
    assert r.upper.loc["q2"].tolist() == pytest.approx([1.0, 2 / 3])
    assert r.upper_means["P@2"] == pytest.approx(1.0)
    assert "upper" in r.to_dict() and "upper" in r.to_csv() and "upper" in r.to_markdown()
    one = ragrade.evaluate(QRELS, RUN, ["ndcg@5"], unjudged="bounds", upper_grade=1).upper.loc["q1"].iloc[0]
    two = ragrade.evaluate(QRELS, RUN, ["ndcg@5"], unjudged="bounds").upper.loc["q1"].iloc[0]
    assert one != two


@pytest.mark.parametrize("policy", ["condensed", "bounds"])
@pytest.mark.parametrize("seed", range(4))
def test_policies_equal_the_reference(policy, seed):
    rng = np.random.default_rng(800 + seed)
    case = random_case(rng, n_queries=25)
    metrics = ["P@5", "ndcg@10", "ap", "bpref", "infap", "rr", "recall@10", "judged@5", "rbp", "unj@5",
               "num_ret", "iprec@0.5", "relative_precision@5"]
    res = ragrade.evaluate(case.qrels, case.run, metrics, unjudged=policy, max_docs=8)
    want = ref_evaluate(case.qrels, rows_of(case.run), metrics, unjudged=policy, max_docs=8)
    assert_same(frame_to_dict(res.per_query), want)
    if policy == "bounds":
        up = ref_evaluate(case.qrels, rows_of(case.run), metrics, unjudged=policy, max_docs=8, upper=True)
        assert_same(frame_to_dict(res.upper), up)
        lower, upper = res.per_query.to_numpy(), res.upper.to_numpy()
        # unjudged documents turned relevant can only raise the measures that are not normalised by the
        # relevant set (recall, nDCG, bpref also grow their denominators: "upper" is their optimistic value)
        bounded = [i for i, m in enumerate(metrics) if m in ("P@5", "rr", "judged@5")]
        assert (upper[:, bounded] >= lower[:, bounded] - 1e-12)[~np.isnan(lower[:, bounded])].all()


def test_condensed_equals_pytrec_eval_judged_docs_only():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(42)
    case = random_case(rng, n_queries=40)
    measures = {"P_5": "P@5", "map": "ap", "recip_rank": "rr", "bpref": "bpref", "Rprec": "r_precision",
                "recall_10": "recall@10", "set_F": "f1", "ndcg_cut_10": "ndcg@10"}
    qrels = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in case.qrels.items()}  # ndcg: no negatives
    want = pytrec_eval.RelevanceEvaluator(qrels, set(measures), judged_docs_only_flag=1).evaluate(case.run)
    got = ragrade.evaluate(qrels, case.run, list(measures.values()), unjudged="condensed", no_relevant="zero",
                           missing_run="drop").per_query
    n = 0
    for q, values in want.items():
        for te, ours in measures.items():
            assert abs(values[te] - got.at[q, ours]) <= 1e-12, (q, te)
            n += 1
    assert n > 200


def test_max_docs_is_trec_eval_M():
    pytrec_eval = pytest.importorskip("pytrec_eval")  # pytrec_eval has no -M: compare with truncated runs
    rng = np.random.default_rng(3)
    case = random_case(rng, n_queries=30)
    from reference import rank

    cut = {q: dict(rank(list(d.items()))[:4] and [(x, d[x]) for x in rank(list(d.items()))[:4]])
           for q, d in case.run.items()}
    want = pytrec_eval.RelevanceEvaluator(case.qrels, {"map", "P_10", "num_ret", "bpref"}).evaluate(cut)
    got = ragrade.evaluate(case.qrels, case.run, ["map", "P_10", "num_ret", "bpref"], max_docs=4,
                           no_relevant="zero", missing_run="drop").per_query
    for q, values in want.items():
        for name, w in values.items():
            assert abs(got.at[q, name] - w) <= 1e-12, (q, name)


def test_bad_settings_are_policy_errors():
    for kw in ({"max_docs": 0}, {"num_docs": -1}, {"upper_grade": 0}, {"unjudged": "maybe"}):
        with pytest.raises(PolicyError):
            ragrade.evaluate(QRELS, RUN, ["rr"], **kw)


def test_utility_needs_the_collection_size():
    r = ragrade.evaluate(QRELS, RUN, ["utility(d=0.5)"], num_docs=100)
    # q1: 2 relevant retrieved, 3 non-relevant retrieved, R = 2: 2 - 3 + 0.5 * (100 + 2 - 5 - 2)
    assert r.per_query.loc["q1"].iloc[0] == pytest.approx(2 - 3 + 0.5 * 95)
    with pytest.raises(ragrade.MetricError, match="collection size"):
        ragrade.evaluate(QRELS, RUN, ["utility(d=0.5)"])


def test_no_warning_is_emitted_for_holes():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RagradeWarning)
        ragrade.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"x": 1.0, "a": 0.5}}, ["rr"])
