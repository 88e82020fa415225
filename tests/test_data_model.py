"""Data model: inputs are never mutated, stored arrays are read-only, and every constructor of the same
data gives an equal object (and equal evaluation results)."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd
import pytest

import ragrade
from ragrade import InputError, Qrels, RagradeWarning, Run

METRICS = ["ndcg@3", "ap", "rr", "P@2", "recall@3", "r_precision", "hit_rate@1", "context_precision@3"]

QRELS_DICT = {"0": {"d1": 2, "d2": 1, "x": 0}, "1": {"d3": 1, "neg": -1}}
RUN_DICT = {"0": {"d2": 0.5, "d9": 0.5, "d1": 0.25, "q": 0.125}, "1": {"d4": 1.0, "d3": 0.5}, "7": {"a": 1.0}}


def quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return ragrade.evaluate(*args, **kwargs)


def rows(nested):
    return [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]


# -- inputs are never mutated ------------------------------------------------------------------------
@pytest.mark.parametrize("policies", [{}, {"identical_ids": "drop", "duplicates": "drop"},
                                      {"duplicates": "keep_last", "missing_run": "drop", "ties": "input"}])
def test_dicts_are_not_mutated(policies):
    qrels, run = copy.deepcopy(QRELS_DICT), copy.deepcopy(RUN_DICT)
    quiet(qrels, run, METRICS, **policies)
    assert qrels == QRELS_DICT and run == RUN_DICT
    assert [list(d) for d in run.values()] == [list(d) for d in RUN_DICT.values()]  # key order too


def test_lists_are_not_mutated():
    gold = [["d1", "d2"], ["d3"]]
    retrieved = [["d2", "d1", "d2"], ["d4", "d3"]]
    g0, r0 = copy.deepcopy(gold), copy.deepcopy(retrieved)
    quiet(Qrels.from_lists(gold), Run.from_lists(retrieved), METRICS, duplicates="drop")
    quiet(Qrels.from_groups([gold]), Run.from_lists([retrieved[0]]), METRICS)
    assert gold == g0 and retrieved == r0


def test_pandas_frames_are_not_mutated():
    qdf = pd.DataFrame(rows(QRELS_DICT), columns=["query", "doc", "grade"])
    rdf = pd.DataFrame(rows(RUN_DICT), columns=["query", "doc", "score"])
    q0, r0 = qdf.copy(deep=True), rdf.copy(deep=True)
    quiet(qdf, rdf, METRICS, identical_ids="drop")
    quiet(Qrels.from_pandas(qdf), Run.from_pandas(rdf), METRICS)
    pd.testing.assert_frame_equal(qdf, q0)
    pd.testing.assert_frame_equal(rdf, r0)


def test_polars_frames_are_not_mutated():
    pl = pytest.importorskip("polars")
    qdf = pl.DataFrame(rows(QRELS_DICT), schema=["query", "doc", "grade"], orient="row")
    rdf = pl.DataFrame(rows(RUN_DICT), schema=["query", "doc", "score"], orient="row")
    q0, r0 = qdf.clone(), rdf.clone()
    quiet(Qrels.from_polars(qdf), Run.from_polars(rdf), METRICS)
    assert qdf.equals(q0) and rdf.equals(r0)


def test_qrels_and_run_objects_are_not_changed_by_evaluation():
    qrels, run = Qrels.from_dict(QRELS_DICT), Run.from_dict(RUN_DICT)
    qd, rd = qrels.to_dict(), run.to_dict()
    scores = run.scores.copy()
    for pol in ({}, {"identical_ids": "drop"}, {"duplicates": "keep_last"}, {"ties": "docid_asc"}):
        quiet(qrels, run, METRICS, **pol)
    assert qrels.to_dict() == qd and run.to_dict() == rd
    np.testing.assert_array_equal(run.scores, scores)


def test_numpy_score_array_passed_in_stays_writeable_and_unshared():
    scores = np.array([3.0, 2.0, 1.0])
    run = Run.from_columns(["q", "q", "q"], ["a", "b", "c"], scores)
    assert scores.flags.writeable
    assert not np.shares_memory(scores, run.scores)


def test_numpy_grade_array_passed_in_stays_writeable_and_unshared():
    grades = np.array([1.0, 2.0, 0.0])
    qrels = Qrels.from_columns(["q", "q", "q"], ["a", "b", "c"], grades)
    assert grades.flags.writeable
    assert not np.shares_memory(grades, qrels.grades)


def test_run_from_pandas_does_not_share_the_score_column():
    df = pd.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "score": [2.0, 1.0]})
    run = Run.from_pandas(df)
    df.loc[0, "score"] = 0.0
    assert run.scores.tolist() == [2.0, 1.0]


# -- arrays are read-only --------------------------------------------------------------------------
def _arrays(obj):
    out = {"query_ids": obj.query_ids, "offsets": obj.offsets, "doc_codes": obj.doc_codes,
           "doc_vocab": obj.doc_vocab}
    out["values"] = obj.grades if isinstance(obj, Qrels) else obj.scores
    return out


@pytest.mark.parametrize("make", [
    lambda: Qrels.from_dict(QRELS_DICT), lambda: Qrels.from_lists([["a", "b"]]),
    lambda: Qrels.from_groups([[["a", "b"], ["c"]]]), lambda: Run.from_dict(RUN_DICT),
    lambda: Run.from_columns(["q", "q"], ["a", "b"], [1.0, 2.0]),
])
def test_stored_arrays_are_read_only(make):
    obj = make()
    for name, arr in _arrays(obj).items():
        assert not arr.flags.writeable, name
        with pytest.raises(ValueError):
            arr[...] = arr  # any write fails


# -- constructors give equal objects ---------------------------------------------------------------
def qrels_variants():
    qrows = rows(QRELS_DICT)
    qdf = pd.DataFrame(qrows, columns=["query", "doc", "grade"])
    out = {
        "dict": Qrels.from_dict(QRELS_DICT),
        "columns": Qrels.from_columns([r[0] for r in qrows], [r[1] for r in qrows], [r[2] for r in qrows]),
        "pandas": Qrels.from_pandas(qdf),
        "shuffled_pandas": Qrels.from_pandas(qdf.iloc[[3, 0, 4, 2, 1]]),
        "lists": Qrels.from_lists([["d1", "d2", "x"], ["d3", "neg"]], grades=[[2, 1, 0], [1, -1]]),
    }
    try:
        import polars as pl

        out["polars"] = Qrels.from_polars(pl.from_pandas(qdf))
    except ImportError:  # pragma: no cover - polars is in the test extra
        pass
    return out


def test_qrels_constructors_are_equal():
    variants = qrels_variants()
    for name, q in variants.items():
        assert q == variants["dict"], name
        assert q.to_dict() == QRELS_DICT, name
    run = Run.from_dict(RUN_DICT)
    results = {n: quiet(q, run, METRICS).per_query.sort_index() for n, q in variants.items()}
    for name, frame in results.items():
        pd.testing.assert_frame_equal(frame, results["dict"], check_exact=True, obj=name)


def test_groups_of_single_ids_equal_plain_qrels():
    groups = Qrels.from_groups([[["d1"], ["d2"]], [["d3"]]])
    plain = Qrels.from_lists([["d1", "d2"], ["d3"]])
    run = Run.from_lists([["d2", "x", "d1"], ["d3"]])
    a = quiet(groups, run, METRICS).per_query
    b = quiet(plain, run, METRICS).per_query
    pd.testing.assert_frame_equal(a, b)


def test_a_group_is_one_unit_credited_once():
    groups = Qrels.from_groups([[["a", "b"], ["c"]]])
    run = Run.from_lists([["a", "b", "x", "c"]])
    m = quiet(groups, run, ["recall@2", "hits@4", "P@4", "rr", "ap"]).means
    # b satisfies the same group as a: not credited again.
    assert m == {"recall@2": 0.5, "hits@4": 2.0, "P@4": 0.5, "rr": 1.0, "ap": (1 + 2 / 4) / 2}


def run_variants():
    rrows = rows(RUN_DICT)
    rdf = pd.DataFrame(rrows, columns=["query", "doc", "score"])
    out = {
        "dict": Run.from_dict(RUN_DICT),
        "columns": Run.from_columns([r[0] for r in rrows], [r[1] for r in rrows], [r[2] for r in rrows]),
        "pandas": Run.from_pandas(rdf),
        "shuffled_pandas": Run.from_pandas(rdf.sample(frac=1.0, random_state=3)),
    }
    import polars as pl

    out["polars"] = Run.from_polars(pl.from_pandas(rdf))
    return out


def test_run_constructors_are_equal():
    variants = run_variants()
    for name, r in variants.items():
        assert r == variants["dict"], name
        assert r.to_lists() == variants["dict"].to_lists(), name
    qrels = Qrels.from_dict(QRELS_DICT)
    results = {n: quiet(qrels, r, METRICS).per_query for n, r in variants.items()}
    for name, frame in results.items():
        pd.testing.assert_frame_equal(frame, results["dict"], check_exact=True, obj=name)


def test_ranked_list_constructors_are_equal():
    lists = [["d2", "d9", "d1"], ["d4", "d3"]]
    a = Run.from_lists(lists)
    b = Run.from_ranked({"0": lists[0], "1": lists[1]})
    c = Run.from_pandas(pd.DataFrame({"query": ["0"] * 3 + ["1"] * 2, "doc": lists[0] + lists[1]}), score=None)
    d = Run.from_pandas(pd.DataFrame({"query": ["1", "0", "1", "0", "0"], "doc": ["d3", "d1", "d4", "d9", "d2"],
                                      "rank": [2, 3, 1, 2, 1]}))
    for r in (a, b, c, d):
        assert r.to_lists() == {"0": lists[0], "1": lists[1]}
    # A ranked list and the scored run with the same order give the same values.
    scored = {"0": {"d2": 3.0, "d9": 2.0, "d1": 1.0}, "1": {"d4": 2.0, "d3": 1.0}}
    qrels = Qrels.from_dict(QRELS_DICT)
    pd.testing.assert_frame_equal(quiet(qrels, a, METRICS).per_query, quiet(qrels, scored, METRICS).per_query)


def test_integer_ids_are_strings():
    q = Qrels.from_dict({1: {10: 1}})
    r = Run.from_dict({"1": {"10": 1.0}})
    assert quiet(q, r, "P@1").per_query.to_dict() == {"P@1": {"1": 1.0}}


def test_malformed_inputs_raise_input_error():
    with pytest.raises(InputError):
        Qrels.from_dict({"q": {"a": "high"}})
    with pytest.raises(InputError):
        Run.from_dict({"q": {"a": float("nan")}})
    with pytest.raises(InputError):
        Run.from_dict({"q": ["a", "b"]})
    with pytest.raises(InputError):
        Qrels.from_dict({"q": {"": 1}})
    with pytest.raises(InputError):
        Qrels.from_columns(["q", "q"], ["a", "a"], [1, 1])


def test_bad_run_scores_name_query_and_item():
    with pytest.raises(InputError, match=r"query 'q2', item 'b'"):
        Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": "x"}})
    with pytest.raises(InputError, match=r"query 'q2', item 'b'"):
        Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": float("nan")}})


def test_bad_qrels_grades_name_query_and_item():
    with pytest.raises(InputError, match=r"query 'q2', item 'b'"):
        Qrels.from_dict({"q1": {"a": 1}, "q2": {"a": 1, "b": "high"}})


def test_missing_qrels_grade_is_reported_as_missing():
    with pytest.raises(InputError, match=r"(?i)missing.*query 'q2'"):
        Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": None}})


def test_integer_ids_from_pandas_and_polars_are_equal():
    pl = pytest.importorskip("polars")
    df = pd.DataFrame({"query": [1, 1, 2], "doc": [10, 11, 12], "grade": [1, 0, 2]})
    assert Qrels.from_pandas(df) == Qrels.from_polars(pl.from_pandas(df)) == Qrels.from_dict(
        {"1": {"10": 1, "11": 0}, "2": {"12": 2}})


def test_float_ids_from_pandas_and_polars_are_equal():
    pl = pytest.importorskip("polars")
    df = pd.DataFrame({"query": ["q", "q"], "doc": [10.0, 11.0], "grade": [1, 0]})
    assert Qrels.from_pandas(df) == Qrels.from_polars(pl.from_pandas(df))


def test_run_ids_colliding_after_str_conversion_are_flagged():
    run = Run.from_dict({"q": {1: 1.0, "1": 0.5}})
    assert run.duplicate_mask().tolist() == [False, True]


def test_nested_group_lists_are_groups_not_stringified_ids():
    # [[["a", "b"], ["c"]]]: one query, two groups; "a" and "b" satisfy the same group.
    r = ragrade.evaluate([[["a", "b"], ["c"]]], [["a", "x", "b"]], ["recall", "ap"])
    assert r.means["recall"] == 0.5
    assert r.means["ap"] == 0.5  # one group credited at rank 1, R = 2 groups
