"""Slow, obviously-correct span measures (docs/spans.md), one query at a time over Python sets of character
positions, and seeded generators of span cases.

A case is per query: ``gold`` = [(doc, start, end)], ``ranked`` = [(doc, start, end)] in rank order, and a
``chunking`` = [(doc, start, end)] of the whole corpus. Nothing here shares code with ragrade.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

Span = tuple[str, int, int]


def points(spans: list[Span]) -> set[tuple[str, int]]:
    return {(d, x) for d, s, e in spans for x in range(s, e)}


def inter_len(a: Span, b: Span) -> int:
    if a[0] != b[0]:
        return 0
    return max(0, min(a[2], b[2]) - max(a[1], b[1]))


def overlaps(c: Span, g: Span, touch: bool) -> bool:
    if c[0] != g[0]:
        return False
    return (c[1] <= g[2] and c[2] >= g[1]) if touch else (c[1] < g[2] and c[2] > g[1])


def default(gold: list[Span], top: list[Span]) -> dict[str, float]:
    r, c = points(gold), points(top)
    i = len(r & c)
    return {"recall": i / len(r), "precision": i / len(c) if c else 0.0, "iou": i / len(r | c)}


def chroma(gold: list[Span], top: list[Span]) -> dict[str, float]:
    r, c = points(gold), points(top)
    i = len(r & c)
    gold_sum = sum(e - s for _, s, e in gold)
    ret_sum = sum(e - s for _, s, e in top)
    unused = sum(len(points([g]) - c) for g in gold)
    nan = float("nan")
    return {"recall": i / gold_sum, "precision": i / ret_sum if ret_sum else nan,
            "iou": i / (ret_sum + unused) if ret_sum + unused else nan}


def legalbench(gold: list[Span], top: list[Span]) -> dict[str, float]:
    num = sum(inter_len(c, g) for c in top for g in gold)
    gold_sum = sum(e - s for _, s, e in gold)
    ret_sum = sum(e - s for _, s, e in top)
    return {"recall": num / gold_sum if gold_sum else 0.0, "precision": num / ret_sum if ret_sum else 0.0}


def omega(gold: list[Span], chunking: list[Span], touch: bool) -> float:
    chosen = [c for c in chunking if any(overlaps(c, g, touch) for g in gold)]
    if touch and not chosen:
        return 0.0
    r, c = points(gold), points(chosen)
    return len(r & c) / len(r | c)


def holding(gold: list[Span], chunking: list[Span], touch: bool) -> int:
    """The number of chunks of the chunking that overlap (touch) the gold: retrieve=-1's k."""
    return sum(any(overlaps(c, g, touch) for g in gold) for c in chunking)


@dataclass
class Case:
    docs: dict[str, int]  # doc -> length
    chunking: list[Span]
    gold: list[list[Span]]
    ranked: list[list[Span]]
    queries: list[str] = field(default_factory=list)


def random_case(seed: int, n_queries: int = 6, n_docs: int = 3, doc_len: int = 60, overlap_gold: bool = False,
                touching: bool = True) -> Case:
    """Small documents, a chunking (fixed windows with random size and overlap, a few nested or extra
    chunks), gold spans (disjoint unless ``overlap_gold``; some touching chunk boundaries) and rankings of
    chunks (repeats and chunks of other documents included)."""
    rng = np.random.default_rng(seed)
    docs = {f"d{i}": int(rng.integers(doc_len // 2, doc_len + 1)) for i in range(n_docs)}
    chunking: list[Span] = []
    for d, n in docs.items():
        size = int(rng.integers(3, 15))
        step = max(1, size - int(rng.integers(0, size)))
        chunking += [(d, s, min(n, s + size)) for s in range(0, n, step)]
        if rng.random() < 0.5:  # a nested chunk and a long one
            a = int(rng.integers(0, n - 2))
            chunking.append((d, a, a + 1))
            chunking.append((d, 0, n))
    gold, ranked = [], []
    for _ in range(n_queries):
        spans: list[Span] = []
        for _ in range(int(rng.integers(1, 4))):
            d = f"d{int(rng.integers(0, n_docs))}"
            n = docs[d]
            s = int(rng.integers(0, n - 1))
            if touching and rng.random() < 0.3:  # start on a chunk boundary
                bounds = [c[2] for c in chunking if c[0] == d and c[2] < n]
                s = int(rng.choice(bounds)) if bounds else s
            e = int(rng.integers(s + 1, min(n, s + 12) + 1))
            if overlap_gold or not any(g[0] == d and g[1] < e and g[2] > s for g in spans):
                spans.append((d, s, e))
        gold.append(spans)
        k = int(rng.integers(0, 12))
        picks = rng.integers(0, len(chunking), size=k)
        ranked.append([chunking[int(i)] for i in picks])
    return Case(docs, chunking, gold, ranked, [f"q{i}" for i in range(n_queries)])
