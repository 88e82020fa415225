"""The SQLite cache: crash and resume, concurrent writers, default location."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ragrade.judges import Judgment, JudgmentCache, default_cache_path, evaluate_judged
from ragrade.judges.prompts import build_messages

ROWS = [
    {
        "id": f"q{i}",
        "question": f"Where is Landmark{i}?",
        "reference": f"Landmark{i} is in City{i}. It opened in Year{i}.",
        "contexts": [f"Landmark{i} stands in City{i}.", f"Other{i} is elsewhere.", f"Year{i} saw Landmark{i} open."],
    }
    for i in range(30)
]
METRICS = ["llm_context_precision", "context_recall"]

_CHILD = textwrap.dedent(
    """
    import json, sys
    from ragrade.judges import OpenAIJudge, evaluate_judged
    rows = json.load(open(sys.argv[1]))
    judge = OpenAIJudge(model="fake", base_url=sys.argv[2], max_concurrency=2, backoff_base=0.01)
    evaluate_judged(rows, {metrics!r}, judge=judge, cache=sys.argv[3])
    print("finished", flush=True)
    """
).format(metrics=METRICS)


def _user_messages(keys: set[str]) -> set[str]:
    """The prompt (user message) of each judgment key, found by planning the evaluation again."""
    from ragrade.judges import OpenAIJudge
    from ragrade.judges.metrics import parse_many
    from ragrade.judges.runner import _plan, examples_from

    judge = OpenAIJudge(model="fake", base_url="http://127.0.0.1:9/v1")
    requests: dict = {}
    for m in parse_many(METRICS):
        for ex in examples_from(ROWS):
            _plan(m, ex, judge, requests)
    return {build_messages(*requests[k])[-1]["content"] for k in keys}


def test_killed_run_resumes_without_repeating_or_losing(tmp_path):
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    from fakeserver import FakeLLMServer

    from ragrade.judges import OpenAIJudge

    data = tmp_path / "rows.json"
    data.write_text(json.dumps(ROWS))
    cache_path = tmp_path / "cache.sqlite3"
    with FakeLLMServer() as server:
        server.latency = 0.04
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(data), server.base_url, str(cache_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        stored = 0
        while time.monotonic() < deadline and child.poll() is None:
            if cache_path.exists():
                with JudgmentCache(cache_path) as c:
                    stored = len(c)
                if stored >= 25:
                    break
            time.sleep(0.02)
        assert child.poll() is None, "the child finished before it could be killed: " + child.stderr.read().decode()
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        first_run_requests = server.count()

        with JudgmentCache(cache_path) as c:
            done_keys = {k for (k,) in c._conn.execute("SELECT key FROM judgments WHERE status = 'ok'")}
        assert 25 <= len(done_keys) < 120  # 30 x 3 chunk verdicts + 30 attributions = 120 judgments

        judge = OpenAIJudge(model="fake", base_url=server.base_url, max_concurrency=4)
        resumed = evaluate_judged(ROWS, METRICS, judge=judge, cache=cache_path)
        second = [e["user"] for e in server.log[first_run_requests:]]
        j = resumed.summary["judgments"]
        assert j["needed"] == 120
        assert j["cache_hits"] == len(done_keys)
        assert j["calls"] == 120 - len(done_keys) == len(second)
        # nothing finished before the crash was asked again
        assert not (_user_messages(done_keys) & set(second))
        with JudgmentCache(cache_path) as c:
            assert c.counts() == {"ok": 120}

        clean = evaluate_judged(
            ROWS, METRICS, judge=OpenAIJudge(model="fake", base_url=server.base_url), cache=tmp_path / "clean.db"
        )
    assert resumed.per_query.equals(clean.per_query)
    assert resumed.per_query.notna().all().all()


def _writer(path: str, worker: int, n: int) -> None:
    with JudgmentCache(path) as c:
        for i in range(n):
            for key in (f"w{worker}-{i}", f"shared-{i}"):
                c.put(key, judge="j", model="m", prompt_version="p", task="entities", judgment=Judgment({"entities": [key]}))


def test_concurrent_writer_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite3")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with JudgmentCache(path) as c:
        assert len(c) == 4 * 150 + 150
        assert c.get("w3-149").output == {"entities": ["w3-149"]}
        assert c._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_cache_path_respects_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "ragrade" / "judgments.sqlite3"
    monkeypatch.delenv("XDG_CACHE_HOME")
    if sys.platform.startswith("linux"):
        assert default_cache_path() == Path.home() / ".cache" / "ragrade" / "judgments.sqlite3"


def test_default_cache_is_used_when_cache_true(monkeypatch, tmp_path, seed_judge):
    from seed_data import RECALL

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    res = evaluate_judged([RECALL], ["context_recall"], judge=seed_judge)
    assert res.summary["cache"] == str(tmp_path / "ragrade" / "judgments.sqlite3")
    assert os.path.exists(res.summary["cache"])
    again = evaluate_judged([RECALL], ["context_recall"], judge=seed_judge)
    assert again.summary["judgments"]["calls"] == 0 and seed_judge.calls == 1
