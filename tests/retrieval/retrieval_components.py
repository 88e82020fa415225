"""Real retrieval components built in memory over the shipped example collection (examples/): a LangChain
BM25 retriever (langchain-community over rank-bm25), a LangChain retriever and a LlamaIndex retriever
over bm25s, and, where the offline MiniLM model is installed, dense retrievers. No network."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CORPUS = EXAMPLES / "corpus.jsonl"
TOPICS = EXAMPLES / "topics.tsv"
QRELS = EXAMPLES / "qrels.tsv"


@lru_cache(maxsize=1)
def corpus() -> list[dict[str, str]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


@lru_cache(maxsize=1)
def topics() -> dict[str, str]:
    out = {}
    for line in TOPICS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q, text = line.split("\t", 1)
            out[q] = text
    return out


def langchain_bm25(k: int) -> Any:
    """langchain-community's BM25Retriever (rank-bm25 inside) over the corpus; Document.id = corpus id,
    metadata["doc_id"] = corpus id too."""
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    docs = [Document(page_content=d["text"], id=d["_id"], metadata={"doc_id": d["_id"], "title": d["title"]})
            for d in corpus()]
    return BM25Retriever.from_documents(docs, k=k)


def rank_bm25_top(query: str, k: int) -> list[str]:
    """The ids rank-bm25 itself ranks first (what the LangChain retriever must return)."""

    docs = corpus()
    bm25 = _okapi(tuple(d["text"] for d in docs))
    top = bm25.get_top_n(query.split(), list(range(len(docs))), n=k)
    return [docs[i]["_id"] for i in top]


@lru_cache(maxsize=1)
def _okapi(texts: tuple[str, ...]) -> Any:
    from rank_bm25 import BM25Okapi

    return BM25Okapi([t.split() for t in texts])


class _Bm25s:
    """A bm25s index over texts."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        self._bm25s = bm25s
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize(texts, stopwords=None, show_progress=False), show_progress=False)

    def top(self, query: str, k: int) -> tuple[list[int], list[float]]:
        tokens = self._bm25s.tokenize([query], stopwords=None, show_progress=False)
        rows, scores = self.index.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [int(i) for i in rows[0]], [float(s) for s in scores[0]]


def langchain_bm25s(k: int) -> Any:
    """A LangChain BaseRetriever subclass over bm25s; its Documents carry the corpus id in metadata only
    (Document.id is a chunk-like id "<id>#0", as vector stores do)."""
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    docs = corpus()
    engine = _Bm25s([d["text"] for d in docs])

    class Bm25sRetriever(BaseRetriever):
        top_k: int = k

        def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
            rows, scores = engine.top(query, self.top_k)
            return [Document(page_content=docs[i]["text"], id=f"{docs[i]['_id']}#0",
                             metadata={"doc_id": docs[i]["_id"], "score": s}) for i, s in zip(rows, scores, strict=True)]

    return Bm25sRetriever()


def bm25s_top(query: str, k: int) -> list[str]:
    docs = corpus()
    return [docs[i]["_id"] for i in _corpus_bm25s().top(query, k)[0]]


@lru_cache(maxsize=1)
def _corpus_bm25s() -> _Bm25s:
    return _Bm25s([d["text"] for d in corpus()])


@lru_cache(maxsize=1)
def llama_nodes() -> list[Any]:
    """The corpus as LlamaIndex Documents (id_ = corpus id) split into chunk nodes by SentenceSplitter:
    node ids are chunk ids, ref_doc_id the corpus id, metadata["doc_id"] the corpus id too."""
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter

    documents = [Document(text=d["text"], id_=d["_id"], metadata={"doc_id": d["_id"]}) for d in corpus()]
    splitter = SentenceSplitter(chunk_size=32, chunk_overlap=0)
    return splitter.get_nodes_from_documents(documents)


def llama_bm25s(k: int) -> Any:
    """A LlamaIndex BaseRetriever subclass over bm25s on the chunk nodes."""
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore

    nodes = llama_nodes()
    engine = _Bm25s([n.get_content() for n in nodes])

    class Bm25sNodeRetriever(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list[NodeWithScore]:
            rows, scores = engine.top(query_bundle.query_str, k)
            return [NodeWithScore(node=nodes[i], score=s) for i, s in zip(rows, scores, strict=True)]

    return Bm25sNodeRetriever()


def llama_bm25s_top(query: str, k: int) -> list[tuple[str, str]]:
    """``(node id, source document id)`` of the nodes bm25s ranks first."""
    nodes = llama_nodes()
    engine = _llama_engine()
    return [(nodes[i].node_id, nodes[i].ref_doc_id) for i in engine.top(query, k)[0]]


@lru_cache(maxsize=1)
def _llama_engine() -> _Bm25s:
    return _Bm25s([n.get_content() for n in llama_nodes()])
