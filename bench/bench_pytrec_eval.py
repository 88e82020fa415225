"""Speed of ``ragrade.compat.pytrec_eval`` against pytrec_eval, side by side in one process.

The collection is built in memory as Python dicts (the input both take): ``--rows`` run rows (``--depth``
documents for each of rows / depth queries, ids of one shared corpus, scores with ties), qrels judging 20
documents per query (grades 0..3, 5 of them retrieved). For each call (``all_trec``; BEIR's ``EvaluateRetrieval.evaluate``, i.e.
``map_cut``, ``ndcg_cut``, ``recall`` and ``P`` at 1,3,5,10,100,1000; MTEB's), it times

- ``init+evaluate``: ``RelevanceEvaluator(qrels, measures).evaluate(run)`` (what BEIR and MTEB do), and
- ``evaluate``: ``evaluate(run)`` alone on an evaluator built once (pytrec_eval's intended reuse),

as the best of ``--repeats`` runs of each, alternating the two libraries (``--clock cpu``: CPU time of the process
instead of elapsed time, steadier on a busy machine), and checks that the dicts are equal (same keys, values to
1e-12).

Usage:  python bench/bench_pytrec_eval.py [--rows 1000000] [--depth 100] [--repeats 5] [--calls all_trec,beir,mteb]
        [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import gc
import math
import time

import numpy as np

K = "1,3,5,10,100,1000"
CALLS = {
    "all_trec": {"all_trec"},
    "beir": {f"map_cut.{K}", f"ndcg_cut.{K}", f"recall.{K}", f"P.{K}"},
    "mteb": {"map_cut", "ndcg_cut", "recall", "P", "recip_rank"},
    "map": {"map"},
}


def collection(rows: int, depth: int, seed: int = 7) -> tuple[dict, dict]:
    """BEIR-like dicts: the document ids are str objects of one corpus (as a retriever's results reuse the
    corpus's ids), drawn at random for each query; scores rounded to 0.1 (ties), 20 judgments per query (grades
    0..3), a quarter of them among the retrieved documents."""
    rng = np.random.default_rng(seed)
    nq = max(rows // depth, 1)
    corpus = [f"doc{i}" for i in range(max(rows, 1000))]
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(nq):
        docs = rng.choice(len(corpus), depth + 15, replace=False).tolist()
        scores = np.round(rng.random(depth) * 50, 1).tolist()
        run[f"q{q}"] = {corpus[d]: s for d, s in zip(docs[:depth], scores, strict=True)}
        judged = docs[depth - 5:]  # 5 retrieved, 15 not
        grades = rng.choice([0, 0, 1, 2, 3], len(judged)).tolist()
        qrels[f"q{q}"] = {corpus[d]: g for d, g in zip(judged, grades, strict=True)}
    return qrels, run


CLOCK = time.perf_counter


def best_of(fns: list, repeats: int) -> tuple[list[float], list[object]]:
    """The best time of each function over ``repeats`` rounds, the functions alternating within a round (so a
    change of load on a busy machine hits both alike), and each one's last result."""
    times = [math.inf] * len(fns)
    outs: list[object] = [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            outs[i] = None
            gc.collect()
            t = CLOCK()
            outs[i] = fn()
            times[i] = min(times[i], CLOCK() - t)
    return times, outs


def worst_difference(want: dict, got: dict) -> float:
    assert sorted(want) == sorted(got), "different queries"
    worst = 0.0
    for q, values in want.items():
        g = got[q]
        assert sorted(values) == sorted(g), (q, set(values) ^ set(g))
        for k, v in values.items():
            if math.isnan(v) and math.isnan(g[k]):
                continue
            worst = max(worst, abs(v - g[k]))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", default="all_trec,beir")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall: elapsed time; cpu: this process's CPU time (steadier on a shared machine)")
    a = ap.parse_args()
    global CLOCK
    CLOCK = time.perf_counter if a.clock == "wall" else time.process_time

    import ragrade.compat.pytrec_eval as compat

    qrels, run = collection(a.rows, a.depth)
    print(f"clock: {a.clock}; collection: {a.rows:,} run rows, {len(run):,} queries, {sum(map(len, qrels.values())):,} judgments")
    compat.RelevanceEvaluator({"q": {"d": 1}}, {"map"}).evaluate({"q": {"d": 1.0}})  # imports, as pytrec_eval's
    for call in a.calls.split(","):
        compare(call, CALLS[call], qrels, run, a.repeats)


def compare(call: str, measures: set[str], qrels: dict, run: dict, repeats: int) -> None:
    import pytrec_eval

    import ragrade.compat.pytrec_eval as compat

    (t_pe, t_rg), (want, got) = best_of([lambda: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run),
                                         lambda: compat.RelevanceEvaluator(qrels, measures).evaluate(run)], repeats)
    worst = worst_difference(want, got)  # type: ignore[arg-type]
    n = sum(map(len, want.values()))  # type: ignore[attr-defined]
    want = got = None
    ev_pe = pytrec_eval.RelevanceEvaluator(qrels, measures)
    ev_rg = compat.RelevanceEvaluator(qrels, measures)
    (e_pe, e_rg), _ = best_of([lambda: ev_pe.evaluate(run), lambda: ev_rg.evaluate(run)], repeats)
    print(f"{call:9s} init+evaluate: pytrec_eval {t_pe:6.3f} s, ragrade {t_rg:6.3f} s, ratio {t_pe / t_rg:5.2f}x"
          f" | evaluate: pytrec_eval {e_pe:6.3f} s, ragrade {e_rg:6.3f} s, ratio {e_pe / e_rg:5.2f}x"
          f" | {n:,} values, max difference {worst:.2g}")

if __name__ == "__main__":
    main()
