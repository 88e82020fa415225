"""Side-by-side benchmark of run comparison and the HTML report.

Builds a synthetic collection (default 10,000 queries x 100 retrieved, graded judgments, two runs of
different quality, document texts for the top items), then:

  1. times ``ragrade.compare`` against ``ranx.compare`` on the same dicts, for the paired t-test and for
     the randomization (Fisher) test with the same number of resamples, and prints the ratios. ragrade's
     times include its confidence intervals (every mean and every difference); ranx computes none. ranx
     is warmed up first so numba's one-off compilation is not counted. The time ragrade spends in the
     engine's per-query evaluation (both runs, from dicts) is measured on its own and printed as a share;
  2. times ``write_html`` (evaluation of the compared metrics and the metric@k curves, comparison,
     plots, per-query payload) and prints the file's size;
  3. opens the report in headless Chromium (file://, no network) and measures the time until the first
     page of queries is rendered (from navigation start, read in the page), the first contentful paint,
     and a full re-sort of all queries.

Usage:  python bench/bench_report.py [--queries 10000] [--depth 100] [--resamples 10000] [--repeat 3]
                                     [--word-texts] [--no-browser] [--no-ranx]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

TARGETS = {"t": 10.0, "randomization": 20.0}


def make_collection(n_queries: int, depth: int, seed: int = 0, word_texts: bool = False):
    """qrels, two runs (bm25, dense), document texts for the top 12 items, query texts. With
    ``word_texts`` the texts are 30 to 60 words drawn from a 5,000-word vocabulary (compress like real
    prose) instead of one short repeated sentence."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {"bm25": {}, "dense": {}}
    texts: dict[str, str] = {}
    queries: dict[str, str] = {}
    grades = rng.choice([0, 0, 0, 1, 2], size=(n_queries, 20))
    vocab = np.array([f"w{chr(97 + i % 26)}{i:x}" for i in range(5000)]) if word_texts else None
    zipf = 1.0 / np.arange(1, 5001)
    zipf /= zipf.sum()
    for qi in range(n_queries):
        q = f"q{qi:06d}"
        docs = [f"{q}_d{j}" for j in range(depth)]
        judged = {docs[j]: int(grades[qi, j]) for j in range(20)}
        judged[docs[0]] = max(judged[docs[0]], 1)
        qrels[q] = judged
        signal = np.zeros(depth)
        signal[:20] = grades[qi]
        for name, strength in (("bm25", 0.5), ("dense", 0.8)):
            scores = rng.random(depth) + strength * signal * rng.random()
            runs[name][q] = dict(zip(docs, scores.tolist(), strict=True))
        queries[q] = f"synthetic question number {qi}"
        for d in docs[:12]:
            if vocab is None:
                texts[d] = f"passage {d}: some retrieved text for query {qi}"
            else:
                texts[d] = " ".join(vocab[rng.choice(5000, size=int(rng.integers(30, 61)), p=zipf)])
    return qrels, runs, texts, queries


def timed(label: str, fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float, float]:
    """Best wall time and best CPU time (all threads of the process) over ``repeat`` calls."""
    best, best_cpu = float("inf"), float("inf")
    out = None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    suffix = f" (best of {repeat})" if repeat > 1 else ""
    print(f"  {label:<62} {best:8.3f} s   CPU {best_cpu:7.3f} s{suffix}")
    return out, best, best_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N for every timing (both tools)")
    parser.add_argument("--word-texts", action="store_true", help="texts of random words (compress like prose)")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-ranx", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "src"))
    import ragrade
    from ragrade.comparison import compare_scores
    from ragrade.report import write_html

    metrics = ["ndcg@10", "recall@10", "rr@10"]
    ranx_metrics = ["ndcg@10", "recall@10", "mrr@10"]  # ranx's name for the mean of rr@10
    print(f"collection: {args.queries} queries x {args.depth} retrieved, 2 runs, metrics {metrics}")
    qrels, runs, texts, queries = make_collection(args.queries, args.depth, word_texts=args.word_texts)

    print("\n1. compare (both runs evaluated from dicts + tests; ragrade also computes CIs of every mean and difference)")
    ragrade.compare(qrels, {n: {q: r[q] for q in list(r)[:50]} for n, r in runs.items()}, metrics, test="t",
                    n_resamples=10)  # warm-up: imports (SciPy) are not counted
    evaluator = ragrade.Evaluator(qrels, metrics)
    per_query, _, _ = timed(
        "  engine evaluation of both runs (part of compare)",
        lambda: {n: evaluator.evaluate(r).per_query for n, r in runs.items()},
        args.repeat,
    )
    ratios: dict[str, float] = {}
    cpu_ratios: dict[str, float] = {}
    ranx = None
    if not args.no_ranx:
        try:
            import ranx
        except ImportError:
            print("  ranx is not installed; no side-by-side")
    for ours, theirs in (("t", "student"), ("randomization", "fisher")):
        _, t_ours, c_ours = timed(
            f"ragrade.compare test={ours!r} ({args.resamples} resamples)",
            lambda ours=ours: ragrade.compare(qrels, runs, metrics, test=ours, n_resamples=args.resamples, seed=0),
            args.repeat,
        )
        timed(
            "  of which the comparison (compare_scores on the per-query values)",
            lambda ours=ours: compare_scores(per_query, metrics, test=ours, n_resamples=args.resamples, seed=0),
            args.repeat,
        )
        if ranx is None:
            continue
        small_q = {q: qrels[q] for q in list(qrels)[:5]}
        ranx.compare(
            ranx.Qrels(small_q), [ranx.Run({q: runs[n][q] for q in small_q}, name=n) for n in runs], ranx_metrics,
            stat_test=theirs, n_permutations=10,
        )  # warm-up (numba compilation)
        _, t_theirs, c_theirs = timed(
            f"ranx.compare stat_test={theirs!r} ({args.resamples} permutations)",
            lambda theirs=theirs: ranx.compare(
                ranx.Qrels(qrels), [ranx.Run(r, name=n) for n, r in runs.items()], ranx_metrics,
                stat_test=theirs, n_permutations=args.resamples, max_p=0.05,
            ),
            args.repeat,
        )
        ratios[ours], cpu_ratios[ours] = t_theirs / t_ours, c_theirs / c_ours
        print(f"    ratio ranx / ragrade: {ratios[ours]:.1f}x wall, {cpu_ratios[ours]:.1f}x CPU "
              f"(target >= {TARGETS[ours]:.0f}x)")

    print("\n2. HTML report (evaluation incl. metric@k curves, comparison, plots, per-query payload)")
    out_dir = Path(tempfile.mkdtemp(prefix="ragrade-bench-"))
    path = out_dir / "report.html"
    _, t_report, _ = timed(
        "write_html",
        lambda: write_html(path, qrels, runs, metrics, texts=texts, queries=queries, n_resamples=args.resamples, seed=0),
        args.repeat,
    )
    size = path.stat().st_size
    print(f"  size: {size / 1e6:.2f} MB  (target <= 6 MB; build target <= 1.5 s)  {path}")
    _thread_breakdown(lambda: write_html(path, qrels, runs, metrics, texts=texts, queries=queries,
                                         n_resamples=args.resamples, seed=0))

    if args.no_browser:
        _summary(ratios, cpu_ratios, t_report, size, None)
        return 0
    print("\n3. opening the report in headless Chromium (file://, no network)")
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    from report_browser import find_chromium, open_report, start_chromium

    found = find_chromium()
    if isinstance(found, str):
        print(f"  skipped: {found}")
        _summary(ratios, cpu_ratios, t_report, size, None)
        return 0
    drv = start_chromium(out_dir / "profile")
    try:
        loads = []
        for _ in range(3):
            wall = open_report(drv, path, timeout=120)
            ready = int(drv.execute_script("return document.body.dataset.readyMs")) / 1000
            paint = drv.execute_script(
                "const p = performance.getEntriesByName('first-contentful-paint')[0]; return p ? p.startTime : null"
            )
            loads.append((wall, ready, None if paint is None else paint / 1000))
        for k, (wall, ready, paint) in enumerate(loads, start=1):
            fcp = "n/a" if paint is None else f"{paint:.2f} s"
            print(f"  load {k}: first page of queries rendered {ready:.2f} s after navigation start "
                  f"(first contentful paint {fcp}; {wall:.2f} s wall from driver.get)")
        sort_ms = drv.execute_script(
            """
            const s = document.getElementById('ctl-sort');
            const t0 = performance.now();
            s.value = 'absdelta:desc'; s.dispatchEvent(new Event('change'));
            return performance.now() - t0;
            """
        )
        rows = drv.execute_script("return document.querySelectorAll('#qtable tbody tr').length")
        marks = drv.execute_script("return document.querySelectorAll('figure.plot svg *').length")
        print(f"  re-sort all {args.queries} queries by |delta| and re-render: {sort_ms:.0f} ms "
              f"({rows} rows in the DOM; {marks} SVG elements in the plots)")
    finally:
        drv.quit()
    _summary(ratios, cpu_ratios, t_report, size, loads[0][1])
    return 0


def _thread_breakdown(build: Callable[[], Any]) -> None:
    """CPU time of each step of one build, per thread, and the longer of the two threads' paths: what
    the wall time would be on two idle cores if the threads never waited for each other's interpreter
    lock (a floor that a shared machine's wall times cannot show)."""
    from ragrade.report import html as H

    spent: dict[str, float] = {}
    steps = {"evaluate_runs": "evaluate", "compare_evaluated": "compare", "plots_html": "plots",
             "prepare_items": "rank + top items + vocabulary", "build_payload": "per-query data",
             "pack_payload": "pack", "_page": "page"}
    saved = {name: getattr(H, name) for name in steps}

    def timed_step(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*a: Any, **k: Any) -> Any:
            start = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                spent[steps[name]] = spent.get(steps[name], 0.0) + time.thread_time() - start
        return call

    try:
        for name, fn in saved.items():
            setattr(H, name, timed_step(name, fn))
        build()
    finally:
        for name, fn in saved.items():
            setattr(H, name, fn)
    g = spent.get
    main = g("evaluate", 0) + g("compare", 0) + g("plots", 0)
    second = max(g("rank + top items + vocabulary", 0), g("evaluate", 0)) + g("per-query data", 0) + g("pack", 0)
    print("  CPU per step (s): " + ", ".join(f"{k} {v:.3f}" for k, v in spent.items()))
    print(f"  first thread {main:.3f} s, second thread {second:.3f} s: two-core floor "
          f"{max(main, second) + g('page', 0):.2f} s")


def _summary(
    ratios: dict[str, float], cpu_ratios: dict[str, float], t_report: float, size: int, first_render: float | None
) -> None:
    print("\nsummary (targets from issue 15, section 3):")
    for test, ratio in ratios.items():
        verdict = "met" if ratio >= TARGETS[test] else "NOT met"
        print(f"  compare {test:<13} {ratio:6.1f}x faster than ranx ({cpu_ratios[test]:.1f}x in CPU)"
              f"   (>= {TARGETS[test]:.0f}x: {verdict})")
    print(f"  report build     {t_report:6.2f} s                      (<= 1.5 s: {'met' if t_report <= 1.5 else 'NOT met'})")
    print(f"  report size      {size / 1e6:6.2f} MB                     (<= 6 MB: {'met' if size <= 6e6 else 'NOT met'})")
    if first_render is not None:
        ok = "met" if first_render <= 1.0 else "NOT met"
        print(f"  first render     {first_render:6.2f} s (cold load)          (<= 1 s: {ok})")


if __name__ == "__main__":
    raise SystemExit(main())
