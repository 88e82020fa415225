"""A retriever call that hangs cannot hang ``ragrade.retrieve`` (issue 23, item 14): with ``timeout`` /
``--timeout`` the call is a failed query, recorded like any other failure, and the run goes on."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ragrade
from ragrade.errors import InputError
from ragrade.retrieval import retrieve

QUERIES = {"q1": "fast one", "q2": "hang here", "q3": "fast too"}
SRC = str(Path(ragrade.__file__).resolve().parent.parent)


def _sleepy(release: threading.Event):
    def search(q):
        if "hang" in q:
            release.wait(30)  # hangs until the test lets it go (or 30 s)
        return ["d1", "d2"]

    return search


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_hanging_call_becomes_a_failure_and_the_run_goes_on(concurrency):
    release = threading.Event()
    t0 = time.perf_counter()
    try:
        run = retrieve(_sleepy(release), QUERIES, k=5, concurrency=concurrency, progress=False, timeout=0.3)
    finally:
        release.set()
    assert time.perf_counter() - t0 < 5
    assert run.to_lists() == {"q1": ["d1", "d2"], "q3": ["d1", "d2"]}
    assert list(run.failures) == ["q2"]
    assert run.failures["q2"].startswith("TimeoutError: no answer within 0.3 s")
    assert run.retrieval.failed == 1 and run.retrieval.answered == 2
    assert 0.29 <= run.latency["q2"] < 3


def test_an_async_call_that_hangs_is_cancelled():
    cancelled = []

    async def search(q):
        if "hang" in q:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(q)
                raise
        return ["d9"]

    t0 = time.perf_counter()
    run = retrieve(search, QUERIES, k=3, progress=False, timeout=0.2)
    assert time.perf_counter() - t0 < 5
    assert run.to_lists() == {"q1": ["d9"], "q3": ["d9"]}
    assert run.failures["q2"].startswith("TimeoutError") and cancelled == ["hang here"]


def test_without_a_timeout_slow_calls_are_waited_for():
    run = retrieve(lambda q: time.sleep(0.05) or ["d1"], QUERIES, k=3, progress=False)
    assert run.retrieval.failed == 0 and run.n_queries == 3


def test_errors_raised_before_the_timeout_are_kept():
    def search(q):
        if "hang" in q:
            raise ValueError("index offline")
        return ["d1"]

    run = retrieve(search, QUERIES, progress=False, timeout=5)
    assert run.failures == {"q2": "ValueError: index offline"}


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "5", True])
def test_bad_timeouts_are_refused(bad):
    with pytest.raises(InputError, match="timeout"):
        retrieve(lambda q: ["d1"], QUERIES, timeout=bad, progress=False)


def test_cli_timeout_records_the_failure_and_the_process_exits(tmp_path):
    # A subprocess: the abandoned call's thread must not keep the process alive at exit.
    (tmp_path / "hangs.py").write_text(
        "import time\n"
        "def search(q):\n"
        "    if 'hang' in q:\n"
        "        time.sleep(120)\n"
        "    return ['d1']\n")
    (tmp_path / "topics.tsv").write_text("q1\tfast\nq2\thang here\nq3\tfast too\n")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragrade", "retrieve", "hangs:search", "--queries", "topics.tsv",
                           "-o", "run.tsv", "--timeout", "0.5", "--no-progress"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    assert time.perf_counter() - t0 < 30
    assert proc.returncode == 1, proc.stderr  # a failed query, as any other failure (--max-failed 0)
    assert "1 of 3 queries failed" in proc.stderr and "no answer within 0.5 s" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert ragrade.read_run(tmp_path / "run.tsv").query_ids.tolist() == ["q1", "q3"]
