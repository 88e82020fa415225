"""ranx's order among equal scores, reproduced (docs/conventions.md, "Providers of ir-measures and ranx's
tie order"): :func:`ragrade.kernels.tie_orders.numba_argsort` equals numba's ``np.argsort`` on any input,
and ``profile="ranx"`` equals every metric ranx has per query, through ``ranx.evaluate`` (with and without
``make_comparable``) and ``ranx.compare``, on collections with scores on a 0.1 grid (lists up to 100
documents: the quicksort, not only the insertion sort), queries missing from the run, queries only in the
run, graded and negative grades.

One ranx defect is stepped around: evaluating ``bpref`` over many queries at once returns 0 for some
queries whose value ranx itself gives when the query is evaluated alone (ranx 0.3.21, any number of
threads); bpref is compared with ranx query by query.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numba
import numpy as np
import pytest
import ranx

import ragrade
from ragrade.kernels.tie_orders import numba_argsort, ranx_order
from ragrade.profiles import get_profile

pytestmark = [
    pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning"),
    pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning"),
]


@numba.njit(cache=False)
def _numba_argsort(values):
    return np.argsort(values)


def test_numba_argsort_is_reproduced_exactly():
    rng = np.random.default_rng(1)
    n_cases = 0
    for _ in range(1500):
        n = int(rng.integers(1, 700))
        grid = float(rng.choice([0.1, 0.01, 0.5, 1.0]))
        values = np.round(rng.random(n) / grid) * grid
        shape = rng.random()
        if shape < 0.2:
            values = np.sort(values)
        elif shape < 0.3:
            values = np.sort(values)[::-1].copy()
        elif shape < 0.35:
            values = np.zeros(n)
        assert np.array_equal(numba_argsort(values), _numba_argsort(values)), values.tolist()
        n_cases += 1
    print(f"\nnumba argsort: {n_cases} arrays of 1..700 values, every permutation equal")


def test_ranx_orders_match_ranx_runs():
    """The three ways ranx sorts a run: Run(dict) once, make_comparable twice, a plain dict reversed."""
    rng = np.random.default_rng(7)
    scores = np.round(rng.random(60), 1)
    offsets = np.array([0, 60])
    docs = [f"d{i}" for i in range(60)]
    run = ranx.Run({"q": dict(zip(docs, scores.tolist(), strict=True))})
    once = [docs[i] for i in ranx_order(scores, offsets, "ranx")]
    assert once == list(run.run["q"].keys())
    run.make_comparable(ranx.Qrels({"q": {"d0": 1}}))
    twice = [docs[i] for i in ranx_order(scores, offsets, "ranx_comparable")]
    assert twice == list(run.run["q"].keys()) and twice != once


def collection(seed: int, *, same_queries: bool = False):
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(120)]
    qrels, run = {}, {}
    for i in range(30):
        q = f"q{i}"
        judged = rng.choice(docs, int(rng.integers(1, 25)), replace=False)
        qrels[q] = {str(d): int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        if same_queries or rng.random() < 0.85:
            ranked = rng.choice(docs, int(rng.integers(1, 100)), replace=False)
            run[q] = {str(d): float(np.round(rng.integers(0, 11) * 0.1, 1)) for d in ranked}
    if not same_queries:
        for j in range(3):
            run[f"x{j}"] = {"d1": 0.5, "d2": 0.5}
        assert any(q not in run for q in qrels)
    return qrels, run


def pairs() -> list[tuple[str, str]]:
    out = []
    for k in (1, 3, 5, 10, 20, 50):
        out += [(f"ndcg@{k}", f"ndcg@{k}"), (f"ap@{k}", f"map@{k}"), (f"rr@{k}", f"mrr@{k}"),
                (f"P@{k}", f"precision@{k}"), (f"recall@{k}", f"recall@{k}"), (f"hit_rate@{k}", f"hit_rate@{k}"),
                (f"f1@{k}", f"f1@{k}"), (f"ndcg(gain=exp)@{k}", f"ndcg_burges@{k}"), (f"hits@{k}", f"hits@{k}"),
                (f"dcg@{k}", f"dcg@{k}"), (f"dcg(gain=exp)@{k}", f"dcg_burges@{k}")]
    out += [("r_precision", "r-precision"), ("ap", "map"), ("rr", "mrr"), ("ndcg", "ndcg"), ("ndcg(gain=exp)",
            "ndcg_burges"), ("precision", "precision"), ("recall", "recall"), ("f1", "f1"), ("hits", "hits"),
            ("hit_rate", "hit_rate"), ("dcg", "dcg"), ("rbp(p=0.95)", "rbp.95"), ("rbp(p=0.8)", "rbp.8"),
            ("P(rel=2)@5", "precision@5-l2"), ("recall(rel=2)@10", "recall@10-l2"), ("ap(rel=2)", "map-l2"),
            ("rr(rel=2)", "mrr-l2"), ("r_precision(rel=2)", "r-precision-l2"), ("hit_rate(rel=2)@3", "hit_rate@3-l2"),
            ("ndcg(rel=2)@10", "ndcg@10-l2"), ("hits(rel=2)@10", "hits@10-l2"), ("dcg(rel=2)@10", "dcg@10-l2"),
            ("f1(rel=2)@10", "f1@10-l2"), ("rbp(p=0.9,rel=2)", "rbp.9-l2"), ("bpref", "bpref"),
            ("bpref(rel=2)", "bpref-l2")]
    return out


PAIRS = pairs()


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def check(qrels, run, scores: dict[str, dict[str, float]], prof, comparable: bool) -> tuple[int, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ragrade.evaluate(qrels, run, [a for a, _ in PAIRS], profile=prof).per_query
    n, worst = 0, 0.0
    for a, b in PAIRS:
        for q, w in scores[b].items():
            g = float(got.at[q, a])
            if b.startswith("bpref") and not close(g, w):  # ranx's batch bpref (module docstring)
                alone = ranx.Run({q: run[q]}) if q in run else ranx.Run({q: {"_": 0.0}})
                w = float(ranx.evaluate(ranx.Qrels({q: qrels[q]}), alone, b, make_comparable=comparable))
            assert close(g, w), (a, b, q, g, w)
            worst = max(worst, 0.0 if math.isnan(w) else abs(g - w))
            n += 1
    return n, worst


@pytest.mark.parametrize("seed", range(3))
def test_ranx_profile_equals_ranx_evaluate_made_comparable(seed):
    qrels, run = collection(seed)
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, [b for _, b in PAIRS], make_comparable=True)
    n, worst = check(qrels, run, r.scores, "ranx", comparable=True)
    print(f"\nranx evaluate(make_comparable=True): {n} values compared, max difference {worst:.3g}")
    assert n > 2500


@pytest.mark.parametrize("seed", range(2))
def test_ranx_run_sorted_once_equals_tie_order_ranx(seed):
    """Same query sets, no make_comparable: ranx sorts the run once (tie_order="ranx")."""
    qrels, run = collection(100 + seed, same_queries=True)
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, [b for _, b in PAIRS])
    prof = dataclasses.replace(get_profile("ranx"), tie_order="ranx")
    n, worst = check(qrels, run, r.scores, prof, comparable=False)
    print(f"\nranx evaluate (sorted once): {n} values compared, max difference {worst:.3g}")
    assert n > 2500


def test_ranx_compare_equals_the_profile():
    qrels, run_a = collection(11)
    _, run_b = collection(12)
    runs = [ranx.Run(run_a, name="a"), ranx.Run(run_b, name="b")]
    metrics = ["ndcg@10", "map@100", "mrr", "precision@5", "rbp.9"]
    ranx.compare(ranx.Qrels(qrels), runs, metrics, make_comparable=True)
    n = 0
    for r, run in zip(runs, (run_a, run_b), strict=True):
        got = ragrade.evaluate(qrels, run, ["ndcg@10", "ap@100", "rr", "P@5", "rbp(p=0.9)"], profile="ranx").per_query
        for ours, theirs in zip(got.columns, metrics, strict=True):
            for q, w in r.scores[theirs].items():
                assert close(float(got.at[q, ours]), w), (ours, q)
                n += 1
    print(f"\nranx compare: {n} values compared")
    assert n > 250


def test_the_tie_order_matters_on_these_collections():
    """Without reproducing ranx's sort (trec_eval's tie rule instead), many values differ."""
    qrels, run = collection(0)
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, ["map@100", "ndcg@10"], make_comparable=True)
    trec = dataclasses.replace(get_profile("ranx"), tie_order="policy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ragrade.evaluate(qrels, run, ["ap@100", "ndcg@10"], profile=trec).per_query
    differ = sum(not close(float(got.at[q, "ap@100"]), w) for q, w in r.scores["map@100"].items())
    assert differ > 10


def test_plain_dicts_handed_to_ranx_follow_tie_order_ranx_dict():
    """ranx.evaluate on plain dicts sorts by ascending score and reverses (tie_order="ranx_dict")."""
    qrels, run = collection(21, same_queries=True)
    run = {q: run[q] for q in qrels}  # ranx pairs the two dicts by position
    metrics = [("ndcg@10", "ndcg@10"), ("ap@100", "map@100"), ("rr", "mrr"), ("P@5", "precision@5")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx.evaluate(qrels, run, [b for _, b in metrics], return_mean=False)
        prof = dataclasses.replace(get_profile("ranx"), tie_order="ranx_dict")
        got = ragrade.evaluate(qrels, run, [a for a, _ in metrics], profile=prof).per_query
    n = 0
    for a, b in metrics:
        for q, w in zip(qrels, theirs[b], strict=True):
            assert close(float(got.at[q, a]), float(w)), (a, q)
            n += 1
    assert n == 4 * len(qrels)


def test_ir_measures_ndcg_exp_log2_without_cutoff_is_ranx_ndcg_burges():
    """ir-measures hands nDCG(dcg='exp-log2') without a cutoff to its ranx provider (a ranx.Run sorted once,
    no make_comparable); that provider fails under pandas >= 3, so ranx itself is the reference."""
    qrels, run = collection(31, same_queries=True)
    r = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), r, ["ndcg_burges"])
    name = "nDCG(dcg='exp-log2')"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ragrade.evaluate(qrels, run, [name], profile="ir_measures").per_query[name]
    assert all(close(float(got[q]), w) for q, w in r.scores["ndcg_burges"].items())
    assert len(r.scores["ndcg_burges"]) == len(qrels)
