"""Pooling, the topics reader, the streamed corpus reader and the merged-qrels reading policy."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

import ragrade
from ragrade.assessment import pool, read_passages, read_queries
from ragrade.errors import InputError, ParseError

# -- pooling ------------------------------------------------------------------------------------------------


def test_pool_is_the_union_of_each_runs_top_depth():
    a = ragrade.Run.from_dict({"q1": {"d1": 3, "d2": 2, "d3": 1}, "q2": {"x": 1}}, name="a")
    b = ragrade.Run.from_dict({"q1": {"d9": 5, "d1": 4, "d2": 0}}, name="b")
    p = pool([a, b], depth=2)
    assert p.as_tuples() == [("q1", "d1"), ("q1", "d9"), ("q1", "d2"), ("q2", "x")]
    assert p.pairs.set_index(["query", "doc"])["runs"].to_dict()[("q1", "d1")] == 2
    assert p.run_names == ("a", "b")
    assert pool({"first": a}, depth=1).as_tuples() == [("q1", "d1"), ("q2", "x")]


def test_pool_ties_follow_the_evaluation_convention():
    # equal scores: trec_eval's order (document id descending) decides who is inside the depth
    r = ragrade.Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 1.0}})
    assert pool([r], depth=1).as_tuples() == [("q", "c")]
    assert pool([r], depth=1, ties="docid_asc").as_tuples() == [("q", "a")]


def test_pool_holes_only_leaves_judged_pairs_out(examples):
    runs = [ragrade.read_run(examples / "run.tsv"), ragrade.read_run(examples / "run_dense.tsv")]
    qrels = ragrade.read_qrels(examples / "qrels.tsv")
    full = pool(runs, depth=10)
    holes = pool(runs, depth=10, qrels=qrels, holes_only=True)
    judged = {(q, d) for q, docs in qrels.to_dict().items() for d in docs}
    assert set(holes.as_tuples()) == set(full.as_tuples()) - judged
    assert holes.judged == len(set(full.as_tuples()) & judged) > 0
    assert len(holes) + holes.judged == len(full) == holes.candidates


def test_pool_bad_arguments():
    r = ragrade.Run.from_dict({"q": {"a": 1.0}})
    with pytest.raises(InputError):
        pool([r], depth=0)
    with pytest.raises(InputError):
        pool([], depth=3)
    with pytest.raises(InputError):
        pool([r], holes_only=True)


# -- queries ------------------------------------------------------------------------------------------------


def test_queries_from_tsv_jsonl_parquet(tmp_path):
    (tmp_path / "t.tsv").write_text("1\twhat is a fjord\n2\tbasalt\tcolumns\n")
    assert read_queries(tmp_path / "t.tsv") == {"1": "what is a fjord", "2": "basalt\tcolumns"}
    (tmp_path / "h.tsv").write_text("qid\tquery\n007\tcedar\n")
    assert read_queries(tmp_path / "h.tsv") == {"007": "cedar"}
    (tmp_path / "t.jsonl").write_text('{"_id": "a", "text": "amber"}\n\n{"_id": "b", "text": "ember"}\n')
    assert read_queries(tmp_path / "t.jsonl") == {"a": "amber", "b": "ember"}
    pd.DataFrame({"query_id": ["x"], "question": ["indigo?"]}).to_parquet(tmp_path / "t.parquet")
    assert read_queries(tmp_path / "t.parquet") == {"x": "indigo?"}


def test_queries_errors_name_file_and_line(tmp_path):
    (tmp_path / "dup.tsv").write_text("1\ta\n1\tb\n")
    with pytest.raises(ParseError, match=r"dup\.tsv:2: query '1' appears twice"):
        read_queries(tmp_path / "dup.tsv")
    (tmp_path / "bad.jsonl").write_text('{"id": "1", "text": "a"}\n{"id": \n')
    with pytest.raises(ParseError, match=r"bad.jsonl:2"):
        read_queries(tmp_path / "bad.jsonl")
    (tmp_path / "one.tsv").write_text("lonely\n")
    with pytest.raises(ParseError, match=r"one\.tsv:1"):
        read_queries(tmp_path / "one.tsv")


# -- passages -----------------------------------------------------------------------------------------------


def _corpus_rows(n: int = 50) -> list[dict]:
    return [{"_id": f"p{i}", "title": f"T{i}", "text": f"text of passage {i}", "meta": {"k": i}} for i in range(n)]


def test_jsonl_corpus_keeps_only_wanted_ids_and_reports_missing(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _corpus_rows()))
    got = read_passages(path, {"p3", "p40", "nope"}, block_size=256)
    assert got.reader == "jsonl (arrow)"
    assert got.texts == {"p3": ("T3", "text of passage 3"), "p40": ("T40", "text of passage 40")}
    assert got.missing == ["nope"]
    assert got.scanned == 50


def test_jsonl_corpus_with_numeric_ids_is_read_in_python(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for i in range(20):
            f.write(json.dumps({"id": i, "contents": f"c{i}"}) + "\n")
    got = read_passages(path, {"3", "19"})
    assert got.reader == "jsonl (python)"
    assert got.texts == {"3": ("", "c3"), "19": ("", "c19")}
    assert got.missing == []


def test_same_passages_from_every_format(tmp_path):
    rows = _corpus_rows(30)
    wanted = {"p1", "p7", "p29"}
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pd.DataFrame(rows).drop(columns="meta").to_parquet(tmp_path / "c.parquet")
    (tmp_path / "c.tsv").write_text("".join(f"{r['_id']}\t{r['text']}\t{r['title']}\n" for r in rows))
    (tmp_path / "h.tsv").write_text("id\ttitle\ttext\n" + "".join(f"{r['_id']}\t{r['title']}\t{r['text']}\n" for r in rows))
    results = [read_passages(tmp_path / name, wanted).texts for name in ("c.jsonl", "c.parquet", "c.tsv", "h.tsv")]
    assert all(r == results[0] for r in results)
    assert len(results[0]) == 3


def test_tsv_corpus_keeps_quotes_as_text(tmp_path):
    (tmp_path / "c.tsv").write_text('1\tsay "hello" to "x\n2\tplain\n')
    assert read_passages(tmp_path / "c.tsv", {"1"}).texts == {"1": ("", 'say "hello" to "x')}


def test_empty_passages_are_reported_not_kept(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"_id": "a", "text": ""}\n{"_id": "b", "text": "ok"}\n')
    got = read_passages(tmp_path / "c.jsonl", {"a", "b"})
    assert got.texts == {"b": ("", "ok")}
    assert got.empty == ["a"] and got.missing == []


def test_conflicting_duplicate_passage_is_an_error(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"_id": "a", "text": "one"}\n{"_id": "a", "text": "two"}\n')
    with pytest.raises(ParseError, match="appears twice"):
        read_passages(tmp_path / "c.jsonl", {"a"})
    (tmp_path / "same.jsonl").write_text('{"_id": "a", "text": "one"}\n{"_id": "a", "text": "one"}\n')
    assert read_passages(tmp_path / "same.jsonl", {"a"}).texts == {"a": ("", "one")}


def test_corpus_errors_are_typed(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"key": "a", "body": "x"}\n')
    with pytest.raises(ParseError, match=r"cannot find the passage id column .*pass id_col= to name it"):
        read_passages(tmp_path / "c.jsonl", {"a"})
    assert read_passages(tmp_path / "c.jsonl", {"a"}, id_col="key").texts == {"a": ("", "x")}
    (tmp_path / "c.xml").write_text("<a/>")
    with pytest.raises(ParseError, match="cannot tell the format"):
        read_passages(tmp_path / "c.xml", {"a"})
    with pytest.raises(ParseError, match="no such file"):
        read_passages(tmp_path / "nope.jsonl", {"a"})
    (tmp_path / "bad.jsonl").write_text('{"id": 1, "text": "x"}\n{"id": 2, "text": \n')
    with pytest.raises(ParseError, match=r"bad.jsonl:2"):
        read_passages(tmp_path / "bad.jsonl", {"1"})


# -- merged qrels -------------------------------------------------------------------------------------------


def _merged(tmp_path, suffix: str = ".parquet"):
    df = pd.DataFrame({
        "query": ["q1", "q1", "q1", "q2"],
        "doc": ["a", "a", "b", "c"],
        "grade": [2, 0, 1, 3],
        "origin": ["human", "llm", "llm", "human"],
        "assessor": [None, "openai:m (assess-graded-1)", "openai:m (assess-graded-1)", None],
    })
    path = tmp_path / f"merged{suffix}"
    if suffix == ".parquet":
        df.to_parquet(path)
    else:
        df.to_json(path, orient="records", lines=True)
    return path


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_read_qrels_takes_one_judgment_per_pair_by_policy(tmp_path, suffix):
    path = _merged(tmp_path, suffix)
    assert ragrade.read_qrels(path).to_dict() == {"q1": {"a": 2, "b": 1}, "q2": {"c": 3}}
    assert ragrade.read_qrels(path, prefer="llm").to_dict() == {"q1": {"a": 0, "b": 1}, "q2": {"c": 3}}
    with pytest.raises(ParseError, match=r"'q1' document 'a' is judged by both origins \((line|row) 1, (line|row) 2\)"):
        ragrade.read_qrels(path, prefer="error")
    with pytest.raises(InputError, match="prefer must be one of"):
        ragrade.read_qrels(path, prefer="robots")


def test_read_qrels_rejects_an_unknown_origin_with_its_line(tmp_path):
    (tmp_path / "m.jsonl").write_text('{"query": "q", "doc": "a", "grade": 1, "origin": "human"}\n'
                                      '{"query": "q", "doc": "b", "grade": 1, "origin": "crowd"}\n')
    with pytest.raises(ParseError, match=r"m.jsonl:2: origin must be 'human' or 'llm', found 'crowd'"):
        ragrade.read_qrels(tmp_path / "m.jsonl")


def test_duplicate_within_one_origin_is_still_an_error(tmp_path):
    (tmp_path / "m.jsonl").write_text('{"query": "q", "doc": "a", "grade": 1, "origin": "llm"}\n'
                                      '{"query": "q", "doc": "a", "grade": 2, "origin": "llm"}\n')
    with pytest.raises(ParseError):
        ragrade.read_qrels(tmp_path / "m.jsonl")


def test_tables_without_origin_are_unchanged(tmp_path):
    pd.DataFrame({"query": ["q"], "doc": ["a"], "grade": [2]}).to_parquet(tmp_path / "q.parquet")
    assert ragrade.read_qrels(tmp_path / "q.parquet").to_dict() == {"q": {"a": 2}}
