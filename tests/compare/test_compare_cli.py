"""``ragrade compare`` and ``ragrade report`` on files written by the test."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragrade.cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("cli")
    qrels_lines, runs = [], {"bm25": [], "dense": []}
    for qi in range(60):
        q = f"q{qi}"
        rel = {f"d{qi}_{j}": int(g) for j, g in enumerate(rng.choice([0, 1, 2], size=6))}
        rel[f"d{qi}_0"] = 2
        qrels_lines += [f"{q} 0 {d} {g}" for d, g in rel.items()]
        for name, strength in (("bm25", 0.3), ("dense", 1.5)):
            scores = {f"d{qi}_{j}": rng.random() + strength * rel.get(f"d{qi}_{j}", 0) for j in range(20)}
            ranked = sorted(scores.items(), key=lambda t: -t[1])
            runs[name] += [f"{q} Q0 {d} {r} {s:.6f} {name}" for r, (d, s) in enumerate(ranked, start=1)]
    out = {"qrels": root / "qrels.txt"}
    out["qrels"].write_text("\n".join(qrels_lines) + "\n")
    for name, lines in runs.items():
        out[name] = root / f"{name}.trec"
        out[name].write_text("\n".join(lines) + "\n")
    texts = root / "corpus.jsonl"
    texts.write_text('{"_id": "d0_0", "text": "<script>window.__pwned = 1</script>"}\n')
    out["texts"] = texts
    return out


def _run(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_compare_json_output(files) -> None:
    res = _run(
        [
            "compare",
            str(files["qrels"]),
            str(files["bm25"]),
            str(files["dense"]),
            "-m",
            "ndcg@10",
            "-m",
            "recall@[3,5]",
            "--format",
            "json",
            "--resamples",
            "500",
            "--seed",
            "1",
        ]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["metrics"] == ["ndcg@10", "recall@3", "recall@5"]
    assert [r["name"] for r in data["runs"]] == ["bm25", "dense"]
    pair = next(p for p in data["pairs"] if p["metric"] == "ndcg@10")
    assert pair["control"] == "bm25" and pair["delta"] > 0 and pair["significant"]
    again = _run(
        [
            "compare",
            str(files["qrels"]),
            str(files["bm25"]),
            str(files["dense"]),
            "-m",
            "ndcg@10",
            "-m",
            "recall@[3,5]",
            "--format",
            "json",
            "--resamples",
            "500",
            "--seed",
            "1",
        ]
    )
    assert again.stdout == res.stdout  # reproducible from the seed


@pytest.mark.parametrize(
    ("fmt", "needle"),
    [
        ("table", "Paired differences"),
        ("markdown", "| a | bm25 |"),
        ("latex", r"\toprule"),
        ("csv", "metric,run,letter"),
    ],
)
def test_compare_formats(files, fmt: str, needle: str) -> None:
    res = _run(
        [
            "compare",
            str(files["qrels"]),
            str(files["bm25"]),
            str(files["dense"]),
            "-m",
            "ndcg@10",
            "--format",
            fmt,
            "--resamples",
            "200",
        ]
    )
    assert res.exit_code == 0, res.output
    assert needle in res.stdout


def test_compare_options_names_baseline_pairs_csv_and_output_file(files, tmp_path) -> None:
    out = tmp_path / "pairs.csv"
    res = _run(
        [
            "compare",
            str(files["qrels"]),
            str(files["bm25"]),
            str(files["dense"]),
            "-m",
            "ndcg@10",
            "--name",
            "A",
            "--name",
            "B",
            "--baseline",
            str(files["dense"]),
            "--test",
            "bootstrap",
            "--correction",
            "holm",
            "--format",
            "csv",
            "--table",
            "pairs",
            "-o",
            str(out),
            "--resamples",
            "200",
        ]
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["control"], r["treatment"]) for r in rows] == [("B", "A")]
    assert float(rows[0]["delta"]) < 0


def test_compare_errors_are_clean(files) -> None:
    res = _run(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "ndcg@1O"])
    assert res.exit_code == 2 and "error:" in res.stderr and "Traceback" not in res.output
    res = _run(["compare", str(files["qrels"]), str(files["bm25"]), "-m", "ndcg@10"])
    assert res.exit_code != 0 and "at least two runs" in res.output
    res = _run(
        [
            "compare",
            str(files["qrels"]),
            str(files["bm25"]),
            str(files["dense"]),
            "-m",
            "ndcg@10",
            "--baseline",
            "nope",
        ]
    )
    assert res.exit_code != 0 and "not one of the runs" in res.output


def test_report_command_writes_a_self_contained_file(files, tmp_path) -> None:
    out = tmp_path / "r.html"
    res = _run(
        [
            "report",
            str(files["qrels"]),
            str(files["bm25"]),
            str(files["dense"]),
            "-m",
            "ndcg@10",
            "-m",
            "recall@5",
            "-o",
            str(out),
            "--texts",
            str(files["texts"]),
            "--resamples",
            "200",
            "--title",
            "CLI <report>",
            "--no-plots",
        ]
    )
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "CLI &lt;report&gt;" in page
    assert "\\u003cscript\\u003ewindow.__pwned" in page and "<script>window.__pwned" not in page
    bad = _run(
        [
            "report",
            str(files["qrels"]),
            str(files["bm25"]),
            str(files["dense"]),
            "-m",
            "ndcg@10",
            "-o",
            str(tmp_path / "r.txt"),
        ]
    )
    assert bad.exit_code != 0 and ".html" in bad.output
