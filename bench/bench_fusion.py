"""Fusion: ``ragrade.fuse`` / ``ragrade.optimize_fusion`` against ranx, side by side in one process.

    python bench/bench_fusion.py [--queries 10000] [--docs 100] [--runs 3] [--repeat 3] [--weights]

Builds ``--runs`` runs of ``--queries`` queries x ``--docs`` documents (drawn from 300 candidates per
query, so runs overlap; scores rounded to two decimals, so lists have ties) and qrels of 10 judged
documents per query. Both libraries get their own run objects built beforehand (not timed). ranx is
warmed up first on a small input so that numba's compilation is not counted against it. Each timing is
the best of ``--repeat`` (ranx's optimize_fusion once: it is slow). Before timing, the fused runs are
checked equal (same documents in the same order, values within 1e-12) on every query.

Timed: fuse with RRF, CombMNZ and WSum (min-max normalisation, ranx's default), and optimize_fusion of
RRF (10 values of k, ndcg@100); with ``--weights`` also optimize_fusion of WSum (62 weightings: slow with
ranx). Figures vary on a shared machine: run it twice.

ranx's ``Run`` sorts every query's list when it is built (not timed); ragrade keeps the same order with
its run the first time it fuses it. So ``ragrade s`` (best of ``--repeat``) is ragrade's time once its
runs are sorted, as ranx's is, and ``1st call`` is ragrade's first fusion of fresh runs (their sort
included). Each time is wall-clock, with the CPU time of the process (every thread: ranx's numba kernels
run in parallel, so do ragrade's long sorts) in ``cpu``: on a machine shared with other work the CPU
ratio is the steadier one.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import ragrade


def make(n_q: int, n_d: int, n_runs: int, seed: int = 0) -> tuple[list[dict], dict]:
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(n_q):
            docs = rng.choice(300, n_d, replace=False)
            run[f"q{q:05d}"] = dict(zip([f"d{x}" for x in docs.tolist()], np.round(rng.random(n_d), 2).tolist(),
                                        strict=True))
        runs.append(run)
    qrels = {f"q{q:05d}": {f"d{x}": int(rng.integers(1, 3)) for x in rng.choice(300, 10, replace=False).tolist()}
             for q in range(n_q)}
    return runs, qrels


def best(f, repeat: int) -> tuple[float, float, object]:
    """(best wall time, best CPU time of the process, the last result)."""
    t_best, c_best, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = f()
        t_best = min(t_best, time.perf_counter() - t)
        c_best = min(c_best, time.process_time() - c)
    return t_best, c_best, out


def same(ranx_run, ours) -> int:
    """Queries that differ (documents, order, or a value by more than 1e-12)."""
    ref = ranx_run.to_dict()
    bad = 0
    for q, docs in ref.items():
        got = ours.ranked(q, ties="input")
        if list(docs) != [d for d, _ in got] or any(abs(a - b) > 1e-12 for a, (_, b) in zip(docs.values(), got,
                                                                                              strict=True)):
            bad += 1
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--weights", action="store_true", help="also optimize_fusion of WSum (slow with ranx)")
    args = ap.parse_args()
    import ranx

    warnings.simplefilter("ignore")
    runs, qrels = make(args.queries, args.docs, args.runs)
    ranx_runs = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)]
    ranx_qrels = ranx.Qrels(qrels)
    ours_runs = [ragrade.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]
    for r in ours_runs:  # the same preparation ranx's Run constructor did: ids coded once
        r.doc_codes  # noqa: B018
    # warm-up: numba compiles ranx's kernels on first use (not counted)
    small_runs, small_qrels = make(20, 10, args.runs, seed=1)
    sr = [ranx.Run(r) for r in small_runs]
    for m, p in [("rrf", {}), ("mnz", {}), ("wsum", {"weights": [1 / args.runs] * args.runs})]:
        ranx.fuse(sr, method=m, params=p)
    ranx.optimize_fusion(ranx.Qrels(small_qrels), sr, method="rrf", metric="ndcg@100", show_progress=False)
    ranx.optimize_fusion(ranx.Qrels(small_qrels), sr, method="wsum", metric="ndcg@100", show_progress=False)
    ragrade.fuse(small_runs, method="rrf")

    print(f"{args.queries} queries x {args.docs} documents x {args.runs} runs "
          f"({args.queries * args.docs * args.runs:,} input rows)")
    print(f"{'task':34s} {'ranx s':>8s} {'ragrade s':>10s} {'ratio':>7s} {'1st call':>9s} {'ratio':>7s} "
          f"{'cpu ranx':>9s} {'cpu ragrade':>12s} {'ratio':>7s}  equal")
    w = [round(1 / args.runs, 3)] * args.runs
    for label, method, params in [("fuse rrf", "rrf", {}), ("fuse combmnz", "mnz", {}),
                                  ("fuse wsum", "wsum", {"weights": w})]:
        fresh = [ragrade.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)]
        for r in fresh:
            r.doc_codes  # noqa: B018
        t_r, c_r, fr = best(lambda m=method, p=params: ranx.fuse(ranx_runs, method=m, params=p), args.repeat)
        t_1, _, _ = best(lambda m=method, p=params, f=fresh: ragrade.fuse(f, method=m, params=p), 1)
        t_o, c_o, fo = best(lambda m=method, p=params: ragrade.fuse(ours_runs, method=m, params=p), args.repeat)
        bad = same(fr, fo)
        print(f"{label:34s} {t_r:8.3f} {t_o:10.3f} {t_r / t_o:6.1f}x {t_1:9.3f} {t_r / t_1:6.1f}x "
              f"{c_r:9.3f} {c_o:12.3f} {c_r / c_o:6.1f}x  {'yes' if bad == 0 else f'{bad} differ'}")
    tasks = [("optimize_fusion rrf (10 configs)", "rrf")]
    if args.weights:
        tasks.append(("optimize_fusion wsum (62 configs)", "wsum"))
    for label, method in tasks:
        t_r, c_r, (bp, rep) = best(lambda m=method: ranx.optimize_fusion(
            ranx_qrels, ranx_runs, method=m, metric="ndcg@100", show_progress=False,
            return_optimization_report=True), 1)
        t_o, c_o, s = best(lambda m=method: ragrade.optimize_fusion(qrels, ours_runs, m, metric="ndcg@100",
                                                                    profile="ranx"), 1)
        diff = max(abs(a - row["ndcg@100"]) for a, row in zip(rep.results, s.table, strict=True))
        key = "k" if method == "rrf" else "weights"
        agree = "yes" if list(np.atleast_1d(bp[key])) == list(np.atleast_1d(s.params[key])) and diff <= 1e-12 \
            else f"no (max diff {diff:.2e})"
        print(f"{label:34s} {t_r:8.3f} {t_o:10.3f} {t_r / t_o:6.1f}x {'':9s} {'':7s} "
              f"{c_r:9.3f} {c_o:12.3f} {c_r / c_o:6.1f}x  {agree}")


if __name__ == "__main__":
    main()
