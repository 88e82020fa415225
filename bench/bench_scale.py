"""Out-of-core evaluation: peak memory and throughput at 10M, 50M and 100M run rows, against the in-memory
path (issue 14, docs/scale.md).

Writes a synthetic collection as TREC files (queries x 100 retrieved; per query 5 graded relevant and 5
judged non-relevant documents, 6 of which are retrieved; other documents from a corpus of 100 x the queries;
run and qrels list the queries in one order, as files written query by query do), then, each in a fresh
process, evaluates ``ndcg@10, map@100, mrr@10, recall@100``:

* in memory (``ragrade.evaluate(qrels, run)``: the path ``bench/bench_core.py`` measures), at 10M rows
  (and at every size with ``--in-memory-all``);
* out of core (``ragrade.evaluate(..., max_memory=BUDGET)``) at every size;
* out of core on a run whose lines are shuffled (not grouped by query: the partitioned way), at the
  smallest size.

Peak memory is the highest resident set size above the process's level before the call (sampled every
2 ms, as bench_core.py). The files are removed at the end. The machine is shared: figures are indicative.

Usage: python bench/bench_scale.py [--rows 10M,50M,100M] [--max-memory 1GiB] [--in-memory-all] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "map@100", "mrr@10", "recall@100"]
DEPTH = 100
CHUNK_QUERIES = 20_000


def _ids(prefix: str, values: np.ndarray):
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pa.scalar(prefix), pc.cast(pa.array(values), pa.string()), "")


def write_collection(folder: Path, n_queries: int, seed: int = 0, shuffled: bool = False) -> tuple[Path, Path]:
    """qrels.txt and run.txt (or run-shuffled.txt, lines in random order) for ``n_queries`` queries."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    corpus = 100 * n_queries
    qp, rp = folder / "qrels.txt", folder / ("run-shuffled.txt" if shuffled else "run.txt")
    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with pacsv.CSVWriter(str(qp), pa.schema([("q", pa.string()), ("i", pa.string()), ("d", pa.string()),
                                              ("g", pa.int64())]), write_options=opts) as qw, \
            pacsv.CSVWriter(str(rp), pa.schema([("q", pa.string()), ("z", pa.string()), ("d", pa.string()),
                                                ("r", pa.int64()), ("s", pa.float64()), ("t", pa.string())]),
                            write_options=opts) as rw:
        for start in range(0, n_queries, CHUNK_QUERIES):
            nq = min(CHUNK_QUERIES, n_queries - start)
            q = np.arange(start, start + nq)
            judged = (corpus + q[:, None] * 10 + np.arange(10)[None, :])  # 5 relevant, then 5 non-relevant
            grades = np.concatenate([rng.integers(1, 4, size=(nq, 5)), np.zeros((nq, 5), dtype=np.int64)], axis=1)
            qw.write_table(pa.table({
                "q": _ids("q", np.repeat(q, 10)), "i": pa.array(["0"] * (nq * 10)),
                "d": _ids("d", judged.ravel()), "g": pa.array(grades.ravel())}))
            docs = rng.integers(0, corpus, size=(nq, DEPTH))
            slots = np.argsort(rng.random((nq, DEPTH)), axis=1)[:, :6]
            picks = np.argsort(rng.random((nq, 10)), axis=1)[:, :6]
            np.put_along_axis(docs, slots, np.take_along_axis(judged, picks, axis=1), axis=1)
            ranks = np.tile(np.arange(1, DEPTH + 1), nq)
            scores = np.round((DEPTH + 1 - ranks) / DEPTH, 4)  # best first
            table = pa.table({"q": _ids("q", np.repeat(q, DEPTH)), "z": pa.array(["Q0"] * (nq * DEPTH)),
                              "d": _ids("d", docs.ravel()), "r": pa.array(ranks), "s": pa.array(scores),
                              "t": pa.array(["bench"] * (nq * DEPTH))})
            rw.write_table(table)
            del table, docs
    if shuffled:  # lines in random order, the whole file at once (only used at the smallest size)
        with open(rp, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        order = np.random.default_rng(seed + 1).permutation(len(lines))
        with open(rp, "wb") as f:
            f.writelines(lines[i] for i in order)
        del lines
    return qp, rp


def child(args: argparse.Namespace) -> int:
    """One measurement in this (fresh) process; prints a JSON line."""
    sys.path.insert(0, str(HERE))
    import warnings

    import ragrade
    from bench_core import PeakMemory

    warnings.simplefilter("ignore")
    report: dict = {}
    with PeakMemory() as peak:
        t0, c0 = time.perf_counter(), time.process_time()
        if args.child == "memory":
            res = ragrade.evaluate(args.qrels, args.run, METRICS)
        else:
            from ragrade.scale.outofcore import evaluate_paths, parse_memory
            from ragrade.scale.pieces import PieceScorer

            # each piece scored through the port, by the PieceScorer ragrade.evaluate(..., max_memory=) uses
            res = evaluate_paths(args.qrels, args.run, PieceScorer.of_options(METRICS, {}),
                                 budget=parse_memory(args.max_memory), report=report)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak.peak, "means": dict(res.means),
                      "queries": res.summary.qrels_queries, "way": report.get("way", "in memory"),
                      "pieces": report.get("pieces", 1)}))
    return 0


def measure(kind: str, qp: Path, rp: Path, max_memory: str) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--qrels", str(qp), "--run", str(rp), "--max-memory", max_memory]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def rows_arg(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        p = part.strip().upper()
        mult = 1_000_000 if p.endswith("M") else 1_000 if p.endswith("K") else 1
        out.append(int(float(p.rstrip("MK")) * mult))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="10M,50M,100M", help="run rows per collection (100 per query)")
    ap.add_argument("--max-memory", default="1GiB", help="budget of the out-of-core runs")
    ap.add_argument("--in-memory-all", action="store_true", help="also evaluate in memory at every size")
    ap.add_argument("--no-shuffled", action="store_true", help="skip the shuffled (partitioned) run")
    ap.add_argument("--dir", default=None, help="where to write the files (default: the system's temp dir)")
    ap.add_argument("--child", choices=["memory", "outofcore"], help=argparse.SUPPRESS)
    ap.add_argument("--qrels", help=argparse.SUPPRESS)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    sizes = rows_arg(args.rows)
    results = []
    tmp = Path(tempfile.mkdtemp(prefix="ragrade-bench-scale-", dir=args.dir))
    try:
        for i, rows in enumerate(sizes):
            nq = rows // DEPTH
            t0 = time.perf_counter()
            qp, rp = write_collection(tmp, nq)
            print(f"# {rows:,} run rows: files written in {time.perf_counter() - t0:.0f} s "
                  f"(run {os.path.getsize(rp) / 2**20:,.0f} MiB, qrels {os.path.getsize(qp) / 2**20:,.0f} MiB)",
                  flush=True)
            if i == 0 or args.in_memory_all:
                results.append((rows, "in memory", measure("memory", qp, rp, args.max_memory)))
                print(f"  in memory: {results[-1][2]}", flush=True)
            results.append((rows, f"out of core ({args.max_memory})", measure("outofcore", qp, rp, args.max_memory)))
            print(f"  out of core: {results[-1][2]}", flush=True)
            if i == 0 and not args.no_shuffled:
                _, sp = write_collection(tmp, nq, shuffled=True)
                results.append((rows, f"out of core, shuffled run ({args.max_memory})",
                                measure("outofcore", qp, sp, args.max_memory)))
                print(f"  shuffled: {results[-1][2]}", flush=True)
                sp.unlink()
            qp.unlink()
            rp.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base_mem = next(r for rows, kind, r in results if kind == "in memory")
    base_ooc = next(r for rows, kind, r in results if kind.startswith("out of core (") and rows == sizes[0])
    mem_rate = sizes[0] / base_mem["wall"]
    print()
    print("| run rows | path | way | pieces | wall (s) | CPU (s) | peak memory (MiB) | rows/s | "
          "peak / peak at first size | throughput vs in memory |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for rows, kind, r in results:
        rate = rows / r["wall"]
        ratio = r["peak"] / base_ooc["peak"] if kind.startswith("out of core (") else float("nan")
        print(f"| {rows / 1e6:.0f}M | {kind} | {r['way']} | {r['pieces']} | {r['wall']:.2f} | {r['cpu']:.2f} | "
              f"{r['peak'] / 2**20:,.0f} | {rate / 1e6:.1f}M | {ratio:.2f} | {mem_rate / rate:.2f}x slower |")
    first = [r for rows, _, r in results if rows == sizes[0]]
    same = all(r["means"] == pytest_free_close(first[0]["means"], r["means"]) for r in first)
    print(f"\nmeans equal across paths at {sizes[0]:,} rows: {same}")
    return 0


def pytest_free_close(a: dict, b: dict) -> dict:
    """``b`` if every mean equals ``a``'s to 1e-12, else ``a`` (so the comparison above fails)."""
    ok = all(abs(a[k] - b[k]) <= 1e-12 for k in a)
    return b if ok else a


if __name__ == "__main__":
    raise SystemExit(main())
