"""Issue 34, item 2: fusion's edge cases against the libraries themselves (LangChain, LlamaIndex, Qdrant,
pyserini, trectools), on the Python running the tests (CI runs this file on 3.11 and on the newest Python:
.ci/run).

* A run that lists a document twice: LangChain and pyserini add both entries, LlamaIndex's retrievers keep
  the first (by node id), trectools refuses the file, a Qdrant response never holds a point twice; ragrade
  does what each library does, and refuses (naming the run, query and document) under ranx's, Qdrant's and
  trectools' profiles.
* An empty run file is fused (the other runs' documents, as pyserini and trectools do), not refused.
* Qdrant's DBSF and LlamaIndex's dist_based_score sum with Python's sum(), compensated from Python 3.12 on:
  ragrade follows the library on the Python it runs on (seven scores of 0.7 with an empty run: 0.5 on 3.12+,
  0.3333 before), on hundreds of random lists with repeated scores.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ragrade
from ragrade.errors import InputError

from ._gen import need

PYSERINI = "pyserini is installed by .ci/run (pip install --no-deps pyserini==1.6.0)"


def _lists_with_duplicates(seed: int, n_runs: int = 3, n_queries: int = 5) -> list[dict[str, list]]:
    """Runs as ``{query: [(doc, score), ...]}`` in score order (equal scores as listed), some documents
    listed twice in one query, with other scores."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run: dict[str, list] = {}
        for q in range(n_queries):
            n = int(rng.integers(3, 12))
            docs = [f"d{d}" for d in rng.choice(20, n, replace=False)]
            entries = [(d, float(rng.integers(0, 6))) for d in docs]  # ties
            for _ in range(int(rng.integers(1, 4))):  # duplicates, at other places
                entries.append((docs[int(rng.integers(0, n))], float(rng.integers(0, 6))))
            run[f"q{q}"] = sorted(entries, key=lambda e: -e[1])
        runs.append(run)
    return runs


def _write(runs: list[dict[str, list]], tmp: Path) -> list[str]:
    paths = []
    for i, run in enumerate(runs):
        path = tmp / f"r{i}.trec"
        path.write_text("".join(f"{q} Q0 {d} {r} {s!r} r{i}\n" for q, entries in run.items()
                                for r, (d, s) in enumerate(entries, start=1)))
        paths.append(str(path))
    return paths


def _check(ours: ragrade.Run, q: str, ref: list[tuple[str, float]]) -> None:
    got = ours.ranked(q, ties="input")
    assert [d for d, _ in got] == [d for d, _ in ref], q
    assert max((abs(a - b) for (_, a), (_, b) in zip(got, ref, strict=True)), default=0.0) <= 1e-12, q


def _langchain(runs: list[dict[str, list]], q: str) -> list[str]:
    need("langchain_classic", "langchain-classic is in the test extra")
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class Fixed(BaseRetriever):
        run: dict

        def _get_relevant_documents(self, query, *, run_manager=None):
            return [Document(page_content=d) for d, _ in self.run.get(query, [])]

    ens = EnsembleRetriever(retrievers=[Fixed(run=r) for r in runs], weights=[1 / len(runs)] * len(runs))
    return [d.page_content for d in ens.invoke(q)]


def _llamaindex(runs: list[dict[str, list]], q: str, mode: str) -> list[tuple[str, float]]:
    need("llama_index.core", "llama-index-core is in the test extra")
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.retrievers import BaseRetriever, QueryFusionRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    class Fixed(BaseRetriever):
        def __init__(self, run):
            super().__init__()
            self.run = run

        def _retrieve(self, query_bundle):
            return [NodeWithScore(node=TextNode(text=d, id_=d), score=s)
                    for d, s in self.run.get(query_bundle.query_str, [])]

    fr = QueryFusionRetriever([Fixed(r) for r in runs], llm=MockLLM(), mode=mode, num_queries=1, use_async=False,
                              similarity_top_k=10_000)
    return [(n.node.get_content(), n.score) for n in fr.retrieve(q)]


def _qdrant(runs: list[dict[str, list]], q: str, method: str) -> list[tuple[str, float]]:
    need("qdrant_client", "qdrant-client is in the test extra")
    from qdrant_client.http import models
    from qdrant_client.hybrid.fusion import distribution_based_score_fusion, reciprocal_rank_fusion

    responses = [[models.ScoredPoint(id=int(d[1:]), version=0, score=s) for d, s in r.get(q, [])] for r in runs]
    pts = (reciprocal_rank_fusion(responses, limit=10_000) if method == "rrf"
           else distribution_based_score_fusion(responses, limit=10_000))
    return [(f"d{p.id}", p.score) for p in pts]


# -- a document listed twice --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_langchain_adds_both_entries(seed: int, tmp_path: Path) -> None:
    runs = _lists_with_duplicates(seed)
    ours = ragrade.fuse(_write(runs, tmp_path), profile="langchain")
    for q in runs[0]:
        assert [d for d, _ in ours.ranked(q, ties="input")] == _langchain(runs, q)
    # the scores are LangChain's sums over every entry: weight / (rank + 60), ranks from 1
    q, entries = "q0", runs[0]["q0"]
    doc = next(d for d, _ in entries if sum(1 for e, _ in entries if e == d) > 1)
    want = sum(1 / 3 / (r + 60) for run in runs for r, (d, _) in enumerate(run["q0"], start=1) if d == doc)
    assert dict(ours.ranked(q, ties="input"))[doc] == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize("mode", ["reciprocal_rerank", "relative_score", "dist_based_score", "simple"])
def test_llamaindex_keeps_the_first_entry(mode: str, tmp_path: Path) -> None:
    runs = _lists_with_duplicates(10)
    ours = ragrade.fuse(_write(runs, tmp_path), method=mode, profile="llamaindex")
    for q in runs[0]:
        _check(ours, q, _llamaindex(runs, q, mode))


@pytest.mark.parametrize("method", ["rrf", "average", "normalize", "interpolation"])
def test_pyserini_adds_both_entries(method: str, tmp_path: Path) -> None:
    need("pyserini.fusion", PYSERINI)
    from .test_pyserini_parity import _compare, _reference

    runs = _lists_with_duplicates(20, n_runs=2 if method == "interpolation" else 3)
    paths = _write(runs, tmp_path)
    _compare(_reference(method, paths, {}), ragrade.fuse(paths, method=method, profile="pyserini"))


def test_trectools_refuses_the_file_and_so_does_ragrade(tmp_path: Path) -> None:
    need("trectools", "trectools is in the test extra")
    from trectools import TrecRun

    paths = _write(_lists_with_duplicates(30), tmp_path)
    with pytest.raises(ValueError, match="Duplicated docid"):
        TrecRun(paths[0])
    with pytest.raises(InputError, match=r"run '\S*r0.trec' lists document 'd\d+' twice for query 'q\d'"):
        ragrade.fuse(paths, method="rrf", profile="trectools")


@pytest.mark.parametrize(("profile", "method"), [("ranx", "rrf"), ("ranx", "wsum"), ("qdrant", "rrf"),
                                                 ("qdrant", "dbsf")])
def test_ranx_and_qdrant_profiles_refuse_naming_run_query_and_document(profile: str, method: str) -> None:
    run = ragrade.Run.from_columns(["q1", "q1", "q1", "q2"], ["a", "b", "a", "c"], [3.0, 2.0, 1.0, 1.0])
    other = {"q1": {"b": 1.0}, "q2": {"c": 2.0}}
    weights = [0.5, 0.5] if method == "wsum" else None
    with pytest.raises(InputError) as info:
        ragrade.fuse({"bm25": run, "dense": other}, method=method, profile=profile, weights=weights)
    msg = str(info.value)
    assert "run 'bm25' lists document 'a' twice for query 'q1'" in msg and "LangChain" in msg


# -- an empty run file ----------------------------------------------------------------------------------------

def _with_empty(tmp_path: Path) -> tuple[list[dict[str, list]], list[str]]:
    runs = [{q: [(d, s) for d, s in dict(e).items()] for q, e in r.items()} for r in _lists_with_duplicates(40, 2)]
    runs = [{q: sorted({d: s for d, s in entries[::-1]}.items(), key=lambda e: -e[1]) for q, entries in r.items()}
            for r in runs]  # no duplicates here
    paths = _write(runs, tmp_path)
    empty = tmp_path / "empty.trec"
    empty.write_text("")
    return [{}, *runs], [str(empty), *paths]


def test_pyserini_and_trectools_fuse_the_other_runs(tmp_path: Path) -> None:
    runs, paths = _with_empty(tmp_path)
    need("trectools", "trectools is in the test extra")
    from trectools import TrecRun, fusion

    ref = fusion.reciprocal_rank_fusion([TrecRun(p) for p in paths]).run_data
    ours = ragrade.fuse(paths, method="rrf", profile="trectools")
    for q in runs[1]:
        rows = ref[ref["query"] == q].sort_values("rank")
        _check(ours, q, list(zip(rows["docid"], rows["score"], strict=True)))
    need("pyserini.fusion", PYSERINI)
    from .test_pyserini_parity import _compare, _reference

    for method in ("rrf", "average", "normalize"):
        _compare(_reference(method, paths, {}), ragrade.fuse(paths, method=method, profile="pyserini"))


@pytest.mark.parametrize(("profile", "method"), [("langchain", "rrf"), ("llamaindex", "reciprocal_rerank"),
                                                 ("llamaindex", "relative_score"), ("llamaindex", "dist_based_score"),
                                                 ("qdrant", "rrf"), ("qdrant", "dbsf")])
def test_an_empty_run_is_an_empty_list_in_every_framework(profile: str, method: str, tmp_path: Path) -> None:
    runs, paths = _with_empty(tmp_path)
    ours = ragrade.fuse(paths, method=method, profile=profile)
    for q in runs[1]:
        if profile == "langchain":
            assert [d for d, _ in ours.ranked(q, ties="input")] == _langchain(runs, q)
        elif profile == "llamaindex":
            _check(ours, q, _llamaindex(runs, q, method))
        else:
            _check(ours, q, _qdrant(runs, q, method))


def test_an_empty_run_under_ranx_fuses_the_others_and_the_command_takes_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ragrade.cli import main

    runs, paths = _with_empty(tmp_path)
    with_empty = ragrade.fuse(paths, method="rrf", norm=None)
    without = ragrade.fuse(paths[1:], method="rrf", norm=None)
    for q in runs[1]:
        assert with_empty.ranked(q, ties="input") == without.ranked(q, ties="input")
    res = CliRunner().invoke(main, ["fuse", *paths, "-o", str(tmp_path / "out.trec")])
    assert res.exit_code == 0, res.output
    with pytest.raises(ragrade.InputError, match="the file is empty"):  # evaluate still refuses it
        ragrade.read_run(paths[0])


# -- Python's sum(), compensated from 3.12 on ------------------------------------------------------------------

def test_seven_equal_scores_follow_this_pythons_sum() -> None:
    run = {"q": {f"d{i}": 0.7 for i in range(7)}}
    empty = ragrade.Run.from_columns(np.empty(0, dtype=object), np.empty(0, dtype=object), np.empty(0))
    compensated = sys.version_info >= (3, 12)
    assert (sum([0.7] * 7) == 4.9) is not compensated  # 4.8999999999999995 (the exact sum, rounded) from 3.12
    # 3.12+: variance exactly 0 -> Qdrant 0.5; LlamaIndex's bounds meet -> 1.0 x weight 1/2. Before: a tiny
    # variance, each score scaled to 1/3 (Qdrant) and 1/3 x 1/2 (LlamaIndex)
    for profile, method, before in (("qdrant", "dbsf", 0.3333), ("llamaindex", "dist_based_score", 0.1667)):
        ours = ragrade.fuse({"a": run, "b": empty}, method=method, profile=profile)
        values = {round(v, 4) for _, v in ours.ranked("q", ties="input")}
        assert values == ({0.5} if compensated else {before}), (profile, values)
    lists = [{"q": [(f"d{i}", 0.7) for i in range(7)]}, {}]
    _check(ragrade.fuse({"a": run, "b": empty}, method="dbsf", profile="qdrant"), "q", _qdrant(lists, "q", "dbsf"))
    _check(ragrade.fuse({"a": run, "b": empty}, method="dist_based_score", profile="llamaindex"), "q",
           _llamaindex(lists, "q", "dist_based_score"))


@pytest.mark.parametrize(("profile", "method"), [("qdrant", "dbsf"), ("llamaindex", "dist_based_score")])
def test_random_lists_with_repeated_scores_equal_the_library(profile: str, method: str) -> None:
    """400 lists (2 runs x 200 queries): half of them 2-12 equal scores (whose sum and variance rest on how
    sum() adds: on Python 3.12+ the bounds of 191 of these 400 lists differ from a plain left-to-right sum),
    half mixed scores of a few decimals; each fused list equals the library's, order and values."""
    rng = np.random.default_rng(5)
    values = [0.1, 0.2, 0.3, 0.7, 0.35, 1.1, 0.6, 0.9, 0.45, 1.7]
    lists: list[dict[str, list]] = [{}, {}]
    for q in range(200):
        for r in range(2):
            n = int(rng.integers(2, 13))
            if (2 * q + r) % 2:
                scores = [values[int(rng.integers(0, len(values)))]] * n
            else:
                scores = [values[int(i)] for i in rng.integers(0, 3, n)]
            lists[r][f"q{q}"] = [(f"d{20 * r + i}", s) for i, s in enumerate(sorted(scores, reverse=True))]
    runs = [{q: dict(e) for q, e in r.items()} for r in lists]
    ours = ragrade.fuse(runs, method=method, profile=profile)
    for q in lists[0]:
        ref = _qdrant(lists, q, method) if profile == "qdrant" else _llamaindex(lists, q, method)
        _check(ours, q, ref)
