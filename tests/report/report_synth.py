"""Synthetic qrels, runs and texts for the report tests and the benchmark (no engine needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def make_data(n_queries: int, n_docs_per_query: int = 30, seed: int = 0, with_texts: bool = True):
    """qrels {q: {d: grade}}, runs {name: {q: {d: score}}}, doc texts, query texts."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {"bm25": {}, "dense": {}}
    texts: dict[str, str] = {}
    queries: dict[str, str] = {}
    for qi in range(n_queries):
        q = f"q{qi:05d}"
        docs = [f"{q}-d{j}" for j in range(n_docs_per_query)]
        grades = rng.choice([0, 0, 0, 1, 2], size=n_docs_per_query)
        qrels[q] = {d: int(g) for d, g in zip(docs[:12], grades[:12], strict=True)}
        if not any(g > 0 for g in qrels[q].values()):
            qrels[q][docs[0]] = 1
        quality = {"bm25": 0.8, "dense": 1.2}
        for name, strength in quality.items():
            noise = rng.random(n_docs_per_query)
            signal = np.array([qrels[q].get(d, 0) for d in docs], dtype=float)
            scores = noise + strength * signal * rng.random()
            runs[name][q] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        if with_texts:
            queries[q] = f"what is topic {qi}?"
            for d in docs:
                texts[d] = f"passage {d} about topic {qi}"
    if n_queries:  # a relevant document ranked first by both runs, whose text is a script
        qrels["q00000"]["q00000-d1"] = 1
        for run in runs.values():
            run["q00000"]["q00000-d1"] = 100.0
    if with_texts and n_queries:
        texts["q00000-d1"] = XSS
        queries["q00000"] = "query with <b>markup</b> & " + XSS
    return qrels, runs, texts, queries


def _ndcg_at(qrels: dict, run: dict, k: int) -> pd.Series:
    out = {}
    for q, judged in qrels.items():
        ranked = sorted(run.get(q, {}).items(), key=lambda t: (t[1], t[0]), reverse=True)[:k]
        dcg = sum(judged.get(d, 0) / np.log2(i + 2) for i, (d, _) in enumerate(ranked))
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
        idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))
        out[q] = dcg / idcg if idcg > 0 else np.nan
    return pd.Series(out)


def _recall_at(qrels: dict, run: dict, k: int) -> pd.Series:
    out = {}
    for q, judged in qrels.items():
        rel = {d for d, g in judged.items() if g > 0}
        ranked = sorted(run.get(q, {}).items(), key=lambda t: (t[1], t[0]), reverse=True)[:k]
        out[q] = len(rel & {d for d, _ in ranked}) / len(rel) if rel else np.nan
    return pd.Series(out)


def per_query_scores(qrels: dict, runs: dict) -> dict[str, pd.DataFrame]:
    """Reference per-query ndcg@10 and recall@5 (slow, plain Python) so tests need no engine."""
    return {
        name: pd.DataFrame({"ndcg@10": _ndcg_at(qrels, run, 10), "recall@5": _recall_at(qrels, run, 5)})
        for name, run in runs.items()
    }
