"""``ragrade nuggets create|assign|score`` and the evaluating commands on a nuggets file: outputs, exit
statuses, and a ``kill -9`` in the middle of ``nuggets create`` followed by a resume that repeats no call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from nugget_helpers import calls, collection

import ragrade
from ragrade.cli import main
from ragrade.nuggets import read, read_assignments

SRC = str(Path(ragrade.__file__).resolve().parent.parent)


def _run(args, **kw):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kw)


def _files(tmp_path: Path, coll: dict) -> dict[str, Path]:
    """qrels (TREC), topics (TSV), corpus (JSONL) and the three runs (TREC) of a collection."""
    out = {"qrels": tmp_path / "qrels.txt", "topics": tmp_path / "topics.tsv", "corpus": tmp_path / "corpus.jsonl"}
    out["qrels"].write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in coll["qrels"].items() for d, g in docs.items()))
    out["topics"].write_text("".join(f"{q}\t{t}\n" for q, t in coll["queries"].items()))
    out["corpus"].write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in coll["passages"].items()))
    for name, run in coll["runs"].items():
        out[name] = tmp_path / f"{name}.run"
        out[name].write_text("".join(f"{q} Q0 {d} {r + 1} {len(docs) - r} {name}\n"
                                     for q, docs in run.items() for r, d in enumerate(docs)))
    return out


def _llm(server, cache: Path, *more) -> list:
    return ["--base-url", server.base_url, "--model", "scripted", "--api-key-env", "RAGRADE_NO_KEY", "--cache", cache,
            "--max-concurrency", "1", *more]


def test_create_assign_score_and_evaluate_from_the_command_line(nugget_server, tmp_path):
    coll = collection(n_queries=2)
    f = _files(tmp_path, coll)
    cache = tmp_path / "c.sqlite3"
    res = _run(["nuggets", "create", f["qrels"], "--queries", f["topics"], "--corpus", f["corpus"], "-o",
                tmp_path / "n.jsonl", "--format", "json", *_llm(nugget_server, cache)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    nugs = read(tmp_path / "n.jsonl")
    assert out["costs"]["calls"] == len(calls(nugget_server)) == 2 * (1 + 1)  # 8 passages >= 2: one window, one batch
    assert len(nugs) == out["counts"]["nuggets"] == 16 and nugs.query_text("q0") == coll["queries"]["q0"]
    res = _run(["nuggets", "assign", tmp_path / "n.jsonl", f["a"], f["b"], f["c"], "--corpus", f["corpus"],
                "--depth", "5", "--joined", "3", "-o", tmp_path / "a.jsonl", "--progress", *_llm(nugget_server, cache)])
    assert res.exit_code == 0, res.output
    asg = read_assignments(tmp_path / "a.jsonl")
    assert len(asg) > 0 and "calls" in res.stdout and "cache hits" in res.stderr  # the progress line
    ev = _run(["evaluate", tmp_path / "n.jsonl", f["a"], "-m", "nugget_recall@3", "-m", "nugget_precision@5",
               "-m", "nugget_recall(context=joined)@3", "-m", "alpha_ndcg@5", "--assignments", tmp_path / "a.jsonl",
               "--format", "json", "--per-query"])
    assert ev.exit_code == 0, ev.output
    data = json.loads(ev.stdout)
    direct = ragrade.evaluate(nugs, str(f["a"]), ["nugget_recall@3", "nugget_precision@5",
                                                  "nugget_recall(context=joined)@3", "alpha_ndcg@5"], assignments=asg)
    for label, v in direct.means.items():
        assert data["means"][label] == pytest.approx(v)
    cmp = _run(["compare", tmp_path / "n.jsonl", f["a"], f["b"], "-m", "nugget_recall@3", "--assignments",
                tmp_path / "a.jsonl"])
    assert cmp.exit_code == 0, cmp.output
    assert "nugget_recall@3" in cmp.stdout


def test_nuggets_score_prints_both_profiles(tmp_path):
    n = tmp_path / "n.jsonl"
    n.write_text("".join(json.dumps(r) + "\n" for r in [
        {"query": "q1", "nugget_id": "n1", "text": "a", "importance": "vital"},
        {"query": "q1", "nugget_id": "n2", "text": "b", "importance": "okay"}]))
    a = tmp_path / "a.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in [
        {"query": "q1", "nugget_id": "n1", "label": "partial_support"},
        {"query": "q1", "nugget_id": "n2", "label": "support"}]))
    res = _run(["nuggets", "score", n, a, "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["means"]["mean"] == {"strict_vital_score": 0.0, "strict_all_score": 0.5,
                                                        "vital_score": 0.5, "all_score": 0.75}
    res = _run(["nuggets", "score", n, a, "--profile", "open_rag_eval", "--format", "json"])
    means = json.loads(res.stdout)["means"]["mean"]
    assert means["Weighted"] == pytest.approx((0.5 + 0.5 * 1) / 1.5) and means["Vital Strict"] == 0.0
    table = _run(["nuggets", "score", n, a, "--per-query"])
    assert table.exit_code == 0 and "all_score" in table.stdout


def test_bad_files_are_clear_errors(tmp_path):
    n = tmp_path / "n.jsonl"
    n.write_text('{"query": "q1", "nugget_id": "n1", "text": "a", "importance": "crucial"}\n')
    a = tmp_path / "a.jsonl"
    a.write_text('{"query": "q1", "nugget_id": "n1", "label": "yes"}\n')
    res = _run(["nuggets", "score", n, a])
    assert res.exit_code == 2 and "n.jsonl:1:" in res.stderr and "crucial" in res.stderr
    n.write_text('{"query": "q1", "nugget_id": "n1", "text": "a", "importance": "vital"}\n')
    res = _run(["nuggets", "score", n, a])
    assert res.exit_code == 2 and "a.jsonl" in res.stderr and "'yes'" in res.stderr
    run = tmp_path / "r.tsv"
    run.write_text("q1\td1\t1.0\n")
    res = _run(["evaluate", n, run, "-m", "nugget_recall@3"])
    assert res.exit_code == 2 and "assignments" in res.stderr


def test_failures_beyond_max_failed_exit_1(nugget_server, tmp_path):
    import nugget_helpers

    coll = collection(n_queries=1, per_query=3)
    f = _files(tmp_path, coll)
    nugget_helpers.FAULTS["NEW PASSAGES"] = ["bad_json"] * 3
    res = _run(["nuggets", "create", f["qrels"], "--queries", f["topics"], "--corpus", f["corpus"], "-o",
                tmp_path / "n.jsonl", *_llm(nugget_server, tmp_path / "c.sqlite3")])
    assert res.exit_code == 1 and "1 calls failed" in res.stderr
    assert (tmp_path / "n.jsonl").exists()


def test_kill_9_then_resume_repeats_no_call(nugget_server, tmp_path):
    from ragrade.llm.cache import JudgmentCache

    coll = collection(n_queries=4, per_query=38)  # 25 passages graded >= 2 a query: 3 windows + 3 label batches
    f = _files(tmp_path, coll)
    cache = tmp_path / "c.sqlite3"
    nugget_server.latency = 0.05
    cmd = [sys.executable, "-m", "ragrade", "nuggets", "create", *map(str, [
        f["qrels"], "--queries", f["topics"], "--corpus", f["corpus"], "-o", tmp_path / "n.jsonl",
        *_llm(nugget_server, cache)])]
    env = {**os.environ, "PYTHONPATH": SRC}
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and child.poll() is None:
        if cache.exists():
            with JudgmentCache(cache) as c:
                stored = len(c)
            if stored >= 7:
                break
        time.sleep(0.02)
    assert child.poll() is None, "the run finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with JudgmentCache(cache) as c:
        finished = len(c)
    first = [e["user"] for e in calls(nugget_server)]
    assert not (tmp_path / "n.jsonl").exists() and finished >= 7
    nugget_server.latency = 0.0
    res = subprocess.run([*cmd, "--format", "json"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    second = [e["user"] for e in calls(nugget_server)][len(first):]
    costs = json.loads(res.stdout)["costs"]
    assert costs["calls"] == len(second) == 24 - finished and costs["cache_hits"] == finished
    assert len(set(second) & set(first)) <= len(first) - finished  # only a call in flight at the kill is asked again
    assert len(read(tmp_path / "n.jsonl")) == 4 * 20


def test_evaluate_assigns_through_nugget_judge(nugget_server, tmp_path, monkeypatch):
    coll = collection(n_queries=2)
    f = _files(tmp_path, coll)
    nuggets = tmp_path / "n.jsonl"
    nuggets.write_text("".join(json.dumps({"query": q, "query_text": t, "nugget_id": f"n{j}", "text": f"key k{j:02d} "
                                                   "is stated", "importance": "vital"}) + "\n"
                               for q, t in coll["queries"].items() for j in range(3)))
    monkeypatch.setenv("RAGRADE_JUDGE_BASE_URL", nugget_server.base_url)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ["evaluate", nuggets, f["a"], "-m", "nugget_recall@2", "--nugget-judge", "openai:scripted", "--corpus",
            f["corpus"], "--format", "json"]
    res = _run(args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["means"]["nugget_recall@2"] == pytest.approx((2 + 0.5) / 3)  # k00, k01 stated; k02 partly by d01
    assert data["summary"]["judgments"]["calls"] == len(calls(nugget_server)) == 4  # 2 queries x top 2
    again = _run(args)
    assert json.loads(again.stdout)["summary"]["judgments"]["cache_hits"] == 4 and len(calls(nugget_server)) == 4
