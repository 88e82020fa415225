"""Benchmark of ``ragrade.synthesize`` (docs/synthesize.md, "Speed").

1. Items per second against a local OpenAI-compatible server that answers every request after ``--latency``
   seconds (50 ms by default; the scripted server of tests/synthesize/scripted.py, in its own process), at
   concurrency 1, 8 and 32, cache off; the requests the server received per kept item.
2. The overhead per item outside the LLM call: the same synthesis with an in-process judge that answers at
   once (no HTTP), wall time per kept item minus the time spent inside the judge (target: under 5 ms),
   and its parts (``cProfile``, with ``--profile``).

Usage: ``python bench/bench_synthesize.py [--items 40 200 200] [--concurrency 1 8 32] [--latency 0.05]
[--overhead-items 400] [--profile]``. Everything runs on 127.0.0.1; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "synthesize"))

import scripted  # noqa: E402

import ragrade  # noqa: E402


def _corpus(paragraphs: int) -> dict[str, str]:
    return scripted.corpus(paragraphs=paragraphs)


def _server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(HERE.parent / "tests" / "synthesize" / "scripted.py"), str(latency)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def throughput(base_url: str, n: int, concurrency: int, docs: dict[str, str]) -> tuple[float, float, int, float]:
    """(items per second, requests per kept item, kept, client CPU ms per kept item) of one synthesis run."""
    from ragrade.llm.budget import Budget

    cpu = time.process_time()
    t0 = time.perf_counter()
    ts = ragrade.synthesize(docs, n, base_url=base_url, model="scripted", api_key_env="RAGRADE_NO_KEY", cache=False,
                            max_concurrency=concurrency, max_retries=0, passage_chars=500, min_passage_chars=100,
                            budget=Budget(calls=10**9))  # a ceiling never reached: counts the requests sent
    dt = time.perf_counter() - t0
    cpu = time.process_time() - cpu
    return len(ts) / dt, ts.counts["requests"] / max(1, len(ts)), len(ts), 1000 * cpu / max(1, len(ts))


class TimedJudge(scripted.ScriptedJudge):
    """The in-process scripted judge, timing what it spends answering."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = 0.0

    async def judge(self, task, inputs):
        t0 = time.perf_counter()
        try:
            return await super().judge(task, inputs)
        finally:
            self.inside += time.perf_counter() - t0


def overhead(n: int, docs: dict[str, str], profile: bool) -> tuple[float, float, int]:
    """(wall ms per kept item, ms per kept item outside the judge, kept), files written included."""
    judge = TimedJudge()
    with tempfile.TemporaryDirectory() as tmp:
        def go():
            return ragrade.synthesize(docs, n, judge=judge, cache=False, output=Path(tmp) / "set",
                                      passage_chars=500, min_passage_chars=100)

        if profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            t0 = time.perf_counter()
            ts = prof.runcall(go)
            dt = time.perf_counter() - t0
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        else:
            t0 = time.perf_counter()
            ts = go()
            dt = time.perf_counter() - t0
    kept = max(1, len(ts))
    return 1000 * dt / kept, 1000 * (dt - judge.inside) / kept, len(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, nargs="+", default=[40, 200, 200])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--overhead-items", type=int, default=400)
    ap.add_argument("--paragraphs", type=int, default=80, help="paragraphs per document of the 6-document corpus")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    docs = _corpus(a.paragraphs)
    print(f"corpus: {len(docs)} documents, {sum(map(len, docs.values()))} characters; server latency "
          f"{a.latency * 1000:.0f} ms")
    proc, url = _server(a.latency)
    try:
        throughput(url, 2, 1, docs)  # warm-up: imports and the first connection are not counted
        for n, c in zip(a.items, a.concurrency, strict=False):
            rate, per_item, kept, cpu = throughput(url, n, c, docs)
            print(f"concurrency {c:>3}: {kept} items, {rate:8.1f} items/s, {per_item:.2f} requests per kept item, "
                  f"client CPU {cpu:.1f} ms per item (at most {c / (per_item * a.latency):.0f} items/s with "
                  f"{a.latency * 1000:.0f} ms per request)")
    finally:
        proc.kill()
        proc.wait()
    wall, outside, kept = overhead(a.overhead_items, docs, a.profile)
    print(f"overhead: {kept} items, {wall:.2f} ms per item in all, {outside:.2f} ms per item outside the judge "
          "(target: under 5 ms)")


if __name__ == "__main__":
    main()
