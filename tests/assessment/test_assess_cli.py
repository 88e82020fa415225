"""``ragrade assess`` and ``ragrade agreement`` from the command line: outputs, exit codes, dry run, the
worked example of docs/assessment.md, and a ``kill -9`` in the middle of a run followed by a resume that
asks no finished pair again."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main

SRC = str(Path(ragrade.__file__).resolve().parent.parent)


def _run(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)


def _base(examples):
    return ["assess", examples / "run.tsv", examples / "run_dense.tsv", "--queries", examples / "topics.tsv",
            "--corpus", examples / "corpus.jsonl"]


def test_assess_writes_valid_qrels_provenance_and_merged_file(examples, tmp_path):
    out = tmp_path / "llm.qrels"
    res = _run([*_base(examples), "--qrels", examples / "qrels.tsv", "-o", out, "--no-cache"])
    assert res.exit_code == 0, res.output
    qrels = ragrade.read_qrels(out)
    prov = json.loads((tmp_path / "llm.qrels.provenance.json").read_text())
    assert prov["approximation"] is True and prov["judge"]["name"] == "lexical"
    assert prov["pool"]["depth"] == 10 and prov["pool"]["runs"] == ["run", "run_dense"]
    assert prov["counts"]["graded"] == qrels.n_rows == sum(prov["grades"].values())
    assert prov["missing_passages"] == {"count": 1, "ids": ["doc-0788"]}
    assert prov["complete"] is True and prov["ragrade_version"] == ragrade.__version__
    for line in out.read_text().splitlines():
        q, zero, d, g = line.split()
        assert zero == "0" and g in "0123"
    merged = pd.read_parquet(tmp_path / "llm.merged.parquet")
    assert set(merged["origin"]) == {"human", "llm"}
    assert merged.loc[merged["origin"] == "llm", "assessor"].str.contains("offline approximation").all()
    human = ragrade.read_qrels(examples / "qrels.tsv").to_dict()
    via_reader = ragrade.read_qrels(tmp_path / "llm.merged.parquet").to_dict()
    for q, docs in human.items():  # human wins where both judged
        for d, g in docs.items():
            assert via_reader[q][d] == g
    assert "offline approximation" in res.output


def test_worked_example_of_the_docs(examples, tmp_path):
    """docs/assessment.md: pool two runs, assess offline, merge, then agreement."""
    res = _run([*_base(examples), "--qrels", examples / "qrels.tsv", "--holes-only", "-o", tmp_path / "holes.qrels",
                "--no-cache", "--format", "json"])
    assert res.exit_code == 0
    prov = json.loads(res.stdout)
    assert prov["pool"]["holes_only"] is True and prov["pool"]["already_judged"] > 0
    full = _run([*_base(examples), "-o", tmp_path / "llm.qrels", "--no-cache"])
    assert full.exit_code == 0
    agree = _run(["agreement", examples / "qrels.tsv", tmp_path / "llm.qrels", examples / "run.tsv",
                  examples / "run_dense.tsv", "-m", "ndcg@10", "-m", "map", "--format", "json"])
    assert agree.exit_code == 0, agree.output
    d = json.loads(agree.stdout)
    for key in ("pairs", "kappa", "weighted_kappa", "confusion"):
        assert key in d
    assert d["confusion"]["grades"] == [0, 1, 2, 3] and len(d["confusion"]["matrix"]) == 4
    assert sum(map(sum, d["confusion"]["matrix"])) == d["pairs"]
    for metric in ("ndcg@10", "map"):
        s = d["systems"][metric]
        assert set(s) >= {"kendall_tau", "tau_ap", "spearman", "means"}
        assert set(s["means"]) == {"run", "run_dense"} and all(len(v) == 2 for v in s["means"].values())
    table = _run(["agreement", examples / "qrels.tsv", tmp_path / "llm.qrels", examples / "run.tsv",
                  examples / "run_dense.tsv"])
    assert "Cohen's kappa" in table.stdout and "systems · ndcg@10" in table.stdout
    md = _run(["agreement", examples / "qrels.tsv", tmp_path / "llm.qrels", "--format", "markdown"])
    assert md.stdout.startswith("| label agreement | value |")


def test_agreement_ppi_from_the_command_line(examples, tmp_path):
    # humans labelled a random half of the queries; the assessor labelled all
    human = ragrade.read_qrels(examples / "qrels.tsv").to_dict()
    keep = sorted(human)[::2]
    with open(tmp_path / "half.qrels", "w") as f:
        for q in keep:
            for d, g in human[q].items():
                f.write(f"{q} 0 {d} {g}\n")
    assert _run([*_base(examples), "-o", tmp_path / "llm.qrels", "--no-cache"]).exit_code == 0
    res = _run(["agreement", tmp_path / "half.qrels", tmp_path / "llm.qrels", examples / "run.tsv",
                examples / "run_dense.tsv", "--ppi", "--format", "json"])
    assert res.exit_code == 0, res.output
    ppi = json.loads(res.stdout)["ppi"]["ndcg@10"]["run"]
    assert ppi["ppi"]["n_labeled"] == len(keep) - 2  # q09, q27: no relevant judgment, undefined, left out
    assert ppi["ppi"]["low"] < ppi["ppi"]["estimate"] < ppi["ppi"]["high"]
    assert _run(["agreement", tmp_path / "half.qrels", tmp_path / "llm.qrels", "--ppi"]).exit_code == 2


def test_dry_run_prints_the_plan_and_writes_nothing(examples, tmp_path):
    res = _run([*_base(examples), "--dry-run", "--judge", "openai", "--base-url", "http://127.0.0.1:9/v1",
                "--prompt-price", "0.15", "--completion-price", "0.6", "--format", "json", "--no-cache"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    assert plan["dry_run"] and plan["pairs"] == 624 and plan["calls"] == 623 and plan["not_judged"] == 1
    assert plan["prompt_tokens"] > 0 and plan["cost"] > 0 and plan["worst_cost"] > plan["cost"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, message", [
    (["--budget-usd", "1"], "--budget-usd needs"),
    (["--holes-only"], "--holes-only needs --qrels"),
    (["--max-failed", "lots"], "a count"),
])
def test_usage_errors_exit_2(examples, tmp_path, args, message):
    res = _run([*_base(examples), "-o", tmp_path / "x.qrels", *args])
    assert res.exit_code == 2 and message in res.output


def test_bad_inputs_exit_2_with_error_prefix(examples, tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "zzz", "text": "nothing pooled"}\n')
    res = _run(["assess", examples / "run.tsv", "--queries", examples / "topics.tsv", "--corpus",
                tmp_path / "corpus.jsonl", "-o", tmp_path / "x.qrels"])
    assert res.exit_code == 2 and res.stderr.startswith("error: ") and "none of the" in res.stderr
    (tmp_path / "topics.tsv").write_text("other\tquery\n")
    res = _run(["assess", examples / "run.tsv", "--queries", tmp_path / "topics.tsv", "--corpus",
                examples / "corpus.jsonl", "-o", tmp_path / "x.qrels"])
    assert res.exit_code == 2 and "pooled queries has a text" in res.stderr
    (tmp_path / "bad.jsonl").write_text('{"_id": 1, "text": "x"}\n{"_id": \n')
    res = _run(["assess", examples / "run.tsv", "--queries", examples / "topics.tsv", "--corpus",
                tmp_path / "bad.jsonl", "-o", tmp_path / "x.qrels"])
    assert res.exit_code == 2 and "bad.jsonl:2" in res.stderr


DEPTH = 4  # the LLM runs use a shallower pool: fewer calls to the loopback server


def _judgeable(examples, depth: int = DEPTH) -> int:
    from ragrade.assessment import pool

    runs = [ragrade.read_run(examples / "run.tsv"), ragrade.read_run(examples / "run_dense.tsv")]
    return sum(1 for _, d in pool(runs, depth=depth).as_tuples() if d != "doc-0788")


def _llm_args(examples, server, out, cache, *extra):
    return [*_base(examples), "--judge", "openai", "--base-url", server.base_url, "--model", "fake", "-o", out,
            "--cache", cache, "--max-retries", "1", "--depth", str(DEPTH), *extra]


def test_failures_beyond_max_failed_exit_1_and_keep_the_graded_pairs(examples, tmp_path, grading_server):
    grading_server.faults.extend(["garbage"] * 4)  # 2 pairs unreadable twice (ask + one re-ask)
    res = _run(_llm_args(examples, grading_server, tmp_path / "o.qrels", tmp_path / "c.sqlite3", "--max-concurrency", "1",
                         "--depth", "1"))
    assert res.exit_code == 1, res.output
    assert re.search(r"(^|\n)error: 2 pairs failed", res.stderr) and "not a JSON object" in res.stderr
    assert len((tmp_path / "o.qrels").read_text().splitlines()) == _judgeable(examples, 1) - 2
    assert json.loads((tmp_path / "o.qrels.provenance.json").read_text())["failures"]["count"] == 2
    grading_server.faults.extend(["garbage"] * 2)
    ok = _run(_llm_args(examples, grading_server, tmp_path / "p.qrels", tmp_path / "d.sqlite3", "--max-concurrency", "1",
                        "--depth", "1", "--max-failed", "2%"))
    assert ok.exit_code == 0 and "warning: 1 pairs failed" in ok.stderr


def test_budget_stops_cleanly_and_the_rerun_resumes(examples, tmp_path, grading_server):
    cache = tmp_path / "c.sqlite3"
    res = _run(_llm_args(examples, grading_server, tmp_path / "o.qrels", cache, "--budget-calls", "40"))
    assert res.exit_code == 0 and "budget reached" in res.stderr
    assert grading_server.count() == 40 and len((tmp_path / "o.qrels").read_text().splitlines()) == 40
    prov = json.loads((tmp_path / "o.qrels.provenance.json").read_text())
    n = _judgeable(examples)
    assert prov["complete"] is False and prov["budget"]["reached"] is True and prov["counts"]["unasked"] == n - 40
    again = _run(_llm_args(examples, grading_server, tmp_path / "o.qrels", cache, "--format", "json"))
    assert again.exit_code == 0
    assert grading_server.count() == n  # the rest, none of the 40 asked again
    assert json.loads(again.stdout)["counts"]["cache_hits"] == 40
    assert len((tmp_path / "o.qrels").read_text().splitlines()) == n


def test_unreachable_server_exits_2_at_once(examples, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = _run([*_base(examples), "--judge", "openai", "--base-url", f"http://127.0.0.1:{port}/v1", "-o",
                tmp_path / "o.qrels", "--cache", tmp_path / "c.sqlite3"])
    assert res.exit_code == 2 and "\nerror: cannot connect to the judge's server" in res.stderr
    assert not (tmp_path / "o.qrels").exists()


def test_kill_9_then_resume_asks_no_finished_pair_again(examples, tmp_path, grading_server):
    from ragrade.assessment import pool, read_passages, read_queries
    from ragrade.assessment.graders import LLMGrader
    from ragrade.assessment.prompt import build_messages
    from ragrade.assessment.runner import _build
    from ragrade.judges import JudgmentCache

    cache = tmp_path / "c.sqlite3"
    grading_server.latency = 0.03
    cmd = [sys.executable, "-m", "ragrade", *map(str, _llm_args(examples, grading_server, tmp_path / "o.qrels", cache,
                                                               "--max-concurrency", "2", "--no-progress"))]
    env = {**os.environ, "PYTHONPATH": SRC}
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    stored = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if cache.exists():
            with JudgmentCache(cache) as c:
                stored = len(c)
            if stored >= 40:
                break
        time.sleep(0.05)
    assert child.poll() is None, "the run finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert not (tmp_path / "o.qrels").exists()
    with JudgmentCache(cache) as c:
        judge = LLMGrader(model="fake", base_url=grading_server.base_url)
        runs = [ragrade.read_run(examples / "run.tsv"), ragrade.read_run(examples / "run_dense.tsv")]
        p = pool(runs, depth=DEPTH)
        _, requests, _ = _build(p, read_queries(examples / "topics.tsv"),
                                read_passages(examples / "corpus.jsonl", p.doc_ids), judge)
        finished = {k for k, j in c.get_many(requests).items() if j.ok}
    assert len(finished) >= 40
    finished_prompts = {build_messages(requests[k])[1]["content"] for k in finished}
    asked_before = len(grading_server.log)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    second = [e["user"] for e in grading_server.log[asked_before:]]
    assert not finished_prompts & set(second)
    assert len(second) == _judgeable(examples) - len(finished)
    assert len((tmp_path / "o.qrels").read_text().splitlines()) == _judgeable(examples)


@pytest.mark.parametrize("concurrency", [8, 32])
def test_wrong_key_costs_one_request_whatever_the_concurrency(examples, tmp_path, grading_server, concurrency):
    grading_server.api_key = "the-right-key-0123456789"
    cache = tmp_path / "c.sqlite3"
    res = CliRunner().invoke(main, [str(a) for a in [
        *_llm_args(examples, grading_server, tmp_path / "o.qrels", cache, "--max-concurrency", concurrency,
                   "--api-key-env", "RAGRADE_WRONG_KEY")]], env={"RAGRADE_WRONG_KEY": "sk-wrong-key-000000000000"})
    assert res.exit_code == 2 and "HTTP 401" in res.stderr
    assert grading_server.count() == 1  # the key is checked with one request before any other is sent
    assert not (tmp_path / "o.qrels").exists()
    ok = CliRunner().invoke(main, [str(a) for a in [
        *_llm_args(examples, grading_server, tmp_path / "o.qrels", cache, "--max-concurrency", concurrency,
                   "--api-key-env", "RAGRADE_WRONG_KEY")]], env={"RAGRADE_WRONG_KEY": grading_server.api_key})
    assert ok.exit_code == 0, ok.output
    assert grading_server.count() == 1 + _judgeable(examples)  # nothing of the refusal was cached
