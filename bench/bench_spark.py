"""Spark on one machine against the single-process engine (issue 14, docs/scale.md "Spark").

Writes the collection of bench/bench_scale.py (default 10M run rows: 100,000 queries x 100) as Parquet
(``query_id, doc_id, relevance`` and ``query_id, doc_id, score``), then evaluates ``ndcg@10, map@100,
mrr@10, recall@100``:

* in one process: ``ragrade.evaluate(qrels.parquet, run.parquet)`` (best of 2);
* on Spark ``local[2]`` (127.0.0.1, UI off): ``ragrade.scale.spark.evaluate(paths)`` and its means (the per-query
  values collected), with ``--partitions`` hash partitions (best of 2, the session already started; the
  session's start is reported apart).

Prints the wall times, the overhead ratio and rows per second per core (the figure the scaling model of
docs/scale.md starts from), and checks that the means agree to 1e-12. The machine is shared: indicative.

Usage: python bench/bench_spark.py [--rows 10M] [--partitions 8]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

METRICS = ["ndcg@10", "map@100", "mrr@10", "recall@100"]


def to_parquet(qp: Path, rp: Path, folder: Path) -> tuple[Path, Path]:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    opts = pacsv.ParseOptions(delimiter=" ")
    q = pacsv.read_csv(qp, read_options=pacsv.ReadOptions(column_names=["query_id", "i", "doc_id", "relevance"]),
                       parse_options=opts)
    r = pacsv.read_csv(rp, read_options=pacsv.ReadOptions(column_names=["query_id", "z", "doc_id", "rank", "score",
                                                                        "tag"]), parse_options=opts)
    out_q, out_r = folder / "qrels.parquet", folder / "run.parquet"
    pq.write_table(q.select(["query_id", "doc_id", "relevance"]), out_q)
    pq.write_table(r.select(["query_id", "doc_id", "score"]), out_r, row_group_size=1 << 20)
    return out_q, out_r


def main(argv: list[str] | None = None) -> int:
    from bench_scale import rows_arg, write_collection

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="10M")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args(argv)
    n_rows = rows_arg(args.rows)[0]
    warnings.simplefilter("ignore")
    import ragrade
    from ragrade.scale import spark as rs

    tmp = Path(tempfile.mkdtemp(prefix="ragrade-bench-spark-"))
    try:
        qt, rt = write_collection(tmp, n_rows // 100)
        qp, rp = to_parquet(qt, rt, tmp)
        qt.unlink()
        rt.unlink()
        single = []
        for _ in range(2):
            t0, c0 = time.perf_counter(), time.process_time()
            mem = ragrade.evaluate(str(qp), str(rp), METRICS)
            single.append((time.perf_counter() - t0, time.process_time() - c0))
        wall_1, cpu_1 = min(single)
        t0 = time.perf_counter()
        session = rs.session(args.master, "ragrade-bench")
        session.sparkContext.setLogLevel("ERROR")
        start = time.perf_counter() - t0
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            res = rs.evaluate(str(qp), str(rp), METRICS, spark=session, partitions=args.partitions)
            t1 = time.perf_counter()
            means = dict(res.means)
            t2 = time.perf_counter()
            res.unpersist()
            runs.append((t2 - t0, t1 - t0, t2 - t1))
        session.stop()
        total, evaluate, collect = min(runs)
        cores = int(args.master.split("[")[1].rstrip("]")) if "[" in args.master and "*" not in args.master else \
            os.cpu_count() or 1
        same = all(abs(means[k] - mem.means[k]) <= 1e-12 for k in METRICS)
        print(f"# {n_rows:,} run rows, {n_rows // 100:,} queries; Spark {args.master}, {args.partitions} partitions; "
              f"shared 2-core machine")
        print("\n| engine | wall (s) | rows/s | rows/s per core |")
        print("|---|---:|---:|---:|")
        print(f"| ragrade, one process (Parquet) | {wall_1:.2f} | {n_rows / wall_1 / 1e6:.1f}M | "
              f"{n_rows / cpu_1 / 1e6:.1f}M (per CPU second) |")
        print(f"| ragrade.scale.spark, {args.master}: evaluate | {evaluate:.2f} | {n_rows / evaluate / 1e6:.2f}M | "
              f"{n_rows / evaluate / cores / 1e6:.2f}M |")
        print(f"| ragrade.scale.spark, {args.master}: evaluate + means (per-query values collected) | {total:.2f} | "
              f"{n_rows / total / 1e6:.2f}M | {n_rows / total / cores / 1e6:.2f}M |")
        print(f"\nSpark / one process: {total / wall_1:.1f}x the wall time (session start {start:.1f} s, not "
              f"counted; collecting the per-query values {collect:.2f} s). Means equal to 1e-12: {same}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
