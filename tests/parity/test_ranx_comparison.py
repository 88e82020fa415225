"""Comparison with ranx (``ranx.evaluate``): equal to 1e-9 where the conventions agree, and every
difference pinned and explained (documented in docs/conventions.md, section "ranx").

Differences found (ranx 0.3.x):
1. Ties: ranx has no tie rule. Its per-query sort is numba's ``argsort`` (a quicksort that switches to
   insertion sort on short arrays), so on lists of up to 15 items tied documents keep their input order
   (ragrade ``ties="input"``) and on longer lists their order is unspecified. With distinct scores ranx
   equals ragrade's default exactly.
2. Queries: ranx refuses qrels and run with different query sets (AssertionError) unless
   ``make_comparable=True``, which scores queries missing from the run 0 and drops run-only queries:
   ragrade's defaults (missing_run="zero", missing_qrels="ignore").
3. R = 0 queries: ranx scores them 0 and averages them in (trec_eval's rule); ragrade's default leaves
   them out of the means (no_relevant="skip"); no_relevant="zero" reproduces ranx.
4. Relevance level on ndcg: ranx's ``ndcg@k-l2`` drops grades below 2 from DCG and the ideal list
   (= ragrade ``ndcg(rel=2)@k``), while trec_eval's ndcg ignores the relevance level (= ragrade ``ndcg``).
Same as ragrade (checked): ``map@k`` divides by R (not min(k, R)); ``ndcg_burges`` is the exponential
gain; negative grades are never relevant.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragrade
from reference import random_case, rank, untie

ranx = pytest.importorskip("ranx")
pytestmark = [
    pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning"),
    pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning"),
]

K = (1, 3, 5, 10, 20)


def pairs() -> list[tuple[str, str]]:
    out = []
    for k in K:
        out += [(f"ndcg@{k}", f"ndcg@{k}"), (f"ap@{k}", f"map@{k}"), (f"rr@{k}", f"mrr@{k}"),
                (f"P@{k}", f"precision@{k}"), (f"recall@{k}", f"recall@{k}"),
                (f"hit_rate@{k}", f"hit_rate@{k}"), (f"f1@{k}", f"f1@{k}"),
                (f"ndcg(gain=exp)@{k}", f"ndcg_burges@{k}")]
    out += [("r_precision", "r-precision"), ("ap", "map"), ("rr", "mrr"), ("ndcg", "ndcg"),
            ("P(rel=2)@5", "precision@5-l2"), ("recall(rel=2)@10", "recall@10-l2"),
            ("ap(rel=2)@10", "map@10-l2"), ("rr(rel=2)", "mrr-l2"), ("r_precision(rel=2)", "r-precision-l2"),
            ("hit_rate(rel=2)@3", "hit_rate@3-l2"), ("ndcg(rel=2)@5", "ndcg@5-l2"),
            ("ndcg(rel=2)@10", "ndcg@10-l2")]
    return out


PAIRS = pairs()


def ranx_values(qrels, run, make_comparable=False) -> dict[str, dict[str, float]]:
    """{ranx metric: {query: value}} (ranx returns arrays in the qrels' sorted query order)."""
    rq = ranx.Qrels(qrels)
    out = ranx.evaluate(rq, ranx.Run(run), [b for _, b in PAIRS], return_mean=False,
                        make_comparable=make_comparable)
    ids = list(rq.get_query_ids())
    return {m: dict(zip(ids, map(float, v), strict=True)) for m, v in out.items()}


def differences(qrels, run, **policies) -> list[tuple[str, str, float, float]]:
    want = ranx_values(qrels, run, make_comparable=True)
    got = ragrade.evaluate(qrels, run, [a for a, _ in PAIRS], no_relevant="zero", **policies).per_query
    diffs = []
    for a, b in PAIRS:
        for q, w in want[b].items():
            g = float(got.at[q, a])
            if not math.isclose(g, w, rel_tol=0, abs_tol=1e-9):
                diffs.append((q, a, g, w))
    return diffs


def common(case):
    qrels = {q: d for q, d in case.qrels.items() if q in case.run}
    run = {q: d for q, d in case.run.items() if q in case.qrels}
    return qrels, run


def has_ties(docs: dict[str, float]) -> bool:
    return len(set(docs.values())) < len(docs)


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_ranx_without_ties(seed):
    """Distinct scores (the ranking ragrade's default rule gives): every metric equal to 1e-9."""
    case = random_case(np.random.default_rng(2000 + seed), n_queries=40)
    qrels, run = common(case)
    run = untie(run)
    assert differences(qrels, run) == []


@pytest.mark.parametrize("seed", range(3))
def test_short_tied_lists_follow_input_order_in_ranx(seed):
    """Lists of at most 15 items with ties: ranx keeps tied documents in input order (= ties="input");
    ragrade's default (doc id descending) differs exactly on the queries that have ties."""
    case = random_case(np.random.default_rng(3000 + seed), n_queries=40, max_retrieved=15)
    qrels, run = common(case)
    assert differences(qrels, run, ties="input") == []
    diffs = differences(qrels, run)
    assert diffs, "expected the tie rule to matter on this data"
    assert all(has_ties(run[q]) for q, *_ in diffs)


def test_long_tied_lists_have_no_defined_order_in_ranx():
    """Lists of 60 items, 3 distinct scores: ranx's order matches none of the tie rules, but every
    difference is on a query with ties, and equality holds once the ties are removed."""
    rng = np.random.default_rng(5)
    qrels, run = {}, {}
    for i in range(20):
        docs = [f"doc{j}" for j in range(80)]
        qrels[f"q{i}"] = {d: int(rng.choice([0, 1, 2, 3])) for d in rng.choice(docs, 20, replace=False)}
        run[f"q{i}"] = {d: float(rng.choice([0.5, 0.25, 0.125])) for d in rng.choice(docs, 60, replace=False)}
    for ties in ("docid_desc", "input", "docid_asc"):
        diffs = differences(qrels, run, ties=ties)
        assert all(has_ties(run[q]) for q, *_ in diffs)
    assert differences(qrels, untie(run)) == []


def test_query_sets_must_match_in_ranx_unless_made_comparable():
    qrels = {"a": {"x": 1}, "b": {"x": 1}}
    run = {"a": {"x": 1.0}, "c": {"x": 1.0}}
    with pytest.raises(AssertionError):
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@5")
    out = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@5", make_comparable=True, return_mean=False)
    assert list(out) == [1.0, 0.0]  # b (missing from the run) scores 0; c (only in the run) is dropped
    res = ragrade.evaluate(qrels, run, "ndcg@5")
    assert res.per_query["ndcg@5"].to_dict() == {"a": 1.0, "b": 0.0}


@pytest.mark.parametrize("seed", range(2))
def test_make_comparable_equals_ragrade_defaults_for_missing_queries(seed):
    case = random_case(np.random.default_rng(4000 + seed), n_queries=40)
    run = untie(case.run)
    assert any(q not in run for q in case.qrels) and any(q not in case.qrels for q in run)
    assert differences(case.qrels, run) == []


def test_r_zero_queries_score_zero_in_ranx():
    qrels = {"q1": {"a": 0, "b": -1}, "q2": {"a": 1}}
    run = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"a": 1.0, "b": 0.5}}
    out = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["ndcg@2", "map@2", "precision@2"], return_mean=False)
    assert [list(v) for v in out.values()] == [[0.0, 1.0], [0.0, 1.0], [0.0, 0.5]]
    mean = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@2")
    assert mean == pytest.approx(0.5)  # q1 averaged in as 0
    default = ragrade.evaluate(qrels, run, "ndcg@2")
    assert default.means["ndcg@2"] == 1.0 and default.counts["ndcg@2"] == 1  # q1 left out, reported
    zero = ragrade.evaluate(qrels, run, "ndcg@2", no_relevant="zero")
    assert zero.means["ndcg@2"] == pytest.approx(mean, abs=1e-12)


def test_ndcg_relevance_level_drops_lower_grades_in_ranx():
    """Qrels a=1, b=2, c=1; run a>b>c. ranx ndcg@3-l2 keeps only b: (2/log2 3)/2 = 0.6309;
    trec_eval's ndcg_cut_3 at relevance_level=2 still uses every grade: 0.8821."""
    qrels = {"q": {"a": 1, "b": 2, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    out = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["ndcg@3-l2", "ndcg@3"], return_mean=False)
    r = ragrade.evaluate(qrels, run, ["ndcg(rel=2)@3", "ndcg@3"]).means
    assert out["ndcg@3-l2"][0] == pytest.approx(1 / math.log2(3), abs=1e-12)
    assert r["ndcg(rel=2)@3"] == pytest.approx(out["ndcg@3-l2"][0], abs=1e-12)
    assert r["ndcg@3"] == pytest.approx(out["ndcg@3"][0], abs=1e-12) == pytest.approx(0.8821211986607034)


def test_map_at_k_divides_by_r_in_ranx():
    """4 relevant, only the first retrieved (docs/parity-vectors.md): ranx map@2 = 0.25 = trec_eval map_cut_2, not 1/min(k, R)."""
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "y": 1.0}}
    out = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["map@2", "map"], return_mean=False)
    assert out["map@2"][0] == pytest.approx(0.25) and out["map"][0] == pytest.approx(0.25)
    assert ragrade.evaluate(qrels, run, "ap@2").means["ap@2"] == 0.25


def test_tie_example_from_the_spec():
    """d1, d2, d3 all at 1.0, only d1 relevant: trec_eval/ragrade rank d3>d2>d1 (RR 1/3); ranx keeps the
    input order, so its RR depends on how the dict was written."""
    qrels = {"q": {"d1": 1}}
    forward = {"q": {"d1": 1.0, "d2": 1.0, "d3": 1.0}}
    backward = {"q": {"d3": 1.0, "d2": 1.0, "d1": 1.0}}
    assert ranx.evaluate(ranx.Qrels(qrels), ranx.Run(forward), "mrr") == pytest.approx(1.0)
    assert ranx.evaluate(ranx.Qrels(qrels), ranx.Run(backward), "mrr") == pytest.approx(1 / 3)
    assert rank(list(forward["q"].items())) == ["d3", "d2", "d1"]
    for run in (forward, backward):
        assert ragrade.evaluate(qrels, run, "rr").means["rr"] == pytest.approx(1 / 3)


def test_ranx_ranks_on_float64():
    """Unlike pytrec_eval (float32), near-equal scores stay distinct in ranx, as in ragrade."""
    qrels = {"q": {"d1": 1}}
    run = {"q": {"d1": 0.30000002, "d2": 0.30000001}}
    assert ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "mrr") == 1.0
    assert ragrade.evaluate(qrels, run, "rr").means["rr"] == 1.0


def test_duplicate_lines_in_a_trec_run_keep_the_last_score_in_ranx(tmp_path):
    """A run file listing x and a twice: ranx's dict keeps the last line of each (ragrade keep_last)."""
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 1\n")
    (tmp_path / "run").write_text("q Q0 x 1 3.0 r\nq Q0 a 2 2.0 r\nq Q0 b 3 1.5 r\nq Q0 x 4 1.0 r\nq Q0 a 5 0.5 r\n")
    out = ranx.evaluate(ranx.Qrels.from_file(str(tmp_path / "qrels"), kind="trec"),
                        ranx.Run.from_file(str(tmp_path / "run"), kind="trec"), ["precision@5", "mrr", "map"])
    run = ragrade.Run.from_columns(["q"] * 5, ["x", "a", "b", "x", "a"], [3.0, 2.0, 1.5, 1.0, 0.5])
    qrels = {"q": {"a": 1, "b": 1}}
    last = ragrade.evaluate(qrels, run, ["P@5", "rr", "ap"], duplicates="keep_last").means
    assert [out["precision@5"], out["mrr"], out["map"]] == pytest.approx([last["P@5"], last["rr"], last["ap"]])
    assert last == pytest.approx({"P@5": 0.4, "rr": 1.0, "ap": 5 / 6})
    default = ragrade.evaluate(qrels, run, ["P@5", "rr", "ap"]).means  # credit_once: a credited at rank 2
    assert default == pytest.approx({"P@5": 0.4, "rr": 0.5, "ap": (1 / 2 + 2 / 3) / 2})


def test_ranx_profile_equals_ranx():
    qrels = {"q1": {"a": 0, "b": -1}, "q2": {"a": 1}}
    run = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"a": 1.0, "b": 0.5}}
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@2")  # 0.5
    got = ragrade.evaluate(qrels, run, "ndcg@2", profile="ranx").means["ndcg@2"]  # 1.0
    assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_ranx_profile_equals_ranx_on_random_data(seed):
    """profile="ranx" on untied data with R = 0 queries and queries missing from the run (made comparable)."""
    case = random_case(np.random.default_rng(8000 + seed), n_queries=40)
    run = untie(case.run)
    want = ranx_values(case.qrels, run, make_comparable=True)
    got = ragrade.evaluate(case.qrels, run, [a for a, _ in PAIRS], profile="ranx").per_query
    for a, b in PAIRS:
        for q, w in want[b].items():
            assert math.isclose(float(got.at[q, a]), w, rel_tol=0, abs_tol=1e-9), (q, a)
