"""Write the example traces of docs/traces.md (deterministic; run from the repository's root):

* ``examples/traces.jsonl``: OTLP JSON as the OpenTelemetry collector's file exporter writes it (one export
  request per line), OpenInference spans of a small research agent over four questions in two conversations:
  an AGENT root span per question carrying ``example.id`` and ``session.id``, one to three RETRIEVER calls,
  a RERANKER on some of them, an LLM span with its token count and cost;
* ``examples/traces_qrels.tsv``: the questions' judgments, with the hop of each relevant document;
* ``examples/langfuse_observations.json``: the same agent's first conversation as Langfuse's observations API
  returns it (``{"data": [...], "meta": {...}}``).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
T0 = 1_767_225_600_000_000_000  # 2026-01-01 00:00 UTC, in ns

#: question -> (session, question text, calls: (query, [(doc, score)]), (reranked call, its output) or None)
AGENT = {
    "q1": ("s1", "Who founded the observatory?", [
        ("observatory founder", [("d12", 0.91), ("d07", 0.84), ("d03", 0.80), ("d44", 0.62)]),
        ("observatory founded 1890 astronomer", [("d07", 0.88), ("d21", 0.77), ("d12", 0.70)])], (0, ["d07", "d12"])),
    "q2": ("s1", "And where was she born?", [
        ("birthplace of the observatory founder", [("d30", 0.93), ("d31", 0.85), ("d21", 0.64)])], None),
    "q3": ("s2", "Which telescope found the comet?", [
        ("comet discovery telescope", []),
        ("comet 1910 discovered by", [("d50", 0.81), ("d51", 0.79), ("d52", 0.55)])], (1, ["d51", "d50"])),
    "q4": ("s2", "How large is its mirror?", [
        ("telescope mirror size", [("d60", 0.90), ("d61", 0.86)]),
        ("telescope mirror diameter meters", [("d61", 0.88), ("d60", 0.85), ("d62", 0.72)]),
        ("mirror aperture", [("d61", 0.90), ("d63", 0.52)])], None),
}
QRELS = [("q1", "d07", 2, 1), ("q1", "d21", 1, 2), ("q1", "d99", 1, 2), ("q2", "d31", 2, 1), ("q3", "d51", 2, 1),
         ("q3", "d50", 1, 1), ("q4", "d62", 2, 1), ("q4", "d70", 1, 2)]


def _value(v: object) -> dict[str, object]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def _span(trace: str, span: str, parent: str | None, name: str, start: int, end: int, attrs: dict) -> dict:
    out = {"traceId": trace, "spanId": span, "name": name, "kind": 1, "startTimeUnixNano": str(start),
           "endTimeUnixNano": str(end), "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
           "status": {"code": 1}}
    if parent:
        out["parentSpanId"] = parent
    return out


def _documents(prefix: str, docs: list[tuple[str, float]]) -> dict:
    out: dict = {}
    for i, (doc, score) in enumerate(docs):
        out[f"{prefix}.{i}.document.id"] = doc
        out[f"{prefix}.{i}.document.score"] = score
        out[f"{prefix}.{i}.document.content"] = f"(text of {doc})"
    return out


def otlp_lines() -> list[str]:
    lines = []
    for n, (qid, (session, question, calls, reranked)) in enumerate(AGENT.items(), 1):
        trace, root = f"{n:02d}" * 16, f"a{n:015x}"
        clock = T0 + n * 60_000_000_000
        spans = [_span(trace, root, None, "research_agent", clock, clock + 4_000_000_000,
                       {"openinference.span.kind": "AGENT", "input.value": question, "session.id": session,
                        "example.id": qid})]
        for c, (query, docs) in enumerate(calls):
            start = clock + (c + 1) * 400_000_000
            attrs = {"openinference.span.kind": "RETRIEVER", "input.value": query, **_documents("retrieval.documents", docs)}
            spans.append(_span(trace, f"b{n:07x}{c:08x}", root, "VectorIndexRetriever.retrieve", start,
                               start + (120 + 35 * c + 10 * n) * 1_000_000, attrs))
            if reranked is not None and reranked[0] == c:
                ranked = [(d, 0.0) for d in reranked[1]]
                rr = {"openinference.span.kind": "RERANKER", "reranker.query": query, "reranker.top_k": 2,
                      "reranker.model_name": "cross-encoder-mini", **_documents("reranker.input_documents", docs),
                      **_documents("reranker.output_documents", [(d, round(9 - i, 1)) for i, (d, _) in enumerate(ranked)])}
                spans.append(_span(trace, f"c{n:07x}{c:08x}", root, "rerank", start + 200_000_000,
                                   start + 260_000_000, rr))
        spans.append(_span(trace, f"d{n:015x}", root, "ChatModel", clock + 3_000_000_000, clock + 3_900_000_000,
                           {"openinference.span.kind": "LLM", "llm.token_count.total": 400 + 37 * n,
                            "llm.cost.total": round(0.0004 + 0.00003 * n, 6)}))
        request = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name",
                                                                   "value": {"stringValue": "research-agent"}}]},
                                      "scopeSpans": [{"scope": {"name": "openinference.instrumentation"},
                                                      "spans": spans}]}]}
        lines.append(json.dumps(request, separators=(",", ":")))
    return lines


def langfuse_page() -> dict:
    data = []
    for n, (qid, (session, question, calls, _)) in enumerate(list(AGENT.items())[:2], 1):
        trace = f"lf-trace-{n}"
        minute = f"2026-01-01T00:0{n}:00"
        data.append({"id": f"lf-{n}-agent", "traceId": trace, "type": "AGENT", "name": "research_agent",
                     "startTime": f"{minute}.000Z", "endTime": f"{minute[:-2]}04.000Z", "parentObservationId": None,
                     "input": {"question": question}, "output": None, "metadata": {"example_id": qid},
                     "sessionId": session, "level": "DEFAULT", "usageDetails": {}, "costDetails": {}})
        for c, (query, docs) in enumerate(calls):
            data.append({"id": f"lf-{n}-r{c}", "traceId": trace, "type": "RETRIEVER", "name": "VectorStoreRetriever",
                         "startTime": f"{minute[:-2]}0{c}.400Z", "endTime": f"{minute[:-2]}0{c}.530Z",
                         "parentObservationId": f"lf-{n}-agent", "input": query, "level": "DEFAULT",
                         "output": [{"id": d, "page_content": f"(text of {d})", "metadata": {"score": s},
                                     "type": "Document"} for d, s in docs],
                         "metadata": {}, "usageDetails": {}, "costDetails": {}})
        data.append({"id": f"lf-{n}-llm", "traceId": trace, "type": "GENERATION", "name": "ChatModel",
                     "startTime": f"{minute[:-2]}03.000Z", "endTime": f"{minute[:-2]}03.900Z",
                     "parentObservationId": f"lf-{n}-agent", "input": None, "output": None, "level": "DEFAULT",
                     "usageDetails": {"input": 350, "output": 50 + 37 * n, "total": 400 + 37 * n},
                     "costDetails": {"total": round(0.0004 + 0.00003 * n, 6)}, "metadata": {}})
    return {"data": data, "meta": {"page": 1, "limit": 50, "totalItems": len(data), "totalPages": 1}}


def main() -> None:
    (HERE / "traces.jsonl").write_text("\n".join(otlp_lines()) + "\n")
    (HERE / "traces_qrels.tsv").write_text("query\tdoc\tgrade\thop\n" + "".join(
        f"{q}\t{d}\t{g}\t{h}\n" for q, d, g, h in QRELS))
    (HERE / "langfuse_observations.json").write_text(json.dumps(langfuse_page(), indent=1) + "\n")


if __name__ == "__main__":
    main()
