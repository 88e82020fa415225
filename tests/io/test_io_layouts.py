"""Layouts people actually have (issue 11, inputs 1-5): short first lines, three-column runs (scores or MS
MARCO ranks), two-column qrels, trec_eval's own quirks (extra run columns, comment lines), gzip told by
content, Parquet type errors, and infinite scores. Every reader path is exercised: the C scanner, pyarrow
on the whole file, and the careful chunked reader (small ``chunk_size``)."""

from __future__ import annotations

import gzip
import mmap

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ragrade
from ragrade import read_qrels, read_run
from ragrade._ingest import has_accel
from ragrade.errors import InputError, ParseError
from ragrade.io import FORMATS, guess_kind, write_run
from ragrade.io import trec as trec_mod

# chunk sizes: the default (fast C path, then pyarrow) and a tiny one (the careful chunked reader)
PATHS = [trec_mod.CHUNK_SIZE, 7]


def _lines(rows) -> str:
    return "".join(" ".join(str(x) for x in r) + "\n" for r in rows)


# -- 1. short first lines: a clean file:line error, never an IndexError ---------------------------------
@pytest.mark.parametrize("chunk", PATHS)
@pytest.mark.parametrize(("first", "words"), [
    ("q1 Q0 d1 1 0.5", "got 5"),
    ("q1 0 d1 1", "looks like a qrels line"),
    ("q1", "got 1"),
])
def test_short_first_line_is_a_clean_error(tmp_path, chunk, first, words):
    path = tmp_path / "run.trec"
    path.write_text("\n# a comment\n" + first + "\nq1 Q0 d2 2 0.4 t\n")
    with pytest.raises(ParseError, match=words) as info:
        read_run(path, chunk_size=chunk)
    assert info.value.line == 3 and info.value.text == first
    assert f"{path}:3:" in str(info.value)


def test_gzip_without_extension_with_a_short_first_line(tmp_path):
    path = tmp_path / "run.trec"  # gzip content, no .gz
    path.write_bytes(gzip.compress(b"q1 Q0 d1 1 0.5\n"))
    with pytest.raises(ParseError, match="got 5") as info:
        read_run(path)
    assert info.value.line == 1


def test_qrels_passed_as_run_and_run_passed_as_qrels(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("q1 0 d1 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q1 Q0 d1 1 0.5 tag\n")
    with pytest.raises(ParseError, match="looks like a qrels line"):
        read_run(q)
    with pytest.raises(ParseError, match="looks like a run line"):
        read_qrels(r)


# -- 2. three-column runs, MS MARCO ranks, two-column qrels ---------------------------------------------
@pytest.mark.parametrize("chunk", PATHS)
def test_three_column_scores(tmp_path, chunk):
    path = tmp_path / "dense.run"
    path.write_text(_lines([("q1", "d1", 0.9), ("q1", "d2", 0.95), ("q2", "d3", 3), ("q2", "d4", 7)]))
    run = read_run(path, chunk_size=chunk)
    assert run.to_lists() == {"q1": ["d2", "d1"], "q2": ["d4", "d3"]}
    assert run.name == "dense"  # no tag column: the file name


@pytest.mark.parametrize("chunk", PATHS)
@pytest.mark.parametrize(("name", "sep"), [("run.dev.tsv", "\t"), ("run.txt", " "), ("run_no_ext", "\t")])
def test_msmarco_ranks_are_sniffed(tmp_path, chunk, name, sep):
    # ranks 1, 2, 3 down each query: read as ranks (1 = best), not as scores (3 would come first)
    rows = [("1048585", "7187158", 1), ("1048585", "7187157", 2), ("1048585", "1", 3), ("2", "9", 1)]
    path = tmp_path / name
    path.write_text("".join(sep.join(str(x) for x in r) + "\n" for r in rows))
    run = read_run(path, chunk_size=chunk)
    assert run.to_lists() == {"1048585": ["7187158", "7187157", "1"], "2": ["9"]}
    assert run.scores is None


def test_msmarco_ranks_interleaved_queries_and_zero_based(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text(_lines([("a", "x", 0), ("b", "y", 1), ("a", "z", 1), ("b", "w", 2)]))
    assert read_run(path).to_lists() == {"a": ["x", "z"], "b": ["y", "w"]}


def test_integer_scores_written_best_first_are_scores(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text(_lines([("a", "x", 10), ("a", "y", 7), ("a", "z", 7), ("b", "w", 3)]))
    run = read_run(path)
    assert run.scores is not None and run.to_dict() == {"a": {"x": 10, "y": 7, "z": 7}, "b": {"w": 3}}


@pytest.mark.parametrize("name", ["run.txt", "run.tsv"])
def test_ambiguous_integers_ask_for_the_format(tmp_path, name):
    path = tmp_path / name
    sep = "\t" if name.endswith("tsv") else " "
    path.write_text("".join(sep.join(map(str, r)) + "\n" for r in [("a", "x", 1), ("a", "y", 2), ("b", "z", 9),
                                                                   ("b", "w", 4)]))
    with pytest.raises(ParseError, match="msmarco") as info:
        read_run(path)
    assert info.value.line == 2
    # explicit formats settle it either way
    assert read_run(path, format="msmarco").to_lists() == {"a": ["x", "y"], "b": ["w", "z"]}
    assert read_run(path, format="qid-doc-score").to_lists() == {"a": ["y", "x"], "b": ["z", "w"]}


def test_explicit_three_column_formats_need_three_columns(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 0.5 t\n")
    with pytest.raises(ParseError, match="expects 3"):
        read_run(path, format="msmarco")
    with pytest.raises(InputError, match="run layout"):
        read_qrels(path, format="qid-doc-score")


def test_formats_registry_lists_the_layouts():
    assert {"msmarco", "qid-doc-score"} <= set(FORMATS)


@pytest.mark.parametrize("chunk", PATHS)
@pytest.mark.parametrize("name", ["qrels.txt", "qrels.qrels", "qrels_no_ext"])
def test_two_column_qrels(tmp_path, chunk, name):
    path = tmp_path / name
    path.write_text("q1 d1\nq1\td2\nq2 d9\n")
    q = read_qrels(path, chunk_size=chunk)
    assert q.to_dict() == {"q1": {"d1": 1, "d2": 1}, "q2": {"d9": 1}}
    assert guess_kind(path) == "qrels"


def test_two_column_tsv_qrels_need_to_say_they_have_no_header(tmp_path):
    # a first row of two words may be a header: a .tsv says which with header=False or format="trec"
    path = tmp_path / "qrels.tsv"
    path.write_text("q1\td1\nq1\td2\n")
    expected = {"q1": {"d1": 1, "d2": 1}}
    assert read_qrels(path, header=False).to_dict() == expected
    assert read_qrels(path, format="trec").to_dict() == expected
    with pytest.raises(ParseError, match="cannot find the query column"):
        read_qrels(path)


def test_two_column_run_is_ranked_in_file_order(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 d3\nq1 d1\nq2 d2\n")
    assert read_run(path).to_lists() == {"q1": ["d3", "d1"], "q2": ["d2"]}


def test_msmarco_writer_round_trips(tmp_path):
    run = ragrade.Run.from_dict({"q1": {"a": 0.3, "b": 0.9}, "q2": {"c": 1.0}})
    out = tmp_path / "out.tsv"
    write_run(run, out, format="msmarco")
    assert out.read_text() == "q1\tb\t1\nq1\ta\t2\nq2\tc\t1\n"
    assert read_run(out, format="msmarco").to_lists() == run.to_lists()
    write_run(run, out, format="qid-doc-score")
    assert read_run(out, format="qid-doc-score").to_dict() == run.to_dict()


# -- 2b. trec_eval's own inputs -------------------------------------------------------------------------
def _trec_eval_files(tmp_path):
    qrels = tmp_path / "qrels.test"
    qrels.write_text("# judged by assessor 7\n1 0 a 1\n1 0 b 0\n#comment in the middle\n1 0 c 2\n2 0 x 1\n"
                     "2 0 y#1 1\n")
    run = tmp_path / "results.test"
    run.write_text("# run of system S\n1\tQ0\ta\t1\t  2.5\tS\textra words here\n1 Q0 c 2 1.5 S\n"
                   "   # an indented comment\n1 Q0 b 3 1.0 S 7\n2 Q0 y#1 1 9 S\n2 Q0 x 2 8 S\n")
    plain_q = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"x": 1, "y#1": 1}}
    plain_r = {"1": {"a": 2.5, "c": 1.5, "b": 1.0}, "2": {"y#1": 9.0, "x": 8.0}}
    return qrels, run, plain_q, plain_r


@pytest.mark.parametrize("chunk", PATHS)
def test_trec_eval_quirks_read_as_trec_eval_reads_them(tmp_path, chunk):
    qrels, run, plain_q, plain_r = _trec_eval_files(tmp_path)
    q = read_qrels(qrels, chunk_size=chunk)
    r = read_run(run, chunk_size=chunk)
    assert q.to_dict() == plain_q
    assert r.to_dict() == plain_r
    assert r.name == "S"
    a = ragrade.evaluate(q, r, ["ndcg@10", "map", "P@2"]).means
    b = ragrade.evaluate(plain_q, plain_r, ["ndcg@10", "map", "P@2"]).means
    assert a == b


def test_trec_eval_quirks_match_pytrec_eval(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run, plain_q, plain_r = _trec_eval_files(tmp_path)
    ours = ragrade.evaluate(read_qrels(qrels), read_run(run), ["map", "ndcg"], no_relevant="zero").per_query
    theirs = pytrec_eval.RelevanceEvaluator(plain_q, {"map", "ndcg"}).evaluate(plain_r)
    for qid, row in theirs.items():
        assert ours.loc[qid, "map"] == pytest.approx(row["map"], abs=1e-12)
        assert ours.loc[qid, "ndcg"] == pytest.approx(row["ndcg"], abs=1e-12)


@pytest.mark.parametrize("chunk", PATHS)
def test_a_comment_line_with_six_fields_is_still_a_comment(tmp_path, chunk):
    # the C scanner would take '# a b 1 2 c' as a line: it must decline, and every path skips it
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2 t\n# Q0 d9 1 99 t\nq1 Q0 d2 2 1 t\n")
    assert read_run(path, chunk_size=chunk).to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}}


def test_qrels_line_with_extra_column_is_refused_like_trec_eval(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 1 extra\n")
    with pytest.raises(ParseError, match="got 5") as info:
        read_qrels(path)
    assert info.value.line == 2


@pytest.mark.parametrize("chunk", PATHS)
def test_a_last_comment_line_without_a_newline(tmp_path, chunk):
    # the last chunk is then a comment and nothing else: read as no lines, not as a parse error
    run, qrels = tmp_path / "run.txt", tmp_path / "q.txt"
    run.write_text("q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n# the end")
    qrels.write_text("q1 0 d1 1\n#  the end  ")
    assert read_run(run, chunk_size=chunk).to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}}
    assert read_qrels(qrels, chunk_size=chunk).to_dict() == {"q1": {"d1": 1.0}}


def test_only_comments_is_an_empty_file(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("# nothing\n\n# here\n")
    with pytest.raises(ParseError, match="empty"):
        read_run(path)


def test_errors_after_comments_name_the_physical_line(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("# c\nq1 0 d1 1\n# c\n\nq1 0 d1 2\n")
    with pytest.raises(ParseError, match="judged twice") as info:
        read_qrels(path)
    assert info.value.line == 5


# -- 3. gzip by content --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["run.trec", "run.tsv", "run", "run.jsonl", "run.csv"])
def test_gzip_detected_by_magic_bytes(tmp_path, name):
    body = {"run.trec": "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n", "run.tsv": "query\tdoc\tscore\nq1\td1\t2.5\nq1\td2\t1.5\n",
            "run": "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n",
            "run.jsonl": '{"query": "q1", "doc": "d1", "score": 2.5}\n{"query": "q1", "doc": "d2", "score": 1.5}\n',
            "run.csv": "query,doc,score\nq1,d1,2.5\nq1,d2,1.5\n"}[name]
    path = tmp_path / name
    path.write_bytes(gzip.compress(body.encode()))
    assert read_run(path).to_dict() == {"q1": {"d1": 2.5, "d2": 1.5}}


@pytest.mark.parametrize("name", ["run.trec.gz", "run.tsv.gz"])
def test_plain_text_named_gz_is_read_as_text(tmp_path, name):
    path = tmp_path / name
    path.write_text("q1 Q0 d1 1 2.5 t\n" if "trec" in name else "query\tdoc\tscore\nq1\td1\t2.5\n")
    assert read_run(path).to_dict() == {"q1": {"d1": 2.5}}


def test_writers_still_compress_by_name(tmp_path):
    run = ragrade.Run.from_dict({"q1": {"d1": 1.0}})
    out = tmp_path / "out.trec.gz"
    write_run(run, out)
    assert out.read_bytes()[:2] == b"\x1f\x8b"


# -- 4. Parquet: typed errors naming file, column, type; rows and values -------------------------------
def test_parquet_list_typed_id_column(tmp_path):
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": ["q1"], "doc_id": [["d1", "d2"]], "score": [1.0]}), path)
    with pytest.raises(ParseError) as info:
        read_run(path)
    msg = str(info.value)
    assert str(path) in msg and "'doc_id'" in msg and "list<" in msg and "list_col='doc_id'" in msg


@pytest.mark.parametrize(("column", "values", "what"), [
    ("query", [{"a": 1}], "query id"),
    ("query", [True], "query id"),
    ("doc", [[1, 2]], "document id"),
])
def test_parquet_id_column_types(tmp_path, column, values, what):
    cols = {"query": ["q1"], "doc": ["d1"], "score": [1.0]}
    cols[column] = values
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table(cols), path)
    with pytest.raises(ParseError, match=f"the {what} column '{column}' holds") as info:
        read_run(path)
    assert str(path) in str(info.value)


def test_parquet_errors_name_row_and_value(tmp_path):
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query": ["q1", "q1", "q2"], "doc": ["a", "b", "c"], "score": ["1", "2", "high"]}),
                   path)
    with pytest.raises(ParseError, match="score is not a number") as info:
        read_run(path)
    assert "row 3" in str(info.value) and "'high'" in str(info.value)
    path2 = tmp_path / "qrels.parquet"
    pq.write_table(pa.table({"query": ["q1", "q1"], "doc": ["a", None], "grade": [1, 1]}), path2)
    with pytest.raises(ParseError, match="missing document id") as info:
        read_qrels(path2)
    assert "row 2" in str(info.value) and "query='q1'" in str(info.value)


def test_corrupt_parquet_is_a_parse_error(tmp_path):
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query": ["q1"], "doc": ["a"], "score": [1.0]}), path)
    data = path.read_bytes()
    path.write_bytes(data[:8] + b"\0" * 40 + data[48:])
    with pytest.raises(ParseError, match="Parquet"):
        read_run(path)


# -- 5. +-inf and overflowing scores: ranked, and counted -----------------------------------------------
@pytest.mark.parametrize("chunk", PATHS)
@pytest.mark.parametrize(("top", "bottom"), [("1e400", "-1e400"), ("inf", "-inf"), ("Infinity", "-Infinity")])
def test_infinite_scores_are_ranked_and_counted(tmp_path, chunk, top, bottom):
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 mid 1 0.5 t\nq1 Q0 best 2 {top} t\nq1 Q0 worst 3 {bottom} t\nq2 Q0 z 1 1 t\n")
    run = read_run(path, chunk_size=chunk)
    assert run.to_lists()["q1"] == ["best", "mid", "worst"]
    assert run.nonfinite_scores == 2


@pytest.mark.parametrize("fmt", ["tsv", "jsonl", "parquet"])
def test_infinite_scores_in_tables(tmp_path, fmt):
    path = tmp_path / f"run.{fmt}"
    if fmt == "tsv":
        path.write_text("query\tdoc\tscore\nq1\ta\t1e400\nq1\tb\t0.5\n")
    elif fmt == "jsonl":
        path.write_text('{"query": "q1", "doc": "a", "score": 1e400}\n{"query": "q1", "doc": "b", "score": 0.5}\n')
    else:
        pq.write_table(pa.table({"query": ["q1", "q1"], "doc": ["a", "b"], "score": [np.inf, 0.5]}), path)
    run = read_run(path)
    assert run.to_lists() == {"q1": ["a", "b"]}
    assert run.nonfinite_scores == 1


def test_nonfinite_scores_of_dicts_and_ranked_lists():
    assert ragrade.Run.from_dict({"q": {"a": float("inf"), "b": -float("inf"), "c": 1.0}}).nonfinite_scores == 2
    assert ragrade.Run.from_lists([["a", "b"]]).nonfinite_scores == 0


# -- 14. portable mmap: the readers never use the Unix-only mmap flags ----------------------------------
def test_readers_use_only_the_portable_mmap_api(tmp_path, monkeypatch):
    real = mmap.mmap

    def windows_like(fileno, length, *args, **kwargs):  # Windows' mmap has no flags= / prot=
        if args or set(kwargs) - {"access", "tagname", "offset"}:
            raise TypeError("flags/prot are Unix-only")
        return real(fileno, length, **kwargs)

    monkeypatch.setattr(mmap, "mmap", windows_like)
    for name in ("MAP_SHARED", "MAP_POPULATE", "PROT_READ"):
        monkeypatch.delattr(mmap, name, raising=False)
    path = tmp_path / "crlf.trec"
    path.write_bytes(b"q1 Q0 d1 1 2 t\r\nq1 Q0 d2 2 1 t\r\n")
    assert read_run(path).to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}}
    path2 = tmp_path / "plain.trec"
    path2.write_bytes(b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    assert read_run(path2).to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}}


@pytest.mark.skipif(not has_accel(), reason="the C helper is not built")
def test_without_the_file_map_the_scanner_uses_python_mmap(tmp_path, monkeypatch):
    from ragrade import _ingest

    real = _ingest._accel
    calls = []

    class NoFileMap:  # a build without FileMap (Windows): Python's mmap, no page release
        def __getattr__(self, name):
            if name == "FileMap":
                raise AttributeError(name)
            return getattr(real, name)

        def scan_trec(self, buf, *args):
            calls.append((type(buf), args[5]))
            return real.scan_trec(buf, *args)

    monkeypatch.setattr(_ingest, "_accel", NoFileMap())
    path = tmp_path / "run.trec"
    path.write_text("".join(f"q{i // 3} Q0 d{i} {i} {100 - i} t\n" for i in range(30)))
    scanned = trec_mod._scan_fast(str(path), trec_mod.RUN6, None)
    assert scanned is not None and len(scanned.values) == 30
    assert calls and all(kind is mmap.mmap and release is False for kind, release in calls)


@pytest.mark.skipif(not has_accel(), reason="the C helper is not built")
def test_pages_are_released_only_from_the_modules_own_mapping():
    from ragrade import _ingest

    accel = _ingest._accel
    data = bytearray(b"q Q0 d 1 2 t\n" * 1000)
    outs = [np.empty(2000), np.empty(2001, np.int64), np.empty(20000, np.uint8), np.empty(2000, np.int64),
            np.empty(2001, np.int64), np.empty(20000, np.uint8), np.array([0, 0, 0, 0, -1, 0, 0, -1], np.int64)]
    for buf in (bytes(data), data, mmap.mmap(-1, len(data))):
        with pytest.raises(ValueError, match="FileMap"):
            accel.scan_trec(buf, 0, len(data), 6, 4, 2, True, *outs)
    accel.scan_trec(bytes(data), 0, len(data), 6, 4, 2, False, *outs)  # without release: fine
    assert outs[6][0] == 1000 and outs[6][6] == 0
