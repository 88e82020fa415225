"""The format checklist (docs/formats.md, "Adding a format"; docs/architecture.md), done by a test: a toy
format — one ``Format`` subclass defining ``records`` (and ``sniff``), one line added to ``REGISTRY`` — is
then read as a run, ground truth, topics, a corpus, a judge dataset, an assessment table (merged qrels),
the report's texts, slices, span ground truth and nuggets, by name and by extension, with no other change. And the API the new inputs
of this round (spans, chunk maps, traces, nuggets) use: nested JSON (lists of objects in a JSONL cell)
through ``records`` / ``rows`` / ``batches`` of every format of records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import ragrade
from ragrade.errors import InputError, ParseError
from ragrade.io import formats
from ragrade.io.formats.base import TableFormat, as_strings


class Columns(TableFormat):
    """A JSON document holding columns: ``{"columns": {"query": [...], "doc": [...]}}``."""

    name = "cols"
    extensions = (".cols",)
    description = "one JSON object of columns (a test's toy format)"
    sniff_order = 5  # before JSON Lines, which would take the document's first line for an object

    def sniff(self, head: bytes, line: str | None) -> bool:
        return line is not None and line.startswith('{"columns"')

    def records(self, path: str, *, strings: bool = False) -> Any:
        try:
            table = pa.table(json.loads(Path(path).read_text(encoding="utf-8"))["columns"])
        except (ValueError, KeyError, TypeError, pa.ArrowInvalid) as exc:
            raise ParseError(f"not a file of columns ({exc})", path=path) from None
        return as_strings(table) if strings else table


TOY = Columns()


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(formats, "REGISTRY", (*formats.REGISTRY, TOY))  # the checklist's one line
    return TOY


def _write(path: Path, **columns: list) -> Path:
    path.write_text(json.dumps({"columns": columns}), encoding="utf-8")
    return path


def test_the_toy_format_is_found_by_name_extension_and_content(tmp_path, toy):
    path = _write(tmp_path / "run.cols", query=["q1"], doc=["d1"], score=[1.0])
    assert formats.get("cols") is toy and formats.detect(path) is toy
    blind = tmp_path / "blind.data"
    blind.write_bytes(path.read_bytes())
    assert formats.detect(blind) is toy and formats.records_format(path) is toy
    assert "cols" in formats.names() and toy.holds_records


def test_a_run_and_ground_truth(tmp_path, toy):
    run = _write(tmp_path / "run.cols", query=["q1", "q1", "q2"], doc=["d1", "d2", "d9"], score=[2.0, 1.0, 0.5])
    qrels = _write(tmp_path / "qrels.cols", query=["q1", "q2"], doc=["d2", "d9"], grade=[1, 2])
    assert ragrade.read_run(run).to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d9": 0.5}}
    assert ragrade.read_qrels(qrels).to_dict() == {"q1": {"d2": 1}, "q2": {"d9": 2}}
    result = ragrade.evaluate(qrels, run, ["recip_rank"])
    assert result.per_query["recip_rank"].to_dict() == {"q1": 0.5, "q2": 1.0}


def test_the_command_line_reads_it_by_extension(tmp_path, toy):
    from click.testing import CliRunner

    from ragrade.cli import main

    run = _write(tmp_path / "run.cols", query=["q1"], doc=["d1"], score=[1.0])
    qrels = _write(tmp_path / "qrels.cols", query=["q1"], doc=["d1"], grade=[1])
    got = CliRunner().invoke(main, ["evaluate", str(qrels), str(run), "-m", "P@1", "--format", "json"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["metrics"]["P@1"] == 1.0


def test_topics_and_a_corpus(tmp_path, toy):
    from ragrade.io.texts import read_passages, read_queries

    topics = _write(tmp_path / "topics.cols", qid=["007", "8"], text=["first", "second"])
    assert read_queries(topics) == {"007": "first", "8": "second"}
    corpus = _write(tmp_path / "corpus.cols", _id=["d1", "d2", "d3"], title=["T", "", ""], text=["one", "two", ""])
    got = read_passages(corpus, {"d1", "d3", "d4"})
    assert got.texts == {"d1": ("T", "one")} and got.empty == ["d3"] and got.missing == ["d4"]
    assert read_passages(corpus, None).scanned == 3


def test_a_judge_dataset(tmp_path, toy):
    from ragrade.judges.dataset import read_rows

    data = _write(tmp_path / "data.cols", question=["q?"], reference=["r"], contexts=[["a", "b"]])
    assert read_rows(data) == [{"question": "q?", "reference": "r", "contexts": ["a", "b"]}]
    assert read_rows(data, "cols") == read_rows(data)


def test_an_assessment_table(tmp_path, toy):
    merged = _write(tmp_path / "merged.cols", query=["q1", "q1"], doc=["a", "a"], grade=[2, 0],
                    origin=["human", "llm"], assessor=[None, "offline:lexical (v1)"])
    assert ragrade.read_qrels(merged).to_dict() == {"q1": {"a": 2}}
    assert ragrade.read_qrels(merged, prefer="llm").to_dict() == {"q1": {"a": 0}}


def test_report_texts_and_slices(tmp_path, toy):
    from ragrade.engine.slices import read_slices
    from ragrade.report.texts import read_texts

    texts = _write(tmp_path / "texts.cols", _id=["d1", "d2"], title=["T", None], text=["body", "two"])
    assert read_texts(texts) == {"d1": "T\nbody", "d2": "two"}
    slices = _write(tmp_path / "slices.cols", query=["q1", "q2"], kind=["a", "b"])
    assert read_slices(str(slices))["kind"].to_dict() == {"q1": "a", "q2": "b"}


def test_spans_and_nuggets(tmp_path, toy):
    """This round's inputs ask the same registry: span ground truth and nuggets (a list of objects per
    query, nested) read from the toy format."""
    from ragrade.nuggets.data import read as read_nuggets
    from ragrade.spans.read import read_spans

    spans = _write(tmp_path / "spans.cols", query=["q1", "q1"], doc=["d1", "d2"], start=[0, 5], end=[4, 9])
    truth = read_spans(spans)
    assert truth.query.tolist() == ["q1", "q1"] and truth.end.tolist() == [4, 9]
    nuggets = _write(tmp_path / "nuggets.cols", qid=["q1"], query=["what?"],
                     nuggets=[[{"text": "a fact", "importance": "vital"}, {"text": "another", "importance": "okay"}]])
    got = read_nuggets(nuggets)
    assert [(n.query, n.text, n.importance) for n in got] == [("q1", "a fact", "vital"), ("q1", "another", "okay")]


def test_without_the_line_the_format_is_unknown(tmp_path):
    path = _write(tmp_path / "run.cols", query=["q1"], doc=["d1"], score=[1.0])
    with pytest.raises(InputError, match="unknown format 'cols'"):
        formats.get("cols")
    assert formats.detect(path) is formats.JSONL  # a JSON document, to the registry without the toy


# -- nested JSON: what spans, chunk maps, traces and nuggets read -------------------------------------

ROWS = [
    {"query": "q1", "spans": [{"doc": "d1", "start": 0, "end": 5}, {"doc": "d2", "start": 3, "end": 9}]},
    {"query": "q2", "spans": [{"doc": "d3", "start": 1, "end": 2, "meta": {"by": "x"}}]},
    {"query": "q3", "spans": []},
]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_nested_json_from_jsonl_through_records_rows_and_batches(tmp_path):
    path = _jsonl(tmp_path / "spans.jsonl", ROWS)
    fmt = formats.records_format(path)
    assert [row for row, _ in fmt.rows(path)] == ROWS
    assert [line for _, line in fmt.rows(path)] == [1, 2, 3]
    table = fmt.records(path)
    assert pa.types.is_list(table.schema.field("spans").type)
    assert pa.types.is_struct(table.schema.field("spans").type.value_type)
    got = table.to_pylist()
    assert got[0]["spans"][1] == {"doc": "d2", "start": 3, "end": 9, "meta": None}  # missing keys are null
    assert got[1]["spans"][0]["meta"] == {"by": "x"}
    for columns in (None, ["query", "spans"]):
        batches = list(fmt.batches(path, columns))
        assert pa.Table.from_batches(batches).select(["query", "spans"]).to_pylist() == \
            table.select(["query", "spans"]).to_pylist()
    texts = fmt.records(path, strings=True).column("spans").to_pylist()
    assert json.loads(texts[0]) == ROWS[0]["spans"]


@pytest.mark.parametrize("name", ["parquet", "arrow", "jsonl"])
def test_nested_records_round_trip_through_the_binary_formats(tmp_path, name):
    fmt = formats.get(name)
    table = formats.JSONL.records(str(_jsonl(tmp_path / "in.jsonl", ROWS)))
    out = tmp_path / f"out{fmt.extensions[0]}"
    fmt.write_records(table, out)
    back = formats.records_format(out)
    assert back is fmt
    assert back.records(str(out)).to_pylist() == table.to_pylist()
    assert [r for r, _ in back.rows(str(out))] == table.to_pylist()
    assert pa.Table.from_batches(list(back.batches(str(out)))).to_pylist() == table.to_pylist()


@pytest.mark.parametrize("name", ["csv", "tsv"])
def test_nested_values_in_a_delimited_file_are_json_text(tmp_path, name):
    fmt = formats.get(name)
    table = formats.JSONL.records(str(_jsonl(tmp_path / "in.jsonl", ROWS)))
    out = tmp_path / f"out.{name}"
    fmt.write_records(table, out)
    rows = [r for r, _ in fmt.rows(str(out))]
    assert [r["query"] for r in rows] == ["q1", "q2", "q3"]
    assert [json.loads(r["spans"]) for r in rows] == [json.loads(json.dumps(s)) for s in
                                                       table.column("spans").to_pylist()]


def test_a_json_array_document_is_read_as_its_objects(tmp_path):
    """One JSON document holding an array of objects (as Langfuse exports are): records, rows, batches."""
    path = tmp_path / "export.json"
    path.write_text(json.dumps(ROWS), encoding="utf-8")
    fmt = formats.records_format(path)
    assert [r for r, _ in fmt.rows(path)] == ROWS
    assert fmt.records(path).num_rows == 3
    assert pa.Table.from_batches(list(fmt.batches(path))).num_rows == 3


def test_headerless_names_apply_to_delimited_files_only(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("q1\tfirst\tquery\n", encoding="utf-8")
    assert list(formats.TSV.rows(str(path), names=["id", "text"])) == [({"id": "q1", "text": "first\tquery"}, 1)]
    with pytest.raises(InputError, match="names its columns"):
        list(formats.JSONL.rows(str(_jsonl(tmp_path / "a.jsonl", ROWS)), names=["a"]))
