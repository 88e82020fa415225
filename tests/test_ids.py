"""One id rule (issue 21, item 6): equal ids are one id on every path, and an id refused on one path is
refused on all (``ragrade.data.ids``, docs/formats.md "Ids")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ragrade
from ragrade import _ingest
from ragrade.data.ids import first_nul, id_array, id_column, normalize_id
from ragrade.errors import InputError


def _paths(tmp_path, qids):
    """The same ground truth (one relevant document per query) from a dict, a DataFrame and Parquet."""
    frame = pd.DataFrame({"query_id": qids, "doc_id": [f"d{i}" for i in range(len(qids))], "relevance": 1})
    path = tmp_path / "q.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    as_dict = {q: {f"d{i}": 1} for i, q in enumerate(qids)}
    return {"dict": lambda: ragrade.Qrels.from_dict(as_dict),
            "frame": lambda: ragrade.evaluate(frame, {"x": ["d0"]}, "P@1", missing_qrels="ignore"),
            "parquet": lambda: ragrade.read_qrels(path)}


@pytest.mark.parametrize("bad", [1.5, float("nan"), float("inf"), -0.25])
def test_a_non_integral_number_is_refused_on_every_path(tmp_path, bad):
    for way, read in _paths(tmp_path, [1.0, bad]).items():
        with pytest.raises(InputError, match=r"strings or integers|missing"):
            read()
        assert way


def test_integral_numbers_are_their_digits_on_every_path(tmp_path):
    qids = [10.0, 2.0, 7.0]
    got = {way: read() for way, read in _paths(tmp_path, qids).items()}
    assert sorted(got["dict"].query_ids.tolist()) == ["10", "2", "7"]
    assert sorted(got["parquet"].query_ids.tolist()) == ["10", "2", "7"]
    assert got["frame"].summary.qrels_queries == 3


def test_the_three_forms_of_the_rule_agree():
    values = [10, 10.0, "10", "007", 2**40, -3]
    column = id_column(pa.chunked_array([pa.array([10, 2**40, -3])])).to_pylist()
    assert [normalize_id(v) for v in values] == id_array(values).tolist() == ["10", "10", "10", "007", str(2**40), "-3"]
    assert column == ["10", str(2**40), "-3"]
    assert id_column(pa.chunked_array([pa.array([10.0, None])])).to_pylist() == ["10", None]
    for bad in (True, None, 1.5, [1], {"a": 1}):
        with pytest.raises(InputError):
            normalize_id(bad)
    with pytest.raises(InputError):
        id_column(pa.chunked_array([pa.array([True])]))


# -- the rule holds for Python objects as for files: NUL characters in ids, booleans as grades or scores -----
# (issue 23 item 6: every file format refused them, the dict fast path -- the C scan and its pure-Python
# fallback -- and the DataFrame and constructor paths accepted them). Each case is run with the C helper (if
# built) and without it, and must give the same error.

ACCEL = [False] + ([True] if _ingest.has_accel() else [])
NUL_CASES = {
    "query id in both": ({"q\x001": {"d": 1}}, {"q\x001": {"d": 1.0}}, "'q\\x001'"),
    "query id of the run only": ({"q1": {"d": 1}}, {"q1": {"d": 1.0}, "q\x002": {"d": 1.0}}, "'q\\x002'"),
    "query id of the qrels only": ({"q1": {"d": 1}, "q\x002": {"d": 1}}, {"q1": {"d": 1.0}}, "'q\\x002'"),
    "document id of the qrels": ({"q1": {"d": 1, "e\x00": 1}}, {"q1": {"d": 1.0}}, "'e\\x00'"),
    "document id of the run": ({"q1": {"d": 1}}, {"q1": {"d": 1.0, "\x00e": 0.5}}, "'\\x00e'"),
    "wide document id of the run": ({"q1": {"d": 1}}, {"q1": {"d": 1.0, "\u20ac\x00": 0.5}}, "'\u20ac\\x00'"),
}
BOOL_CASES = {
    "grade True": ({"q1": {"d": True}}, {"q1": {"d": 1.0}}, "True"),
    "grade numpy.False_": ({"q1": {"d": 1, "e": np.False_}}, {"q1": {"d": 1.0}}, "False"),
    "score True": ({"q1": {"d": 1}}, {"q1": {"d": 0.5, "e": True}}, "True"),
    "score numpy.True_": ({"q1": {"d": 1}}, {"q1": {"d": np.True_}}, "True"),
}


def _evaluate_error(monkeypatch, accel: bool, qrels, run) -> str:
    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    with pytest.raises(InputError) as got:
        ragrade.evaluate(qrels, run, ["ndcg@10"])
    monkeypatch.undo()
    return str(got.value)


@pytest.mark.parametrize("case", list(NUL_CASES))
def test_a_nul_in_an_id_of_a_dict_is_refused_with_and_without_the_c_helper(monkeypatch, case):
    qrels, run, shown = NUL_CASES[case]
    messages = {_evaluate_error(monkeypatch, accel, qrels, run) for accel in ACCEL}
    assert len(messages) == 1, messages  # the same error either way
    message = messages.pop()
    assert "NUL character" in message and shown in message, message
    if "document" in case:
        assert "query 'q1'" in message


@pytest.mark.parametrize("case", list(BOOL_CASES))
def test_a_boolean_grade_or_score_in_a_dict_is_refused_with_and_without_the_c_helper(monkeypatch, case):
    qrels, run, shown = BOOL_CASES[case]
    messages = {_evaluate_error(monkeypatch, accel, qrels, run) for accel in ACCEL}
    assert len(messages) == 1, messages
    message = messages.pop()
    assert "is a boolean, not a number" in message and "query 'q1'" in message, message
    assert f"value {shown}" in message or f"value np.{shown}_" in message, message
    assert ("grade" if case.startswith("grade") else "score") in message


@pytest.mark.parametrize("accel", ACCEL)
def test_numbers_that_are_not_booleans_are_still_grades_and_scores(monkeypatch, accel):
    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    plain = ragrade.evaluate({"q1": {"a": 1, "b": 2, "c": 0}}, {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["ndcg@3"])
    numpy = ragrade.evaluate({"q1": {"a": np.int64(1), "b": 2.0, "c": np.uint8(0)}},
                             {"q1": {"a": np.float32(3), "b": np.int64(2), "c": 1}}, ["ndcg@3"])
    assert plain.means == numpy.means
    assert 0 < plain.means["ndcg@3"] < 1
    # ids with characters next to NUL are ids: "\x01", a wide character, "0"
    got = ragrade.evaluate({"q\x01": {"\u20ac": 1, "0": 1}}, {"q\x01": {"\u20ac": 1.0, "0": 0.5}}, ["recall@2"])
    assert got.means["recall@2"] == 1.0


FRAME_CASES = {
    "qrels doc id (object column)": (
        lambda: pd.DataFrame({"query": ["q1", "q1"], "doc": ["d", "e\x00"], "grade": [1, 1]}), None, "NUL character"),
    "run query id (object column)": (
        None, lambda: pd.DataFrame({"query": ["q\x001"], "doc": ["d"], "score": [1.0]}), "NUL character"),
    "qrels grade (bool column)": (
        lambda: pd.DataFrame({"query": ["q1"], "doc": ["d"], "grade": [True]}), None, "is a boolean"),
    "qrels grade (nullable boolean column)": (
        lambda: pd.DataFrame({"query": ["q1"], "doc": ["d"], "grade": pd.array([True], dtype="boolean")}), None,
        "is a boolean"),
    "run score (bool column)": (
        None, lambda: pd.DataFrame({"query": ["q1"], "doc": ["d"], "score": [False]}), "is a boolean"),
    "run score (object column, one boolean)": (
        None, lambda: pd.DataFrame({"query": ["q1", "q1"], "doc": ["d", "e"],
                                    "score": pd.Series([0.5, True], dtype=object)}), "is a boolean"),
}


@pytest.mark.parametrize("case", list(FRAME_CASES))
def test_dataframes_follow_the_same_rule(monkeypatch, case):
    make_qrels, make_run, expected = FRAME_CASES[case]
    qrels = make_qrels() if make_qrels else {"q1": {"d": 1}}
    run = make_run() if make_run else {"q1": {"d": 1.0}}
    messages = {_evaluate_error(monkeypatch, accel, qrels, run) for accel in ACCEL}
    assert len(messages) == 1, messages
    message = messages.pop()
    assert expected in message, message
    if expected == "is a boolean":
        assert "DataFrame" in message and "query 'q1'" in message, message
    else:
        assert "'q1'" in message or "'q\\x001'" in message, message


@pytest.mark.parametrize("build", [
    lambda: ragrade.Qrels.from_dict({"q": {"d\x00": 1}}),
    lambda: ragrade.Qrels.from_dict({"q\x00": {"d": 1}}),
    lambda: ragrade.Qrels.from_lists([["a", "b\x00"]]),
    lambda: ragrade.Qrels.from_groups([[["a"], ["b\x00"]]]),
    lambda: ragrade.Qrels.from_columns(["q", "q"], ["a", b"b\x00"]),
    lambda: ragrade.Run.from_dict({"q": {"d\x00": 1.0}}),
    lambda: ragrade.Run.from_dict({"q\x00": {"d": 1.0}}),
    lambda: ragrade.Run.from_lists([["a", "a\x00"]]),
    lambda: ragrade.Run.from_lists([["a"]], query_ids=["\x00"]),
    lambda: ragrade.Run.from_ranked({"q": [np.str_("d\x00")]}),
    lambda: ragrade.Run.from_columns(np.array(["q"]), np.array(["d\x00x"]), [1.0]),
    lambda: ragrade.evaluate([["a\x00"]], [["a"]], ["recall@10"]),
])
def test_constructors_refuse_a_nul_in_an_id(monkeypatch, build):
    for accel in ACCEL:
        if not accel:
            monkeypatch.setattr(_ingest, "_accel", None)
        with pytest.raises(InputError, match="NUL character"):
            build()
        monkeypatch.undo()


@pytest.mark.parametrize("build", [
    lambda: ragrade.Qrels.from_dict({"q": {"d": True}}),
    lambda: ragrade.Qrels.from_lists([["a"]], grades=[[np.True_]]),
    lambda: ragrade.Qrels.from_columns(["q"], ["a"], np.array([True])),
    lambda: ragrade.Run.from_dict({"q": {"d": False}}),
    lambda: ragrade.Run.from_lists([["a", "b"]], scores=[[1.0, True]]),
    lambda: ragrade.Run.from_columns(["q"], ["d"], [np.bool_(False)]),
])
def test_constructors_refuse_a_boolean_grade_or_score(monkeypatch, build):
    for accel in ACCEL:
        if not accel:
            monkeypatch.setattr(_ingest, "_accel", None)
        with pytest.raises(InputError, match="is a boolean, not a number"):
            build()
        monkeypatch.undo()


def test_the_rule_itself_refuses_a_nul():
    for bad in ("d\x00", "\x00", np.str_("a\x00b"), b"x\x00"):
        with pytest.raises(InputError, match="NUL character"):
            normalize_id(bad)
    with pytest.raises(InputError, match=r"row 2 contains a NUL"):
        id_array(["a", "b", "c\x00"])
    with pytest.raises(InputError, match=r"row 1 contains a NUL"):
        id_array([7, "x\x00", 8])
    assert first_nul(np.array(["a", "b"], dtype=object)) is None
    assert first_nul(["a", "b\x00", "\x00"]) == 1
    assert id_array(["\x01", "\u20ac"]).tolist() == ["\x01", "\u20ac"]


def test_the_pytrec_eval_drop_in_follows_the_rule_for_runs_and_ids():
    from ragrade.compat.pytrec_eval import RelevanceEvaluator

    evaluator = RelevanceEvaluator({"q1": {"d": 1, "e": 0}}, {"ndcg"})
    assert evaluator.evaluate({"q1": {"d": 1.0, "e": 0.5}})["q1"]["ndcg"] == 1.0
    assert evaluator.evaluate({"q1": {"d": True}})["q1"]["ndcg"] == 1.0  # as pytrec_eval: True is 1.0
    with pytest.raises(InputError, match="is a boolean, not a number"):
        evaluator.evaluate({"q1": {"d": np.bool_(True)}})  # pytrec_eval refuses it too
    with pytest.raises(InputError, match="NUL character"):
        evaluator.evaluate({"q1": {"d\x00": 1.0}})  # pytrec_eval itself cuts ids at a NUL: "d\x00x" is "d"
    with pytest.raises(InputError, match="NUL character"):
        RelevanceEvaluator({"q1": {"d\x00": 1}}, {"ndcg"}).evaluate({"q1": {"d": 1.0}})


def test_the_pytrec_eval_drop_in_takes_what_pytrec_eval_takes_and_refuses_numpy_bools():
    """The drop-in reads its input as pytrec_eval does (a Python bool grade is 1 or 0: values, not ids, so
    the id rule is not involved); numpy.bool_, which pytrec_eval refuses too, is refused."""
    from ragrade.compat.pytrec_eval import RelevanceEvaluator

    got = RelevanceEvaluator({"q1": {"d": True, "e": False}}, {"num_rel"}).evaluate({"q1": {"d": 1.0}})
    assert got == {"q1": {"num_rel": 1.0}}
    with pytest.raises(InputError, match=r"numpy\.bool_"):
        RelevanceEvaluator({"q1": {"d": 1, "e": np.bool_(False)}}, {"ndcg"})
