"""``ragrade evaluate`` through click's CliRunner: output shapes, exit codes, stderr vs stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragrade import evaluate, read_qrels, read_run
from ragrade.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = str(EXAMPLES / "qrels.tsv")
RUN = str(EXAMPLES / "run.tsv")


def _run(*args: str):
    runner = CliRunner()
    return runner.invoke(main, list(args), catch_exceptions=False)


def test_json_shape_exactly():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "-m", "recall@5", "--format", "json")
    assert res.exit_code == 0
    out = json.loads(res.stdout)  # stdout is exactly one JSON object: Result.to_json()
    assert set(out) == {"run", "metrics", "counts", "queries", "summary", "hole_rate"}
    assert list(out["metrics"]) == ["ndcg@10", "recall@5"]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = evaluate(read_qrels(QRELS), read_run(RUN), ["ndcg@10", "recall@5"])
    assert out["metrics"]["ndcg@10"] == pytest.approx(expected["ndcg@10"], abs=0, rel=1e-15)
    assert out["queries"] == expected.n_queries == 34
    # Policy events are reported on stderr, not stdout.
    assert "missing from the run" in res.stderr
    assert "note:" in res.stderr


def test_json_per_query_with_null_for_nan():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "-m", "P@5", "--format", "json", "--per-query")
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert set(out) == {"run", "metrics", "counts", "queries", "summary", "per_query", "hole_rate"}
    pq = out["per_query"]
    assert len(pq) == 36
    assert set(pq["q01"]) == {"ndcg@10", "P@5"}
    assert pq["q09"] == {"ndcg@10": None, "P@5": None}  # no relevant judgment: not counted
    assert pq["q31"]["ndcg@10"] == 0.0  # missing from the run: scores 0 (default policy)


def test_metric_label_kept_as_written_and_cutoff_lists():
    res = _run("evaluate", QRELS, RUN, "-m", "MAP@100", "-m", "recall@[1,5]", "--format", "json")
    out = json.loads(res.stdout)
    assert list(out["metrics"]) == ["MAP@100", "recall@1", "recall@5"]


def test_policy_options_change_results():
    base = json.loads(_run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--format", "json").stdout)
    drop = json.loads(_run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--format", "json",
                           "--missing-run", "drop").stdout)
    assert drop["queries"] == base["queries"] - 1
    assert drop["metrics"]["ndcg@10"] > base["metrics"]["ndcg@10"]
    zero = json.loads(_run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--format", "json",
                           "--no-relevant", "zero").stdout)
    assert zero["queries"] == 36


def test_policy_error_exits_2():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--missing-run", "error")
    assert res.exit_code == 2
    assert res.stderr.startswith("error: ")
    assert "q31" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout


def test_invalid_policy_value_is_a_usage_error():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--ties", "random")
    assert res.exit_code == 2
    assert "docid_desc" in res.stderr


def test_metric_typo_suggests():
    res = _run("evaluate", QRELS, RUN, "-m", "ndgc@10")
    assert res.exit_code == 2
    assert "error:" in res.stderr and "ndcg" in res.stderr
    assert res.stdout == ""


def test_bad_input_file_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("q01 Q0 doc-1 1 0.5 x\nq01 Q0 doc-2 2 oops x\n")
    res = _run("evaluate", QRELS, str(bad), "-m", "ndcg@10")
    assert res.exit_code == 2
    assert f"error: {bad}:2:" in res.stderr
    assert "oops" in res.stderr


def test_missing_file_exits_2(tmp_path):
    res = _run("evaluate", QRELS, str(tmp_path / "none.trec"), "-m", "ndcg@10")
    assert res.exit_code == 2
    assert "no such file" in res.stderr


def test_table_output():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "-m", "recall@5")
    assert res.exit_code == 0
    assert "ndcg@10" in res.stdout and "recall@5" in res.stdout and "34" in res.stdout
    assert res.stdout.splitlines()[0].strip() == "run"  # named by its file, as compare and report name runs
    assert "missing from the run" in res.stderr
    assert "tied scores" in res.stderr
    named = _run("evaluate", QRELS, RUN, "-m", "P@1", "--name", "bm25", "--format", "json")
    assert json.loads(named.stdout)["run"] == "bm25"


def test_table_per_query():
    res = _run("evaluate", QRELS, RUN, "-m", "rr", "--per-query")
    assert "q01" in res.stdout and "q36" in res.stdout


def test_csv_output():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "-m", "P@5", "--format", "csv")
    lines = res.stdout.splitlines()
    assert lines[0] == "metric,mean,queries"
    assert lines[1].startswith("ndcg@10,0.") and lines[1].endswith(",34")
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--format", "csv", "--per-query", "--digits", "6")
    lines = res.stdout.splitlines()
    assert lines[0] == "query,ndcg@10"
    assert len(lines) == 1 + 36 + 1
    assert lines[-1].startswith("all,0.") and len(lines[-1].split(".")[1]) == 6


def test_markdown_output():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--format", "markdown")
    assert res.stdout.startswith("| metric | mean | queries |")


def test_format_override(tmp_path):
    data = tmp_path / "run.data"
    data.write_text(Path(RUN).read_text())
    res = _run("evaluate", QRELS, str(data), "-m", "ndcg@10", "--run-format", "trec", "--format", "json")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["queries"] == 34


def test_progress_bar_on_large_inputs(monkeypatch):
    import ragrade.cli._output as out

    monkeypatch.setattr(out, "PROGRESS_THRESHOLD", 1)
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--format", "json")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["queries"] == 34  # the bar never pollutes stdout


def test_main_help_lists_commands():
    res = _run("--help")
    assert res.exit_code == 0
    for cmd in ("evaluate", "metrics", "convert"):
        assert cmd in res.stdout


def test_nan_mean_is_null_in_json():
    res = _run("evaluate", QRELS, RUN, "-m", "ndcg@10", "--format", "json", "--no-relevant", "nan")
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert out["metrics"] == {"ndcg@10": None}


def test_notes_have_one_wording_in_every_format(tmp_path) -> None:
    """The policy notes (missing queries, queries without ground truth, a tie across a cutoff) read the same
    in the table and in json/csv/markdown, and the tie note is in every one of them."""
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("q1 0 a 1\nq2 0 a 1\n")
    run.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq3 Q0 a 1 1 t\n")
    seen = {}
    for fmt in ("table", "json", "csv", "markdown"):
        res = CliRunner().invoke(main, ["evaluate", str(qrels), str(run), "-m", "P@1", "--format", fmt],
                                 catch_exceptions=False, env={"COLUMNS": "400"})
        assert res.exit_code == 0, res.output
        seen[fmt] = [line for line in res.stderr.splitlines() if line.startswith("note:")]
    assert seen["table"] == seen["json"] == seen["csv"] == seen["markdown"]
    assert seen["json"] == ["note: 1 ground-truth query missing from the run, scored 0 (e.g. 'q2')",
                            "note: 1 run query without ground truth, ignored (e.g. 'q3')",
                            "note: 1 query has tied scores across cutoff 1 (values depend on the tie rule: docid_desc)"]
