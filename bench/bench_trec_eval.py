"""Speed of the drop-ins: ``ragrade trec_eval -m all_trec`` against the trec_eval 10 binary, and
``ragrade.compat.pytrec_eval`` against pytrec_eval, side by side on the same generated collection.

The run has ``--rows`` rows (default 10,000,000: ``--depth`` documents for each of rows / depth queries, scores
with ties); the qrels judge 20 documents per query (grades -1..3, half of them retrieved). Both commands read
the same two files; their outputs must be identical (checked, byte for byte) for the summary and for ``-q``.
The binary is ``TREC_EVAL_BIN`` (``.ci/run`` builds it; ``tests/trec_eval_bin.py``). pytrec_eval is compared
on the first ``--pytrec-rows`` rows (default 1,000,000), from Python dicts, ``all_trec`` per query.

Usage:  TREC_EVAL_BIN=/path/to/trec_eval python bench/bench_trec_eval.py [--rows 10000000] [--depth 100]
        [--pytrec-rows 1000000] [--skip-pytrec] [--measure all_trec] [--measure ndcg.0=1.5 ...] [--repeat 3]
        [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_collection(tmp: Path, rows: int, depth: int, seed: int = 7) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    nq = max(rows // depth, 1)
    pool = depth * 3
    qp, rp = tmp / "qrels.txt", tmp / "run.txt"
    with open(rp, "w") as f:
        for start in range(0, nq, 10_000):
            qs = np.arange(start, min(start + 10_000, nq))
            docs = rng.integers(0, pool, (len(qs), depth))
            docs = np.sort(docs, axis=1)  # unique documents per query: a sorted draw, made distinct by rank
            docs = docs + np.arange(depth) * pool
            scores = np.round(rng.random((len(qs), depth)) * 50, 1)
            lines = [f"{q} Q0 d{d} {r + 1} {s} bench\n" for i, q in enumerate(qs.tolist())
                     for r, (d, s) in enumerate(zip(docs[i].tolist(), scores[i].tolist(), strict=True))]
            f.write("".join(lines))
    with open(qp, "w") as f:
        # judged: the first 10 retrieved documents' ids of a fresh draw (some match, most do not) + 10 others
        for start in range(0, nq, 10_000):
            qs = np.arange(start, min(start + 10_000, nq))
            docs = rng.integers(0, pool * depth, (len(qs), 20))
            grades = rng.choice([-1, 0, 0, 1, 2, 3], (len(qs), 20))
            lines = []
            for i, q in enumerate(qs.tolist()):
                for d, g in zip(sorted(set(docs[i].tolist())), grades[i].tolist(), strict=False):
                    lines.append(f"{q} 0 d{d} {g}\n")
            f.write("".join(lines))
    return qp, rp


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def child_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    try:
        import resource
    except ImportError:  # not on Windows: CPU ratios then read 0 / 0
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_child(fn, *args, repeat: int = 1):
    """``(wall seconds, CPU seconds, output)`` of a function that runs one child process: the best wall time of
    ``repeat`` runs and that run's CPU time (the least disturbed run, for the binary and ragrade alike)."""
    best = None
    for _ in range(max(repeat, 1)):
        c = child_cpu()
        t, out = timed(fn, *args)
        cpu = child_cpu() - c
        if best is None or t < best[0]:
            best = (t, cpu, out)
    assert best is not None
    return best


def compile_bytecode() -> None:
    """Write ragrade's bytecode (``.pyc``), as pip does when it installs the wheel: an editable install in a
    container that sets PYTHONDONTWRITEBYTECODE (the machines this project is developed on do) compiles every module from
    source at every start (about 30 ms of the drop-in's start-up), which is not what an installed ragrade does."""
    import compileall

    import ragrade

    compileall.compile_dir(Path(ragrade.__file__).parent, quiet=1)


def binary(path: str, args: list[str]) -> bytes:
    return subprocess.run([path, *args], capture_output=True, check=True).stdout


def ours(args: list[str]) -> bytes:
    proc = subprocess.run([sys.executable, "-m", "ragrade", "trec_eval", *args], capture_output=True, check=True)
    return proc.stdout


def bench_trec_eval(te: str, qp: Path, rp: Path, measures: list[str], repeat: int = 1) -> None:
    for extra in ([], ["-q"]):
        marks = [a for m in measures for a in ("-m", m)]
        args = [*marks, "-c", *extra, str(qp), str(rp)]
        t_bin, c_bin, want = timed_child(binary, te, args, repeat=repeat)
        t_ours, c_ours, got = timed_child(ours, args, repeat=repeat)
        same = "identical" if got == want else "DIFFERENT"
        label = "-q (per query)" if extra else "summary"
        n_lines = want.count(b"\n")
        print(f"trec_eval {' '.join(marks)} -c {label:15s}: binary {t_bin:7.2f} s, ragrade {t_ours:7.2f} s, "
              f"ratio {t_bin / t_ours:5.2f}x, output {same} ({n_lines:,} lines); CPU time (user + system, "
              f"the fairer figure on a busy machine): binary {c_bin:7.2f} s, ragrade {c_ours:7.2f} s, "
              f"ratio {c_bin / max(c_ours, 1e-9):5.2f}x")


def bench_pytrec(qp: Path, rp: Path, rows: int) -> None:
    import pytrec_eval

    import ragrade.compat.pytrec_eval as compat

    with open(qp) as f:
        qrels = pytrec_eval.parse_qrel(f)
    run: dict[str, dict[str, float]] = {}
    with open(rp) as f:
        for i, line in enumerate(f):
            if i >= rows:
                break
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    qrels = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items() if q in run}  # (P3: ndcg)
    compat.RelevanceEvaluator({"q": {"d": 1}}, {"map"}).evaluate({"q": {"d": 1.0}})  # imports, as pytrec_eval's
    measures = {"all_trec"}
    t_pe, want = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run))
    t_rg, got = timed(lambda: compat.RelevanceEvaluator(qrels, measures).evaluate(run))
    worst = max(abs(v - got[q][k]) for q, vals in want.items() for k, v in vals.items() if v == v)
    print(f"pytrec_eval all_trec on {rows:,} rows ({len(run):,} queries): pytrec_eval {t_pe:6.2f} s, "
          f"ragrade.compat.pytrec_eval {t_rg:6.2f} s, ratio {t_pe / t_rg:5.2f}x, max difference {worst:.2g}")
    beir = {"map_cut.1,3,5,10,100", "ndcg_cut.1,3,5,10,100", "recall.1,3,5,10,100", "P.1,3,5,10,100"}
    t_pe, _ = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, beir).evaluate(run))
    t_rg, _ = timed(lambda: compat.RelevanceEvaluator(qrels, beir).evaluate(run))
    print(f"pytrec_eval BEIR's call: pytrec_eval {t_pe:6.2f} s, ragrade.compat.pytrec_eval {t_rg:6.2f} s, "
          f"ratio {t_pe / t_rg:5.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--pytrec-rows", type=int, default=1_000_000)
    ap.add_argument("--skip-pytrec", action="store_true")
    ap.add_argument("--measure", action="append", default=None,
                    help="a trec_eval -m argument (repeatable; default all_trec). A gain map trec_eval sorts out of "
                         "gain order (ndcg.0=1.5, G.0=1.5) times the measures ragrade computes query by query")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each command this many times and report its best wall time (and that run's CPU time)")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="do not write ragrade's .pyc files first (see compile_bytecode)")
    a = ap.parse_args()
    te = os.environ.get("TREC_EVAL_BIN")
    if not a.no_bytecode:
        compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        t, (qp, rp) = timed(write_collection, Path(tmp), a.rows, a.depth)
        print(f"collection: {a.rows:,} run rows, {a.rows // a.depth:,} queries (written in {t:.1f} s)")
        if te:
            bench_trec_eval(te, qp, rp, a.measure or ["all_trec"], a.repeat)
        else:
            print("TREC_EVAL_BIN is not set: the trec_eval comparison is skipped (.ci/run builds the binary)")
        if not a.skip_pytrec:
            bench_pytrec(qp, rp, min(a.pytrec_rows, a.rows))


if __name__ == "__main__":
    main()
