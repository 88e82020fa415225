"""``ragrade traces``: the calls and the trajectories in every output format (evaluate's output), slices by
call index and turn, reranker lift, latency; bad input is one ``error:`` line with exit status 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragrade.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def files(tmp_path):
    for name in ("traces.jsonl", "traces_qrels.tsv", "langfuse_observations.json"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_json_output(files):
    got = _run("traces", str(files / "traces.jsonl"), "--qrels", str(files / "traces_qrels.tsv"), "--key",
               "example.id", "-m", "recall@5", "-m", "trajectory_recall", "-m", "hop_success", "--hops", "hop",
               "--slice-by", "turn", "--per-query", "--format", "json")
    assert got.exit_code == 0, got.output
    out = json.loads(got.stdout)
    assert set(out) >= {"calls", "trajectories", "slices", "latency", "rerankers", "traces"}
    assert out["calls"]["queries"] == 8 and set(out["calls"]["per_query"]) >= {"q1/1", "q1/2", "q4/3"}
    assert out["trajectories"]["metrics"]["hop_success"] == pytest.approx(0.75)  # q1's hop 2 (d21) found
    assert set(out["slices"]["turn"]) == {"1", "2"}
    assert out["latency"]["all"]["calls"] == 8 and out["latency"]["all"]["p95_ms"] > 0
    assert {r["reranker"] for r in out["rerankers"]} == {"cross-encoder-mini"}
    assert out["traces"]["conventions"] == {"openinference": 10} and out["traces"]["tokens"] == 1970
    assert "note: traces: 1 retrieval call returned no documents" in got.stderr


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_text_outputs(files, fmt):
    got = _run("traces", str(files / "langfuse_observations.json"), "--qrels", str(files / "traces_qrels.tsv"),
               "--key", "metadata.example_id", "-m", "ndcg@5", "-m", "redundancy", "--format", fmt)
    assert got.exit_code == 0, got.output
    assert "ndcg@5" in got.stdout and "redundancy" in got.stdout
    assert "VectorStoreRetriever" in got.stdout  # the latency table
    assert "ground-truth queries missing from the run" in got.stderr  # q3, q4: asked by no trace here


def test_bad_input_is_one_error_line(files, tmp_path):
    got = _run("traces", str(files / "traces_qrels.tsv"), "--qrels", str(files / "traces_qrels.tsv"), "-m", "recall@5")
    assert got.exit_code == 2 and got.stderr.startswith("error: ") and "Traceback" not in got.output
    got = _run("traces", str(files / "traces.jsonl"), "--qrels", str(files / "traces_qrels.tsv"), "-m", "recall@5",
               "--profile", "ragas")
    assert got.exit_code == 2 and "default convention" in got.stderr
    got = _run("traces", str(files / "traces.jsonl"), "--qrels", str(files / "traces_qrels.tsv"), "-m", "trajectory_recal")
    assert got.exit_code == 2 and "trajectory_recall" in got.stderr  # the nearest name
