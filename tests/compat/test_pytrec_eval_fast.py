"""``ragrade.compat.pytrec_eval``'s fast path (the qrels indexed once, plain-dict runs joined in C, the kernels
run on the joined rows, the output dicts built in C) gives what pytrec_eval and ragrade's general path give:
with one evaluator reused over many runs, with the C helper turned off, for runs the fast path leaves to the
general one, and after the caller changes the qrels it was built from."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragrade.compat.pytrec_eval as compat
from ragrade.compat import _native
from ragrade.errors import InputError

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")

EVERY = set(compat.supported_measures) - {"ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G"}  # (negative grades)
BEIR = {"map_cut.1,3,5,10,100,1000", "ndcg_cut.1,3,5,10,100,1000", "recall.1,3,5,10,100,1000",
        "P.1,3,5,10,100,1000"}


def collection(seed: int, n: int = 60):
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(80)] + ["é", "z", "\u4e2d"]
    qrels, runs = {}, []
    for i in range(n):
        judged = rng.choice(pool, int(rng.integers(1, 40)), replace=False)
        qrels[f"q{i}"] = {str(d): int(rng.choice([-1, 0, 0, 1, 2, 3])) for d in judged}
    for _ in range(3):
        run = {}
        for i in range(n + 5):
            if rng.random() < 0.9:
                docs = rng.choice(pool, int(rng.integers(0, 60)), replace=False)
                run[f"q{i}"] = {str(d): float(s) for d, s in
                                zip(docs, rng.choice([0.5, 0.25, 1.0, 1.0 + 1e-9, 2.0, rng.random()], len(docs)),
                                    strict=True)}
        runs.append(run)
    return qrels, runs


def same(want, got) -> int:
    assert sorted(want) == sorted(got)
    n = 0
    for q, values in want.items():
        assert sorted(values) == sorted(got[q])
        for name, w in values.items():
            g = got[q][name]
            assert (math.isnan(w) and math.isnan(g)) or math.isclose(g, w, rel_tol=0, abs_tol=1e-12), (q, name, g, w)
            n += 1
    return n


def identical(a, b) -> None:
    assert list(a) == list(b)
    for q in a:
        assert list(a[q]) == list(b[q])
        for k, v in a[q].items():
            assert v == b[q][k] or (math.isnan(v) and math.isnan(b[q][k])), (q, k)


@pytest.mark.parametrize("level,judged_only", [(1, False), (2, True)])
def test_one_evaluator_over_several_runs_equals_pytrec_eval(level, judged_only):
    qrels, runs = collection(3)
    positive = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    n = 0
    for measures, truth in ((EVERY, qrels), ({"all_trec"}, positive), (BEIR, positive)):
        ours = compat.RelevanceEvaluator(truth, measures, relevance_level=level, judged_docs_only_flag=judged_only)
        theirs = pytrec_eval.RelevanceEvaluator(truth, measures, relevance_level=level,
                                                judged_docs_only_flag=judged_only)
        assert ours._fast is not None and ours._fast.scorer.direct
        for run in runs + runs[:1]:  # the first run again, after the qrels caches were filled
            n += same(theirs.evaluate(run), ours.evaluate(run))
    assert n > 40_000


def test_the_fast_path_equals_the_general_path_and_finish():
    qrels, runs = collection(5)
    ev = compat.RelevanceEvaluator(qrels, EVERY)
    fast = ev._fast
    assert fast is not None
    for run in runs:
        queries = [q for q in run if q in qrels]
        got = fast.evaluate(run, queries)
        assert got is not None
        general = ev._general(run, queries)
        fast.scorer.direct = False  # the same join through the port's Result (ragrade.engine.core.finish)
        via_finish = fast.evaluate(run, queries)
        fast.scorer.direct = True
        assert via_finish is not None
        for m in ev._metrics:
            assert np.allclose(got[m], general[m], rtol=0, atol=1e-12, equal_nan=True), m
            assert np.array_equal(got[m], via_finish[m], equal_nan=True), m


def test_without_the_c_helper_the_dicts_are_identical(monkeypatch):
    qrels, runs = collection(7)
    with_c = [compat.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run) for run in runs]
    monkeypatch.setattr(_native, "speedups", None)
    for run, want in zip(runs, with_c, strict=True):
        identical(want, compat.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run))


def test_the_index_keeps_each_querys_judgments_in_dict_order():
    qrels, _ = collection(9)
    fast = compat.RelevanceEvaluator(qrels, {"map"})._fast
    assert fast is not None
    index = fast.scorer.index  # (made from the port's rows)
    truth = fast.scorer.truth
    assert np.array_equal(index.row_q, truth.row_query) and np.array_equal(index.unit_grade, truth.grades)
    docs = index.qrels.docs_at(np.arange(index.qrels.n_rows, dtype=np.int64)).tolist()
    assert docs == [d for judged in qrels.values() for d in judged]


@pytest.mark.parametrize("run", [
    {"q0": {"d1": 1, "d2": 2, "d3": 0}},  # int scores: the fast path
    {"q0": {"d1": np.float64(0.5), "d2": np.float64(2.0)}},  # a float subclass: the general path
])
def test_scores_of_other_types(run):
    qrels = {"q0": {"d1": 1, "d2": 0, "d3": 2}}
    measures = {"map", "P_5", "ndcg", "recip_rank"}
    same(pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run),
         compat.RelevanceEvaluator(qrels, measures).evaluate(run))


def test_python_bool_scores_read_as_pytrec_eval_reads_them_and_numpy_bools_refused():
    # pytrec_eval reads a Python bool score as 1.0 / 0.0 and refuses numpy.bool_ (docs/trec_eval.md)
    qrels = {"q0": {"d1": 1, "d2": 0, "d3": 2}}
    run = {"q0": {"d1": True, "d2": 0.5, "d3": False, "d4": 1}}
    measures = {"map", "P_5", "ndcg", "recip_rank", "bpref"}
    frozen = {q: dict(d) for q, d in run.items()}
    same(pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run),
         compat.RelevanceEvaluator(qrels, measures).evaluate(run))
    assert run == frozen and type(run["q0"]["d1"]) is bool  # the caller's dicts are not changed
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate({"q0": {"d1": np.bool_(True)}})
    with pytest.raises(InputError, match="is a boolean, not a number"):
        compat.RelevanceEvaluator(qrels, {"map"}).evaluate({"q0": {"d1": np.bool_(True), "d2": 0.5}})


def test_qrels_changed_after_init_change_nothing():
    qrels = {"q0": {"d1": 1, "d2": 0}, "q1": {"d3": 1}}
    ev = compat.RelevanceEvaluator(qrels, {"map", "num_rel"})
    before = ev.evaluate({"q0": {"d1": 1.0, "d2": 2.0}, "q1": {"d3": 1.0}})
    qrels["q0"]["d9"] = 3
    qrels["q1"].clear()
    assert ev.evaluate({"q0": {"d1": 1.0, "d2": 2.0}, "q1": {"d3": 1.0}}) == before


def test_ids_that_are_not_str_are_read_as_pytrec_eval_reads_them():
    qrels = {1: {"a": 1, "b": 0}, "2": {"c": 1}}
    run = {1: {"a": 0.5, "b": 0.7}, "2": {"c": 0.1}}
    got = compat.RelevanceEvaluator(qrels, {"map", "P_1"}).evaluate(run)
    assert got == {"1": {"map": 0.5, "P_1": 0.0}, "2": {"map": 1.0, "P_1": 1.0}}


def test_python_bool_grades_read_as_pytrec_eval_reads_them_on_both_paths(monkeypatch):
    # pytrec_eval reads a Python bool grade as 1 / 0 and refuses numpy.bool_ (docs/trec_eval.md)

    qrels = {"q": {"a": True, "b": 0, "c": 2, "d": False}}
    run = {"q": {"a": 0.3, "b": 0.9, "c": 0.1, "e": 0.5}}
    measures = {"map", "ndcg", "num_rel", "bpref"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator({"q": {"a": 1, "b": np.bool_(False)}}, {"map"})
    for use_accel in (True, False):
        if not use_accel:
            monkeypatch.setattr(_native, "speedups", None)
        same(theirs, compat.RelevanceEvaluator(qrels, measures).evaluate(run))
        with pytest.raises(InputError, match=r"numpy\.bool_"):
            compat.RelevanceEvaluator({"q": {"a": 1, "b": np.bool_(False)}}, {"map"})




def test_each_evaluator_keeps_its_own_qrels_state_and_stays_exact():
    """What the kernels computed from the qrels alone is kept by each evaluator across its evaluate() calls,
    never shared with another evaluator (no state outside the object): equal qrels give identical dicts,
    qrels that differ in one grade or one judgment give pytrec_eval's."""
    qrels, runs = collection(7)
    positive = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    first = compat.RelevanceEvaluator(positive, {"all_trec"})
    want = [first.evaluate(run) for run in runs]
    assert first._fast.scorer.truth_memo
    again = compat.RelevanceEvaluator({q: dict(d) for q, d in positive.items()}, {"all_trec"})
    assert again._fast.scorer.truth_memo is not first._fast.scorer.truth_memo and not again._fast.scorer.truth_memo
    for run, w in zip(runs, want, strict=True):
        identical(w, again.evaluate(run))
    q0, d0 = next(iter(positive.items()))
    changed = {q: dict(d) for q, d in positive.items()}
    changed[q0][next(iter(d0))] = 3 - d0[next(iter(d0))]  # one grade changes
    moved = dict(positive)
    moved[q0] = dict(list(d0.items())[:-1])  # one judgment fewer
    for truth in (changed, moved):
        other = compat.RelevanceEvaluator(truth, {"all_trec"})
        theirs = pytrec_eval.RelevanceEvaluator(truth, {"all_trec"})
        for run in runs:
            same(theirs.evaluate(run), other.evaluate(run))
