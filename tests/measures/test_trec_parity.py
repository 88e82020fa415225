"""``-m all_trec`` per query against pytrec_eval (trec_eval 9 inside), to 1e-12.

Random collections with unjudged documents, ties (scores on a grid of 1/8, exact in pytrec_eval's float32),
graded and negative grades, queries on one side only, empty lists and relevance levels 1 and 2. ragrade
runs with trec_eval's conventions (``profile``-free: ``no_relevant="zero"``, ``missing_run="drop"``).
Measures that read gains (``ndcg``, ``ndcg_cut``, ``ndcg_rel``, ``Rndcg``, ``G``) are computed on qrels
whose negative grades are 0 (pytrec_eval corrupts its memory on negative grades there, see
docs/conventions.md; a negative grade and grade 0 gain the same), every other measure on the original
qrels. trec_eval 10's measures (``rbp``, ``rbp_resid``, ``unj``) are checked in test_trec10_vectors.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragrade
from ragrade.engine.result import with_rel_level
from ragrade.metrics import parse_metric
from reference import random_case

pytrec_eval = pytest.importorskip("pytrec_eval")
pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")

GAIN_MEASURES = {"ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G"}
TREC10_ONLY = {"rbp", "rbp_resid", "unj"}
NOT_NUMBERS = {"runid", "relstring"}
GEOMETRIC = {"gm_map", "gm_bpref"}  # pytrec_eval reports log(max(value, 1e-5)) per query


def clamp(qrels):
    return {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}


def trec_values(qrels, run, rel: int, extra: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    gain = GAIN_MEASURES
    rest = {"all_trec"}
    for measures, judged in ((gain, clamp(qrels)), (rest, qrels)):
        ev = pytrec_eval.RelevanceEvaluator(judged, measures, relevance_level=rel)
        for q, values in ev.evaluate(run).items():
            for name, v in values.items():
                base = name.split("_")[0] if name.startswith(("ndcg_cut", "ndcg_rel")) else name
                if measures is rest and (name.startswith(("ndcg", "Rndcg")) or name == "G"):
                    continue
                del base
                out.setdefault(q, {})[name] = v
    return out


def ours(qrels, run, rel: int):
    """Per-query values under every trec_eval output name (a metric trec_eval names twice, as Rprec and
    Rprec_mult_1.00, is one ragrade column: it is looked up under both names)."""
    kw = dict(no_relevant="zero", missing_run="drop")
    gain = ragrade.evaluate(clamp(qrels), run, ["ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G"],
                            names="trec_eval", rel_level=rel, **kw)
    rest = ragrade.evaluate(qrels, run, ["all_trec"], names="trec_eval", rel_level=rel, **kw)
    return gain, rest


def column(results, name, rel):
    metric = with_rel_level(parse_metric(name), rel)
    for res in results:
        label = res.means.label_of(name) if name in res.per_query.columns else res.means.label_of(metric)
        if label is not None:
            return res.per_query[label]
    raise KeyError(name)


def compare(qrels, run, rel: int) -> tuple[int, float]:
    want = trec_values(qrels, run, rel)
    results = ours(qrels, run, rel)
    index = results[1].per_query.index
    assert sorted(want) == sorted(index), (sorted(want), list(index))
    names = {name for values in want.values() for name in values} - NOT_NUMBERS
    cols = {name: column(results if name.startswith(("ndcg", "Rndcg")) or name == "G" else results[1:], name, rel)
            for name in names}
    n, worst = 0, 0.0
    for q, values in want.items():
        for name, w in values.items():
            if name in NOT_NUMBERS:
                continue
            g = float(cols[name][q])
            if name in GEOMETRIC:
                g = math.log(max(g, 1e-5))
            if math.isnan(w) and not run.get(q):
                # trec_eval divides 0 by 0 for interpolated precision of an empty list; ragrade says 0
                # (docs/conventions.md, trec_eval differences).
                assert name.startswith(("iprec_at_recall", "11pt_avg")) and g == 0.0, (q, name, g)
                continue
            assert math.isclose(g, w, rel_tol=0, abs_tol=1e-12), (q, name, g, w, qrels[q], run.get(q))
            worst = max(worst, abs(g - w))
            n += 1
    return n, worst


@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", range(8))
def test_all_trec_per_query(seed, rel):
    rng = np.random.default_rng(4000 + seed)
    case = random_case(rng, n_queries=40, allow_empty=True)
    n, _ = compare(case.qrels, case.run, rel)
    assert n > 2500


def test_all_trec_long_tied_lists():
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for i in range(25):
        docs = [f"doc{j}" for j in range(80)]
        qrels[f"q{i}"] = {d: int(rng.choice([0, 1, 2, 3, -1])) for d in rng.choice(docs, 25, replace=False)}
        run[f"q{i}"] = {d: float(rng.choice([0.5, 0.25, 0.125])) for d in rng.choice(docs, 60, replace=False)}
    assert compare(qrels, run, 1)[0] > 2000
    assert compare(qrels, run, 2)[0] > 2000
