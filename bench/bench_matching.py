"""Text-matching throughput (pairs per second): ragrade against continuous-eval and Ragas, same pairs.

Builds a synthetic set of RAG examples (seeded): per example 2 ground-truth passages (1-2 sentences)
and 5 retrieved chunks (2-5 sentences, some overlapping a ground-truth passage), then times

  rouge       ragrade's union ROUGE-L matcher (``RougeL(variant="union")``, all pairs in one batch)
              vs continuous-eval's ``RougeChunkMatch().is_relevant`` on every (retrieved, truth) pair;
  ranked      ``RankedRetrievalMetrics(RougeChunkMatch())`` per example (continuous-eval) vs the
              ``continuous-eval`` profile on all examples (ragrade), which is what users run;
  levenshtein (both best of --repeat, the runs being short) ragrade's ``Fuzzy(scorer="levenshtein", threshold=0.5).match`` vs Ragas'
              ``NonLLMStringSimilarity`` per pair thresholded at >= 0.5 (Ragas' relevance rule);
  ragas_cp    Ragas' ``NonLLMContextPrecisionWithReference`` + ``NonLLMContextRecall`` per example vs the
              ``ragas`` profile (both metrics) on all examples.

Each peer section runs only when its package imports; the decisions/values are compared so the
speed-up is for the same answers. The peers are heavy and are not ragrade dependencies: run this with
an interpreter where they are installed (see docs/profiles.md).

Usage:  python bench/bench_matching.py [--examples 2000] [--repeat 3] [--only rouge ranked ...]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import time
import warnings
from collections.abc import Callable

import numpy as np

# A small synthetic language: frequent function words and a few thousand content words, so that
# unrelated passages share mostly function words, as in real text.
FUNCTION = ["the", "of", "and", "a", "in", "to", "is", "was", "for", "on", "as", "with", "by", "it", "that",
            "at", "from", "his", "her", "an", "were", "are", "which", "this", "be", "or", "has", "had"]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(FUNCTION) if rng.random() < 0.45 else f"w{int(rng.paretovariate(1.2)) % 3000}"
             for _ in range(rng.randint(6, 16))]
    return " ".join(words).capitalize() + "."


def make(n: int, seed: int = 0) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    gts, rets = [], []
    for _ in range(n):
        gt = [" ".join(sentence(rng) for _ in range(rng.randint(1, 2))) for _ in range(2)]
        ret = []
        for _ in range(5):
            sents = [sentence(rng) for _ in range(rng.randint(2, 5))]
            if rng.random() < 0.4:
                sents.insert(rng.randrange(len(sents) + 1), rng.choice(gt))
            ret.append(" ".join(sents))
        gts.append(gt)
        rets.append(ret)
    return gts, rets


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def report(name: str, pairs: int, ours: float, peer: float, peer_name: str, same: bool) -> None:
    print(f"{name:12s} {pairs:8d} pairs | ragrade {pairs / ours:12,.0f} pairs/s | {peer_name} "
          f"{pairs / peer:10,.0f} pairs/s | ratio {peer / ours:7.1f}x | same answers: {same}")


def flat_pairs(gts: list[list[str]], rets: list[list[str]]) -> tuple[list[str], list[str]]:
    a, b = [], []
    for gt, ret in zip(gts, rets, strict=True):
        for r in ret:
            for g in gt:
                a.append(r)
                b.append(g)
    return a, b


def bench_rouge(gts, rets, repeat):
    try:
        from continuous_eval.metrics.retrieval import RougeChunkMatch as PeerRouge
    except ImportError:
        print("rouge        skipped: continuous-eval not installed")
        return
    from ragrade.matching import RougeL

    a, b = flat_pairs(gts, rets)
    ours_t, ours = best_of(lambda: RougeL().match(a, b), repeat)
    peer = PeerRouge()
    peer_t, theirs = best_of(lambda: [peer.is_relevant(x, y) for x, y in zip(a, b, strict=True)], 1)
    report("rouge", len(a), ours_t, peer_t, "continuous-eval", bool(np.array_equal(ours, np.array(theirs))))


def bench_ranked(gts, rets, repeat):
    try:
        from continuous_eval.metrics.retrieval import RankedRetrievalMetrics, RougeChunkMatch
    except ImportError:
        print("ranked       skipped: continuous-eval not installed")
        return
    from ragrade.compat import continuous_eval as ce

    ours_m = ce.RankedRetrievalMetrics(ce.RougeChunkMatch())
    ours_t, ours = best_of(lambda: ours_m.batch(rets, gts), repeat)
    peer = RankedRetrievalMetrics(RougeChunkMatch())
    peer_t, theirs = best_of(lambda: [peer.compute(retrieved_context=r, ground_truth_context=g)
                                      for r, g in zip(rets, gts, strict=True)], 1)
    same = all(abs(x[k] - y[k]) <= 1e-12 for x, y in zip(ours, theirs, strict=True) for k in y)
    report("ranked", sum(len(r) * len(g) for r, g in zip(rets, gts, strict=True)), ours_t, peer_t,
           "continuous-eval", same)


def bench_levenshtein(gts, rets, repeat):
    try:
        from ragas.dataset_schema import SingleTurnSample
        from ragas.metrics import NonLLMStringSimilarity
    except Exception:
        print("levenshtein  skipped: ragas not importable")
        return
    from ragrade.matching import Fuzzy

    a, b = flat_pairs(gts, rets)
    ours_t, ours = best_of(lambda: Fuzzy(scorer="levenshtein", threshold=0.5).match(a, b), repeat)
    sim = NonLLMStringSimilarity()

    async def peer_all():
        return [await sim._single_turn_ascore(SingleTurnSample(reference=x, response=y), None)
                for x, y in zip(a, b, strict=True)]

    peer_t, theirs = best_of(lambda: asyncio.run(peer_all()), repeat)
    report("levenshtein", len(a), ours_t, peer_t, "ragas", bool(np.array_equal(ours, np.array(theirs) >= 0.5)))


def bench_ragas_cp(gts, rets, repeat):
    try:
        from ragas.dataset_schema import SingleTurnSample
        from ragas.metrics import NonLLMContextPrecisionWithReference, NonLLMContextRecall
    except Exception:
        print("ragas_cp     skipped: ragas not importable")
        return
    from ragrade.rag import evaluate_profile

    units = [[[g] for g in gt] for gt in gts]
    ours_t, ours = best_of(lambda: evaluate_profile(units, rets, ["context_precision", "recall"], "ragas",
                                                    matcher="profile").per_query, repeat)
    cp, cr = NonLLMContextPrecisionWithReference(), NonLLMContextRecall()

    async def peer_all():
        out = []
        for r, g in zip(rets, gts, strict=True):
            s = SingleTurnSample(retrieved_contexts=r, reference_contexts=g)
            out.append((await cp._single_turn_ascore(s, None), await cr._single_turn_ascore(s, None)))
        return out

    peer_t, theirs = best_of(lambda: asyncio.run(peer_all()), 1)
    same = all(abs(ours["context_precision"].iloc[i] - t[0]) <= 1e-12 and abs(ours["recall"].iloc[i] - t[1]) <= 1e-12
               for i, t in enumerate(theirs))
    # both metrics score every (retrieved, reference) pair once each
    report("ragas_cp", 2 * sum(len(r) * len(g) for r, g in zip(rets, gts, strict=True)), ours_t, peer_t, "ragas",
           same)


SECTIONS = {"rouge": bench_rouge, "ranked": bench_ranked, "levenshtein": bench_levenshtein,
            "ragas_cp": bench_ragas_cp}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", choices=list(SECTIONS), default=list(SECTIONS))
    args = ap.parse_args()
    os.environ.setdefault("CONTINUOUS_EVAL_DO_NOT_TRACK", "true")
    warnings.simplefilter("ignore")
    gts, rets = make(args.examples)
    print(f"{args.examples} examples x 5 retrieved x 2 ground-truth passages (seed 0); "
          f"ragrade best of {args.repeat}, peers one run")
    for name in args.only:
        SECTIONS[name](gts, rets, args.repeat)


if __name__ == "__main__":
    main()
