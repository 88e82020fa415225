"""MaxP / FirstP / SumP against pyserini's ``--max-passage`` (pyserini 1.6.0, installed by .ci/run with
``--no-deps``). pyserini's aggregation is its output writer's ``hits_iterator`` (``pyserini/output_writer.py``:
documents in the order of their first passage, ``--max-passage-hits`` of them), fed the hits in the order of
its ``tie_breaker`` (score descending, then id). The writer needs no Java, but its module imports
``pyserini.search.lucene`` (Java, through pyjnius) for a type hint: the test stands a stub in for that module
and calls the real writer in this process. FirstP equals pyserini on each document's first passage alone,
SumP equals pyserini on one passage per document scoring the sum; both also equal a slow reference here."""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import ragrade
from ragrade.spans import ChunkMap

WHY = "pyserini is installed by .ci/run (pip install --no-deps pyserini==1.6.0)"


@pytest.fixture
def writer(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    if os.environ.get("CI"):  # .ci/run installs it: missing there is a failure
        importlib.import_module("pyserini")
    else:
        pytest.importorskip("pyserini", reason=WHY)
    lucene = types.ModuleType("pyserini.search.lucene")
    lucene.JScoredDoc = object  # type: ignore[attr-defined]
    search = types.ModuleType("pyserini.search")
    search.lucene = lucene  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyserini.search", search)
    monkeypatch.setitem(sys.modules, "pyserini.search.lucene", lucene)
    monkeypatch.delitem(sys.modules, "pyserini.output_writer", raising=False)
    module = importlib.import_module("pyserini.output_writer")
    monkeypatch.delitem(sys.modules, "pyserini.output_writer")
    return module


class Hit:
    def __init__(self, docid: str, score: float) -> None:
        self.docid, self.score = docid, score


def _pyserini(writer: types.ModuleType, run: dict, hits: int, delimiter: str, path: Path) -> list[str]:
    with writer.TrecWriter(str(path), "w", tag="t", use_max_passage=True, max_passage_delimiter=delimiter,
                           max_passage_hits=hits) as w:
        for q, docs in run.items():
            w.write(q, writer.tie_breaker([Hit(d, s) for d, s in docs.items()]))
    return path.read_text().splitlines()


def _ours(run: ragrade.Run) -> list[str]:
    df = run.to_pandas(ties="input")
    return [f"{q} Q0 {d} {k} {s:.6f} t" for q, d, k, s in df[["query", "doc", "rank", "score"]].itertuples(index=False)]


def _random_run(seed: int, delimiter: str = "#") -> dict:
    rng = np.random.default_rng(seed)
    run = {}
    for q in range(12):
        n = int(rng.integers(1, 60))
        run[f"q{q}"] = {f"doc{int(rng.integers(0, 20))}{delimiter}{int(rng.integers(0, 8))}":
                        float(rng.integers(0, 12)) / 4 for _ in range(n)}  # quarters: ties, exact sums
    return run


@pytest.mark.parametrize("seed", range(8))
def test_maxp_equals_pyserini_max_passage(writer: types.ModuleType, tmp_path: Path, seed: int) -> None:
    delimiter = "#" if seed % 2 else "_"
    run = _random_run(seed, delimiter)
    for hits in (1, 3, 100):
        want = _pyserini(writer, run, hits, delimiter, tmp_path / "p.txt")
        got = _ours(ragrade.aggregate_passages(run, "maxp", hits=hits, delimiter=delimiter))
        assert got == want, (seed, hits)


def _first_passages(run: dict) -> dict:
    out = {}
    for q, docs in run.items():
        first: dict[str, tuple[int, str]] = {}
        for p in docs:
            d, n = p.split("#", 1)
            if d not in first or (int(n), p) < first[d]:
                first[d] = (int(n), p)
        out[q] = {p: docs[p] for _, p in first.values()}
    return out


def _summed(run: dict) -> dict:
    out = {}
    for q, docs in run.items():
        best: dict[str, tuple[float, str]] = {}
        total: dict[str, float] = {}
        for p, s in docs.items():
            d = p.split("#", 1)[0]
            total[d] = total.get(d, 0.0) + s
            if d not in best or (-s, p) < (-best[d][0], best[d][1]):
                best[d] = (s, p)
        out[q] = {best[d][1]: total[d] for d in total}
    return out


@pytest.mark.parametrize("seed", range(6))
def test_firstp_and_sump_equal_pyserini_on_their_passages(writer: types.ModuleType, tmp_path: Path, seed: int) -> None:
    run = _random_run(100 + seed)
    for hits in (2, 100):
        assert _ours(ragrade.aggregate_passages(run, "firstp", hits=hits)) == _pyserini(
            writer, _first_passages(run), hits, "#", tmp_path / "f.txt")
        assert _ours(ragrade.aggregate_passages(run, "sump", hits=hits)) == _pyserini(
            writer, _summed(run), hits, "#", tmp_path / "s.txt")


def test_the_chunk_map_gives_documents_and_first_positions() -> None:
    chunks = ChunkMap.from_columns(["p1", "p2", "p3"], ["A", "A", "B"], [50, 0, 0], [60, 10, 10])
    run = {"q": {"p1": 3.0, "p2": 1.0, "p3": 2.0}}
    assert ragrade.aggregate_passages(run, "maxp", chunks=chunks).to_dict() == {"q": {"A": 3.0, "B": 2.0}}
    assert ragrade.aggregate_passages(run, "firstp", chunks=chunks).to_dict() == {"q": {"A": 1.0, "B": 2.0}}
    assert ragrade.aggregate_passages(run, "sump", chunks=chunks).to_dict() == {"q": {"A": 4.0, "B": 2.0}}
    ranked = ragrade.aggregate_passages({"q": ["x#1", "y#0", "x#0"]}, "maxp")  # ranked lists: n - position
    assert ranked.to_lists(ties="input") == {"q": ["x", "y"]}
    with pytest.raises(ragrade.InputError, match="not in the chunk map"):
        ragrade.aggregate_passages({"q": {"zz": 1.0}}, chunks=chunks)
