"""Every bad-input case raises ParseError naming the file, the 1-based line and the offending text."""

from __future__ import annotations

import gzip

import pytest

from ragrade import read_qrels, read_run
from ragrade.errors import InputError, ParseError

GOOD_RUN = "".join(f"q{i} Q0 d{i} 1 {i}.5 t\n" for i in range(1, 40))
GOOD_QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(1, 40))


def _check(exc: ParseError, path, line: int | None, text: str | None, words: str) -> None:
    msg = str(exc)
    assert exc.path == str(path)
    assert str(path) in msg
    assert exc.line == line
    if line is not None:
        assert f"{path}:{line}:" in msg
    if text is not None:
        assert exc.text is not None and text in exc.text
        assert text in msg or repr(text)[1:-1] in msg  # the message shows the text with repr()
    assert words in msg


def _insert(good: str, at: int, bad: str) -> str:
    lines = good.splitlines(keepends=True)
    return "".join(lines[: at - 1]) + bad + "\n" + "".join(lines[at - 1 :])


# (reader, file name, content, expected line, expected text, words in the message)
CASES = [
    ("run", "r.trec", _insert(GOOD_RUN, 17, "q9 Q0 d9 1 0.5"), 17, "q9 Q0 d9 1 0.5", "expected 6"),
    # (a run line may have extra columns after the tag, as trec_eval reads it; a qrels line may not)
    ("qrels", "q.qrels", _insert(GOOD_QRELS, 3, "q9 0 d9 1 extra"), 3, "q9 0 d9 1 extra", "got 5"),
    ("run", "r.trec", _insert(GOOD_RUN, 3, "q9 Q0 d9 1"), 3, "q9 Q0 d9 1", "got 4"),
    ("run", "r.trec", _insert(GOOD_RUN, 25, "q9 Q0 d9 1 high t"), 25, "high", "score is not a number"),
    ("run", "r.trec", _insert(GOOD_RUN, 30, "q9 Q0 d9 1 nan t"), 30, "q9 Q0 d9 1 nan t", "NaN"),
    ("run", "r.trec", _insert(GOOD_RUN, 30, "q9 Q0 d9 1 NaN t"), 30, "NaN", "NaN"),
    ("qrels", "q.qrels", _insert(GOOD_QRELS, 12, "q9 0 d9"), 12, "q9 0 d9", "expected 4"),
    ("qrels", "q.qrels", _insert(GOOD_QRELS, 8, "q9 0 d9 yes"), 8, "q9 0 d9 yes", "grade is not a number"),
    ("qrels", "q.qrels", GOOD_QRELS + "q5 0 d5 2\n", 40, "q5 0 d5 2", "judged twice"),
    ("qrels", "q.qrels", _insert(GOOD_QRELS, 2, "q9 0 d9 inf"), 2, "q9 0 d9 inf", "not a finite"),
]


@pytest.mark.parametrize("chunk_size", [16, 1 << 20])
@pytest.mark.parametrize(("kind", "name", "content", "line", "text", "words"), CASES)
def test_trec_errors(tmp_path, kind, name, content, line, text, words, chunk_size):
    path = tmp_path / name
    path.write_text(content)
    reader = read_run if kind == "run" else read_qrels
    with pytest.raises(ParseError) as info:
        reader(path, chunk_size=chunk_size)
    _check(info.value, path, line, text, words)


def test_error_line_counts_blank_lines(tmp_path):
    path = tmp_path / "r.trec"
    path.write_text("q1 Q0 d1 1 1 t\n\n\n  \nq1 Q0 d2 1 x t\n")
    with pytest.raises(ParseError) as info:
        read_run(path, chunk_size=8)
    _check(info.value, path, 5, "q1 Q0 d2 1 x t", "not a number")


def test_error_in_gzipped_file(tmp_path):
    path = tmp_path / "r.trec.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(_insert(GOOD_RUN, 9, "broken line"))
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 9, "broken line", "expected 6")


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
@pytest.mark.parametrize("name", ["r.trec", "r.tsv", "r.csv", "r.jsonl", "r.trec.gz"])
def test_empty_file(tmp_path, content, name):
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(content)
    else:
        path.write_text(content)
    with pytest.raises(ParseError, match="empty") as info:
        read_run(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ParseError, match="no such file") as info:
        read_qrels(tmp_path / "nope.qrels")
    assert "nope.qrels" in str(info.value)


def test_parse_error_is_an_input_error(tmp_path):
    path = tmp_path / "q.qrels"
    path.write_text("q1 0 d1\n")
    with pytest.raises(InputError):
        read_qrels(path)


# -- tables ----------------------------------------------------------------------------------------------
def test_tsv_wrong_column_count(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("query\tdoc\tscore\nq1\td1\t0.5\nq1\td2\n")
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 3, "q1\td2", "expected 3 columns")


def test_csv_non_numeric_score(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("query,doc,score\nq1,d1,0.5\nq1,d2,lots\n")
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 3, "q1,d2,lots", "score is not a number")


def test_csv_nan_score_and_missing_doc(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("query,doc,score\nq1,d1,0.5\nq1,d2,nan\n")
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 3, "q1,d2,nan", "NaN")
    path.write_text("query,doc,score\nq1,d1,0.5\nq1,,0.2\n")
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 3, "q1,,0.2", "document id")


def test_tsv_duplicate_judgment(tmp_path):
    path = tmp_path / "q.tsv"
    path.write_text("query\tdoc\tgrade\nq1\td1\t1\nq2\td1\t1\nq1\td1\t2\n")
    with pytest.raises(ParseError) as info:
        read_qrels(path)
    _check(info.value, path, 4, "q1\td1\t2", "judged twice")


def test_missing_column_names_what_was_found(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("question\tpassage\tscore\nq1\td1\t1\n")
    with pytest.raises(ParseError) as info:
        read_run(path)
    assert "query" in str(info.value) and "question" in str(info.value) and str(path) in str(info.value)
    assert read_run(path, query_col="question", doc_col="passage").to_dict() == {"q1": {"d1": 1.0}}


def test_jsonl_invalid_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"query": "q1", "doc": "d1", "score": 1}\n{"query": "q1", "doc": "d2", "score": \n')
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 2, '{"query": "q1", "doc": "d2", "score":', "invalid JSON")


def test_jsonl_non_numeric_score(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"query": "q1", "doc": "d1", "score": 1}\n{"query": "q1", "doc": "d2", "score": "x"}\n')
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 2, '"score": "x"', "score is not a number")


def test_jsonl_lists_of_different_lengths(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"query": "q1", "retrieved": ["a", "b"], "scores": [1, 2]}\n'
                    '{"query": "q2", "retrieved": ["a", "b"], "scores": [1]}\n')
    with pytest.raises(ParseError) as info:
        read_run(path)
    _check(info.value, path, 2, '"q2"', "different lengths")


def test_unknown_reader_option(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("query\tdoc\tscore\nq1\td1\t1\n")
    with pytest.raises(InputError, match="unknown reader option"):
        read_run(path, querycol="x")
