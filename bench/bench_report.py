"""Side-by-side benchmark of run comparison and the HTML report.

Builds a synthetic collection (default 10,000 queries x 100 retrieved, graded judgments, two runs of
different quality), then:

  1. times ``ragrade.compare`` against ``ranx.compare`` on the same dicts, for the paired t-test and the
     randomization (Fisher) test with the same number of resamples, and prints the ratios (ranx is
     warmed up first so numba's one-off compilation is not counted);
  2. times writing the HTML report (evaluation, comparison, plots, per-query payload) and prints its size;
  3. opens the report in headless Chromium (no network) and measures how long it takes until the page
     has rendered its first page of queries, plus how long a full re-sort of all queries takes in the page.

Usage:  python bench/bench_report.py [--queries 10000] [--depth 100] [--resamples 10000] [--no-browser]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def make_collection(n_queries: int, depth: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {"bm25": {}, "dense": {}}
    texts: dict[str, str] = {}
    queries: dict[str, str] = {}
    grades = rng.choice([0, 0, 0, 1, 2], size=(n_queries, 20))
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
            texts[d] = f"passage {d}: some retrieved text for query {qi}"
    return qrels, runs, texts, queries


def timed(label: str, fn, repeat: int = 1):
    best = float("inf")
    out = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    print(f"  {label:<58} {best:8.3f} s")
    return out, best


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-ranx", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT / "src"))
    import ragrade
    from ragrade.report import write_html

    metrics = ["ndcg@10", "recall@10", "rr@10"]
    ranx_metrics = ["ndcg@10", "recall@10", "mrr@10"]  # ranx's name for the mean of rr@10
    print(f"collection: {args.queries} queries x {args.depth} retrieved, 2 runs, metrics {metrics}")
    qrels, runs, texts, queries = make_collection(args.queries, args.depth)

    print("\n1. compare (both runs evaluated + tests; ragrade also computes bootstrap CIs)")
    results = {}
    for ours, theirs in (("t", "student"), ("randomization", "fisher")):
        _, t_ours = timed(
            f"ragrade.compare test={ours!r} ({args.resamples} resamples)",
            lambda ours=ours: ragrade.compare(
                qrels, runs, metrics, test=ours, n_resamples=args.resamples, seed=0
            ),
        )
        if args.no_ranx:
            continue
        try:
            import ranx
        except ImportError:
            print("  ranx is not installed; skipping the side-by-side")
            args.no_ranx = True
            continue
        small_q = {q: qrels[q] for q in list(qrels)[:5]}
        ranx.compare(
            ranx.Qrels(small_q),
            [ranx.Run({q: runs[n][q] for q in small_q}, name=n) for n in runs],
            ranx_metrics,
            stat_test=theirs,
            n_permutations=10,
        )  # warm-up (numba compilation)
        _, t_theirs = timed(
            f"ranx.compare stat_test={theirs!r} ({args.resamples} permutations)",
            lambda theirs=theirs: ranx.compare(
                ranx.Qrels(qrels),
                [ranx.Run(r, name=n) for n, r in runs.items()],
                ranx_metrics,
                stat_test=theirs,
                n_permutations=args.resamples,
                max_p=0.05,
            ),
        )
        results[ours] = t_theirs / t_ours
        print(f"  ratio ranx / ragrade: {t_theirs / t_ours:.2f}x")

    print("\n2. HTML report (evaluation, comparison, metric@k curves, plots, per-query payload)")
    out_dir = Path(tempfile.mkdtemp(prefix="ragrade-bench-"))
    path = out_dir / "report.html"
    timed(
        "write_html",
        lambda: write_html(
            path, qrels, runs, metrics, texts=texts, queries=queries, n_resamples=args.resamples, seed=0
        ),
    )
    print(f"  size: {path.stat().st_size / 1e6:.1f} MB  ({path})")

    if args.no_browser:
        return 0
    print("\n3. opening the report in headless Chromium (file://, no network)")
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    from report_browser import find_chromium, open_report, start_chromium

    found = find_chromium()
    if isinstance(found, str):
        print(f"  skipped: {found}")
        return 0
    drv = start_chromium(out_dir / "profile")
    try:
        loads = []
        for _ in range(3):
            wall = open_report(drv, path, timeout=120)
            in_page = int(drv.execute_script("return document.body.dataset.readyMs")) / 1000
            loads.append((wall, in_page))
        for k, (wall, in_page) in enumerate(loads, start=1):
            print(
                f"  load {k} until the query list is rendered: {wall:.2f} s wall (driver.get to ready), "
                f"{in_page:.2f} s from navigation start (in page)"
            )
        sort_ms = drv.execute_script(
            """
            const s = document.getElementById('ctl-sort');
            const t0 = performance.now();
            s.value = 'absdelta:desc'; s.dispatchEvent(new Event('change'));
            return performance.now() - t0;
            """
        )
        rows = drv.execute_script("return document.querySelectorAll('#qtable tbody tr').length")
        print(
            f"  re-sort all {args.queries} queries by |delta| and re-render: {sort_ms:.0f} ms ({rows} rows in the DOM)"
        )
    finally:
        drv.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
