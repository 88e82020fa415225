"""``ragrade judge`` on JSONL, CSV and Parquet datasets, offline and against the fault server."""

from __future__ import annotations

import csv
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from seed_data import SEED_ROWS

from ragrade.cli import main


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _invoke(*args):
    result = CliRunner().invoke(main, ["judge", *map(str, args)])
    return result


def test_offline_json_output(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    r = _invoke(data, "--format", "json", "--no-progress", "-m", "llm_context_precision@3", "-m", "context_recall")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out["means"]) == {"llm_context_precision@3", "context_recall"}
    assert set(out["per_query"]) == {"precision", "recall", "entities", "relevancy"}
    assert out["judge"] == "lexical"
    assert out["per_query"]["precision"]["llm_context_precision@3"] == 1.0


def test_table_output_and_details_file(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    details = tmp_path / "details.jsonl"
    r = _invoke(data, "--no-progress", "--per-query", "--details", details)
    assert r.exit_code == 0, r.output
    assert "context_entities_recall" in r.stdout and "per query" in r.stdout
    lines = [json.loads(x) for x in details.read_text().splitlines()]
    assert [x["query_id"] for x in lines] == ["precision", "recall", "entities", "relevancy"]
    assert lines[1]["context_recall"]["statements"][0]["statement"].startswith("The primary causes")


def test_csv_with_json_contexts_and_custom_columns(tmp_path):
    path = tmp_path / "d.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["qid", "q", "gold", "ctx"])
        for r in SEED_ROWS:
            w.writerow([r["id"], r["question"], r["reference"], json.dumps(r["contexts"])])
    r = _invoke(path, "--format", "json", "--no-progress", "--id-col", "qid", "--question-col", "q",
                "--reference-col", "gold", "--contexts-col", "ctx", "-m", "context_recall")
    assert r.exit_code == 0, r.output
    jsonl = _invoke(_jsonl(tmp_path / "d.jsonl", SEED_ROWS), "--format", "json", "--no-progress", "-m", "context_recall")
    assert json.loads(r.stdout)["per_query"] == json.loads(jsonl.stdout)["per_query"]


def test_parquet(tmp_path):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(SEED_ROWS), path)
    r = _invoke(path, "--format", "json", "--no-progress", "-m", "context_relevancy")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["per_query"]["relevancy"]["context_relevancy"] == pytest.approx(2 / 3)


def test_bad_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(SEED_ROWS[0]) + "\n{not json\n")
    r = _invoke(path, "--no-progress")
    assert r.exit_code == 2  # bad input: exit 2 with "error:", as every command
    assert r.stderr.startswith(f"error: {path}:2") and "Traceback" not in r.output


def test_contexts_not_a_list_names_query(tmp_path):
    path = _jsonl(tmp_path / "d.jsonl", [{**SEED_ROWS[0], "contexts": "just a string"}])
    r = _invoke(path, "--no-progress")
    assert r.exit_code == 2 and r.stderr.startswith("error: ")
    assert "'precision'" in r.output and "contexts" in r.output


def test_unknown_metric_suggests(tmp_path):
    r = _invoke(_jsonl(tmp_path / "d.jsonl", SEED_ROWS), "-m", "context_recal", "--no-progress")
    assert r.exit_code == 2 and "Did you mean 'context_recall'" in r.stderr and r.stderr.startswith("error: ")


def test_openai_judge_progress_and_second_run_zero_calls(tmp_path):
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    from fakeserver import FakeLLMServer

    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    cache = tmp_path / "cache.sqlite3"
    with FakeLLMServer() as server:
        server.faults.extend(["429", "500"])
        args = [data, "--judge", "openai", "--base-url", server.base_url, "--model", "fake", "--cache", cache,
                "--format", "json", "--max-concurrency", "4"]
        first = _invoke(*args, "--progress")
        assert first.exit_code == 0, first.output
        assert "cache hits" in first.stderr and "tokens" in first.stderr
        s1 = json.loads(first.stdout)["summary"]["judgments"]
        assert s1["calls"] == s1["needed"] > 0 and s1["failed"] == 0 and s1["prompt_tokens"] > 0
        n = server.count()
        second = _invoke(*args, "--no-progress")
        assert second.exit_code == 0, second.output
        assert server.count() == n
        s2 = json.loads(second.stdout)["summary"]["judgments"]
        assert s2["calls"] == 0 and s2["cache_hits"] == s1["needed"]
        assert json.loads(second.stdout)["per_query"] == json.loads(first.stdout)["per_query"]
