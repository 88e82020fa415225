"""``ragrade metrics``, the generated ``docs/metrics.md`` and ``ragrade convert``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from ragrade import read_qrels, read_run
from ragrade.cli import main
from ragrade.cli.metrics_cmd import render_markdown
from ragrade.metrics import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_metrics_table_lists_registry():
    res = _run("metrics")
    assert res.exit_code == 0
    for d in REGISTRY:
        assert d.name in res.stdout


def test_metrics_json_matches_registry():
    res = _run("metrics", "--format", "json")
    rows = json.loads(res.stdout)
    assert [r["name"] for r in rows] == [d.name for d in REGISTRY]
    ndcg = next(r for r in rows if r["name"] == "ndcg")
    assert "gain=linear (linear|exp)" in ndcg["parameters"]
    assert ndcg["formula"] == next(d.formula for d in REGISTRY if d.name == "ndcg")


def test_docs_metrics_md_is_up_to_date():
    path = ROOT / "docs" / "metrics.md"
    assert path.read_text(encoding="utf-8") == render_markdown(), (
        "docs/metrics.md is stale: run python scripts/gen_metrics_doc.py"
    )
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_metrics_doc.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_metrics_markdown_mentions_every_alias():
    text = render_markdown()
    for d in REGISTRY:
        for a in d.aliases:
            assert f"`{a}`" in text


def test_convert_run_and_qrels_roundtrip(tmp_path):
    out = tmp_path / "run.parquet"
    res = _run("convert", str(EXAMPLES / "run.tsv"), str(out))
    assert res.exit_code == 0, res.stderr
    assert "wrote run" in res.stderr
    assert read_run(out).to_dict() == read_run(EXAMPLES / "run.tsv").to_dict()
    back = tmp_path / "run.trec.gz"
    assert _run("convert", str(out), str(back), "--tag", "again").exit_code == 0
    assert read_run(back).name == "again"
    assert read_run(back).to_lists() == read_run(EXAMPLES / "run.tsv").to_lists()
    q = tmp_path / "qrels.jsonl"
    assert _run("convert", str(EXAMPLES / "qrels.tsv"), str(q)).exit_code == 0
    assert read_qrels(q) == read_qrels(EXAMPLES / "qrels.tsv")


def test_convert_needs_kind_when_ambiguous(tmp_path):
    src = tmp_path / "x.csv"
    src.write_text("a,b\n1,2\n")
    res = _run("convert", str(src), str(tmp_path / "y.jsonl"))
    assert res.exit_code == 2
    assert "--kind" in res.stderr
    res = _run("convert", str(src), str(tmp_path / "y.jsonl"), "--kind", "qrels")
    assert res.exit_code == 2  # no query column: named in the error
    assert "query" in res.stderr


def test_convert_unknown_output_extension(tmp_path):
    res = _run("convert", str(EXAMPLES / "run.tsv"), str(tmp_path / "out.xyz"))
    assert res.exit_code == 2
    assert "format" in res.stderr
    res = _run("convert", str(EXAMPLES / "run.tsv"), str(tmp_path / "out.xyz"), "--output-format", "jsonl")
    assert res.exit_code == 0


def test_metrics_listing_includes_judge_metrics():
    from ragrade.judges.metrics import JUDGE_METRICS

    res = _run("metrics")
    assert res.exit_code == 0
    for name in JUDGE_METRICS:
        assert name in res.stdout
        assert f"`{name}`" in render_markdown()
