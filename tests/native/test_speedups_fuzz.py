"""Fuzz of the drop-ins' own C module (ragrade.compat._speedups) against the drop-ins' pure-Python paths, on random
inputs: pytrec_join (dict rankings, ties, odd scores and keys), pytrec_qrels, nested_dicts, trec_lines,
sort_segments_trec, first_duplicate_in_segments, rank_order_chunks, gather_chunks and blank_line_head. Each runs ``RAGRADE_FUZZ_SECONDS`` seconds (default 2, at most 15; the
sanitizer job of ``.ci/run`` builds this module with AddressSanitizer and UndefinedBehaviorSanitizer too, where any
out-of-bounds access stops the process). Inputs come from ``random.Random(RAGRADE_FUZZ_SEED + i)``."""

from __future__ import annotations

import itertools
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



def _chunked(ids: list[str], rng: random.Random) -> tuple[tuple[np.ndarray, ...], tuple[bytes, ...]]:
    """The ids cut into 1-4 chunks at random rows (a segment may straddle a cut), as the scanner's threads
    leave them: each chunk's int64 offsets (not always from 0) and bytes."""
    cuts = sorted({0, len(ids), *(rng.randrange(len(ids) + 1) for _ in range(rng.randrange(0, 4)))})
    offs, datas = [], []
    for a, z in itertools.pairwise(cuts):
        pad = b"#" * rng.randrange(3)  # bytes before the first string: offsets need not start at 0
        data = [d.encode("utf-8") for d in ids[a:z]]
        off = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in data], out=off[1:])
        offs.append(off + len(pad))
        datas.append(pad + b"".join(data))
    if not offs:
        offs, datas = [np.zeros(1, dtype=np.int64)], [b""]
    return tuple(offs), tuple(datas)


def test_fuzz_rank_order_and_gather_over_chunks():
    """The drop-in's fast path over the scanner's chunks equals the ranking (one call or segment ranges), names
    a duplicate as the one-array scan does, and gathers the ids of any rows."""
    for seed in seeds():
        rng = random.Random(seed)
        counts = [rng.randrange(0, 12 if rng.random() < 0.7 else 80) for _ in range(rng.randrange(1, 6))]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        ids = [rng.choice(IDS[:-1]) + str(rng.randrange(3)) for _ in range(int(offsets[-1]))]
        scores = np.array([rng.choice([0.5, 1.0, -0.0, 0.0, 2.0]) for _ in ids], dtype=np.float64)
        offs, datas = _chunked(ids, rng)
        run = Run(np.array([f"q{i}" for i in range(len(counts))], dtype=object), offsets, None, None, scores,
                  raw_docs=np.array(ids, dtype=object))
        perm = np.full(len(ids), -1, dtype=np.int64)
        mid = rng.randrange(len(counts) + 1)
        got = [c.rank_order_chunks(scores, offsets, offs, datas, perm, a, z, False)
               for a, z in ((0, mid), (mid, len(counts)))]
        assert got == [-1, -1], seed
        assert np.array_equal(perm, run.ranking()), seed
        strings = _native.arrow_strings(pa.array(ids, type=pa.string()))
        assert strings is not None
        first = c.first_duplicate_in_segments(strings[0], strings[1], offsets)
        assert c.rank_order_chunks(scores, offsets, offs, datas, perm, 0, len(counts), True) == first, seed
        rows = np.array([rng.randrange(len(ids)) for _ in range(rng.randrange(len(ids) + 1))] if ids else [],
                        dtype=np.int64)
        want = b"".join(ids[r].encode("utf-8") for r in rows.tolist())
        out_off = np.full(len(rows) + 1, -1, dtype=np.int64)
        out_data = np.zeros(len(want) + rng.randrange(3), dtype=np.uint8)
        c.gather_chunks(offs, datas, rows, out_off, out_data)
        assert out_data[:len(want)].tobytes() == want, seed
        assert out_off.tolist() == np.concatenate(
            [[0], np.cumsum([len(ids[r].encode("utf-8")) for r in rows.tolist()])]).astype(int).tolist(), seed


def test_rank_order_and_gather_refuse_broken_chunks():
    ok_off, ok_data = (np.array([0, 1, 2], dtype=np.int64),), (b"ab",)
    scores, offsets, perm = np.zeros(2), np.array([0, 2], dtype=np.int64), np.zeros(2, dtype=np.int64)
    broken = {
        "a string beyond its chunk": ((np.array([0, 1, 3], dtype=np.int64),), ok_data),
        "offsets going back": ((np.array([0, 2, 1], dtype=np.int64),), ok_data),
        "a negative offset": ((np.array([-1, 1, 2], dtype=np.int64),), ok_data),
        "fewer rows than scores": ((np.array([0, 1], dtype=np.int64),), (b"a",)),
        "more rows than scores": ((np.array([0, 1, 2, 2], dtype=np.int64),), ok_data),
        "tuples of two lengths": (ok_off, (b"ab", b"")),
    }
    for what, (offs, datas) in broken.items():
        with pytest.raises(ValueError):
            c.rank_order_chunks(scores, offsets, offs, datas, perm, 0, 1, True)
        if what not in ("fewer rows than scores", "more rows than scores"):
            with pytest.raises(ValueError):
                c.gather_chunks(offs, datas, np.array([0, 1], dtype=np.int64), np.zeros(3, dtype=np.int64),
                                np.zeros(8, dtype=np.uint8))
    with pytest.raises(ValueError):  # a list, not a tuple, of chunks
        c.rank_order_chunks(scores, offsets, list(ok_off), list(ok_data), perm, 0, 1, True)
    for segs, seg_off, out in (((0, 2), offsets, perm), ((-1, 1), offsets, perm), ((0, 1), offsets, perm[:1]),
                               ((0, 1), np.array([0, 3], dtype=np.int64), perm)):
        with pytest.raises(ValueError):
            c.rank_order_chunks(scores, seg_off, ok_off, ok_data, out, segs[0], segs[1], False)
    for rows, out_off, out_data in ((np.array([2]), np.zeros(2, dtype=np.int64), np.zeros(4, dtype=np.uint8)),
                                    (np.array([-1]), np.zeros(2, dtype=np.int64), np.zeros(4, dtype=np.uint8)),
                                    (np.array([0, 1]), np.zeros(2, dtype=np.int64), np.zeros(4, dtype=np.uint8)),
                                    (np.array([0, 1]), np.zeros(3, dtype=np.int64), np.zeros(1, dtype=np.uint8))):
        before = out_data.copy()
        with pytest.raises(ValueError):
            c.gather_chunks(ok_off, ok_data, rows.astype(np.int64), out_off, out_data)
        assert np.array_equal(out_data, before)

def test_fuzz_trec_lines_equals_the_python_lines(monkeypatch):
    for seed in seeds():
        rng = random.Random(seed)
        qids = [rng.choice(IDS[:-1]) + str(i) for i in range(rng.randrange(1, 6))]
        heads = [rng.choice(["map", "P_5", "runid", "relstring"]).ljust(22) for _ in range(rng.randrange(1, 4))]
        columns = [np.array([rng.choice([0.0, -0.0, 1 / 3, math.nan, -math.nan, 1e300, 2.5e-5]) for _ in qids])
                   if rng.random() < 0.7 else text_of.strings([rng.choice(["", "run", "RRN"]) for _ in qids]) for _ in heads]
        fast = b"".join(text_of.lines(heads, columns, qids))
        with monkeypatch.context() as m:
            m.setattr(_native, "speedups", None)
            slow = b"".join(text_of.lines(heads, columns, qids))
        assert fast == slow, seed


def test_fuzz_blank_line_head_equals_the_regular_expression():
    """The memchr scan that tells the trec_eval drop-in whether a judgments file has an empty line or one starting
    with a blank finds the same first line as the regular expression it replaced (the fallback)."""
    import re

    first_blank = re.compile(rb"(?:^|(?<=\n))[\n \t\r\v\f]")
    alphabet = [b"q", b"1", b" ", b"\t", b"\r", b"\v", b"\f", b"\n", b"#", b"\x00", b"\xff"]
    for seed in seeds():
        rng = random.Random(seed)
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        got = c.blank_line_head(data)
        m = first_blank.search(data)
        want = m.start() if m is not None else -1
        if want == len(data):  # (the line after a final line feed is not a line)
            want = -1
        assert got == want, (seed, data)
        assert c.blank_line_head(memoryview(data)) == got
