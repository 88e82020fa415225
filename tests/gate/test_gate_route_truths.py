"""The gate on ground truths beyond judged ids (character spans, nuggets): the baseline records the
route's fingerprint of the truth and its conventions (a span threshold), a candidate is scored with the
same ground-truth keywords, and a changed truth or convention is an IncomparableError, through the Python
API and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.errors import IncomparableError
from ragrade.spans import chunk_corpus, fixed, write_chunks, write_spans

CORPUS = {"d0": "The quick brown fox jumps over the lazy dog near the river bank.",
          "d1": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor."}
SPANS = [{"query": "q1", "doc": "d0", "start": 4, "end": 19}, {"query": "q2", "doc": "d1", "start": 28, "end": 50},
         {"query": "q3", "doc": "d0", "start": 40, "end": 60}]


def _chunks() -> ragrade.ChunkMap:
    return chunk_corpus(CORPUS, fixed(12, 0))


def _runs(chunks: ragrade.ChunkMap) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    ids = chunks.chunk_id.tolist()
    good = {"q1": [ids[0], ids[1]], "q2": [ids[9], ids[8]], "q3": [ids[4], ids[3]]}
    worse = {q: [*reversed(v), ids[-1]] for q, v in good.items()}
    return good, worse


def test_spans_gate_through_the_python_api(tmp_path: Path) -> None:
    chunks = _chunks()
    good, worse = _runs(chunks)
    base = ragrade.evaluate(SPANS, good, ["span_recall@2", "ndcg@2"], chunks=chunks, corpus=CORPUS,
                            span_threshold=0.5)
    path = ragrade.save_baseline(base, tmp_path / "b.json", SPANS, chunks=chunks, corpus=CORPUS, span_threshold=0.5)
    saved = json.loads(path.read_text())
    assert saved["truth"] == {"span_threshold": 0.5} and saved["qrels"]["judgments"] == 3
    same = ragrade.gate(path, SPANS, good, chunks=chunks, corpus=CORPUS, span_threshold=0.5, n_resamples=200)
    assert same.passed
    assert ragrade.gate(path, SPANS, worse, chunks=chunks, corpus=CORPUS, span_threshold=0.5,
                        n_resamples=200).verdicts[0].candidate <= base.means["span_recall@2"]
    with pytest.raises(IncomparableError, match="span_threshold"):
        ragrade.gate(path, SPANS, good, chunks=chunks, corpus=CORPUS, span_threshold=0.9)
    other = [dict(s, end=s["end"] - 1) for s in SPANS]
    with pytest.raises(IncomparableError, match="differ from the baseline"):
        ragrade.gate(path, other, good, chunks=chunks, corpus=CORPUS, span_threshold=0.5)


def test_spans_gate_on_the_command_line(tmp_path: Path) -> None:
    chunks = _chunks()
    good, worse = _runs(chunks)
    write_spans(ragrade.read_spans(SPANS), tmp_path / "spans.jsonl")
    write_chunks(chunks, tmp_path / "chunks.csv")
    for name, run in (("good", good), ("worse", worse)):
        with (tmp_path / f"{name}.tsv").open("w") as f:
            for q, ids in run.items():
                for i, c in enumerate(ids):
                    f.write(f"{q} Q0 {c} {i + 1} {len(ids) - i} t\n")
    common = ["--chunks", str(tmp_path / "chunks.csv")]
    out = CliRunner().invoke(main, ["evaluate", str(tmp_path / "spans.jsonl"), str(tmp_path / "good.tsv"), *common,
                                    "-m", "span_recall@2", "--save-baseline", str(tmp_path / "b.json")])
    assert out.exit_code == 0, out.output
    gate = CliRunner().invoke(main, ["gate", str(tmp_path / "b.json"), str(tmp_path / "spans.jsonl"),
                                     str(tmp_path / "good.tsv"), *common])
    assert gate.exit_code == 0, gate.output
    changed = CliRunner().invoke(main, ["gate", str(tmp_path / "b.json"), str(tmp_path / "spans.jsonl"),
                                        str(tmp_path / "good.tsv"), *common, "--span-threshold", "0.9"])
    assert changed.exit_code == 2 and "span_threshold" in changed.output and "Traceback" not in changed.output


def test_nuggets_gate_records_the_nuggets_not_the_assignments(tmp_path: Path) -> None:
    nuggets = [{"query": "q1", "nugget_id": "n1", "text": "fox", "importance": "vital"},
               {"query": "q1", "nugget_id": "n2", "text": "dog", "importance": "okay"}]
    assignments = [{"query": "q1", "nugget_id": "n1", "doc": "p1", "label": "support"},
                   {"query": "q1", "nugget_id": "n2", "doc": "p2", "label": "partial_support"}]
    run = {"q1": ["p1", "p2"]}
    base = ragrade.evaluate(nuggets, run, ["nugget_recall@2"], assignments=assignments)
    path = ragrade.save_baseline(base, tmp_path / "b.json", nuggets, assignments=assignments)
    saved = json.loads(path.read_text())
    assert saved["qrels"]["judgments"] == 2 and saved["qrels"]["relevant"] == 1 and "truth" not in saved
    more = [*assignments, {"query": "q1", "nugget_id": "n2", "doc": "p3", "label": "support"}]
    assert ragrade.gate(path, nuggets, {"q1": ["p1", "p3"]}, assignments=more, n_resamples=100).verdicts
    with pytest.raises(IncomparableError, match="differ from the baseline"):
        ragrade.gate(path, nuggets[:1], run, assignments=assignments)


def test_reports_take_spans_and_nuggets(tmp_path: Path) -> None:
    from ragrade.report import write_html

    chunks = _chunks()
    good, worse = _runs(chunks)
    out = write_html(tmp_path / "spans.html", SPANS, {"good": good, "worse": worse}, ["span_recall@2", "ndcg@2"],
                     chunks=chunks, corpus=CORPUS, n_resamples=100)
    text = Path(out).read_text(encoding="utf-8")
    assert "span_recall@2" in text and "ndcg@2" in text
    nuggets = [{"query": "q1", "nugget_id": "n1", "text": "fox", "importance": "vital"},
               {"query": "q2", "nugget_id": "n2", "text": "dog", "importance": "okay"}]
    assignments = [{"query": "q1", "nugget_id": "n1", "doc": "p1", "label": "support"},
                   {"query": "q2", "nugget_id": "n2", "doc": "p2", "label": "partial_support"}]
    out = write_html(tmp_path / "nuggets.html", nuggets, {"a": {"q1": ["p1"], "q2": ["p3"]},
                                                         "b": {"q1": ["p3"], "q2": ["p2"]}},
                     ["nugget_recall@1"], assignments=assignments, n_resamples=100)
    assert "nugget_recall@1" in Path(out).read_text(encoding="utf-8")
