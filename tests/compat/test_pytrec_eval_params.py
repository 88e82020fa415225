"""``ragrade.compat.pytrec_eval`` with measure parameters other than the defaults and cutoff lists: the same keys
and values as pytrec_eval (pytrec-eval-terrier, trec_eval 9) for every parameter string pytrec_eval accepts,
the same exception type where pytrec_eval raises, and a ``ValueError`` where pytrec_eval crashes.

pytrec_eval reads a measure's parameters with a pattern that keeps non-negative decimal numbers only (a prefix
match: ``P.5abc`` is ``P.5``), merges one measure's parameters and hands them to trec_eval 9 sorted as strings;
a measure outside trec_eval's cutoff arrays is keyed by its bare name. Inputs on which pytrec_eval crashes are
run in a subprocess of their own. Known crashes of pytrec_eval that are not about parameters are avoided as
in the other compat tests: a query judged with negative grades only, ``ndcg``-type measures with negative
grades, and rankings with no document.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest
from test_pytrec_eval_compat import same as same_dicts

import ragrade.compat.pytrec_eval as compat
from ragrade.compat import _native

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")

GAIN = ("ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G")
NUMBERS = ["0", "1", "2", "3", "5", "10", "0.5", "1.5", "0.0", "1.0", "0.25", "0.2", "0.8", "0.95", "2147483648",
           "4294967297", "4294967296", "007", "05", "5.0", "100", "1000", "0.9", "20", "99999999999999999999",
           "0.1", "0.10", "0.333", "2.0", "1.25", "3.7", "0.05", "1000000", "000", "0.00001"]


def collection(seed: int, negative: bool, shuffled: bool = True):
    """Random qrels and run: graded (and negative) grades, ties, unjudged documents, queries on one side only,
    the run's queries in another order than the qrels'. Every judged query has a grade >= 0."""
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(40)] + ["é", "z"]
    qrels, run = {}, {}
    for i in range(12):
        q = f"q{i}"
        if rng.random() < 0.9:
            judged = rng.sample(pool, rng.randint(1, 15))
            qrels[q] = {d: rng.choice([-1, 0, 1, 2, 3] if negative else [0, 0, 1, 2, 3]) for d in judged}
            if max(qrels[q].values()) < 0:
                qrels[q][judged[0]] = 1
        if rng.random() < 0.9:
            docs = rng.sample(pool, rng.randint(1, 25))
            run[q] = {d: rng.choice([0.5, 0.25, 1.0, 2.0, 1.0 + 1e-9, rng.random()]) for d in docs}
    if shuffled:
        keys = list(run)
        rng.shuffle(keys)
        run = {q: run[q] for q in keys}
    return qrels, run


def same(want, got) -> int:
    """pytrec_eval's dicts, keys in its order (test_pytrec_eval_compat.same)."""
    return same_dicts(want, got, ordered=True)


def both(qrels, run, measures, **kw):
    want = pytrec_eval.RelevanceEvaluator(qrels, set(measures), **kw).evaluate(run)
    got = compat.RelevanceEvaluator(qrels, set(measures), **kw).evaluate(run)
    return want, got


# Parameters pytrec_eval accepts, each a difference found between the drop-in and pytrec_eval (fixed).
ACCEPTED = [
    {"set_F.0.5"}, {"11pt_avg.0.2,0.5"}, {"relstring.3"}, {"runid.1", "num_q.2"},  # keyed by the bare name
    {"utility.1,2,3,10"},  # coefficients 1, 10, 2, 3 (sorted as strings); the fourth reads a collection of 0
    {"utility.1,-1,0,0"},  # pytrec_eval keeps "1": one coefficient, 0.0 for every query
    {"utility.0.5,2"}, {"P.5abc"}, {"map.5", "bpref_2", "num_rel.3"},  # parameters read by no measure
    {"iprec_at_recall.1.5"}, {"iprec_at_recall.0.5,2147483648"}, {"set_F.0"}, {"set_F.99999999999999999999"},
    {"Rprec_mult.0"}, {"Rprec_mult.99999999999999999999,0.5"}, {"11pt_avg.0.9,0.1,1.5"}, {"11pt_avg.5,0.5"},
    {"ndcg_cut.99999999999999999999,2,3"}, {"relative_P.4294967297,1000"}, {"success.1,4294967297"},
    {"P.1,4294967297,3"}, {"map_cut.1.5,4294967296,2"}, {"recall.2.0"},
    {"set_F.1000", "set_F.05", "set_F"}, {"11pt_avg.0.8,10", "11pt_avg.0.9"},  # one measure, merged
    {"iprec_at_recall_0.333,1.25", "Rprec_mult_0.00001", "utility_5,0.25,0.9,3"},
    {"all_trec", "set_F.0", "Rprec_mult.0.10", "11pt_avg.1"},
]


@pytest.mark.parametrize("measures", ACCEPTED, ids=lambda m: " ".join(sorted(m)))
def test_parameters_pytrec_eval_accepts_give_its_keys_and_values(measures):
    n = 0
    gain = any(m.startswith(GAIN) or m == "all_trec" for m in measures)
    for seed in range(2):
        qrels, run = collection(seed, negative=not gain)
        for level in (1, 2):
            for judged_only in (False, True):
                n += same(*both(qrels, run, measures, relevance_level=level, judged_docs_only_flag=judged_only))
    assert n > 40


def test_keys_of_parameters():
    qrels, run = collection(3, negative=False)
    _, got = both(qrels, run, {"set_F.0.5", "11pt_avg.0.2,0.5", "relstring.3", "utility.1,2,3,10",
                               "Rprec_mult.0.5", "iprec_at_recall.1.5"})
    assert set(next(iter(got.values()))) == {"set_F", "11pt_avg", "relstring", "utility", "Rprec_mult_0.50",
                                             "iprec_at_recall_1.50"}


def test_a_utility_without_four_coefficients_is_zero_as_in_pytrec_eval():
    qrels, run = collection(4, negative=True)
    want, got = both(qrels, run, {"utility.1,-1,0,0", "map"})
    assert same(want, got) and all(v["utility"] == 0.0 for v in got.values())
    assert any(v["map"] > 0 for v in got.values())


def test_the_computed_query_by_query_path_on_the_general_path_and_without_the_c_helper(monkeypatch):
    """Measures whose parameters the kernels do not express, on runs of NumPy floats (the general path) and
    with the C helper turned off: pytrec_eval's values."""
    measures = {"set_F.0", "11pt_avg.0.9,0.1", "iprec_at_recall.1.5,0.5", "relative_P.4294967297,1000", "map"}
    qrels, run = collection(5, negative=True)
    numpy_run = {q: {d: np.float64(s) for d, s in docs.items()} for q, docs in run.items()}
    want = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert same(want, compat.RelevanceEvaluator(qrels, measures).evaluate(numpy_run))
    only_direct = measures - {"map"}
    assert same({q: {k: v for k, v in d.items() if k != "map"} for q, d in want.items()},
                compat.RelevanceEvaluator(qrels, only_direct).evaluate(numpy_run))
    monkeypatch.setattr(_native, "speedups", None)
    assert same(want, compat.RelevanceEvaluator(qrels, measures).evaluate(run))


def test_one_evaluator_over_several_runs():
    measures = {"set_F.0", "Rprec_mult.0,0.5", "ndcg_cut.99999999999999999999,2", "utility.3,2,1,0.5", "P"}
    qrels, _ = collection(6, negative=False)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=2)
    ours = compat.RelevanceEvaluator(qrels, measures, relevance_level=2)
    n = 0
    for seed in (7, 8, 9, 7):
        run = collection(seed, negative=False)[1]
        n += same(theirs.evaluate(run), ours.evaluate(run))
    assert n > 100


def valid_measure(rng: random.Random) -> str:
    base = rng.choice(sorted(compat.supported_measures))
    if base in ("G", "ndcg", "ndcg_rel", "Rndcg") or rng.random() < 0.15:
        return base
    return base + rng.choice("._") + ",".join(rng.choice(NUMBERS) for _ in range(rng.choice([1, 1, 2, 3, 4])))


def test_random_parameter_strings_equal_pytrec_eval():
    """A small seeded fuzz: measure sets of random numeric parameters (cutoffs 0, huge, written twice; recall
    levels above 1; coefficients of every count). Those the drop-in refuses (pytrec_eval crashes on them: see
    the next test) are not run through pytrec_eval here, in this process."""
    rng = random.Random(11)
    compared = refused = 0
    for i in range(400):
        measures = {valid_measure(rng) for _ in range(rng.choice([1, 2, 3]))}
        gain = any(m.startswith(GAIN) for m in measures)
        qrels, run = collection(100 + i, negative=not gain and rng.random() < 0.5)
        kw = {"relevance_level": rng.choice([1, 2, 2, 3]), "judged_docs_only_flag": rng.random() < 0.5}
        try:
            ours = compat.RelevanceEvaluator(qrels, measures, **kw)
        except ValueError as err:
            assert "trec_eval 9 rejects" in str(err)
            refused += 1
            continue
        same(pytrec_eval.RelevanceEvaluator(qrels, measures, **kw).evaluate(run), ours.evaluate(run))
        compared += 1
    assert compared > 250 and refused > 30


CRASHES = [  # (measures, relevance_level): pytrec_eval aborts or segfaults on the first query it scores
    (["P.0"], 1), (["P.5,05", "map"], 1), (["ndcg_cut.0.10"], 1), (["iprec_at_recall.0.5,0.50"], 1),
    (["ndcg.1=3,2=9"], 1), (["ndcg.5"], 1), (["G.2"], 1), (["Rndcg.3"], 1), (["ndcg_rel.0=1.5"], 1),
    (["bpref"], -1), (["gm_bpref", "map"], -5),
]
CHILD = """
import json, sys
import pytrec_eval
measures, level = json.loads(sys.argv[1])
qrels = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"a": 1, "e": 3}}
run = {"q1": {"a": 0.5, "b": 0.9, "x": 0.7}, "q2": {"e": 0.1, "a": 0.3}}
print(pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level).evaluate(run))
"""


def test_what_pytrec_eval_crashes_on_raises_a_value_error():
    children = [subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(case)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE) for case in CRASHES]
    qrels = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"a": 1, "e": 3}}
    run = {"q1": {"a": 0.5, "b": 0.9, "x": 0.7}, "q2": {"e": 0.1, "a": 0.3}}
    for (measures, level), child in zip(CRASHES, children, strict=True):
        child.communicate(timeout=60)
        assert child.returncode != 0, (measures, level)  # pytrec_eval crashed (an assertion or a segfault)
        with pytest.raises(ValueError, match="pytrec_eval"):
            compat.RelevanceEvaluator(qrels, set(measures), relevance_level=level).evaluate(run)


def test_a_parameter_trec_eval_rejects_is_refused_when_the_evaluator_is_built():
    with pytest.raises(ValueError, match=r"pytrec_eval reads \['ndcg.1=3,2=9'\] as \['ndcg.1'\]"):
        compat.RelevanceEvaluator({"q": {"a": 1}}, {"ndcg.1=3,2=9"})
    with pytest.raises(ValueError, match="given twice"):
        compat.RelevanceEvaluator({"q": {"a": 1}}, {"P.5", "P_5.0"})


def test_bpref_at_a_huge_level_raises_only_when_a_query_is_scored():
    qrels = {"q1": {"a": 1}}
    ours = compat.RelevanceEvaluator(qrels, {"bpref"}, relevance_level=-1)
    assert ours.evaluate({"q2": {"a": 1.0}}) == {}  # pytrec_eval: {} too, nothing read
    assert pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}, relevance_level=-1).evaluate({"q2": {"a": 1.0}}) == {}
    with pytest.raises(ValueError, match="4294967295"):
        ours.evaluate({"q1": {"a": 1.0}})


def test_a_negative_level_is_read_as_pytrec_eval_reads_it():
    """pytrec_eval reads relevance_level as a C int into a 64-bit long: -1 is the level 4294967295."""
    measures = {"map", "P.5", "ndcg", "num_rel", "num_rel_ret", "set_F.0", "utility", "iprec_at_recall.0,1.5",
                "11pt_avg", "Rprec_mult.0.5", "relative_P.5", "binG", "infAP", "recip_rank"}
    qrels, run = collection(12, negative=False)
    for level in (-1, -7):
        want, got = both(qrels, run, measures, relevance_level=level)
        assert same(want, got) > 100
        assert all(v["num_rel"] == 0.0 for v in got.values())


@pytest.mark.parametrize("kw", [{"relevance_level": 0}, {"relevance_level": 1.0}, {"relevance_level": 2**31},
                                {"relevance_level": "2"}, {"judged_docs_only_flag": 0.5}])
def test_arguments_pytrec_eval_refuses_raise_a_type_error(kw):
    qrels = {"q": {"a": 1}}
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator(qrels, {"map"}, **kw)
    with pytest.raises(TypeError):
        compat.RelevanceEvaluator(qrels, {"map"}, **kw)


@pytest.mark.parametrize("measures", [{"P-5"}, {"P5"}, {"P.-1"}, {"ndcg_cutx.5"}, {"dcg.5"}, {"prefs"}])
def test_names_pytrec_eval_does_not_read_raise_a_value_error(measures):
    with pytest.raises(ValueError):
        pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, measures)
    with pytest.raises(ValueError, match="unsupported measure"):
        compat.RelevanceEvaluator({"q": {"a": 1}}, measures)
