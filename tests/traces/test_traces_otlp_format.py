"""The OTLP JSON format of the registry (ragrade.io.formats.otlp): Arrow's streaming parse, the line-by-line
path for what Arrow refuses (resuming after the requests already read), a request written as one JSON
document, gzip, the spans' lines and the columnar reader's agreement with the record reader."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import ragrade
from ragrade.errors import ParseError
from ragrade.io import formats
from ragrade.io.formats import otlp


def _span(i: int, docs: list[str], **values: dict) -> dict:
    attrs = [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
             {"key": "input.value", "value": {"stringValue": f"query {i}"}},
             {"key": "example.id", "value": {"stringValue": f"q{i}"}}]
    for n, d in enumerate(docs):
        attrs.append({"key": f"retrieval.documents.{n}.document.id", "value": {"stringValue": d}})
        attrs.append({"key": f"retrieval.documents.{n}.document.score", "value": values.get("score", {"doubleValue": 1.0 - n / 10})})
    return {"traceId": f"{i:032x}", "spanId": f"{i:016x}", "name": "retrieve", "startTimeUnixNano": values.get("start", str(1000 + i)),
            "endTimeUnixNano": str(5000 + i), "attributes": attrs}


def _line(*spans: dict) -> str:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
                                          "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]}) + "\n"


def test_the_format_is_in_the_registry_and_sniffed(tmp_path):
    assert formats.get("otlp") is otlp.OTLP and "otlp" in formats.FORMATS
    path = tmp_path / "spans"
    path.write_text(_line(_span(1, ["a"])))
    assert formats.detect(str(path)).name == "otlp"  # an unnamed file, told by its first line
    (row, line), = list(otlp.OTLP.rows(str(path)))
    assert line == 1 and row["service"] == "svc" and row["start"] == 1001
    assert row["attributes"]["retrieval.documents.0.document.id"] == "a"


def test_values_arrow_refuses_are_read_line_by_line(tmp_path):
    path = tmp_path / "t.jsonl"
    odd = _span(2, ["b", "c"], score={"doubleValue": "NaN"}, start=1002)  # NaN as text, an int64 as a number
    path.write_text(_line(_span(1, ["a"])) + _line(odd) + _line(_span(3, ["d"])))
    traces = ragrade.read_traces(path, key="example.id")
    assert traces.calls.to_lists() == {"q1/1": ["a"], "q2/1": ["b", "c"], "q3/1": ["d"]}
    scores = traces.documents.set_index("doc")["score"]
    assert np.isnan(scores["b"]) and np.isnan(scores["c"]) and scores["d"] == 1.0
    assert list(traces.table["latency_ms"] * 1e6) == [4000.0, 4000.0, 4000.0]


def test_a_bad_line_is_skipped_after_what_was_read(tmp_path, monkeypatch):
    """Arrow's streaming reader stops at a bad line; the rest is read block by block from the next request
    on: every span once, the bad line noted."""
    monkeypatch.setattr(otlp, "_GROUP", 1)
    lines = [_line(_span(i, [f"d{i}"])) for i in range(1, 40)]
    lines[25] = lines[25][:50] + "\n"
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines))
    bad = []
    spans = [s for b in otlp.OTLP.batches(str(path), block_size=1 << 10, on_bad_line=lambda n, m, t: bad.append(n))
             for s in b.column("span_id").to_pylist()]
    assert bad == [26]
    assert spans == [f"{i:016x}" for i in range(1, 40) if i != 26]
    with pytest.raises(ParseError, match=":26: not a complete JSON object"):
        list(otlp.OTLP.batches(str(path)))


def test_lines_longer_than_the_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(otlp, "_longest_line", lambda path, head: 10)  # Arrow's blocks then cut lines
    path = tmp_path / "t.jsonl"
    path.write_text(_line(_span(1, ["a"])) + _line(*[_span(i, [f"d{i}"] * 3) for i in range(2, 60)]))
    spans = [s for b in otlp.OTLP.batches(str(path), block_size=256) for s in b.column("span_id").to_pylist()]
    assert spans == [f"{i:016x}" for i in range(1, 60)]


def test_one_indented_document_and_gzip(tmp_path):
    request = json.loads(_line(_span(1, ["a", "b"]), _span(2, ["c"])))
    doc = tmp_path / "request.json"
    doc.write_text(json.dumps(request, indent=2))
    zipped = tmp_path / "t.jsonl.gz"
    with gzip.open(zipped, "wt") as f:
        f.write(_line(_span(1, ["a", "b"]), _span(2, ["c"])))
    for path in (doc, zipped):
        traces = ragrade.read_traces(path, key="example.id")
        assert traces.calls.to_lists() == {"q1/1": ["a", "b"], "q2/1": ["c"]}, path


def test_the_columnar_reader_agrees_with_the_record_reader(tmp_path):
    """Every span read column by column (otlp.read_batch) as the record reader reads it span by span."""
    from ragrade.traces import otlp as columnar
    from ragrade.traces.notes import Notes
    from ragrade.traces.records import Records

    spans = [_span(i, [f"d{j}" for j in range(i % 5)]) for i in range(1, 30)]
    spans[3]["attributes"].append({"key": "llm.token_count.prompt", "value": {"intValue": "12"}})
    spans[3]["attributes"].append({"key": "llm.token_count.completion", "value": {"intValue": "3"}})
    spans[4]["attributes"].append({"key": "session.id", "value": {"stringValue": "s9"}})
    path = tmp_path / "t.jsonl"
    path.write_text(_line(*spans))
    batch, = list(otlp.OTLP.batches(str(path)))
    fast_spans, fast_docs = columnar.read_batch(batch, "example.id", Notes())
    records = Records("example.id", Notes())
    for row, line in otlp.OTLP.rows(str(path)):
        records.add(line=line, trace=row["trace_id"], span=row["span_id"], parent=row["parent_id"],
                    name=row["name"], start=row["start"], end=row["end"], attrs=row["attributes"])
    slow_spans, slow_docs = records.block()
    assert fast_spans.to_pylist() == slow_spans.to_pylist()
    assert fast_docs.to_pylist() == slow_docs.to_pylist()
