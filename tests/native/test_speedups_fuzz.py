"""Fuzz of the drop-ins' own C module (ragrade.compat._speedups) against the drop-ins' pure-Python paths, on random
inputs: pytrec_join (dict rankings, ties, odd scores and keys), pytrec_qrels, nested_dicts, trec_lines,
sort_segments_trec and first_duplicate_in_segments. Each runs ``RAGRADE_FUZZ_SECONDS`` seconds (default 2, at most 15; the
sanitizer job of ``.ci/run`` builds this module with AddressSanitizer and UndefinedBehaviorSanitizer too, where any
out-of-bounds access stops the process). Inputs come from ``random.Random(RAGRADE_FUZZ_SEED + i)``."""

from __future__ import annotations

import math
import os
import random
import time

import numpy as np
import pyarrow as pa
import pytest

from ragrade.compat import _native
from ragrade.compat import _trec_eval_text as text_of
from ragrade.compat.pytrec_eval import nested_dicts, pytrec_join
from ragrade.compat.trec_eval_inputs import trec_order
from ragrade.data import Run

c = _native.speedups
pytestmark = pytest.mark.skipif(c is None, reason="the drop-ins' C helpers are not built (or RAGRADE_NO_ACCEL)")
SECONDS = min(float(os.environ.get("RAGRADE_FUZZ_SECONDS", "2")), 15.0)  # (at most 15 s each: CI's budget)
SEED = int(os.environ.get("RAGRADE_FUZZ_SEED", "0"))
IDS = ["a", "b", "ab", "B", "é", "\u4e2d", "d1", "d10", "d9", "", "x y", "\U0001F600", "a\x00b"]
SCORES = [0.5, 1.0, 1.0 + 1e-9, -0.0, 0.0, 3, -2, math.inf, -math.inf, 1e30, 1e-320, math.nan, True, 2**70]


def seeds():
    stop = time.monotonic() + SECONDS
    i = 0
    while i < 20 or time.monotonic() < stop:
        yield SEED + i
        i += 1


def _ranking(rng: random.Random) -> dict:
    pool = IDS + [f"d{i}" for i in range(40)]
    out: dict = {}
    for _ in range(rng.randrange(0, 30)):
        key = rng.choice(pool) if rng.random() < 0.98 else rng.choice([1, None, b"b"])
        out[key] = rng.choice(SCORES) if rng.random() < 0.95 else rng.choice(["x", None, 1.5])
    return out


def test_fuzz_pytrec_join_equals_the_python_join():
    for seed in seeds():
        rng = random.Random(seed)
        runs = [_ranking(rng) for _ in range(rng.randrange(1, 6))]
        judged = [[d for d in IDS if rng.random() < 0.4] + [f"d{i}" for i in range(rng.randrange(0, 8))]
                  for _ in runs]
        docs = [d for j in judged for d in j]
        jcounts = np.array([len(j) for j in judged], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(jcounts)[:-1]]).astype(np.int64)
        fast = pytrec_join(runs, docs, starts, jcounts, use_accel=True)
        slow = pytrec_join(runs, docs, starts, jcounts, use_accel=False)
        if fast is None or slow is None:
            assert fast is None and slow is None, seed
            continue
        for x, y in zip(fast[:3], slow[:3], strict=True):
            assert np.array_equal(x, y), seed
        assert fast[3] == slow[3], seed


def test_fuzz_pytrec_qrels_and_nested_dicts():
    for seed in seeds():
        rng = random.Random(seed)
        dicts = [{rng.choice(IDS): rng.choice([0, 1, 2, -1, 2**40, True]) for _ in range(rng.randrange(0, 6))}
                 for _ in range(rng.randrange(0, 5))]
        if rng.random() < 0.2:
            dicts.append(rng.choice([{"a": 1.5}, {1: 1}, [], {"a": 2**80}]))
        total = sum(map(len, [d for d in dicts if isinstance(d, dict)]))
        counts = np.empty(len(dicts), dtype=np.int64)
        grades = np.empty(total, dtype=np.float64)
        status, docs = c.pytrec_qrels(dicts, counts, grades)
        if status == 0:
            assert docs == [d for q in dicts for d in q]
            assert grades.tolist() == [float(g) for q in dicts for g in q.values()]
        queries = [f"q{i}" for i in range(rng.randrange(0, 9))]
        names = [rng.choice(["map", "P_5", "ndcg", "x"]) for _ in range(rng.randrange(0, 4))]
        table = np.array([[rng.choice([0.0, -0.0, 1 / 3, math.nan, 7.0]) for _ in names] for _ in queries],
                         dtype=np.float64).reshape(len(queries), len(names))
        want = nested_dicts(queries, names, table, use_accel=False)
        got = nested_dicts(queries, names, table, use_accel=True)
        assert repr(got) == repr(want), seed


def test_fuzz_trec_order_and_duplicates():
    for seed in seeds():
        rng = random.Random(seed)
        counts = [rng.randrange(0, 12) for _ in range(rng.randrange(1, 6))]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        ids = [rng.choice(IDS[:-1]) + str(rng.randrange(3)) for _ in range(int(offsets[-1]))]
        scores = np.array([rng.choice([0.5, 1.0, -0.0, 0.0, 2.0]) for _ in ids], dtype=np.float64)
        strings = _native.arrow_strings(pa.array(ids, type=pa.string()))
        assert strings is not None
        run = Run(np.array([f"q{i}" for i in range(len(counts))], dtype=object), offsets, None, None, scores,
                  raw_docs=np.array(ids, dtype=object))
        assert np.array_equal(trec_order(scores, offsets, strings, workers=rng.choice([1, 2])), run.ranking()), seed
        first = c.first_duplicate_in_segments(strings[0], strings[1], offsets)
        seen: list[int] = []
        for s in range(len(counts)):
            group = ids[offsets[s]:offsets[s + 1]]
            seen += [int(offsets[s]) + i for i, d in enumerate(group) if d in group[:i]]
        assert first == (min(seen) if seen else -1), seed


def test_fuzz_trec_lines_equals_the_python_lines(monkeypatch):
    for seed in seeds():
        rng = random.Random(seed)
        qids = [rng.choice(IDS[:-1]) + str(i) for i in range(rng.randrange(1, 6))]
        heads = [rng.choice(["map", "P_5", "runid", "relstring"]).ljust(22) for _ in range(rng.randrange(1, 4))]
        columns = [np.array([rng.choice([0.0, -0.0, 1 / 3, math.nan, -math.nan, 1e300, 2.5e-5]) for _ in qids])
                   if rng.random() < 0.7 else pa.array([rng.choice(["", "run", "RRN"]) for _ in qids]) for _ in heads]
        fast = b"".join(text_of.lines(heads, columns, qids))
        with monkeypatch.context() as m:
            m.setattr(_native, "speedups", None)
            slow = b"".join(text_of.lines(heads, columns, qids))
        assert fast == slow, seed
