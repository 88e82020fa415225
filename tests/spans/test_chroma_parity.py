"""The chroma profile against Chroma's chunking_evaluation itself (its pure functions, taken from
``base_evaluation.py`` with ``ast``: tests/spans/_chroma.py), on its own fixture (472 questions, 790 spans,
five corpora: ``general_evaluation_data``), with chunkings made here (fixed 200/400/800 characters with
overlap 0 and 100, and the recursive splitter) and rankings made here (random chunks of every corpus; the
chunks holding gold shuffled among random ones), for ``retrieve=5`` and ``retrieve=-1``: per question, IoU,
recall, precision and precision_omega equal to 1e-12 (in fact exactly: both divide the same integers)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragrade
from ragrade.spans import chunk_corpus, fixed, read_corpus, recursive

from . import _chroma

CHUNKERS = [fixed(200), fixed(200, 100), fixed(400), fixed(400, 100), fixed(800), fixed(800, 100),
            recursive(400, 100)]
MEASURES = ("span_iou", "span_recall", "span_precision")


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    framework = _chroma.extract(tmp_path_factory.mktemp("chroma"))
    data = framework / "general_evaluation_data"
    return {"fns": _chroma.functions(framework), "self": _chroma.questions(framework),
            "questions": data / "questions_df.csv", "corpora": data / "corpora",
            "corpus": read_corpus(data / "corpora")}


def _omega(chroma: dict[str, Any], metas: list[dict[str, Any]]) -> tuple[np.ndarray, list[int]]:
    """Chroma's precision_omega and highlighted-chunk counts, one corpus at a time (its loop skips the chunks
    of other corpora; handing it only its own is the same computation, faster)."""
    df = chroma["self"].questions_df
    omega = np.zeros(len(df))
    counts = [0] * len(df)
    for corpus_id, part in df.groupby("corpus_id", sort=False):
        me = type(chroma["self"])(questions_df=part)
        own = [m for m in metas if m["corpus_id"] == corpus_id]
        om, hc = chroma["fns"]["_full_precision_score"](me, own)
        for i, o, h in zip(part.index, om, hc, strict=True):
            omega[i], counts[i] = o, h
    return omega, counts


def _rankings(chroma: dict[str, Any], metas: list[dict[str, Any]], ids: list[str], seed: int) -> list[list[int]]:
    """Per question 20 chunk rows: random chunks of every corpus (seed even), or the chunks holding the
    question's gold placed at random ranks among random chunks (seed odd)."""
    rng = np.random.default_rng(seed)
    corpus = np.array([m["corpus_id"] for m in metas], dtype=object)
    start = np.array([m["start_index"] for m in metas])
    end = np.array([m["end_index"] for m in metas])
    out = []
    for _, row in chroma["self"].questions_df.iterrows():
        ranked = [int(j) for j in rng.integers(0, len(ids), 20)]
        if seed % 2:
            hold = np.zeros(len(metas), dtype=bool)
            for r in row["references"]:
                hold |= (start <= r["end_index"]) & (end >= r["start_index"])
            for j in np.flatnonzero(hold & (corpus == row["corpus_id"])).tolist():
                ranked[int(rng.integers(0, 20))] = j
        out.append(ranked)
    return out


@pytest.mark.parametrize("chunker", CHUNKERS, ids=lambda c: c.name)
def test_chroma_profile_equals_chunking_evaluation(chroma: dict[str, Any], chunker: Any) -> None:
    chunks = chunk_corpus(chroma["corpus"], chunker)
    metas = [{"start_index": int(s), "end_index": int(e), "corpus_id": d}
             for d, s, e in zip(chunks.doc.tolist(), chunks.start.tolist(), chunks.end.tolist(), strict=True)]
    ids = chunks.chunk_id.tolist()
    omega, highlighted = _omega(chroma, metas)
    compared = 0
    for seed in (1, 2):
        ranked = _rankings(chroma, metas, ids, seed)
        run = {str(i): [ids[j] for j in r] for i, r in enumerate(ranked)}
        for retrieve in (5, -1):
            if retrieve == 5:
                k, depth, names = [5] * len(ranked), 5, [f"{m}@5" for m in MEASURES]
            else:
                k, depth, names = highlighted, min(20, max(highlighted)), [f"{m}(retrieve=-1)" for m in MEASURES]
            lists = [[metas[j] for j in r[:depth]] for r in ranked]
            want = dict(zip(names, chroma["fns"]["_scores_from_dataset_and_retrievals"](chroma["self"], lists, k),
                            strict=True))
            want["span_precision_omega"] = omega
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ragrade.RagradeWarning)
                got = ragrade.evaluate(str(chroma["questions"]), run, [*names, "span_precision_omega"],
                                       chunks=chunks, corpus=str(chroma["corpora"]), profile="chroma")
            pq = got.per_query.reindex([str(i) for i in range(len(ranked))])
            for label, values in want.items():
                np.testing.assert_allclose(pq[label].to_numpy(), np.asarray(values, dtype=float), rtol=0, atol=1e-12,
                                           err_msg=f"{chunker.name} retrieve={retrieve} seed={seed} {label}")
                compared += len(values)
    assert compared == 2 * 2 * 4 * 472


def test_the_fixture_reads_as_chroma_reads_it(chroma: dict[str, Any]) -> None:
    """questions_df.csv as it is: 472 questions, 790 spans, each span's text checked against its corpus,
    queries numbered as Chroma numbers them."""
    truth = ragrade.read_spans(chroma["questions"], corpus=chroma["corpora"])
    df = chroma["self"].questions_df
    assert len(truth.queries) == 472 and len(truth) == 790 == sum(len(r) for r in df["references"])
    assert truth.queries[:3] == ["0", "1", "2"] and truth.questions["0"] == df["question"][0]
    first = df["references"][0][0]
    assert (int(truth.start[0]), int(truth.end[0])) == (first["start_index"], first["end_index"])
    assert sorted(set(truth.doc.tolist())) == sorted(p.stem for p in Path(chroma["corpora"]).glob("*.md"))
