"""A fused run is a Run like any other: compare() and the HTML report take it."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragrade
from ragrade.report import read_payload, write_html

EX = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")
def test_fused_run_in_compare_and_report(tmp_path: Path) -> None:
    qrels = str(EX / "qrels.tsv")
    bm25, dense = str(EX / "run.tsv"), str(EX / "run_dense.tsv")
    fused = ragrade.fuse({"bm25": bm25, "dense": dense}, method="rrf")
    runs = {"bm25": bm25, "dense": dense, "rrf": fused}
    cmp = ragrade.compare(qrels, runs, ["ndcg@10"], n_resamples=200)
    text = str(cmp)
    assert "rrf" in text
    direct = ragrade.evaluate(qrels, fused, "ndcg@10").means["ndcg@10"]
    assert direct == pytest.approx(ragrade.evaluate(qrels, fused.to_dict(), "ndcg@10").means["ndcg@10"])
    out = write_html(tmp_path / "report.html", qrels, runs, ["ndcg@10"], n_resamples=200)
    payload = read_payload(out.read_text())
    assert "rrf" in str(payload)
    assert out.stat().st_size > 1000
