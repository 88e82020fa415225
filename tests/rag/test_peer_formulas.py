"""Randomised checks of the profiles whose peers cannot be installed here (AutoRAG, REMem), against
plain per-row implementations of the formulas in docs/profiles.md (autorag, remem) (written for these tests)."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from ragrade.compat.remem import RetrievalNDCGAny, RetrievalRecall, RetrievalRecallAll
from reference import evaluate_profile


def autorag_row(gt: list[list[str]], pred: list[str]) -> dict[str, float]:
    sets = [set(g) for g in gt]
    pred_set = set(pred)
    rec = sum(any(p in s for p in pred_set) for s in sets) / len(gt)
    prec = sum(any(p in s for s in sets) for p in pred_set) / len(pred)
    f1 = 0.0 if rec + prec == 0 else 2 * (rec * prec) / (rec + prec)
    rr = []
    for s in sets:
        for i, p in enumerate(pred):
            if p in s:
                rr.append(1.0 / (i + 1))
                break
    mrr = sum(rr) / len(sets) if rr else 0.0
    aps = []
    for s in sets:
        hits = [1 if p in s else 0 for p in pred]
        precs = [sum(hits[: i + 1]) / (i + 1) for i, h in enumerate(hits) if h]
        aps.append(sum(precs) / len(precs) if precs else 0.0)
    mapv = sum(aps) / len(gt)
    flat = [x for g in gt for x in g]
    relv = set(flat)
    dcg = sum((2 ** (1 if p in relv else 0) - 1) / np.log2(i + 2) for i, p in enumerate(pred))
    ideal = [1] * min(len(flat), len(pred)) + [0] * max(0, len(pred) - len(flat))
    idcg = sum(r / np.log2(i + 2) for i, r in enumerate(ideal))
    return {"precision": prec, "recall": rec, "f1": f1, "rr": mrr, "ap": mapv,
            "ndcg": dcg / idcg if idcg > 0 else 0.0}


def test_autorag_random_rows():
    rng = random.Random(1)
    gts, preds = [], []
    for _ in range(300):
        gts.append([[f"d{rng.randrange(9)}" for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 3))])
        preds.append([f"d{rng.randrange(9)}" for _ in range(rng.randint(1, 6))])
    names = ["precision", "recall", "f1", "rr", "ap", "ndcg"]
    ours = evaluate_profile(gts, preds, names, "autorag").per_query
    for i, (g, p) in enumerate(zip(gts, preds, strict=True)):
        want = autorag_row(g, p)
        for n in names:
            assert ours[n].iloc[i] == pytest.approx(want[n], abs=1e-12), (n, g, p)


def _chunk_in(chunk: str, doc: str) -> bool:
    if chunk.startswith("Date: "):
        chunk = "\n".join(chunk.split("\n")[1:])
    if chunk.startswith(("user: ", "assistant: ")):
        return chunk.split(": ")[1] in doc or json.dumps(chunk).split(": ")[1] in doc
    return chunk in doc or json.dumps(chunk) in doc


def _dcg(rels: list[int], k: int) -> float:
    r = np.asarray(rels, dtype=float)[:k]
    return float(r[0] + np.sum(r[1:] / np.log2(np.arange(2, r.size + 1)))) if r.size else 0.0


def test_remem_random_examples():
    rng = random.Random(2)
    docs = ["alpha beta gamma", 'say "hi" now', "user: delta", "epsilon\nzeta", "eta theta"]
    chunks = ["alpha", "beta gamma", "hi", '"hi"', "user: delta: x", "Date: 1\nzeta", "theta", "iota", "",
              "assistant: eta theta"]
    gold = [rng.sample(docs, rng.randint(0, 3)) for _ in range(200)]
    ret = [[rng.choice(chunks + docs) for _ in range(rng.randint(0, 6))] for _ in range(200)]
    ks = [1, 2, 5]
    _, rec = RetrievalRecall().calculate_metric_scores(gold, ret, ks)
    _, rall = RetrievalRecallAll().calculate_metric_scores(gold, ret, ks)
    pooled, nd = RetrievalNDCGAny().calculate_metric_scores(gold, ret, ks)
    sums = {k: 0.0 for k in ks}
    for i, (g, r) in enumerate(zip(gold, ret, strict=True)):
        for k in ks:
            want_r = len(set(r[:k]) & set(g)) / len(set(g)) if g else 0.0
            assert rec[i][f"Recall@{k}"] == pytest.approx(want_r, abs=1e-12)
            found = {d for d in g for c in r[:k] if _chunk_in(c, d)}
            want_a = (1.0 if len(found) == len(g) else 0.0) if g else 0.0
            assert rall[i][f"Recall_all@{k}"] == want_a, (g, r, k)
            rels = [1 if any(_chunk_in(c, d) for d in g) else 0 for c in r]
            ideal = _dcg(sorted(rels, reverse=True), k)
            want_n = 0.0 if ideal == 0 else _dcg(rels, k) / ideal
            assert nd[i][f"NDCG_any@{k}"] == pytest.approx(want_n, abs=1e-12), (g, r, k)
            sums[k] += nd[i][f"NDCG_any@{k}"]
    for k in ks:
        assert pooled[f"NDCG_any@{k}"] == round(sums[k] / len(gold), 4)
        assert not math.isnan(pooled[f"NDCG_any@{k}"])


def test_autorag_with_a_cutoff_scores_the_top_k_list_and_ignores_a_blank_id_beyond_it():
    """AutoRAG cuts each list at k first and only then refuses a row holding a blank id: a blank id
    beyond k leaves the row scored (issue 11, item 18), one within k leaves it unscored."""
    rng = random.Random(7)
    gts, preds = [], []
    for _ in range(200):
        gts.append([[f"d{rng.randrange(9)}" for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 3))])
        pred = [f"d{rng.randrange(9)}" for _ in range(rng.randint(1, 6))]
        pred.insert(rng.randrange(len(pred) + 1), " ")  # one blank id somewhere
        preds.append(pred)
    k = 3
    names = [f"{n}@{k}" for n in ("precision", "recall", "f1", "rr", "ap", "ndcg")]
    ours = evaluate_profile(gts, preds, names, "autorag").per_query
    scored = 0
    for i, (g, p) in enumerate(zip(gts, preds, strict=True)):
        top = p[:k]
        for n in names:
            if any(not x.strip() for x in top):
                assert math.isnan(ours[n].iloc[i]), (n, g, p)
            else:
                assert ours[n].iloc[i] == pytest.approx(autorag_row(g, top)[n.split("@")[0]], abs=1e-12), (n, g, p)
                scored += 1
    assert scored > 100 * len(names) // 2  # most rows have their blank id beyond k
