"""``ragrade synthesize`` end to end: the four files, exit statuses, refusing to overwrite a test set, --resume
after a kill -9 giving the files of an uninterrupted run with no cached judgment asked again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragrade.cli import main

from . import scripted

SRC = Path(__file__).resolve().parents[2] / "src"
FILES = ("spans.jsonl", "topics.tsv", "provenance.jsonl", "rejects.jsonl", "run.json")


def _args(server, docs, out, cache, *extra):
    return ["synthesize", str(docs), "-n", "10", "-o", str(out), "--base-url", server.base_url, "--model", "scripted",
            "--api-key-env", "NO_KEY_HERE", "--cache", str(cache), "--passage-chars", "500", "--min-passage-chars",
            "100", "--max-retries", "0", *extra]


def test_the_command_writes_the_four_files_and_refuses_to_overwrite(server, folder, tmp_path):
    docs, out = folder(paragraphs=3), tmp_path / "set"
    r = CliRunner().invoke(main, [*_args(server, docs, out, tmp_path / "c.sqlite3"), "--format", "json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)["summary"]
    assert summary["kept"] == 10 and summary["kept_by_kind"] == {"single": 5, "multi": 3, "abstract": 2}
    assert all((out / f).exists() for f in FILES)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left
    again = CliRunner().invoke(main, _args(server, docs, out, tmp_path / "c.sqlite3"))
    assert again.exit_code == 2 and "--resume" in again.output
    calls = server.count()
    resumed = CliRunner().invoke(main, [*_args(server, docs, out, tmp_path / "c.sqlite3"), "--resume"])
    assert resumed.exit_code == 0 and server.count() == calls  # everything from the cache
    other = CliRunner().invoke(main, [*_args(server, docs, out, tmp_path / "c.sqlite3"), "--resume", "--seed", "3"])
    assert other.exit_code == 2 and "other settings" in other.output


def test_usage_errors(server, folder, tmp_path):
    docs = folder(paragraphs=2)
    runner = CliRunner()
    assert runner.invoke(main, ["synthesize", str(docs), "-o", str(tmp_path / "x")]).exit_code == 2  # no -n
    r = runner.invoke(main, [*_args(server, docs, tmp_path / "y", tmp_path / "c"), "--no-cache", "--resume"])
    assert r.exit_code == 2 and "--resume needs the cache" in r.output
    r = runner.invoke(main, [*_args(server, docs, tmp_path / "z", tmp_path / "c"), "--judge", "semantic"])
    assert r.exit_code == 2 and "semantic" in r.output
    r = runner.invoke(main, ["synthesize", str(docs), "-n", "3", "-o", str(tmp_path / "off"), "--judge", "offline",
                             "--no-cache", "--passage-chars", "500", "--min-passage-chars", "100"])
    assert r.exit_code == 0 and "by rule" in r.output and server.count() == 0
    r = runner.invoke(main, [*_args(server, docs, tmp_path / "w", tmp_path / "c"), "--mix", "single=0"])
    assert r.exit_code == 2 and "mix" in r.output
    r = runner.invoke(main, ["synthesize", "-n", "3", "-o", str(tmp_path / "v")])
    assert r.exit_code == 2 and "corpus" in r.output


def test_an_incomplete_set_exits_1(server, folder, tmp_path):
    docs = folder({d: ["BADJSON"] for d in ("harbor", "orchard", "library", "bridge", "observatory")}, paragraphs=1,
                  every=True)
    r = CliRunner().invoke(main, [*_args(server, docs, tmp_path / "set", tmp_path / "c"), "--mix", "single=1"])
    assert r.exit_code == 1
    assert "questions" in r.output and (tmp_path / "set" / "rejects.jsonl").exists()


def _cli(args, env):
    return subprocess.Popen([sys.executable, "-m", "ragrade", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def _ok_rows(cache: Path) -> int:
    with sqlite3.connect(cache) as db:
        return db.execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0]


@pytest.mark.slow
def test_kill_9_then_resume_writes_the_files_of_an_uninterrupted_run(folder, tmp_path):
    pytest.importorskip("httpx")
    docs = folder({"harbor": ["DUPLICATE"], "orchard": ["DUPLICATE"], "library": ["NOTFOUND"]}, paragraphs=3)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    with scripted.ScriptedServer(latency=0.03) as server:
        whole = subprocess.run([sys.executable, "-m", "ragrade",
                                *_args(server, docs, tmp_path / "whole", tmp_path / "whole.sqlite3"),
                                "--max-concurrency", "2"], env=env, capture_output=True, timeout=300)
        assert whole.returncode == 0, whole.stderr.decode()
        uninterrupted = server.count()
        server.log.clear()
        args = [*_args(server, docs, tmp_path / "cut", tmp_path / "cut.sqlite3"), "--max-concurrency", "2"]
        proc = _cli(args, env)
        deadline = time.monotonic() + 120
        while server.count() < uninterrupted // 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not (tmp_path / "cut" / "spans.jsonl").exists()
        first = server.count()
        cached = _ok_rows(tmp_path / "cut.sqlite3")
        assert 0 < cached < uninterrupted
        again = subprocess.run([sys.executable, "-m", "ragrade", *args, "--resume"], env=env, capture_output=True,
                               timeout=300)
        assert again.returncode == 0, again.stderr.decode()
        second = server.count() - first
    # no judgment the cache held was asked again; everything else once
    assert second == uninterrupted - cached
    for name in FILES:
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_budget_calls_on_the_command_line(server, folder, tmp_path):
    docs = folder(paragraphs=2)
    r = CliRunner().invoke(main, [*_args(server, docs, tmp_path / "set", tmp_path / "c"), "--budget-calls", "9",
                                  "--format", "json"])
    assert r.exit_code == 1 and server.count() <= 9
    counts = json.loads(r.output[: r.output.rindex("}") + 1])["counts"]
    assert counts["requests"] == server.count() and counts["budget_reached"]
