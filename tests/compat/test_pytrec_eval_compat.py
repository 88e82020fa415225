"""``ragrade.compat.pytrec_eval`` returns pytrec_eval's dictionaries: the same queries, the same keys and the
same values to 1e-12, for every measure pytrec_eval supports, at relevance levels 1 and 2, with and without
``judged_docs_only_flag``, for BEIR's and MTEB's calls, on random collections with graded and negative grades,
ties, unjudged documents and queries on one side only.

pytrec-eval-terrier 0.5.11 corrupts its memory on two inputs, which these tests avoid: ``ndcg``-type
measures with negative grades (they are compared on qrels whose negative grades are 0) and rankings with no
document (``{"q": {}}``; checked against trec_eval 9's rule instead: NaN for ``iprec_at_recall_0.00``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragrade.compat.pytrec_eval as compat

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")

GAIN = {"ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G"}


def collection(seed: int, negative: bool):
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(50)]
    qrels, run = {}, {}
    for i in range(40):
        q = f"q{i}"
        if rng.random() < 0.95:
            judged = rng.choice(pool, int(rng.integers(1, 20)), replace=False)
            grades = [-1, 0, 1, 2, 3] if negative else [0, 0, 1, 2, 3]
            qrels[q] = {str(d): int(rng.choice(grades)) for d in judged}
        if rng.random() < 0.9:
            docs = rng.choice(pool, int(rng.integers(1, 30)), replace=False)
            run[q] = {str(d): float(s) for d, s in zip(docs, rng.choice(np.arange(1, 9) / 8, len(docs)), strict=True)}
    if not negative:
        qrels["empty"] = {}  # pytrec_eval leaves such a query out
        run["empty"] = {"d1": 1.0}
    return qrels, run


def same(want, got, ordered: bool = False) -> int:
    """Equal dicts of dicts (``ordered``: their keys in the same order too), values to 1e-12 (NaN equal to NaN);
    the number of values compared."""
    keys = list if ordered else sorted
    assert keys(want) == keys(got)
    n = 0
    for q, values in want.items():
        assert keys(values) == keys(got[q]), (q, set(values) ^ set(got[q]))
        for name, w in values.items():
            g = got[q][name]
            assert w == g or (math.isnan(w) and math.isnan(g)) or math.isclose(g, w, rel_tol=0, abs_tol=1e-12), (
                q, name, g, w)
            n += 1
    return n


BEIR = {"map_cut.1,3,5,10,100", "ndcg_cut.1,3,5,10,100", "recall.1,3,5,10,100", "P.1,3,5,10,100"}
MTEB = {"map_cut", "ndcg_cut", "recall", "P", "recip_rank", "P_5", "recall_10"}


@pytest.mark.parametrize("seed", range(3))
def test_every_measure_equals_pytrec_eval(seed):
    n = 0
    for negative in (True, False):
        qrels, run = collection(seed, negative)
        every = set(compat.supported_measures) - (GAIN if negative else set())
        for measures in (every, {"all_trec"} if not negative else {"official"}, BEIR, MTEB):
            for level in (1, 2):
                for judged_only in (False, True):
                    want = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                                          judged_docs_only_flag=judged_only).evaluate(run)
                    got = compat.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                                    judged_docs_only_flag=judged_only).evaluate(run)
                    n += same(want, got)
    assert n > 30_000


def test_module_surface_matches():
    assert compat.supported_measures == set(pytrec_eval.supported_measures)
    for name in ("official", "set", "all_trec"):
        assert compat.supported_nicknames[name] == set(pytrec_eval.supported_nicknames[name])
    qrels, run = collection(9, False)
    ev = compat.RelevanceEvaluator(qrels, {"gm_map", "num_rel", "map"})
    per_query = ev.evaluate(run)
    for measure in ("gm_map", "num_rel", "map"):
        values = [v[measure] for v in per_query.values()]
        assert math.isclose(compat.compute_aggregated_measure(measure, values),
                            pytrec_eval.compute_aggregated_measure(measure, values), rel_tol=1e-12)
    assert compat.RelevanceEvaluator(qrels, {"map"}).evaluate({}) == {}
    assert compat.RelevanceEvaluator({}, {"map"}).evaluate(run) == {}
    with pytest.raises(ValueError, match="unsupported measure"):
        compat.RelevanceEvaluator(qrels, {"nonsense"})


def test_an_empty_ranking_follows_trec_eval_9():
    got = compat.RelevanceEvaluator({"q": {"a": 1, "b": 2}}, {"all_trec"}).evaluate({"q": {}})["q"]
    assert math.isnan(got["iprec_at_recall_0.00"]) and math.isnan(got["11pt_avg"])
    assert got["iprec_at_recall_0.10"] == 0.0 and got["num_rel"] == 2.0 and got["gm_map"] == math.log(1e-5)


def test_parse_qrel_and_run(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 a 1 0.5 x\n1 Q0 c 2 0.25 x\n2 Q0 c 1 1 x\n")
    for mod in (compat, pytrec_eval):
        with open(q) as fq, open(r) as fr:
            assert (dict(mod.parse_qrel(fq)), dict(mod.parse_run(fr))) == (
                {"1": {"a": 1, "b": 0}, "2": {"c": 2}}, {"1": {"a": 0.5, "c": 0.25}, "2": {"c": 1.0}})
    r.write_text("1 Q0 a 1 0.5 x\n1 Q0 a 2 0.25 x\n")
    with open(r) as fr, pytest.raises(AssertionError):
        compat.parse_run(fr)
