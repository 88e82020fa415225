"""Well over 150 bad or tricky inputs, fed to the readers, to ``ragrade.evaluate`` on paths and to
``ragrade evaluate`` on the command line (issue 11, "Done when"). Each must end in a ragrade error that
names the file, the line (or, for Parquet, the row) and the offending text or value -- never a bare
traceback and never a silently wrong value. The few inputs that are legitimately read (control bytes
inside ids, which trec_eval keeps too) are checked value by value.
"""

from __future__ import annotations

import gzip
import json
import warnings
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import ragrade
from ragrade import read_qrels, read_run
from ragrade.cli import main
from ragrade.errors import RagradeError

GOOD_RUN = [f"q{i // 4} Q0 d{i} {i % 4 + 1} {10 - i % 4}.5 sys" for i in range(40)]
GOOD_QRELS = [f"q{i // 4} 0 d{i} {i % 3}" for i in range(40)]


@dataclass
class Case:
    id: str
    kind: str  # which file is bad: "run" or "qrels"
    name: str  # its file name
    data: bytes | None  # None: make it with `make`
    line: int | None = None  # the line the error must name (None: no line, e.g. a whole-file problem)
    words: tuple[str, ...] = ()  # in the message: what went wrong, and the offending text or value
    make: object = None  # callable(path) writing a binary file (Parquet)
    ok: dict | None = field(default=None)  # the input is legitimate: the expected to_dict()


def _insert(lines: list[str], at: int, bad: str, last_newline: bool = True) -> bytes:
    out = [*lines[: at - 1], bad, *lines[at - 1:]]
    return ("\n".join(out) + ("\n" if last_newline else "")).encode("utf-8", errors="surrogateescape")


def _line_cases() -> list[Case]:
    cases: list[Case] = []
    run_bad = {
        "5 fields": ("q9 Q0 d9 1 0.5", ("got 5",)),
        "4 fields": ("q9 Q0 d9 1", ("got 4",)),
        "1 field": ("q9", ("got 1",)),
        "word score": ("q9 Q0 d9 1 high sys", ("not a number", "high")),
        "comma score": ("q9 Q0 d9 1 1,5 sys", ("not a number", "1,5")),
        "hex score": ("q9 Q0 d9 1 0x1A sys", ("not a number", "0x1A")),
        "bare exponent": ("q9 Q0 d9 1 1e sys", ("not a number", "1e")),
        "double sign": ("q9 Q0 d9 1 --1 sys", ("not a number", "--1")),
        "two dots": ("q9 Q0 d9 1 1.2.3 sys", ("not a number", "1.2.3")),
        "nan": ("q9 Q0 d9 1 nan sys", ("NaN", "nan")),
        "NaN": ("q9 Q0 d9 1 NaN sys", ("NaN",)),
        "-nan": ("q9 Q0 d9 1 -nan sys", ("NaN",)),
        "latin1 doc": ("q9 Q0 d\udce9t\udce9 1 0.5 sys", ("UTF-8",)),
        "overlong utf8": ("q9 Q0 d\udcc0\udcaf 1 0.5 sys", ("UTF-8",)),
        "latin1 query": ("q\udcff Q0 d9 1 0.5 sys", ("UTF-8",)),
        "score in rank column only": ("q9 Q0 d9 0.5 sys", ("got 5",)),
        "qrels line": ("q9 0 d9 1", ("got 4",)),
        "percent score": ("q9 Q0 d9 1 50% sys", ("not a number", "50%")),
        "unicode minus": ("q9 Q0 d9 1 \u22121 sys", ("not a number",)),
    }
    qrels_bad = {
        "3 fields": ("q9 0 d9", ("got 3",)),
        "5 fields": ("q9 0 d9 1 x", ("got 5",)),
        "6 fields": ("q9 Q0 d9 1 0.5 sys", ("got 6",)),
        "word grade": ("q9 0 d9 yes", ("grade is not a number", "yes")),
        "nan grade": ("q9 0 d9 nan", ("not a finite", "nan")),
        "inf grade": ("q9 0 d9 inf", ("not a finite", "inf")),
        "overflow grade": ("q9 0 d9 1e400", ("not a finite", "1e400")),
        "judged twice": ("q1 0 d5 2", ("judged twice", "d5")),
        "latin1 doc": ("q9 0 d\udce9 1", ("UTF-8",)),
        "comma grade": ("q9 0 d9 1,0", ("grade is not a number", "1,0")),
    }
    for kind, table, good in (("run", run_bad, GOOD_RUN), ("qrels", qrels_bad, GOOD_QRELS)):
        name = "r.trec" if kind == "run" else "q.qrels"
        for label, (bad, words) in table.items():
            for where, at, nl in (("middle", 17, True), ("last, no newline", len(good) + 1, False)):
                cases.append(Case(f"{kind}: {label} ({where})", kind, name, _insert(good, at, bad, nl), at,
                                  words))
            if label in ("judged twice",):
                continue
            # as the first line: the layout is taken from it, so the error may come at once (line 1) or
            # at the next line, which then differs from the first; either way a line is named.
            first_words = {"4 fields": ("looks like a qrels line",), "qrels line": ("looks like a qrels line",),
                           "1 field": ("got 1",), "6 fields": ("looks like a run line",)}.get(label, words)
            line = 1
            if kind == "run" and label in ("1 field",):
                line = 1
            cases.append(Case(f"{kind}: {label} (first line)", kind, name, _insert(good, 1, bad), line,
                              first_words))
    return cases


def _file_cases() -> list[Case]:
    cases = []
    junk = bytes(range(256)) * 4
    for kind, name in (("run", "r.trec"), ("qrels", "q.qrels")):
        empty = ("empty",)
        cases += [
            Case(f"{kind}: empty file", kind, name, b"", None, empty),
            Case(f"{kind}: only blank lines", kind, name, b"\n \n\t\n", None, empty),
            Case(f"{kind}: only comments", kind, name, b"# a\n  # b\n", None, empty),
            Case(f"{kind}: only a byte order mark", kind, name, b"\xef\xbb\xbf", None, empty),
            Case(f"{kind}: binary junk", kind, name, junk, 1, ()),
            Case(f"{kind}: a JSON line", kind, name, b'{"query": "q1", "doc": "d1"}\n', 1, ('"query"',)),
            Case(f"{kind}: old Mac line ends", kind, name, "\r".join(GOOD_RUN if kind == "run" else GOOD_QRELS)
                 .encode(), 1, ("carriage return",)),
            Case(f"{kind}: a bare CR in one line", kind, name, _insert(GOOD_RUN if kind == "run" else GOOD_QRELS, 5,
                                                                      "q1 Q0 d1 1 2 t\rq1 Q0 d2 2 1 t"), 5,
                 ("carriage return",)),
            Case(f"{kind}: truncated gzip", kind, name, gzip.compress(("\n".join(GOOD_RUN) + "\n").encode())[:60],
                 None, ("cannot read",)),
            Case(f"{kind}: gzip of junk", kind, name, gzip.compress(junk), 1, ()),
            Case(f"{kind}: a Parquet file named {name}", kind, name, None, None, (),
                 make=lambda p: pq.write_table(pa.table({"query": ["q1"], "doc": ["d1"], "x": [1.0]}), p)),
            Case(f"{kind}: NUL bytes", kind, name, b"\0" * 64 + b"\n", 1, ("got 1",)),
        ]
    return cases


def _table_cases() -> list[Case]:
    cases = []
    for sep, ext in (("\t", "tsv"), (",", "csv")):
        def t(rows: list[str], sep: str = sep) -> bytes:
            return ("\n".join(r.replace("|", sep) for r in rows) + "\n").encode()

        run = f"r.{ext}"
        cases += [
            Case(f"{ext}: header only", "run", run, t(["query|doc|score"]), None, ("empty",)),
            Case(f"{ext}: no doc column", "run", run, t(["query|score", "q1|1"]), None, ("doc column", "query, score")),
            Case(f"{ext}: ragged row", "run", run, t(["query|doc|score", "q1|a|1", "q1|b"]), 3, ("got 2",)),
            Case(f"{ext}: word score", "run", run, t(["query|doc|score", "q1|a|1", "q1|b|high"]), 3,
                 ("not a number", "high")),
            Case(f"{ext}: empty score", "run", run, t(["query|doc|score", "q1|a|1", "q1|b|"]), 3, ("missing score",)),
            Case(f"{ext}: NaN score", "run", run, t(["query|doc|score", "q1|a|1", "q1|b|nan"]), 3, ("NaN",)),
            Case(f"{ext}: empty query id", "run", run, t(["query|doc|score", "q1|a|1", "|b|2"]), 3, ("query id",)),
            Case(f"{ext}: empty doc id", "run", run, t(["query|doc|score", "q1|a|1", "q1||2"]), 3, ("document id",)),
            Case(f"{ext}: judged twice", "qrels", f"q.{ext}", t(["query|doc|grade", "q1|a|1", "q1|a|0"]), 3,
                 ("judged twice", "'a'")),
            Case(f"{ext}: word grade", "qrels", f"q.{ext}", t(["query|doc|grade", "q1|a|1", "q1|b|yes"]), 3,
                 ("not a number", "yes")),
            Case(f"{ext}: infinite grade", "qrels", f"q.{ext}", t(["query|doc|grade", "q1|a|1", "q1|b|inf"]), 3,
                 ("not a finite",)),
            Case(f"{ext}: ambiguous third column", "run", run, t(["q1|a|1", "q1|b|2", "q2|c|7", "q2|d|3"]), 2,
                 ("msmarco",)),
        ]
    return cases


def _jsonl_cases() -> list[Case]:
    def j(*rows: object) -> bytes:
        return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()

    ok = {"query": "q1", "doc": "a", "score": 1.0}
    cases = [
        Case("jsonl: invalid JSON", "run", "r.jsonl", j(ok, '{"query": "q1", "doc": '), 2, ("invalid JSON",)),
        Case("jsonl: a line that is an array", "run", "r.jsonl", j(ok, [1, 2]), 2, ("JSON object",)),
        Case("jsonl: missing doc key", "run", "r.jsonl", j({"query": "q1", "score": 1}), None, ("doc column",)),
        Case("jsonl: null score", "run", "r.jsonl", j(ok, {"query": "q1", "doc": "b", "score": None}), 2,
             ("missing score",)),
        Case("jsonl: string score", "run", "r.jsonl", j(ok, {"query": "q1", "doc": "b", "score": "high"}), 2,
             ("not a number", "high")),
        Case("jsonl: null doc", "run", "r.jsonl", j(ok, {"query": "q1", "doc": None, "score": 2}), 2,
             ("missing document id",)),
        Case("jsonl: object as doc id", "run", "r.jsonl", j({"query": "q1", "doc": {"x": 1}, "score": 2}), None,
             ("document id", "struct")),
        Case("jsonl: boolean query id", "run", "r.jsonl", j({"query": True, "doc": "a", "score": 2}), None,
             ("query id", "bool")),
        Case("jsonl: list doc id", "run", "r.jsonl", j({"query": "q1", "doc_id": ["a", "b"], "score": 2}), None,
             ("document id", "list")),
        Case("jsonl: scores shorter than retrieved", "run", "r.jsonl",
             j({"query": "q1", "retrieved": ["a", "b"], "scores": [1.0]}), 1, ("different lengths",)),
        Case("jsonl: null retrieved", "run", "r.jsonl", j({"query": "q1", "retrieved": ["a"]},
                                                          {"query": "q2", "retrieved": None}), 2, ("null",)),
        Case("jsonl: nested list in retrieved", "run", "r.jsonl", j({"query": "q1", "retrieved": [["a"], ["b"]]}),
             None, ("document id",)),
        Case("jsonl: groups with an empty group", "qrels", "q.jsonl", j({"query": "q1", "groups": [["a"], []]}), 1,
             ("groups",)),
        Case("jsonl: judged twice", "qrels", "q.jsonl", j({"query": "q1", "doc": "a", "grade": 1},
                                                           {"query": "q1", "doc": "a", "grade": 2}), 2,
             ("judged twice",)),
        Case("jsonl: mixed-type score", "run", "r.jsonl", j(ok, {"query": "q1", "doc": "b", "score": [1]}), 2,
             ("'score' is a list here but a number",)),
        Case("jsonl: deeply nested", "run", "r.jsonl", j(ok, '{"query": ' + "[" * 100000 + "]" * 100000 + "}"), 2,
             ("nested",)),
    ]
    return cases


def _parquet(cols: dict) -> object:
    return lambda p: pq.write_table(pa.table(cols), p)


def _parquet_cases() -> list[Case]:
    good = {"query": ["q1", "q1"], "doc": ["a", "b"], "score": [1.0, 2.0]}

    def with_(**over: object) -> dict:
        return {**good, **over}

    def corrupt(p) -> None:
        pq.write_table(pa.table(good), p)
        data = p.read_bytes()
        p.write_bytes(data[:10] + b"\xff" * 30 + data[40:])

    def truncated(p) -> None:
        pq.write_table(pa.table(good), p)
        p.write_bytes(p.read_bytes()[:-20])

    return [
        Case("parquet: list doc id", "run", "r.parquet", None, None, ("'doc'", "list<"), make=_parquet(
            with_(doc=[["a"], ["b"]]))),
        Case("parquet: struct query id", "run", "r.parquet", None, None, ("'query'", "struct<"), make=_parquet(
            with_(query=[{"a": 1}, {"a": 2}]))),
        Case("parquet: bool doc id", "run", "r.parquet", None, None, ("'doc'", "bool"), make=_parquet(
            with_(doc=[True, False]))),
        Case("parquet: date query id", "run", "r.parquet", None, None, ("'query'", "date"), make=lambda p: pq.write_table(
            pa.table({"query": pa.array([0, 1], pa.date32()), "doc": ["a", "b"], "score": [1.0, 2.0]}), p)),
        Case("parquet: null query", "run", "r.parquet", None, None, ("missing query id", "row 2"), make=_parquet(
            with_(query=["q1", None]))),
        Case("parquet: null doc", "run", "r.parquet", None, None, ("missing document id", "row 1"), make=_parquet(
            with_(doc=[None, "b"]))),
        Case("parquet: word score", "run", "r.parquet", None, None, ("not a number", "row 2", "'high'"),
             make=_parquet(with_(score=["1", "high"]))),
        Case("parquet: null score", "run", "r.parquet", None, None, ("missing score", "row 2"), make=_parquet(
            with_(score=[1.0, None]))),
        Case("parquet: NaN score", "run", "r.parquet", None, None, ("NaN", "row 1"), make=_parquet(
            with_(score=[float("nan"), 1.0]))),
        Case("parquet: struct score", "run", "r.parquet", None, None, ("score",), make=_parquet(
            with_(score=[{"x": 1.0}, {"x": 2.0}]))),
        Case("parquet: corrupt", "run", "r.parquet", None, None, ("Parquet",), make=corrupt),
        Case("parquet: truncated", "run", "r.parquet", None, None, ("Parquet",), make=truncated),
        Case("parquet: no rows", "run", "r.parquet", None, None, ("empty",), make=_parquet(
            {"query": pa.array([], pa.string()), "doc": pa.array([], pa.string()), "score": pa.array([], pa.float64())})),
        Case("parquet: no id columns", "run", "r.parquet", None, None, ("query column",), make=_parquet(
            {"x": [1], "y": [2]})),
        Case("parquet: judged twice", "qrels", "q.parquet", None, None, ("judged twice", "row 2"), make=_parquet(
            {"query": ["q1", "q1"], "doc": ["a", "a"], "grade": [1, 0]})),
        Case("parquet: infinite grade", "qrels", "q.parquet", None, None, ("not a finite", "row 1"), make=_parquet(
            {"query": ["q1"], "doc": ["a"], "grade": [float("inf")]})),
        Case("parquet: list grade", "qrels", "q.parquet", None, None, ("grade",), make=_parquet(
            {"query": ["q1"], "doc": ["a"], "grade": [[1]]})),
    ]


def _accepted_cases() -> list[Case]:
    """Inputs that look odd but are read, as trec_eval reads them: checked value by value."""
    return [
        Case("run: control byte inside an id", "run", "r.trec", b"q1 Q0 d\x01x 1 2 t\nq1 Q0 e 2 1 t\n",
             ok={"q1": {"d\x01x": 2.0, "e": 1.0}}),
        Case("run: DEL inside an id", "run", "r.trec", b"q1 Q0 d\x7fx 1 2 t\n", ok={"q1": {"d\x7fx": 2.0}}),
        Case("run: extra columns and a comment", "run", "r.trec", b"# c\nq1 Q0 d 1 2 t x y\n", ok={"q1": {"d": 2.0}}),
        Case("qrels: comment and blank lines", "qrels", "q.qrels", b"\n# c\n\nq1 0 d 1\n", ok={"q1": {"d": 1}}),
    ]


CASES = _line_cases() + _file_cases() + _table_cases() + _jsonl_cases() + _parquet_cases()
ACCEPTED = _accepted_cases()


def test_there_are_at_least_150_bad_inputs():
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)


def _write(case: Case, tmp_path):
    bad = tmp_path / case.name
    if case.make is not None:
        case.make(bad)
    else:
        bad.write_bytes(case.data or b"")
    good_run = tmp_path / "good_run.trec"
    good_run.write_text("\n".join(GOOD_RUN) + "\n")
    good_qrels = tmp_path / "good_qrels.qrels"
    good_qrels.write_text("\n".join(GOOD_QRELS) + "\n")
    return (good_qrels, bad) if case.kind == "run" else (bad, good_run)


def _check_message(msg: str, case: Case, path) -> None:
    assert str(path) in msg, msg
    if case.line is not None:
        assert f"{path}:{case.line}:" in msg, msg
    for w in case.words:
        assert w in msg, (w, msg)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_api_and_cli(tmp_path, case):
    qrels_path, run_path = _write(case, tmp_path)
    bad = run_path if case.kind == "run" else qrels_path
    reader = read_run if case.kind == "run" else read_qrels
    # the reader
    with pytest.raises(RagradeError) as info:
        reader(bad)
    _check_message(str(info.value), case, bad)
    # evaluate() on the two paths (read concurrently)
    with pytest.raises(RagradeError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ragrade.evaluate(str(qrels_path), str(run_path), ["ndcg@10"])
    _check_message(str(info.value), case, bad)
    # the command line: "error: ..." on stderr, exit status 2, no traceback
    res = CliRunner().invoke(main, ["evaluate", str(qrels_path), str(run_path), "-m", "ndcg@10"])
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    assert isinstance(res.exception, SystemExit)
    assert res.stdout == ""
    assert res.stderr.startswith("error: ") and "Traceback" not in res.stderr
    _check_message(res.stderr, case, bad)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.id for c in ACCEPTED])
def test_odd_but_legitimate_inputs_are_read_exactly(tmp_path, case):
    qrels_path, run_path = _write(case, tmp_path)
    if case.kind == "run":
        assert read_run(run_path).to_dict() == case.ok
    else:
        assert read_qrels(qrels_path).to_dict() == case.ok
