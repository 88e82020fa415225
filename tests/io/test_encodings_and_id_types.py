"""Issue 34, items 8 and 9: what a text reader is given that is not UTF-8 text, and ids of the wrong JSON type.

* A UTF-16 or UTF-32 file (with or without a byte-order mark, plain or gzipped) in every text format (TREC
  run and qrels, TSV, CSV, JSON Lines) is refused naming the encoding and how to convert it: not "wrong
  columns at a line past the end" with NUL bytes in the message.
* A binary file named as text (Parquet or Arrow named .tsv/.txt/.jsonl, a ZIP) is recognised by its magic
  bytes and said to be what it is, with no binary in the message.
* A Latin-1 file is refused naming the line and the byte (JSON Lines included, which pyarrow let through).
* A JSON Lines id that is an object, a boolean or a non-whole number is refused on both reader paths (Arrow,
  and the line-by-line reader taken when a field mixes types), naming the line; whole numbers are ids.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.errors import ParseError
from ragrade.io._common import text_problem

TEXTS = {
    "run.txt": "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d3 1 0.7 r\n",
    "qrels.txt": "q1 0 d1 1\nq2 0 d3 2\n",
    "run.tsv": "query\tdoc\tscore\nq1\td1\t0.9\nq2\td3\t0.7\n",
    "run.csv": "query,doc,score\nq1,d1,0.9\nq2,d3,0.7\n",
    "run.jsonl": '{"query": "q1", "doc": "d1", "score": 0.9}\n{"query": "q2", "doc": "d3", "score": 0.7}\n',
}
ENCODINGS = {  # codec -> words the message must hold
    "utf-16": "UTF-16 (little-endian, with a byte-order mark)",
    "utf-16-le": "UTF-16 (little-endian, no byte-order mark)",
    "utf-16-be": "UTF-16 (big-endian, no byte-order mark)",
    "utf-32": "UTF-32 (little-endian, with a byte-order mark)",
    "utf-32-be": "UTF-32 (big-endian, no byte-order mark)",
}


def _read(path: Path):
    return ragrade.read_qrels(path) if "qrels" in path.name else ragrade.read_run(path)


@pytest.mark.parametrize("name", list(TEXTS))
@pytest.mark.parametrize("codec", list(ENCODINGS))
@pytest.mark.parametrize("gz", [False, True])
def test_utf16_and_utf32_are_named(tmp_path, name, codec, gz):
    data = TEXTS[name].encode(codec)
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(ParseError) as info:
        _read(path)
    msg = str(info.value)
    assert ENCODINGS[codec] in msg and "iconv" in msg, msg
    assert "\x00" not in msg and "columns" not in msg


def test_the_command_line_says_the_encoding(tmp_path):
    (tmp_path / "qrels.txt").write_text(TEXTS["qrels.txt"])
    (tmp_path / "run.tsv").write_bytes(TEXTS["run.tsv"].encode("utf-16"))
    res = CliRunner().invoke(main, ["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "run.tsv"), "-m", "P@5"])
    assert res.exit_code == 2
    assert "encoded in UTF-16" in res.output and "\x00" not in res.output


TABLE = pa.table({"query": ["q1", "q2"], "doc": ["d1", "d3"], "score": [0.9, 0.7]})


@pytest.mark.parametrize("name", ["run.tsv", "run.txt", "run.jsonl", "run.csv"])
@pytest.mark.parametrize("kind", ["parquet", "arrow"])
def test_a_binary_format_named_as_text_is_recognised(tmp_path, name, kind):
    path = tmp_path / name
    if kind == "parquet":
        pq.write_table(TABLE, path)
    else:
        feather.write_feather(TABLE, path)
    with pytest.raises(ParseError) as info:
        ragrade.read_run(path)
    msg = str(info.value)
    assert f"read it as {kind}" in msg and "not text" in msg, msg
    assert "\x00" not in msg and "PAR1" not in msg
    assert ragrade.read_run(path, format=kind).n_rows == 2  # read as what it is, it is fine


def test_other_binary_files_are_named():
    assert "ZIP archive" in (text_problem(b"PK\x03\x04rest") or "")
    assert "SQLite" in (text_problem(b"SQLite format 3\x00...") or "")
    assert text_problem(b"BZh91AY&SY") is not None and text_problem(b"BZh query") is None
    assert text_problem(b"q1 Q0 d1 1 0.5 r\n") is None
    assert text_problem(b"q1 Q0 d\x00 1 0.5 r\n") is None  # one NUL in an id: the readers name its line


@pytest.mark.parametrize("name", ["run.tsv", "run.csv", "run.jsonl", "run.txt"])
def test_latin1_is_refused_naming_the_line(tmp_path, name):
    text = TEXTS[name].replace("d3", "d\u00e9")
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ParseError) as info:
        ragrade.read_run(path)
    assert info.value.line is not None
    assert "UTF-8" in str(info.value)


# -- id types in JSON Lines, on both reader paths ---------------------------------------------------------

BAD_IDS = {"an object": {"a": 1}, "a boolean": True, "a number": 1.5, "infinity": 1e400}


def _jsonl(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("field", ["query", "doc"])
@pytest.mark.parametrize("what", list(BAD_IDS))
@pytest.mark.parametrize("path_kind", ["arrow", "line by line"])
def test_a_json_id_of_another_type_is_refused_on_every_path(tmp_path, field, what, path_kind):
    rows = [{"query": "q1", "doc": "d1", "score": 0.5}]
    bad = {"query": "q2", "doc": "d2", "score": 0.4, field: BAD_IDS[what]}
    rows = [bad] if path_kind == "arrow" else [*rows, bad]  # a string first: the field mixes types
    path = _jsonl(tmp_path, rows)
    for read in (ragrade.read_run, ragrade.read_qrels):
        with pytest.raises(ParseError) as info:
            read(path)
        assert info.value.path is not None
        if path_kind == "line by line" or what in ("a number", "infinity"):
            assert info.value.line == len(rows), str(info.value)


@pytest.mark.parametrize("path_kind", ["arrow", "line by line"])
def test_whole_numbers_are_ids_on_every_path(tmp_path, path_kind):
    rows = [{"query": 7, "doc": 12.0, "score": 0.5}]
    if path_kind == "line by line":
        rows.insert(0, {"query": "q1", "doc": "d1", "score": 0.9})
    run = ragrade.read_run(_jsonl(tmp_path, rows))
    assert "7" in run.query_ids.tolist() and "12" in [str(d) for d in run.doc_vocab]


def test_a_mixed_score_field_names_both_types(tmp_path):
    path = _jsonl(tmp_path, [{"query": "q1", "doc": "d1", "score": 0.5}, {"query": "q1", "doc": "d2", "score": [1]}])
    with pytest.raises(ParseError, match="'score' is a list here but a number on earlier lines"):
        ragrade.read_run(path)
