"""CSV/TSV, JSONL and Parquet readers: layouts, column names, list forms."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragrade import Qrels, read_qrels, read_run
from ragrade.errors import ParseError
from ragrade.io import guess_kind


def _jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_beir_qrels_tsv(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n1\t007\t1\n1\t8\t0\n2\t9\t2\n")
    q = read_qrels(path)
    assert q.to_dict() == {"1": {"007": 1, "8": 0}, "2": {"9": 2}}  # ids stay strings ("007")


@pytest.mark.parametrize(
    ("header", "opts"),
    [
        ("qid,docid,relevance", {}),
        ("query_id,doc_id,label", {}),
        ("topic,docno,rel", {}),
        ("a,b,c", {"query_col": "a", "doc_col": "b", "grade_col": "c"}),
    ],
)
def test_qrels_column_names(tmp_path, header, opts):
    path = tmp_path / "q.csv"
    path.write_text(f"{header}\nx,d1,2\nx,d2,0\n")
    assert read_qrels(path, **opts).to_dict() == {"x": {"d1": 2, "d2": 0}}


def test_qrels_without_grade_column_means_relevant(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("query,doc\nx,d1\nx,d2\n")
    assert read_qrels(path).to_dict() == {"x": {"d1": 1, "d2": 1}}


def test_csv_quoted_fields(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('query,doc,score\n"what is, ir?","doc ""a""",0.5\n')
    assert read_run(path).to_dict() == {"what is, ir?": {'doc "a"': 0.5}}


def test_headerless_tsv(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("q1\td1\t0.5\nq1\td2\t0.7\n")
    run = read_run(path)
    assert run.to_lists() == {"q1": ["d2", "d1"]}
    with pytest.raises(ParseError):
        read_run(path, header=True)  # then "q1", "d1", "0.5" are column names: no query column


def test_rank_without_score_orders_by_rank(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("query\tdoc\trank\nq1\tdA\t3\nq1\tdB\t1\nq2\tdC\t1\nq1\tdD\t2\n")
    run = read_run(path)
    assert not run.has_scores
    assert run.to_lists() == {"q1": ["dB", "dD", "dA"], "q2": ["dC"]}


def test_no_score_no_rank_keeps_row_order(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("query,doc\nq1,z\nq1,a\n")
    assert read_run(path).to_lists() == {"q1": ["z", "a"]}


def test_jsonl_rows(tmp_path):
    path = tmp_path / "r.jsonl"
    _jsonl(path, [{"qid": 1, "docid": 10, "score": 0.5}, {"qid": 1, "docid": 11, "score": 0.9}])
    assert read_run(path).to_dict() == {"1": {"10": 0.5, "11": 0.9}}


def test_jsonl_mixed_id_types_fall_back(tmp_path):
    path = tmp_path / "r.jsonl"
    _jsonl(path, [{"query": 1, "doc": "a", "score": 1}, {"query": "q2", "doc": 7, "score": 2.5}])
    assert read_run(path).to_dict() == {"1": {"a": 1.0}, "q2": {"7": 2.5}}


def test_jsonl_list_layout_run(tmp_path):
    path = tmp_path / "r.jsonl"
    _jsonl(path, [
        {"query": "q1", "retrieved": ["d3", "d1", "d2"]},
        {"query": "q2", "retrieved": []},
        {"query": "q3", "retrieved": ["d1"]},
    ])
    run = read_run(path)
    assert not run.has_scores
    assert run.to_lists() == {"q1": ["d3", "d1", "d2"], "q3": ["d1"], "q2": []}
    assert guess_kind(path) == "run"


def test_jsonl_list_layout_with_scores(tmp_path):
    path = tmp_path / "r.jsonl"
    _jsonl(path, [{"query": "q1", "retrieved": ["a", "b"], "scores": [0.1, 0.9]}])
    assert read_run(path).to_lists() == {"q1": ["b", "a"]}


def test_jsonl_gold_and_grades(tmp_path):
    path = tmp_path / "q.jsonl"
    _jsonl(path, [{"query": "q1", "gold": ["a", "b"]}, {"query": "q2", "gold": ["c"]}])
    assert read_qrels(path).to_dict() == {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    _jsonl(path, [{"query": "q1", "gold": ["a", "b"], "grades": [3, 1]}])
    assert read_qrels(path).to_dict() == {"q1": {"a": 3, "b": 1}}
    assert guess_kind(path) == "qrels"


def test_jsonl_groups(tmp_path):
    path = tmp_path / "q.jsonl"
    _jsonl(path, [{"query": "q1", "groups": [["t1", "t2"], ["t3"]]}])
    q = read_qrels(path)
    assert q == Qrels.from_groups([[["t1", "t2"], ["t3"]]], query_ids=["q1"])
    assert q.to_groups() == {"q1": [["t1", "t2"], ["t3"]]}
    _jsonl(path, [{"query": "q1", "groups": [["t1"], []]}])
    with pytest.raises(ParseError, match="groups"):
        read_qrels(path)


def test_parquet_list_columns(tmp_path):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"query_id": ["a", "b"], "retrieved": [["x", "y"], ["z"]]}), path)
    assert read_run(path).to_lists() == {"a": ["x", "y"], "b": ["z"]}
    qpath = tmp_path / "q.parquet"
    pq.write_table(pa.table({"query": ["a"], "relevant": [["x"]]}), qpath)
    assert read_qrels(qpath).to_dict() == {"a": {"x": 1}}


def test_parquet_rows_with_integer_ids(tmp_path):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"qid": [1, 1, 2], "docid": [5, 6, 5], "score": [0.2, 0.4, 1.0]}), path)
    assert read_run(path).to_dict() == {"1": {"5": 0.2, "6": 0.4}, "2": {"5": 1.0}}


def test_parquet_null_id_is_reported_by_row(tmp_path):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"query": ["a", None], "doc": ["x", "y"], "score": [1.0, 2.0]}), path)
    with pytest.raises(ParseError, match="row 2"):
        read_run(path)


def test_not_parquet(tmp_path):
    path = tmp_path / "r.parquet"
    path.write_text("hello")
    with pytest.raises(ParseError, match="Parquet"):
        read_run(path)


@pytest.mark.parametrize("name", ["r.tsv", "r.csv.gz", "r.jsonl", "r.jsonl.gz"])
def test_progress_on_tables(tmp_path, name):
    from ragrade import Run, write_run

    run = Run.from_dict({f"q{i}": {f"d{j}": float(j) for j in range(30)} for i in range(50)})
    path = tmp_path / name
    write_run(run, path)
    calls: list[tuple[int, int]] = []
    back = read_run(path, progress=lambda d, t: calls.append((d, t)))
    assert back.to_dict() == run.to_dict()
    size = path.stat().st_size
    assert calls and calls[-1] == (size, size)
