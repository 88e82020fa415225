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
from ragrade.report import read_payload


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
    assert "<script>window.__pwned" not in page
    data = read_payload(page)
    assert "<script>window.__pwned = 1</script>" in data["doctext"]  # in the data, as text
    assert "<svg" not in page
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


def test_report_command_draws_plots_and_takes_cutoffs(files, tmp_path) -> None:
    out = tmp_path / "plots.html"
    res = _run(
        ["report", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "ndcg@10", "-o", str(out),
         "--resamples", "200", "--ks", "1,5,10", "--ci-method", "resample"]
    )
    assert res.exit_code == 0, res.output
    page = out.read_text()
    # scatter, differences, curves, distributions, and the hole rate the engine measured for every run
    assert page.count('<figure class="plot"') == 5 and "200 resamples, seed 0" in page
    assert "unjudged" in page
    bad = _run(["report", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "ndcg@10", "-o",
                str(out), "--ks", "1,x"])
    assert bad.exit_code == 2 and "--ks" in bad.output


def test_plot_command_writes_svg_and_png_files(files, tmp_path) -> None:
    res = _run(
        ["plot", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "ndcg@10", "-o",
         str(tmp_path / "svg"), "--resamples", "100", "--ks", ""]
    )
    assert res.exit_code == 0, res.output
    written = sorted(p.name for p in (tmp_path / "svg").iterdir())
    assert written == ["hole-rate.svg", "ndcg@10-difference-bm25-vs-dense.svg", "ndcg@10-distribution.svg",
                       "ndcg@10-scatter-bm25-vs-dense.svg"]
    assert sorted(res.output.split()) == [str(tmp_path / "svg" / n) for n in written]
    pytest.importorskip("matplotlib", reason="PNG plots need the plots extra")
    res = _run(
        ["plot", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "recall@5", "-o",
         str(tmp_path / "png"), "--format", "png", "--resamples", "100", "--ks", "1,5", "--scale", "1"]
    )
    assert res.exit_code == 0, res.output
    pngs = sorted((tmp_path / "png").iterdir())
    assert len(pngs) == 5 and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)


def test_compare_with_tukey_and_groups(files) -> None:
    pytest.importorskip("scipy")
    res = _run(
        ["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), str(files["bm25"]), "--name", "a",
         "--name", "b", "--name", "c", "-m", "ndcg@10", "--test", "tukey", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["test"] == "tukey"
    groups = {row["run"]: row["group"] for row in data["summary"]}
    assert groups["a"] == groups["c"] != groups["b"]
    bad = _run(["compare", str(files["qrels"]), str(files["bm25"]), str(files["dense"]), "-m", "ndcg@10",
                "--test", "tukey", "--correction", "holm"])
    assert bad.exit_code == 2 and "family-wise" in bad.output
