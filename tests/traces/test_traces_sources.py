"""Langfuse exports shaped as its API returns them, and bad traces: each a clear error or a counted note
naming the span or line, never a traceback, nothing silently dropped."""

from __future__ import annotations

import json
import math
import warnings

import ijson  # noqa: F401  - a test dependency (pyproject's test extra): missing, the tests fail
import pytest

import ragrade
from ragrade.errors import InputError, RagradeWarning


def _observation(oid: str, trace: str, kind: str, name: str, start: str, end: str, **extra: object) -> dict:
    return {"id": oid, "traceId": trace, "type": kind, "name": name, "startTime": start, "endTime": end,
            "parentObservationId": extra.pop("parent", None), "level": "DEFAULT", "statusMessage": None,
            "model": None, "modelParameters": {}, "metadata": extra.pop("metadata", {}), "version": None,
            "usage": {"input": 0, "output": 0, "total": 0, "unit": "TOKENS"}, "usageDetails": {}, "costDetails": {},
            "input": extra.pop("input", None), "output": extra.pop("output", None), **extra}


def _document(doc_id: str, score: float) -> dict:
    return {"id": doc_id, "page_content": f"text of {doc_id}", "metadata": {"score": score}, "type": "Document"}


LANGFUSE = [
    _observation("o1", "t1", "SPAN", "agent", "2025-05-01T10:00:00.000Z", "2025-05-01T10:00:03.000Z",
                 input={"question": "who wrote it?"}, metadata={"example_id": "q1"}),
    _observation("o2", "t1", "RETRIEVER", "VectorStoreRetriever", "2025-05-01T10:00:00.100Z",
                 "2025-05-01T10:00:00.350Z", parent="o1", input="who wrote it",
                 output=[_document("d1", 0.8), _document("d2", 0.5)]),
    _observation("o3", "t1", "GENERATION", "ChatOpenAI", "2025-05-01T10:00:00.400Z", "2025-05-01T10:00:02.000Z",
                 parent="o1", usageDetails={"input": 120, "output": 30, "total": 150}, costDetails={"total": 0.002},
                 calculatedTotalCost=0.002),
    _observation("o4", "t1", "SPAN", "retrieve_more", "2025-05-01T10:00:02.100Z", "2025-05-01T10:00:02.200Z",
                 parent="o1", input={"query": "author of it"}, output={"documents": [_document("d3", 0.7)]}),
    _observation("o5", "t2", "SPAN", "agent", "2025-05-01T11:00:00.000Z", "2025-05-01T11:00:01.000Z",
                 metadata={"example_id": "q2"}),
    _observation("o6", "t2", "RETRIEVER", "VectorStoreRetriever", "2025-05-01T11:00:00.100Z",
                 "2025-05-01T11:00:00.200Z", parent="o5", input="nothing here", output=[]),
]


def test_a_langfuse_api_page(tmp_path):
    path = tmp_path / "observations.json"
    path.write_text(json.dumps({"data": LANGFUSE, "meta": {"page": 1, "limit": 50, "totalItems": 6, "totalPages": 1}}))
    with pytest.warns(RagradeWarning, match="returned no documents"):
        traces = ragrade.read_traces(path, key="metadata.example_id")
    assert traces.calls.query_ids.tolist() == ["q1/1", "q1/2", "q2/1"]
    assert traces.calls.to_lists() == {"q1/1": ["d1", "d2"], "q1/2": ["d3"], "q2/1": []}
    table = traces.table
    assert list(table["query"]) == ["who wrote it", "author of it", "nothing here"]
    assert list(table["latency_ms"]) == [250.0, 100.0, 100.0]
    assert table.loc["q1/1", "trace_tokens"] == 150 and table.loc["q1/1", "trace_cost"] == 0.002
    assert traces.documents["score"].tolist() == [0.8, 0.5, 0.7]
    assert set(table["convention"]) == {"langfuse"}


def test_langfuse_json_lines_and_traces_with_sessions(tmp_path):
    lines = tmp_path / "observations.jsonl"
    lines.write_text("".join(json.dumps(o) + "\n" for o in LANGFUSE))
    from_lines = ragrade.read_traces(lines, key="metadata.example_id")
    assert from_lines.calls.to_lists() == {"q1/1": ["d1", "d2"], "q1/2": ["d3"], "q2/1": []}
    traces = [{"id": "t1", "sessionId": "s1", "timestamp": "2025-05-01T10:00:00.000Z", "input": "who wrote it?",
               "observations": [o for o in LANGFUSE if o["traceId"] == "t1"]},
              {"id": "t2", "sessionId": "s1", "timestamp": "2025-05-01T11:00:00.000Z", "input": "and then?",
               "observations": [o for o in LANGFUSE if o["traceId"] == "t2"]}]
    doc = tmp_path / "traces.json"
    doc.write_text(json.dumps(traces))
    by_session = ragrade.read_traces(doc, key="session")
    assert by_session.calls.query_ids.tolist() == ["s1/1", "s1/2", "s1/3"]
    assert list(by_session.table["turn"]) == [1, 1, 2]
    by_question = ragrade.read_traces(doc, key="question", topics={"A": "Who wrote  it?", "B": "And then?"})
    assert by_question.trajectories.query_ids.tolist() == ["A", "B"]


# -- bad traces ------------------------------------------------------------------------------------------------------
def _span(trace: str, span: str, attrs: dict, parent: str | None = None, start: int = 1_000, end: int = 2_000) -> dict:
    def value(v: object) -> dict:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        return {"stringValue": str(v)}

    out = {"traceId": trace, "spanId": span, "name": "s", "kind": 1, "startTimeUnixNano": str(start),
           "endTimeUnixNano": str(end), "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()]}
    if parent:
        out["parentSpanId"] = parent
    return out


def _line(*spans: dict) -> str:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"scope": {"name": "x"}, "spans": list(spans)}]}]}) + "\n"


def _docs(*ids: str) -> dict:
    out: dict = {"openinference.span.kind": "RETRIEVER", "input.value": "q"}
    for i, d in enumerate(ids):
        out[f"retrieval.documents.{i}.document.id"] = d
        out[f"retrieval.documents.{i}.document.score"] = 1.0 - i / 10
    return out


BAD = [
    _line(_span("aa01", "b001", {"example.id": "q1"}), _span("aa01", "b002", _docs("d1", "d2"), "b001")),
    # a span without documents; a span whose end is before its start
    _line(_span("aa02", "b003", {"example.id": "q2"}), _span("aa02", "b004", _docs(), "b003"),
          _span("aa02", "b005", _docs("d4"), "b003", start=9_000, end=3_000)),
    # documents as one JSON string instead of flattened keys
    _line(_span("aa03", "b006", {"example.id": "q3"}),
          _span("aa03", "b007", {"openinference.span.kind": "RETRIEVER", "input.value": "q",
                                 "retrieval.documents": json.dumps([{"document.id": "d7", "document.score": 0.5}])},
                "b006")),
    # an OpenTelemetry GenAI span in the same file; a trace with no key
    _line(_span("aa04", "b008", {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "g",
                                 "gen_ai.retrieval.documents": json.dumps([{"id": "d8", "score": 2}])})),
]


def test_bad_traces_are_counted_notes_naming_spans(tmp_path):
    path = tmp_path / "bad.jsonl"
    truncated = _line(_span("aa09", "b099", _docs("d9")))[:60]
    path.write_text(BAD[0] + truncated + "\n" + "".join(BAD[1:]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traces = ragrade.read_traces(path, key="example.id")
    notes = "\n".join(traces.notes)
    assert any("line 2" in str(w.message) for w in caught)
    assert "1 line is not an OTLP export request (truncated?) and was skipped (line 2" in notes
    assert "retrieval call returned no documents (kept as an empty list) (span b004)" in notes
    assert "span ends before it starts (its latency is left empty) (span b005)" in notes
    assert "span gives its documents as a JSON string instead of flattened keys (read) (span b007)" in notes
    assert "trace has no value of the join key: its calls have no ground truth (trace aa04)" in notes
    assert "2 conventions in one input: 4 OpenInference, 1 OpenTelemetry GenAI" in notes
    assert traces.calls.to_lists() == {"q1/1": ["d1", "d2"], "q2/1": [], "q2/2": ["d4"], "q3/1": ["d7"], "aa04/1": ["d8"]}
    assert math.isnan(traces.table.loc["q2/2", "latency_ms"])
    res = ragrade.evaluate({"q1": {"d2": 1}, "q2": {"d4": 1}, "q3": {"d7": 1}, "q9": {"d1": 1}}, traces.calls,
                           ["recall@10"])
    assert res.summary.only_in_run == ["aa04/1"]  # no key: no ground truth, said so
    assert res.summary.missing_from_run == ["q9"]  # asked by no trace, said so
    assert res.per_query.loc["q2/1", "recall@10"] == 0.0


def test_a_file_that_is_not_traces_is_a_clear_error(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 1.0 x\n")
    with pytest.raises(InputError):
        ragrade.read_traces(run)
    broken = tmp_path / "broken.json"
    broken.write_text('{"resourceSpans": [')
    with pytest.raises(InputError, match=r"broken\.json"):
        ragrade.read_traces(broken)


def test_key_and_by_are_checked():
    with pytest.raises(InputError, match="by must be"):
        ragrade.read_traces([], by="turn")
    with pytest.raises(InputError, match="topics"):
        ragrade.read_traces([], key="question")
