"""Span files, chunk maps and corpora: every format of the registry, and every bad input the issue lists as a
clear error (or a documented note) naming the row, the query, the document and the offsets."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import ragrade
from ragrade.errors import InputError, ParseError, RagradeWarning
from ragrade.spans import read_chunks, read_corpus, read_spans, write_chunks, write_spans

CORPUS = {"a": "alpha beta gamma delta", "b": "epsilon zeta eta", "e": ""}
ROWS = [{"query": "q1", "doc": "a", "start": 6, "end": 10, "text": "beta"},
        {"query": "q1", "doc": "b", "start": 0, "end": 7, "grade": 2, "text": "epsilon"},
        {"query": "q2", "doc": "a", "start": 0, "end": 5}]


@pytest.mark.parametrize("ext", ["jsonl", "csv", "tsv", "parquet"])
def test_spans_and_chunks_round_trip_through_every_format(tmp_path: Path, ext: str) -> None:
    rows = [{k: v for k, v in r.items() if k != "text"} for r in ROWS]
    truth = read_spans(rows, corpus=CORPUS)
    write_spans(truth, tmp_path / f"s.{ext}")
    back = read_spans(tmp_path / f"s.{ext}", corpus=CORPUS)
    assert back.to_rows() == truth.to_rows()
    chunks = ragrade.ChunkMap.from_columns(["a#0", "b#0"], ["a", "b"], [0, 0], [10, 16])
    write_chunks(chunks, tmp_path / f"c.{ext}")
    again = read_chunks(tmp_path / f"c.{ext}", corpus=CORPUS)
    assert again.chunk_id.tolist() == ["a#0", "b#0"] and again.end.tolist() == [10, 16]


def test_spelled_columns_and_segment_ids(tmp_path: Path) -> None:
    """Other spellings of the columns (MS MARCO v2.1 segments: docid#n, start_char, end_char; no doc column)."""
    p = tmp_path / "segments.jsonl"
    p.write_text('{"docid": "a#0", "start_char": 0, "end_char": 5, "segment": "alpha"}\n'
                 '{"docid": "a#1", "start_char": 6, "end_char": 10, "segment": "beta"}\n', encoding="utf-8")
    chunks = read_chunks(p, corpus=CORPUS)
    assert chunks.doc.tolist() == ["a", "a"] and chunks.text is not None
    s = tmp_path / "s.csv"
    s.write_text("qid,document,start_index,end_index\nq,a,0,5\n", encoding="utf-8")
    assert read_spans(s).doc.tolist() == ["a"]


def _error(rows: list[dict], match: str, corpus: dict | None = CORPUS) -> None:
    with pytest.raises(InputError, match=match):
        read_spans(rows, corpus=corpus)


def test_bad_spans_are_clear_errors_naming_the_row() -> None:
    _error([{"query": "q", "doc": "a", "start": 20, "end": 30}], r"row 1: query 'q': span \[20, 30\) of document "
                                                                   r"'a' ends past the end of the document \(22")
    _error([{"query": "q", "doc": "a", "start": 5, "end": 3}], r"row 1: start 5 is after end 3 \(query 'q', document 'a'\)")
    _error([ROWS[0], {"query": "q", "doc": "zz", "start": 0, "end": 1}], r"row 2: query 'q' has a span in document "
                                                                          r"'zz', which the corpus does not have")
    _error([{"query": "q", "doc": "a", "start": 0, "end": 4, "text": "beta"}],
           r"row 1: query 'q': the span's text does not match document 'a' at \[0, 4\): the span says 'beta', the "
           r"document has 'alph'")
    _error([{"query": "q", "doc": "e", "start": 0, "end": 1}], "document 'e', which is empty")
    _error([{"query": "q", "doc": "a", "start": 2, "end": 2}], r"empty span \[2, 2\)")
    _error([{"query": "q", "doc": "a", "start": -1, "end": 2}], "negative start")
    _error([{"query": "q", "doc": "a", "start": "x", "end": 2}], "start must be an integer")
    _error([{"query": "", "doc": "a", "start": 0, "end": 2}], "row 1: empty query id")


def test_a_text_without_corpus_is_checked_for_its_length() -> None:
    with pytest.raises(InputError, match="the span's text has 4 characters but"):
        read_spans([{"query": "q", "doc": "a", "start": 0, "end": 3, "text": "beta"}]).check()


def test_overlapping_gold_spans_are_a_note_or_an_error() -> None:
    rows = [{"query": "q", "doc": "a", "start": 0, "end": 10}, {"query": "q", "doc": "a", "start": 5, "end": 12}]
    truth = read_spans(rows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RagradeWarning)
        truth.check(CORPUS)
    assert any("row 2: query 'q' has overlapping gold spans in document 'a'" in str(w.message) for w in caught)
    with pytest.raises(InputError, match="overlapping gold spans"):
        truth.check(CORPUS, overlapping="error")
    read_spans([{"query": "q", "doc": "a", "start": 0, "end": 5}, {"query": "q", "doc": "a", "start": 5, "end": 9}]
               ).check(CORPUS, overlapping="error")  # touching is not overlapping


def test_chroma_csv_with_broken_references(tmp_path: Path) -> None:
    p = tmp_path / "questions_df.csv"
    p.write_text('question,references,corpus_id\n"Q?","[{""content"": ""beta"", ""start_index"": 6, '
                 '""end_index"": 10}]",a\n"R?","not json",a\n', encoding="utf-8")
    with pytest.raises(ParseError, match="row 2: the references are not a JSON list"):
        read_spans(p)
    p.write_text('question,references,corpus_id\n"Q?","[{""content"": ""gamma"", ""start_index"": 6, '
                 '""end_index"": 10}]",a\n', encoding="utf-8")
    with pytest.raises(InputError, match="the span's text does not match document 'a'"):
        read_spans(p, corpus=CORPUS)


def test_chunk_maps_refuse_repeated_ids_and_chunks_past_the_end() -> None:
    with pytest.raises(InputError, match="row 2: chunk id 'x' appears twice"):
        read_chunks([{"chunk_id": "x", "doc": "a", "start": 0, "end": 2}, {"chunk_id": "x", "doc": "a", "start": 2,
                                                                              "end": 4}])
    with pytest.raises(InputError, match="ends at 99, past the end of document 'a'"):
        read_chunks([{"chunk_id": "x", "doc": "a", "start": 0, "end": 99}], corpus=CORPUS)
    with pytest.raises(ParseError, match="no document column and chunk id 'x' holds no '#'"):
        read_chunks([{"chunk_id": "x", "start": 0, "end": 2}])


def test_corpus_folders_and_files(tmp_path: Path) -> None:
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "one.md").write_text("first\r\nline", encoding="utf-8")
    (tmp_path / "docs" / "sub" / "two.txt").write_text("second", encoding="utf-8")
    (tmp_path / "docs" / ".hidden.md").write_text("x", encoding="utf-8")
    corpus = read_corpus(tmp_path / "docs")
    assert dict(corpus) == {"one": "first\nline", "sub/two": "second"}
    (tmp_path / "docs" / "one.txt").write_text("clash", encoding="utf-8")
    with pytest.raises(InputError, match="would both be document 'one'"):
        read_corpus(tmp_path / "docs")
    f = tmp_path / "corpus.jsonl"
    f.write_text('{"_id": "a", "text": "alpha"}\n{"_id": "b", "text": ""}\n', encoding="utf-8")
    assert dict(read_corpus(f)) == {"a": "alpha", "b": ""}
    with pytest.raises(InputError, match="holds no files"):
        read_corpus(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"
