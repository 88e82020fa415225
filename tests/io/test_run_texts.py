"""A run may carry the retrieved texts: kept by the constructors, written and read back as a ``text``
column (rows layout) or a ``texts`` list (JSONL/Parquet list layout); left out, with a warning, by the
TREC layouts."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import ragrade
from ragrade.data import Run
from ragrade.errors import InputError, ParseError, RagradeWarning


def _run() -> Run:
    return Run.from_columns(["q2", "q1", "q2"], ["a", "b", "c"], [1.0, 2.5, 3.0],
                            texts=['said "yes"', "plain", "ünïcode, with comma"])


def test_texts_follow_their_rows_through_grouping_and_ranking():
    r = _run()
    assert r.text_lists() == {"q2": ["ünïcode, with comma", 'said "yes"'], "q1": ["plain"]}
    assert r.with_name("x").text_lists() == r.text_lists()
    assert r.without_texts().texts is None
    assert not r.texts.flags.writeable


def test_from_lists_with_texts_and_repeated_query_ids():
    r = Run.from_lists([["d1", "d2"], ["d3"]], query_ids=["q1", "q1"], texts=[["a", "b"], ["c"]])
    assert r.text_lists() == {"q1": ["a", "b", "c"]}
    with pytest.raises(InputError, match="same shape"):
        Run.from_lists([["d1", "d2"]], texts=[["a"]])
    with pytest.raises(InputError, match="must be a string"):
        Run.from_lists([["d1"]], texts=[[3]])


def test_an_item_without_text_is_an_error_not_an_empty_text():
    r = Run.from_lists([["d1", "d2"]], query_ids=["q9"], texts=[["a", None]])
    with pytest.raises(InputError, match=r"no text.*query 'q9'.*item 'd2'"):
        r.text_lists()
    with pytest.raises(InputError, match="carries no texts"):
        Run.from_lists([["d1"]]).text_lists()


@pytest.mark.parametrize("name", ["run.parquet", "run.jsonl", "run.tsv", "run.csv", "run.jsonl.gz", "run.tsv.gz"])
def test_texts_round_trip(tmp_path, name):
    r = _run()
    ragrade.write_run(r, tmp_path / name)
    back = ragrade.read_run(tmp_path / name)
    assert back.to_dict() == r.to_dict()
    assert back.text_lists() == r.text_lists()


def test_missing_texts_round_trip_as_null_in_parquet_and_jsonl(tmp_path):
    r = Run.from_lists([["d1", "d2"]], texts=[["a", None]])
    for name in ("r.parquet", "r.jsonl"):
        ragrade.write_run(r, tmp_path / name)
        assert ragrade.read_run(tmp_path / name).texts.tolist() == ["a", None]


def test_list_layout_texts(tmp_path):
    p = tmp_path / "lists.jsonl"
    p.write_text(json.dumps({"query": "q1", "retrieved": ["a", "b"], "texts": ["x", "y"]}) + "\n")
    assert ragrade.read_run(p).text_lists() == {"q1": ["x", "y"]}
    p.write_text(json.dumps({"query": "q1", "retrieved": ["a", "b"], "texts": ["x"]}) + "\n")
    with pytest.raises(ParseError, match="different lengths"):
        ragrade.read_run(p)


def test_a_text_column_of_numbers_is_refused(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps({"query": "q1", "doc": "a", "score": 1.0, "text": 5}) + "\n")
    with pytest.raises(ParseError, match="text column"):
        ragrade.read_run(p)


def test_tsv_refuses_a_text_with_a_tab(tmp_path):
    r = Run.from_lists([["d1"]], texts=[["a\tb"]])
    with pytest.raises(InputError, match="tab or newline"):
        ragrade.write_run(r, tmp_path / "r.tsv")
    ragrade.write_run(r, tmp_path / "r.csv")  # CSV quotes it
    assert ragrade.read_run(tmp_path / "r.csv").text_lists() == {"0": ["a\tb"]}


def test_trec_leaves_texts_out_with_a_warning(tmp_path):
    r = _run()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ragrade.write_run(r, tmp_path / "r.trec")
    assert any(issubclass(w.category, RagradeWarning) and "texts" in str(w.message) for w in caught)
    assert ragrade.read_run(tmp_path / "r.trec").texts is None


def test_texts_do_not_change_the_metrics():
    qrels = {"q1": {"b": 1}, "q2": {"c": 1, "a": 1}}
    r = _run()
    with_texts = ragrade.evaluate(qrels, r, ["ndcg@10", "ap"]).means
    without = ragrade.evaluate(qrels, r.without_texts(), ["ndcg@10", "ap"]).means
    assert with_texts == without
    assert np.isclose(with_texts["ap"], 1.0)


def test_text_matchers_and_token_metrics_read_the_runs_texts():
    run = Run.from_lists([["d7", "d2"]], query_ids=["q1"],
                         texts=[["Lyon is a big city.", "Paris is the capital of France and its largest city."]])
    truth = {"q1": ["Paris is the capital of France."]}
    by_run = ragrade.evaluate(truth, run, ["recall@5", "rr", "token_f1@2"], matcher="rouge_l").means
    by_lists = ragrade.evaluate(truth, run.text_lists(), ["recall@5", "rr", "token_f1@2"], matcher="rouge_l").means
    assert by_run == by_lists and by_run["rr"] == 0.5
    # ids are still what the id metrics score, and a run with an item lacking text scores ids fine
    partial = Run.from_lists([["d7", "d2"]], query_ids=["q1"], texts=[["x", None]])
    assert ragrade.evaluate({"q1": ["d2"]}, partial, ["rr"]).means["rr"] == 0.5
