"""A test set generated from a corpus of our own evaluates under two chunkings: projected onto each (the spans
package's projection), through ``ragrade evaluate`` and ``ragrade compare`` end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.data import Run
from ragrade.spans import (
    ChunkMap,
    chunk_corpus,
    chunk_texts,
    fixed,
    project,
    read_corpus,
    recursive,
    write_chunks,
)
from ragrade.synthesis.lexical import BM25

from . import scripted


def _prefixed(chunks: ChunkMap, prefix: str) -> ChunkMap:
    return ChunkMap.from_columns([prefix + c for c in chunks.chunk_id.tolist()], chunks.doc, chunks.start, chunks.end,
                                 name=prefix)


def _bm25_run(chunks: ChunkMap, corpus, topics: dict[str, str], depth: int = 10) -> Run:
    index = BM25.build(chunk_texts(corpus, chunks))
    ids = chunks.chunk_id.tolist()
    out = {}
    for q, text in topics.items():
        s = index.scores(text)
        top = np.argsort(-s, kind="stable")[:depth]
        out[q] = {ids[i]: float(depth - r) for r, i in enumerate(top)}
    return Run.from_dict(out)


@pytest.fixture
def generated(folder, tmp_path):
    docs = folder(paragraphs=4)
    out = tmp_path / "set"
    ts = ragrade.synthesize(docs, 12, judge=scripted.ScriptedJudge(), cache=False, output=out, passage_chars=500,
                            min_passage_chars=100)
    corpus = read_corpus(docs)
    a = _prefixed(chunk_corpus(corpus, fixed(200)), "a:")
    b = _prefixed(chunk_corpus(corpus, recursive(400)), "b:")
    both = ChunkMap.from_columns([*a.chunk_id, *b.chunk_id], [*a.doc, *b.doc], [*a.start, *b.start], [*a.end, *b.end])
    for name, chunks in (("a", a), ("b", b), ("both", both)):
        write_chunks(chunks, tmp_path / f"chunks_{name}.jsonl")
    for name, chunks in (("a", a), ("b", b)):
        ragrade.write_run(_bm25_run(chunks, corpus, ts.topics), tmp_path / f"run_{name}.tsv")
    return ts, docs, out, a, b


def test_evaluate_on_two_chunkings(generated, tmp_path):
    ts, docs, out, a, b = generated
    metrics = ["span_recall@5", "span_iou@5", "ndcg@10", "recall@10"]
    means = {}
    for name, chunks in (("a", a), ("b", b)):
        args = ["evaluate", str(out / "spans.jsonl"), str(tmp_path / f"run_{name}.tsv"), "--chunks",
                str(tmp_path / f"chunks_{name}.jsonl"), "--corpus", str(docs), "--format", "json"]
        r = CliRunner().invoke(main, [*args, *(x for m in metrics for x in ("-m", m))])
        assert r.exit_code == 0, r.output
        data = json.loads(r.output)
        assert data["queries"] == len(ts) and data["summary"]["evaluated"] == len(ts)
        means[name] = data["metrics"]
        # the id measures are those of the spans projected onto this chunking (any overlap relevant)
        qrels = project(ts.spans, chunks)
        direct = ragrade.evaluate(qrels, tmp_path / f"run_{name}.tsv", ["ndcg@10", "recall@10"])
        via = ragrade.evaluate(out / "spans.jsonl", tmp_path / f"run_{name}.tsv", ["ndcg@10", "recall@10"],
                               chunks=tmp_path / f"chunks_{name}.jsonl", corpus=docs)
        for m in ("ndcg@10", "recall@10"):
            assert direct.means[m] == pytest.approx(via.means[m], abs=1e-12)
        spans = ragrade.evaluate(ts.spans, tmp_path / f"run_{name}.tsv", ["span_recall@5"], chunks=chunks, corpus=docs)
        assert 0.0 < spans.means["span_recall@5"] <= 1.0
    assert all(0.0 < means[c]["span_recall@5"] <= 1.0 and 0.0 < means[c]["ndcg@10"] <= 1.0 for c in means)
    assert means["a"] != means["b"]  # two chunkings, two sets of numbers from one test set


def test_compare_two_chunkings(generated, tmp_path):
    _, docs, out, _, _ = generated
    args = ["compare", str(out / "spans.jsonl"), str(tmp_path / "run_a.tsv"), str(tmp_path / "run_b.tsv"), "--chunks",
            str(tmp_path / "chunks_both.jsonl"), "--corpus", str(docs), "-m", "span_recall@5", "-m", "ndcg@10",
            "--format", "json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    text = json.dumps(data)
    assert "run_a" in text and "run_b" in text and "span_recall@5" in text
