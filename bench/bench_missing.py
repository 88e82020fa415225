"""Many ground-truth queries missing from the run: ragrade stays linear in the input (issue 34, item 7).

    python bench/bench_missing.py [--queries 1000000] [--answered 1] [--repeat 2] [--isin 20000]

Builds qrels of ``--queries`` queries (one relevant document each) and a run answering the first
``--answered`` of them (one document each), then times, in one process:

  * ragrade: ``ragrade.evaluate`` (ndcg@10, P@5) on the in-memory Qrels/Run, plus ``result.notes()`` (the
    sentence "N ground-truth queries missing from the run, scored 0", which looks up every missing query:
    the step that was quadratic), at 1/100, 1/10 and all of ``--queries`` (the time per query must stay
    flat), and from TREC files on disk at the full size (reading included);
  * pytrec_eval, side by side, from the dicts (it scores the run's queries only and reports nothing about
    the missing ones; dict building not timed);
  * the old lookup, ``np.isin`` on object arrays, at ``--isin`` queries only (it compares every pair: at
    100,000 queries against 500 answered it did not finish), against the lookup used now on the same
    arrays.

Each time is the best of ``--repeat``. The machine may be shared: run it twice.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import ragrade
from ragrade._arrays import member

METRICS = ["ndcg@10", "P@5"]


def best(fn, repeat: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def data(n: int, answered: int) -> tuple[ragrade.Qrels, ragrade.Run, np.ndarray]:
    qids = np.array([f"q{i}" for i in range(n)], dtype=object)
    docs = qids + "_d"
    qrels = ragrade.Qrels.from_columns(qids, docs, np.ones(n))
    run = ragrade.Run.from_columns(qids[:answered], docs[:answered], np.ones(answered))
    return qrels, run, qids


def ragrade_time(qrels: object, run: object, repeat: int) -> tuple[float, str]:
    def go() -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = ragrade.evaluate(qrels, run, METRICS)
            return res.notes()[0]

    t, note = best(go, repeat)
    return t, str(note)


def pytrec_time(n: int, answered: int, repeat: int) -> float | None:
    try:
        import pytrec_eval
    except ImportError:
        return None
    qrels = {f"q{i}": {f"q{i}_d": 1} for i in range(n)}
    run = {f"q{i}": {f"q{i}_d": 1.0} for i in range(answered)}

    def go() -> object:
        return pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut", "P"}).evaluate(run)

    return best(go, repeat)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=1_000_000)
    ap.add_argument("--answered", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--isin", type=int, default=20_000, help="queries for the old np.isin lookup (0: skip)")
    args = ap.parse_args()
    n, m = args.queries, args.answered
    print(f"{n:,} ground-truth queries, {m:,} answered by the run; best of {args.repeat}")
    ragrade_time(*data(10, 1)[:2], 1)  # imports and first calls, not timed
    print(f"{'queries':>10} {'ragrade s':>10} {'us/query':>9} {'pytrec_eval s':>14}")
    for size in sorted({max(n // 100, m), max(n // 10, m), n}):
        qrels, run, _ = data(size, m)
        t, note = ragrade_time(qrels, run, args.repeat)
        pt = pytrec_time(size, m, args.repeat)
        print(f"{size:>10,} {t:>10.3f} {1e6 * t / size:>9.2f} {'-' if pt is None else f'{pt:.3f}':>14}")
    print(f"note: {note}")
    with tempfile.TemporaryDirectory() as d:
        qpath, rpath = Path(d) / "qrels.txt", Path(d) / "run.txt"
        qpath.write_text("".join(f"q{i} 0 q{i}_d 1\n" for i in range(n)))
        rpath.write_text("".join(f"q{i} Q0 q{i}_d 1 1.0 r\n" for i in range(m)))
        t, _ = ragrade_time(qpath, rpath, args.repeat)
        print(f"from TREC files (reading included): {t:.3f} s")
    if args.isin:
        k = args.isin
        _, _, qids = data(k, min(m, k))
        missing = qids[min(m, k):]
        t_old, old = best(lambda: np.isin(qids, missing), 1)
        t_new, new = best(lambda: member(qids, missing), args.repeat)
        assert np.array_equal(old, new)
        print(f"lookup of {len(missing):,} missing queries among {k:,}: np.isin {t_old:.3f} s, "
              f"now {t_new:.4f} s ({t_old / t_new:.0f}x)")


if __name__ == "__main__":
    main()
