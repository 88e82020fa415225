"""Speed of trec_eval's whole measure set: ragrade against pytrec_eval computing ``all_trec``, side by side in
one process, from Python dicts and from TREC files, on the collection of ``bench_core.py`` (default 100,000
queries x 100 retrieved, 5 relevant + 5 judged non-relevant per query). Then each family's own time.

pytrec_eval's ``all_trec`` is trec_eval 9's set (trec_eval 10's rbp, rbp_resid and unj are not in it);
ragrade computes the same set of values (``names="trec_eval"``, trec_eval's conventions:
``no_relevant="zero"``, ``missing_run="drop"``), and the means of both are printed side by side so they can
be checked against each other.

Per family: the wall time of the family's kernel on the joined collection (the kernels' input, built once
by the engine's join; its own time is printed first), best of ``--repeat`` runs.

Usage:  python bench/bench_measures.py [--queries 100000] [--depth 100] [--repeat 1] [--skip-files]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import build, measure, write_trec

TREC9 = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
         "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
         "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
         "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"]
FAMILIES = ["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "map", "gm_map", "bpref",
            "infAP", "iprec_at_recall", "11pt_avg", "Rprec", "Rprec_mult", "relative_P", "set_map", "set_F",
            "ndcg", "ndcg_rel", "Rndcg", "binG", "G", "utility", "rbp", "rbp_resid", "unj", "judged@10",
            "accuracy@10", "err@20", "nerr8@10", "nerr10", "sdcg@10", "inst", "bpm@10", "compat",
            "ndcg(gains={1:2,2:5,3:9})@10", "ndcg(judged_only=true)@10"]
KW = dict(names="trec_eval", no_relevant="zero", missing_run="drop")


def ragrade_dicts(qrels, run):
    import ragrade

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ragrade.evaluate(qrels, run, TREC9, **KW).means


def ragrade_files(qp, rp):
    import ragrade

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ragrade.evaluate(qp, rp, TREC9, **KW).means


def pytrec_dicts(qrels, run):
    import pytrec_eval

    res = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)
    names = [n for n in next(iter(res.values())) if n not in ("runid", "relstring")]
    out = {}
    for n in names:
        v = np.array([x[n] for x in res.values()])
        out[n] = float(np.exp(v.mean())) if n.startswith("gm_") else float(v.sum() if n.startswith("num_")
                                                                          else v.mean())
    return out


def pytrec_files(qp, rp):
    import pytrec_eval

    with open(qp) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(rp) as f:
        run = pytrec_eval.parse_run(f)
    return pytrec_dicts(qrels, run)


def check(ours: dict, theirs: dict) -> float:
    worst = 0.0
    for name, v in theirs.items():
        if name in ours and name not in ("num_q",):
            worst = max(worst, abs(ours[name] - v) / max(1.0, abs(v)))
    return worst


def family_times(run, qrels, repeat: int) -> list[tuple[str, float]]:
    """The join once (its time), then each family's kernel on its output."""
    import ragrade
    from ragrade.engine import credit as core

    captured = []
    original = core.judged_view

    def keep(*a, **kw):
        captured.append(original(*a, **kw))
        return captured[-1]

    core.judged_view = keep
    try:
        ev = ragrade.Evaluator(qrels, ["num_q"], **KW)
        join = min(_timed(lambda: ev.evaluate(run)) for _ in range(repeat))
    finally:
        core.judged_view = original
    judged = captured[-1]
    out = [("(join, crediting, hole rate, result)", join)]
    for fam in FAMILIES:
        labels = ragrade.engine.result.metric_labels([fam], names="trec_eval")

        def kernels(labels=labels):
            judged._cache.clear()
            for _, m in labels:
                view = core.condensed(judged) if m.family.param("judged_only") and m.get("judged_only") else judged
                m.family.kernel(m, view)

        out.append((fam, min(_timed(kernels) for _ in range(repeat))))
    return out


def _timed(fn) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gc.collect()
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--rel", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool; the best wall time is kept")
    ap.add_argument("--skip-files", action="store_true")
    ap.add_argument("--skip-families", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    qrels, run = build(args.queries, args.depth, args.rel, False)
    print(f"collection: {args.queries:,} queries x {args.depth} retrieved, "
          f"{sum(len(v) for v in qrels.values()):,} judgments (built in {time.perf_counter() - t0:.1f}s)")
    wq, wr = build(50, 10, 2, False, seed=1)
    ragrade_dicts(wq, wr)
    pytrec_dicts(wq, wr)
    rows = []
    dt, cpu, _, ours = measure(ragrade_dicts, qrels, run, repeat=args.repeat)
    rows.append(("dicts", "ragrade", dt, cpu))
    print(f"  dicts  ragrade      {dt:7.2f}s wall {cpu:7.2f}s cpu  ({len(ours)} values per query)", flush=True)
    dt, cpu, _, theirs = measure(pytrec_dicts, qrels, run, repeat=args.repeat)
    rows.append(("dicts", "pytrec_eval", dt, cpu))
    print(f"  dicts  pytrec_eval  {dt:7.2f}s wall {cpu:7.2f}s cpu  ({len(theirs)} values per query); largest "
          f"relative difference of the means: {check(ours, theirs):.2g}", flush=True)
    if not args.skip_families:
        print("\nper family (kernel time on the joined collection):")
        for name, t in family_times(run, qrels, max(args.repeat, 1)):
            print(f"  {name:34s} {t:7.3f}s")
    tmp = Path(tempfile.mkdtemp(prefix="ragrade-bench-measures-"))
    try:
        if not args.skip_files:
            qp, rp = write_trec(qrels, run, tmp)
            del qrels, run
            gc.collect()
            dt, cpu, _, ours = measure(ragrade_files, qp, rp, repeat=args.repeat)
            rows.append(("files", "ragrade", dt, cpu))
            print(f"\n  files  ragrade      {dt:7.2f}s wall {cpu:7.2f}s cpu", flush=True)
            dt, cpu, _, theirs = measure(pytrec_files, qp, rp, repeat=args.repeat)
            rows.append(("files", "pytrec_eval", dt, cpu))
            print(f"  files  pytrec_eval  {dt:7.2f}s wall {cpu:7.2f}s cpu; largest relative difference of the "
                  f"means: {check(ours, theirs):.2g}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n| scenario | tool | wall (s) | CPU (s) | pytrec_eval / ragrade wall | CPU |")
    print("|---|---|---:|---:|---:|---:|")
    base = {s: (t, c) for s, tool, t, c in rows if tool == "ragrade"}
    for s, tool, t, c in rows:
        ratio = "- | -" if tool == "ragrade" else f"{t / base[s][0]:.1f}x | {c / base[s][1]:.1f}x"
        print(f"| {s} | {tool} | {t:.2f} | {c:.2f} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
