"""The conventions report (API and CLI) and --profile on `ragrade evaluate`."""

from __future__ import annotations

import math

from click.testing import CliRunner

import ragrade
from ragrade.cli import main


def test_report_side_by_side_with_reasons_and_movers():
    rep = ragrade.conventions([[["t1", "t2"], ["t3"]], [["a"]]], [["t1", "p1", "t2", "p3"], ["x", "a"]],
                              ["ap", "ndcg", "precision"])
    assert {"default", "autorag", "llamaindex", "continuous-eval", "ragas"} <= set(rep.table.columns)
    assert abs(rep.table.loc["ap", "autorag"] - (5 / 12 + 0.5) / 2) < 1e-15
    assert math.isnan(rep.table.loc["ndcg", "ragas"])  # Ragas defines no NDCG
    assert "group's hits" in rep.reasons[("ap", "autorag")]
    assert ("ap", "beir") not in rep.reasons  # BEIR's 5-decimal rounding alone is not a difference
    assert rep.table.loc["ap", "beir"] == round(rep.table.loc["ap", "default"], 5)
    assert rep.movers["ap"].index[0] == "0"
    md = rep.to_markdown()
    assert "| ap |" in md and "## Why the numbers differ" in md and "—" in md


def test_report_text_input_skips_engine_profiles():
    rep = ragrade.conventions([["Paris is the capital of France."]],
                              [["Lyon is a major city in France.",
                                "Paris is the capital of France and also the largest city in the country."]],
                              ["ap", "ndcg"], matcher="profile")
    assert rep.table.loc["ndcg", "continuous-eval"] == 0.6309297535714574
    assert "trec_eval" in rep.skipped


def test_cli_conventions_and_evaluate_profile(tmp_path):
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("q1 0 t1 1\nq1 0 t2 1\nq1 0 t3 1\n")
    run.write_text("q1 Q0 t1 1 4.0 r\nq1 Q0 p1 2 3.0 r\nq1 Q0 t2 3 2.0 r\nq1 Q0 p3 4 1.0 r\n")
    res = CliRunner().invoke(main, ["conventions", str(qrels), str(run), "-m", "ap", "-m", "ndcg",
                                    "-p", "default", "-p", "autorag", "-p", "continuous-eval"])
    assert res.exit_code == 0, res.output
    assert "| ap | 0.5556 | 0.4444 | 0.8333 |" in res.output
    out = tmp_path / "c.md"
    res = CliRunner().invoke(main, ["conventions", str(qrels), str(run), "-m", "ap", "-o", str(out)])
    assert res.exit_code == 0 and out.read_text().startswith("# Metric conventions")
    res = CliRunner().invoke(main, ["conventions", str(qrels), str(run), "-m", "ap", "-p", "nope"])
    assert res.exit_code == 2 and "unknown profile" in res.output
    res = CliRunner().invoke(main, ["evaluate", str(qrels), str(run), "-m", "ap", "--profile", "autorag",
                                    "--format", "json"])
    assert res.exit_code == 0, res.output
    assert '"ap": 0.4444444444444444' in res.output
