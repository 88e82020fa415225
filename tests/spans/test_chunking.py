"""Which chunker wins: ragrade.compare_chunkings and ``ragrade chunking`` on the example of examples/chunking
(four Markdown documents, 18 questions): the table agrees with ragrade.evaluate chunking by chunking, the
comparison is ragrade's, the HTML report carries the chunking section, and the command runs in one line."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.spans import chunk_corpus, fixed, recursive

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chunking"
DOCS, SPANS = EXAMPLE / "docs", EXAMPLE / "spans.jsonl"


@pytest.fixture(scope="module")
def compared() -> ragrade.ChunkingComparison:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ragrade.RagradeWarning)
        return ragrade.compare_chunkings(SPANS, [fixed(200), recursive(400, 100), fixed(800)], corpus=DOCS,
                                         n_resamples=200, k=3)


def test_the_table_is_what_evaluate_gives_each_chunking(compared: ragrade.ChunkingComparison) -> None:
    assert list(compared.table.index) == ["fixed-200", "recursive-400-100", "fixed-800"]
    for name, chunks in compared.chunks.items():
        res = ragrade.evaluate(SPANS, compared.runs[name], compared.metrics, chunks=chunks, corpus=DOCS)
        for m in compared.metrics:
            assert compared.table.loc[name, m] == pytest.approx(res.means[m], abs=1e-12)
        assert compared.table.loc[name, "chunks"] == len(chunks)
        assert compared.table.loc[name, "index_characters"] == int((chunks.end - chunks.start).sum())
    assert compared.comparison is not None and compared.comparison.runs == list(compared.table.index)
    assert compared.best() == compared.table["span_iou@3"].astype(float).idxmax()
    assert compared.table.loc["fixed-800", "span_recall@3"] >= compared.table.loc["fixed-200", "span_recall@3"]


def test_outputs_and_the_html_section(compared: ragrade.ChunkingComparison, tmp_path: Path) -> None:
    md = compared.to_markdown()
    assert md.startswith("| chunking | chunks | mean length |") and "fixed-800" in md
    data = json.loads(compared.to_json())
    assert set(data["chunkings"]) == set(compared.table.index) and data["k"] == 3
    page = compared.to_html(tmp_path / "c.html")
    assert '<section id="chunking">' in page and 'href="#chunking"' in page and "span_iou@k for every run" in page
    assert (tmp_path / "c.html").read_text(encoding="utf-8") == page


def test_given_chunk_maps_and_runs() -> None:
    corpus = ragrade.read_corpus(DOCS)
    a, b = chunk_corpus(corpus, fixed(300)), chunk_corpus(corpus, fixed(600))
    runs = {"a": {q: a.chunk_id.tolist()[:3] for q in ragrade.read_spans(SPANS).queries},
            "b": {q: b.chunk_id.tolist()[:3] for q in ragrade.read_spans(SPANS).queries}}
    cc = ragrade.compare_chunkings(SPANS, {"a": a, "b": b}, runs, n_resamples=100)
    assert cc.table.loc["a", "chunks"] == len(a)
    with pytest.raises(ragrade.InputError, match="give the corpus"):
        ragrade.compare_chunkings(SPANS, {"x": fixed(100), "y": fixed(200)})
    with pytest.raises(ragrade.InputError, match="names no chunking"):
        ragrade.compare_chunkings(SPANS, {"a": a, "b": b}, {**runs, "c": runs["a"]})


def test_the_command_runs_on_the_example_in_one_line(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["chunking", str(DOCS), str(SPANS), "--resamples", "200", "--format", "json",
                                    "--html", str(tmp_path / "r.html")])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data["chunkings"]) == {"fixed:200", "fixed:400:100", "recursive:400:100", "fixed:800"}
    assert (tmp_path / "r.html").exists()
    bad = CliRunner().invoke(main, ["chunking", str(DOCS), str(SPANS), "--chunker", "fixed:x"])
    assert bad.exit_code == 2 and "fixed:SIZE" in bad.output
