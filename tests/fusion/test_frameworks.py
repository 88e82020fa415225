"""Framework profiles against the frameworks' own code on the same inputs: LangChain's EnsembleRetriever,
LlamaIndex's QueryFusionRetriever (every mode), Qdrant's client-side RRF and DBSF, trectools' RRF and RBP
fusion. pyserini's fusion is compared with the real pyserini.fusion in test_pyserini_parity.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ragrade

from ._gen import need, random_runs


def _ranked(run: dict[str, float]) -> list[tuple[str, float]]:
    """A list as a retriever returns it: score descending, equal scores in input order."""
    return sorted(run.items(), key=lambda kv: -kv[1])


def _check(ours: ragrade.Run, q: str, ref: list[tuple[str, float]]) -> None:
    got = ours.ranked(q, ties="input")
    assert [d for d, _ in got] == [d for d, _ in ref], q
    assert max((abs(a - b) for (_, a), (_, b) in zip(got, ref, strict=True)), default=0.0) <= 1e-12


@pytest.mark.parametrize("weights", [None, [0.7, 0.2, 0.1]])
def test_langchain_ensemble_retriever(weights) -> None:
    need("langchain_classic", "langchain-classic is in the test extra")
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    runs = random_runs(21, n_runs=3)

    class Fixed(BaseRetriever):
        run: dict

        def _get_relevant_documents(self, query, *, run_manager=None):
            return [Document(page_content=d) for d, _ in _ranked(self.run[query])]

    ens = EnsembleRetriever(retrievers=[Fixed(run=r) for r in runs], weights=weights or [1 / 3] * 3)
    ours = ragrade.fuse(runs, profile="langchain", weights=weights)
    # LangChain returns documents only: compare the order, and the scores with its formula's sums
    for q in runs[0]:
        docs = [d.page_content for d in ens.invoke(q)]
        assert [d for d, _ in ours.ranked(q, ties="input")] == docs


@pytest.mark.parametrize("mode", ["reciprocal_rerank", "relative_score", "dist_based_score", "simple"])
def test_llamaindex_query_fusion_retriever(mode: str) -> None:
    need("llama_index.core", "llama-index-core is in the test extra")
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.retrievers import BaseRetriever, QueryFusionRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    runs = random_runs(22, n_runs=3)
    weights = [0.5, 0.3, 0.2] if mode in ("relative_score", "dist_based_score") else None

    class Fixed(BaseRetriever):
        def __init__(self, run):
            super().__init__()
            self.run = run

        def _retrieve(self, query_bundle):
            return [NodeWithScore(node=TextNode(text=d, id_=d), score=s)
                    for d, s in _ranked(self.run[query_bundle.query_str])]

    ours = ragrade.fuse(runs, method=mode, profile="llamaindex", weights=weights)
    for q in runs[0]:
        fr = QueryFusionRetriever([Fixed(r) for r in runs], llm=MockLLM(), mode=mode, num_queries=1,
                                  use_async=False, similarity_top_k=10_000, retriever_weights=weights)
        ref = [(n.node.get_content(), n.score) for n in fr.retrieve(q)]
        _check(ours, q, ref)


@pytest.mark.parametrize("method", ["rrf", "dbsf"])
def test_qdrant_local_fusion(method: str) -> None:
    need("qdrant_client", "qdrant-client is in the test extra")
    from qdrant_client.http import models
    from qdrant_client.hybrid.fusion import distribution_based_score_fusion, reciprocal_rank_fusion

    runs = random_runs(23, n_runs=3)
    weights = [2.0, 1.0, 0.5] if method == "rrf" else None
    ours = ragrade.fuse(runs, method=method, profile="qdrant", weights=weights)
    for q in runs[0]:
        responses = [[models.ScoredPoint(id=int(d[1:]), version=0, score=s) for d, s in _ranked(r[q])]
                     for r in runs]
        if method == "rrf":
            pts = reciprocal_rank_fusion(responses, limit=10_000, weights=weights)
        else:
            pts = distribution_based_score_fusion(responses, limit=10_000)
        _check(ours, q, [(f"d{p.id}", p.score) for p in pts])


def _write_trec(run: dict, path: Path) -> None:
    with open(path, "w") as f:
        for q, docs in run.items():
            for i, (d, s) in enumerate(_ranked(docs), start=1):
                f.write(f"{q} Q0 {d} {i} {s} t\n")


@pytest.mark.parametrize("method", ["rrf", "rbp"])
def test_trectools_fusion(method: str, tmp_path: Path) -> None:
    need("trectools", "trectools is in the test extra")
    from trectools import TrecRun, fusion

    runs = random_runs(24, n_runs=3)
    paths = []
    for i, r in enumerate(runs):
        _write_trec(r, tmp_path / f"r{i}.trec")
        paths.append(tmp_path / f"r{i}.trec")
    trs = [TrecRun(str(p)) for p in paths]
    ref = (fusion.reciprocal_rank_fusion(trs) if method == "rrf" else fusion.rank_biased_precision_fusion(trs))
    ours = ragrade.fuse([str(p) for p in paths], method=method, profile="trectools")
    data = ref.run_data
    for q in runs[0]:
        rows = data[data["query"] == q].sort_values("rank")
        _check(ours, q, list(zip(rows["docid"], rows["score"], strict=True)))


def test_profiles_differ_on_one_example() -> None:
    """The worked example of docs/fusion.md: one pair of runs, five "RRF"s, five orders of the same docs."""
    a = {"q": {"d1": 0.9, "d2": 0.8, "d3": 0.8}}
    b = {"q": {"d3": 0.7, "d4": 0.6, "d1": 0.2}}
    tops = {p: ragrade.fuse([a, b], method="rrf", profile=p).ranked("q", ties="input")[0]
            for p in ("ranx", "langchain", "qdrant", "pyserini", "trectools")}
    assert {d for d, _ in tops.values()} <= {"d1", "d3"}
    assert tops["qdrant"][1] == pytest.approx(1 / 2 + 1 / 4)  # k = 2: 1/(1 + 1) + 1/(3 + 1)
    assert np.isclose(tops["langchain"][1], 0.5 / 61 + 0.5 / 63)
