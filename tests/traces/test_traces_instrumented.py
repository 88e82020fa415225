"""Traces made by the real instrumentation, read back: a LangChain retriever and a LlamaIndex retriever
and reranker instrumented by openinference-instrumentation-langchain / -llama-index on an OpenTelemetry
SDK tracer provider (in-memory exporter, spans encoded to OTLP JSON as the collector writes them), and
GenAI-convention spans emitted with the SDK. Every retrieved document, score, order and query text read
by ragrade equals what the retrievers returned."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from otlp_helpers import hex_span, hex_trace, provider, write_otlp

import ragrade


# -- LangChain ------------------------------------------------------------------------------------------------
def _langchain_retriever(log: list[tuple[str, list[tuple[str, float]]]]) -> Any:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class Shelf(BaseRetriever):
        """Returns documents whose ids spell the query's words (none for 'nothing')."""

        def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
            words = [w for w in query.split() if w != "nothing"]
            docs = [(f"doc-{w}", round(1.0 / (i + 1), 4)) for i, w in enumerate(words)]
            log.append((query, docs))
            return [Document(id=d, page_content=f"text of {d}", metadata={"score": s}) for d, s in docs]

    return Shelf()


@pytest.fixture
def langchain_traces(tmp_path):
    from langchain_core.runnables import RunnableLambda
    from openinference.instrumentation.langchain import LangChainInstrumentor

    tp, exporter = provider()
    log: list[tuple[str, list[tuple[str, float]]]] = []
    retriever = _langchain_retriever(log)

    def agent(question: str) -> int:
        first = retriever.invoke(question)
        second = retriever.invoke(question + " again")
        return len(first) + len(second)

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=tp)
    try:
        chain = RunnableLambda(agent)
        for i, q in enumerate(["alpha beta", "gamma", "nothing"]):
            chain.invoke(q, config={"metadata": {"example_id": f"q{i}"}})
    finally:
        instrumentor.uninstrument()
    path = write_otlp(tmp_path / "langchain.jsonl", [exporter.get_finished_spans()])
    return path, log


def test_langchain_calls_read_back_as_returned(langchain_traces):
    path, log = langchain_traces
    traces = ragrade.read_traces(path, key="metadata.example_id")
    assert traces.calls.query_ids.tolist() == ["q0/1", "q0/2", "q1/1", "q1/2", "q2/1", "q2/2"]
    docs = traces.documents
    for call, (query, returned) in zip(traces.calls.query_ids.tolist(), log, strict=True):
        assert traces.table.loc[call, "query"] == query
        mine = docs[docs["call"] == call].sort_values("rank")
        assert list(mine["doc"]) == [d for d, _ in returned]  # ids from output.value, in order
        assert list(mine["score"]) == [s for _, s in returned]  # scores from the documents' metadata
        assert traces.calls.docs_of(call) == [d for d, _ in returned]
    assert set(traces.table["convention"]) == {"openinference"}
    assert any("output.value" in n for n in traces.notes)  # LangChain's ids are not in document.id
    assert any("returned no documents" in n for n in traces.notes)  # q2 asked for 'nothing'


def test_langchain_trajectories_evaluate(langchain_traces):
    path, _ = langchain_traces
    traces = ragrade.read_traces(path, key="metadata.example_id")
    qrels = {"q0": {"doc-beta": 1, "doc-zeta": 1}, "q1": {"doc-again": 2}, "q2": {"doc-x": 1}}
    res = ragrade.evaluate(qrels, traces.trajectories, ["trajectory_recall", "calls_to_first_relevant", "redundancy"])
    pq = res.per_query
    assert pq.loc["q0", "trajectory_recall"] == 0.5
    assert pq.loc["q1", "calls_to_first_relevant"] == 2.0
    assert pq.loc["q0", "redundancy"] == pytest.approx(2 / 5)  # alpha, beta repeated by the second call
    assert pq.loc["q2", "trajectory_recall"] == 0.0
    assert math.isnan(pq.loc["q2", "calls_to_first_relevant"])


# -- LlamaIndex ---------------------------------------------------------------------------------------------------
def _llama_pieces(log: list[tuple[str, list[tuple[str, float]]]]) -> tuple[Any, Any]:
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.postprocessor import StructuredLLMRerank
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    class Index(BaseRetriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            words = query_bundle.query_str.split()
            out = [(f"n-{w}", round(0.9 - 0.1 * i, 4)) for i, w in enumerate(words)]
            log.append((query_bundle.query_str, out))
            return [NodeWithScore(node=TextNode(id_=d, text=f"text {d}"), score=s) for d, s in out]

    class Judge(CustomLLM):
        """Answers the reranker's prompt: the third document first, then the first."""

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata()

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
            return CompletionResponse(text=json.dumps({"documents": [{"document_number": 3, "relevance": 9},
                                                                     {"document_number": 1, "relevance": 5}]}))

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kw: Any) -> Any:
            raise NotImplementedError

    return Index(), StructuredLLMRerank(llm=Judge(), top_n=2, choice_batch_size=10)


@pytest.fixture
def llama_traces(tmp_path):
    from llama_index.core.schema import QueryBundle
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    tp, exporter = provider()
    log: list[tuple[str, list[tuple[str, float]]]] = []
    index, reranker = _llama_pieces(log)
    reranked = []
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=tp)
    try:
        tracer = tp.get_tracer("agent")
        for i, question in enumerate(["red green blue", "cyan"]):
            with tracer.start_as_current_span("agent") as root:
                root.set_attribute("example.id", f"e{i}")
                root.set_attribute("openinference.span.kind", "AGENT")
                nodes = index.retrieve(question)
                index.retrieve(question + " more")
                if len(nodes) >= 3:
                    out = reranker.postprocess_nodes(nodes, query_bundle=QueryBundle(question))
                    reranked.append(([n.node.node_id for n in nodes], [(n.node.node_id, n.score) for n in out]))
    finally:
        instrumentor.uninstrument()
    spans = exporter.get_finished_spans()
    path = write_otlp(tmp_path / "llama.jsonl", [spans[: len(spans) // 2], spans[len(spans) // 2:]])
    return path, log, reranked, spans


def test_llamaindex_nested_retriever_spans_are_one_call(llama_traces):
    path, log, _, spans = llama_traces
    retriever_spans = [s for s in spans if s.attributes.get("openinference.span.kind") == "RETRIEVER"]
    assert len(retriever_spans) == 2 * len(log)  # LlamaIndex: two RETRIEVER spans per retrieve()
    traces = ragrade.read_traces(path, key="example.id")
    assert traces.calls.query_ids.tolist() == ["e0/1", "e0/2", "e1/1", "e1/2"]
    for call, (query, returned) in zip(traces.calls.query_ids.tolist(), log, strict=True):
        assert traces.table.loc[call, "query"] == query
        mine = traces.documents[traces.documents["call"] == call]
        assert list(zip(mine["doc"], mine["score"], strict=True)) == returned
    outer = {hex_span(s) for s in retriever_spans if s.name.endswith(".retrieve")}
    assert set(traces.table["span"]) == outer  # the outer span, the one with the documents
    assert not any("sub-retriever" in n for n in traces.notes)


def test_llamaindex_reranker_is_a_pair_of_runs(llama_traces):
    path, _, reranked, _ = llama_traces
    traces = ragrade.read_traces(path, key="example.id")
    (name, pair), = traces.rerankers.items()
    assert name == "StructuredLLMRerank._postprocess_nodes"  # the span's name: the model is 'unknown' here
    given, returned = reranked[0]
    assert pair.input.query_ids.tolist() == ["e0/1"] and pair.output.query_ids.tolist() == ["e0/1"]
    assert pair.input.docs_of("e0/1") == given
    assert pair.output.docs_of("e0/1") == [d for d, _ in returned]
    assert list(pair.documents.query("list == 'output'")["score"]) == [s for _, s in returned]
    qrels = {"e0": {"n-blue": 1}, "e1": {"n-cyan": 1}}
    lift = ragrade.compare(qrels, pair.runs(), ["rr"], baseline="input")
    row = lift.pairs.iloc[0]
    assert (row["mean_control"], row["mean_treatment"]) == (pytest.approx(1 / 3), 1.0)


def test_the_same_spans_as_a_phoenix_dataframe(llama_traces, tmp_path):
    """Phoenix's span DataFrame layout (get_spans_dataframe: context.*, attributes.* columns, semantic
    conventions as dotted columns, other attributes nested under their first part), and its Parquet, CSV
    and JSON exports, read as the OTLP file is."""
    from phoenix_layout import spans_dataframe

    path, _, _, spans = llama_traces
    frame = spans_dataframe(spans)
    assert "attributes.example" in frame.columns and "attributes.retrieval.documents" in frame.columns
    want = ragrade.read_traces(path, key="example.id")
    frame.to_parquet(tmp_path / "spans.parquet")
    frame.to_csv(tmp_path / "spans.csv", index=False)
    frame.to_json(tmp_path / "spans.jsonl", orient="records", lines=True, date_format="iso")
    for source in (frame, tmp_path / "spans.parquet", tmp_path / "spans.csv", tmp_path / "spans.jsonl"):
        got = ragrade.read_traces(source, key="example.id")
        assert got.calls.query_ids.tolist() == want.calls.query_ids.tolist(), source
        assert got.calls.to_lists() == want.calls.to_lists(), source
        assert list(got.table["query"]) == list(want.table["query"]), source
        assert got.documents["score"].tolist() == want.documents["score"].tolist(), source
        assert got.rerankers.keys() == want.rerankers.keys(), source


# -- OpenTelemetry GenAI ---------------------------------------------------------------------------------------------
def test_genai_retrieval_spans_and_sessions(tmp_path):
    tp, exporter = provider()
    tracer = tp.get_tracer("app")
    sent = []
    turns = {"conv-a": [["k1 k2", "k3"], ["k4"], []], "conv-b": [["k5"]]}
    clock = 1_700_000_000_000_000_000
    for conversation, per_turn in turns.items():
        for turn, queries in enumerate(per_turn):
            clock += 10_000_000
            with tracer.start_as_current_span("chat", start_time=clock) as root:
                root.set_attribute("gen_ai.conversation.id", conversation)
                for q in queries:
                    clock += 1_000_000
                    docs = [{"id": f"{conversation}-{w}", "score": 1.0 - 0.25 * j} for j, w in enumerate(q.split())]
                    with tracer.start_as_current_span("retrieval kb", start_time=clock) as span:
                        span.set_attribute("gen_ai.operation.name", "retrieval")
                        span.set_attribute("gen_ai.data_source.id", "kb")
                        span.set_attribute("gen_ai.retrieval.query.text", q)
                        span.set_attribute("gen_ai.retrieval.top_k", 5)
                        span.set_attribute("gen_ai.retrieval.documents", json.dumps(docs))
                        span.set_attribute("gen_ai.usage.input_tokens", 7)
                        span.end(end_time=clock + 2_500_000)
                    sent.append((conversation, turn + 1, q, docs))
                root.end(end_time=clock + 5_000_000)
    path = write_otlp(tmp_path / "genai.jsonl", [exporter.get_finished_spans()])
    traces = ragrade.read_traces(path, key="session")
    assert traces.trajectories.query_ids.tolist() == ["conv-a", "conv-b"]
    assert traces.calls.query_ids.tolist() == ["conv-a/1", "conv-a/2", "conv-a/3", "conv-b/1"]
    table = traces.table
    assert list(table["turn"]) == [t for _, t, _, _ in sent]
    assert list(table["query"]) == [q for _, _, q, _ in sent]
    assert set(table["retriever"]) == {"kb"} and set(table["convention"]) == {"genai"}
    assert list(table["latency_ms"]) == [2.5] * 4 and list(table["tokens"]) == [7.0] * 4
    docs = traces.documents
    assert [(d, s) for d, s in zip(docs["doc"], docs["score"], strict=True)] == \
        [(d["id"], d["score"]) for *_, ds in sent for d in ds]
    assert traces.trajectories.calls.tolist() == [3, 1]
    retrieving = {hex_trace(s) for s in exporter.get_finished_spans() if s.name == "retrieval kb"}
    assert retrieving == set(table["trace"])  # conv-a's third turn retrieved nothing: a turn without a call
