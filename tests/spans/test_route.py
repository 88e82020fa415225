"""Span ground truth through ragrade.evaluate and the commands (ragrade.spans.route): the default measures
against the slow reference, span measures next to id measures of the projected qrels, the LegalBench-RAG
profile, documents and chunks as judgments, located texts, and the route's keywords on every entry point."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.spans import ChunkMap, chunk_corpus, fixed, write_chunks, write_spans

from . import _reference as ref

CORPUS = {"d0": "The quick brown fox jumps over the lazy dog near the river bank.",
          "d1": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.",
          "d2": "Pack my box with five dozen liquor jugs and then go home quickly."}


def _case(seed: int, overlap_gold: bool = False) -> tuple[ref.Case, ChunkMap, list[dict], dict]:
    rng = np.random.default_rng(seed)
    docs = {d: len(t) for d, t in CORPUS.items()}
    size = int(rng.integers(5, 20))
    overlap = int(rng.integers(0, size // 2))
    chunks = chunk_corpus(CORPUS, fixed(size, overlap))
    chunking = [(d, int(s), int(e)) for d, s, e in zip(chunks.doc, chunks.start, chunks.end, strict=True)]
    case = ref.random_case(seed, n_queries=5, n_docs=3, overlap_gold=overlap_gold)
    case = ref.Case(docs, chunking, [[(f"d{int(d[1:]) % 3}", s, min(e, docs[f"d{int(d[1:]) % 3}"])) for d, s, e in g
                                      if s < min(e, docs[f"d{int(d[1:]) % 3}"])] or [("d0", 0, 3)] for g in case.gold],
                    [], case.queries)
    ids = chunks.chunk_id.tolist()
    run, ranked = {}, []
    for q in case.queries:
        picks = [int(i) for i in rng.integers(0, len(ids), int(rng.integers(0, 9)))]
        run[q] = [ids[i] for i in picks]
        ranked.append([chunking[i] for i in picks])
    case.ranked = ranked
    spans = [{"query": q, "doc": d, "start": s, "end": e} for q, g in zip(case.queries, case.gold, strict=True)
             for d, s, e in g]
    return case, chunks, spans, run


@pytest.mark.parametrize("seed", range(6))
def test_default_measures_through_evaluate_equal_the_reference(seed: int) -> None:
    case, chunks, spans, run = _case(seed, overlap_gold=seed % 2 == 1)
    metrics = ["span_recall@3", "span_precision@3", "span_iou@3", "span_recall", "span_precision_omega"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ragrade.RagradeWarning)
        res = ragrade.evaluate(spans, run, metrics, chunks=chunks, corpus=CORPUS)
    pq = res.per_query
    for q, gold, ranked in zip(case.queries, case.gold, case.ranked, strict=True):
        want3, want = ref.default(gold, ranked[:3]), ref.default(gold, ranked)
        assert pq.loc[q, "span_recall@3"] == pytest.approx(want3["recall"], abs=1e-12)
        assert pq.loc[q, "span_precision@3"] == pytest.approx(want3["precision"], abs=1e-12)
        assert pq.loc[q, "span_iou@3"] == pytest.approx(want3["iou"], abs=1e-12)
        assert pq.loc[q, "span_recall"] == pytest.approx(want["recall"], abs=1e-12)
        assert pq.loc[q, "span_precision_omega"] == pytest.approx(ref.omega(gold, case.chunking, False), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_legalbench_profile_equals_its_formulas(seed: int) -> None:
    case, chunks, spans, run = _case(20 + seed)
    res = ragrade.evaluate(spans, run, ["span_precision@4", "span_recall@4", "span_recall"], chunks=chunks,
                           corpus=CORPUS, profile="legalbench_rag")
    for q, gold, ranked in zip(case.queries, case.gold, case.ranked, strict=True):
        want = ref.legalbench(gold, ranked[:4])
        assert res.per_query.loc[q, "span_precision@4"] == pytest.approx(want["precision"], abs=1e-12)
        assert res.per_query.loc[q, "span_recall@4"] == pytest.approx(want["recall"], abs=1e-12)
        assert res.per_query.loc[q, "span_recall"] == pytest.approx(ref.legalbench(gold, ranked)["recall"], abs=1e-12)


def test_legalbench_recall_can_exceed_one_and_refuses_iou_and_overlapping_gold() -> None:
    chunks = ChunkMap.from_columns(["a", "b"], ["d0", "d0"], [0, 5], [20, 25])
    spans = [{"query": "q", "doc": "d0", "start": 5, "end": 20}]
    res = ragrade.evaluate(spans, {"q": ["a", "b"]}, ["span_recall"], chunks=chunks, profile="legalbench_rag")
    assert res.means["span_recall"] == 2.0  # both snippets hold the whole span: no union
    assert ragrade.evaluate(spans, {"q": ["a", "b"]}, ["span_recall"], chunks=chunks).means["span_recall"] == 1.0
    with pytest.raises(ragrade.InputError, match="precision and span_recall only"):
        ragrade.evaluate(spans, {"q": ["a"]}, ["span_iou@1"], chunks=chunks, profile="legalbench_rag")
    both = [*spans, {"query": "q", "doc": "d0", "start": 10, "end": 22}]
    with pytest.raises(ragrade.InputError, match="overlapping gold spans"):
        ragrade.evaluate(both, {"q": ["a"]}, ["span_recall"], chunks=chunks, profile="legalbench_rag")


def test_spans_projected_onto_aligned_chunks_give_the_id_measures() -> None:
    """Chunks of one length, gold made of whole chunks: span precision@k is P@k, span recall@k is recall@k, at
    any threshold of any rule (where the two coincide)."""
    corpus = {"d": "x" * 100}
    chunks = chunk_corpus(corpus, fixed(10))
    gold = [2, 3, 7]
    spans = [{"query": "q", "doc": "d", "start": 10 * g, "end": 10 * g + 10} for g in gold]
    rng = np.random.default_rng(3)
    run = {"q": [f"d#{i}" for i in rng.permutation(10)[:6]]}
    for rule in ("chunk", "gold", "iou"):
        for threshold in (None, 0.3, 1.0):
            res = ragrade.evaluate(spans, run, ["span_precision@4", "P@4", "span_recall@5", "recall@5"], chunks=chunks,
                                   corpus=corpus, span_rule=rule, span_threshold=threshold)
            m = res.means
            assert m["span_precision@4"] == pytest.approx(m["P@4"]) and m["span_recall@5"] == pytest.approx(m["recall@5"])


def test_projection_rules_thresholds_and_levels() -> None:
    corpus = {"d": "y" * 40}
    chunks = ChunkMap.from_columns(["a", "b", "c", "e"], ["d"] * 4, [0, 10, 20, 30], [10, 20, 30, 40])
    spans = ragrade.read_spans([{"query": "q", "doc": "d", "start": 8, "end": 24, "grade": 2}])
    from ragrade.spans import project

    def graded(**kw):
        return project(spans, chunks, corpus=corpus, **kw).to_dict()["q"]

    # a holds 2/10 of itself in gold, b 10/10, c 4/10; of the gold (16): 2/16, 10/16, 4/16
    assert graded() == {"a": 2.0, "b": 2.0, "c": 2.0}
    assert graded(threshold=0.4) == {"a": 0.0, "b": 2.0, "c": 2.0}
    assert graded(rule="gold", threshold=0.5) == {"a": 0.0, "b": 2.0, "c": 0.0}
    assert graded(rule="iou", threshold=0.15) == {"a": 0.0, "b": 2.0, "c": 2.0}  # IoU: 2/24, 10/16, 4/22
    assert graded(rule="iou", threshold=0.2) == {"a": 0.0, "b": 2.0, "c": 0.0}
    assert graded(levels=4) == {"a": 2.0, "b": 8.0, "c": 4.0}  # grade times ceil(4 * share)


def test_document_judgments_evaluate_a_chunk_run_and_maxp() -> None:
    chunks = chunk_corpus(CORPUS, fixed(16))
    qrels = {"q1": {"d0": 1, "d1": 0}, "q2": {"d2": 2}}
    run = {"q1": {"d1#0": 3.0, "d0#2": 2.0, "d2#0": 1.0}, "q2": {"d2#3": 1.0, "d0#0": 0.5}}
    res = ragrade.evaluate(qrels, run, ["P@2", "ndcg@3"], chunks=chunks, corpus=CORPUS)
    assert res.per_query.loc["q1", "P@2"] == 0.5 and res.per_query.loc["q2", "P@2"] == 0.5
    docs = ragrade.evaluate(qrels, run, ["P@2", "ndcg@3"], chunks=chunks, corpus=CORPUS, aggregate="maxp")
    direct = ragrade.evaluate(qrels, ragrade.aggregate_passages(run, chunks=chunks), ["P@2", "ndcg@3"])
    assert docs.means == pytest.approx(direct.means)
    with pytest.raises(ragrade.InputError, match=r"span measures|gold"):
        ragrade.evaluate({"q1": {"d1": 0}}, run, ["span_recall@2"], chunks=chunks, corpus=CORPUS)


def test_chunk_judgments_evaluate_a_document_run() -> None:
    chunks = chunk_corpus(CORPUS, fixed(16))
    qrels = {"q1": {"d0#1": 1}, "q2": {"d2#0": 1, "d1#3": 1}}
    run = {"q1": ["d1", "d0"], "q2": ["d1", "d0", "d2"]}
    res = ragrade.evaluate(qrels, run, ["P@1", "recall@3", "span_recall@1"], chunks=chunks, corpus=CORPUS)
    assert res.per_query.loc["q1", "P@1"] == 0.0 and res.per_query.loc["q2", "P@1"] == 1.0
    assert res.per_query.loc["q2", "recall@3"] == 1.0
    assert res.per_query.loc["q1", "span_recall@1"] == 0.0 and res.per_query.loc["q2", "span_recall@1"] == 0.5


def test_a_run_of_retrieved_texts_is_located() -> None:
    spans = [{"query": "q", "doc": "d1", "start": 6, "end": 17}]  # "ipsum dolor"
    run = ragrade.Run.from_lists([["x", "y"]], query_ids=["q"], texts=[["ipsum dolor sit", "no such text anywhere"]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ragrade.RagradeWarning)
        res = ragrade.evaluate(spans, run, ["span_recall@1", "span_precision@2"], corpus=CORPUS)
    assert res.means["span_recall@1"] == 1.0
    assert res.means["span_precision@2"] == pytest.approx(11 / (15 + 21))  # the lost text counts, as not gold
    assert any("not found" in str(w.message) for w in caught)


def test_the_command_line(tmp_path: Path) -> None:
    _, chunks, spans, run = _case(3)
    write_spans(ragrade.read_spans(spans), tmp_path / "spans.jsonl")
    write_chunks(chunks, tmp_path / "chunks.csv")
    with (tmp_path / "run.tsv").open("w") as f:
        for q, ids in run.items():
            for i, c in enumerate(ids):
                f.write(f"{q} Q0 {c} {i + 1} {len(ids) - i} t\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for d, t in CORPUS.items():
        (corpus / f"{d}.md").write_text(t, encoding="utf-8")
    out = CliRunner().invoke(main, ["evaluate", str(tmp_path / "spans.jsonl"), str(tmp_path / "run.tsv"), "--chunks",
                                    str(tmp_path / "chunks.csv"), "--corpus", str(corpus), "-m", "span_iou@5",
                                    "-m", "ndcg@5", "--format", "json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)["metrics"]
    want = ragrade.evaluate(spans, run, ["span_iou@5", "ndcg@5"], chunks=chunks, corpus=CORPUS).means
    assert got["span_iou@5"] == pytest.approx(want["span_iou@5"]) and got["ndcg@5"] == pytest.approx(want["ndcg@5"])
    bad = CliRunner().invoke(main, ["evaluate", str(tmp_path / "spans.jsonl"), str(tmp_path / "run.tsv"), "--chunks",
                                    str(tmp_path / "chunks.csv"), "-m", "span_iou@5", "--profile", "legalbench_rag"])
    assert bad.exit_code == 2 and "error:" in bad.output and "Traceback" not in bad.output


def test_compare_and_gate_take_spans_with_no_code_of_their_own() -> None:
    _, chunks, spans, run = _case(4)
    other = {q: list(reversed(v)) for q, v in run.items()}
    cmp = ragrade.compare(spans, {"a": run, "b": other}, ["span_recall@2", "ndcg@3"], chunks=chunks, corpus=CORPUS,
                          n_resamples=50)
    assert set(cmp.scores) == {"a", "b"}
    a = ragrade.evaluate(spans, run, ["span_recall@2"], chunks=chunks, corpus=CORPUS)
    assert cmp.mean("span_recall@2", "a") == pytest.approx(a.means["span_recall@2"])


def test_span_measures_without_span_truth_or_chunks_are_refused() -> None:
    with pytest.raises(ragrade.MetricError, match="character spans"):
        ragrade.Evaluator({"q": {"d": 1}}, ["span_recall@5"]).evaluate({"q": {"d": 1.0}})
    with pytest.raises(ragrade.InputError, match="chunk map"):
        ragrade.evaluate([{"query": "q", "doc": "d", "start": 0, "end": 2}], {"q": ["zz"]}, ["span_recall@1"])


def test_compare_report_gate_and_a_baseline_from_the_command_line(tmp_path: Path) -> None:
    """compare, report, evaluate --save-baseline and gate take a span file with --chunks (the route reads it,
    records its fingerprint and shows its judgments)."""
    _, chunks, spans, run = _case(5)
    write_spans(ragrade.read_spans(spans), tmp_path / "spans.jsonl")
    write_chunks(chunks, tmp_path / "chunks.jsonl")
    for name, r in (("a", run), ("b", {q: list(reversed(v)) for q, v in run.items()})):
        (tmp_path / f"{name}.tsv").write_text("".join(f"{q} Q0 {c} {i + 1} {len(v) - i} {name}\n"
                                                      for q, v in r.items() for i, c in enumerate(v)))
    s, c = str(tmp_path / "spans.jsonl"), str(tmp_path / "chunks.jsonl")
    a, b = str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv")
    runner = CliRunner()
    for args in (["compare", s, a, b, "--chunks", c, "-m", "span_iou@3", "--resamples", "50"],
                 ["report", s, a, b, "--chunks", c, "-m", "span_iou@3", "-o", str(tmp_path / "r.html"),
                  "--resamples", "50"],
                 ["evaluate", s, a, "--chunks", c, "-m", "span_iou@3", "--save-baseline", str(tmp_path / "base.json")],
                 ["gate", str(tmp_path / "base.json"), s, a, "--chunks", c, "--resamples", "50"]):
        out = runner.invoke(main, args)
        assert out.exit_code == 0, (args[0], out.output)
    base = json.loads((tmp_path / "base.json").read_text())
    assert base["qrels"]["judgments"] == len(spans)  # the spans' own fingerprint (the route's truth_stats)
