"""Metrics over bare relevance lists (the function shapes of order-aware-metrics tutorials).

``relevance`` is the list of labels of one ranked list, best first (``1``/``True`` relevant, ``0`` not;
graded values are gains for :func:`ndcg_at_k`). With no ground truth, ``R`` — the number of relevant
items — is the number of relevant items in the list, unless ``n_relevant`` is given. Each function
builds a one-query ground truth and run and asks the default engine; ``precision_at_k`` divides by
``min(k, len(relevance))`` as in the seed (the engine's ``P@k`` at that cutoff).

>>> average_precision([1, 0, 0, 1])
0.75
>>> precision_at_k([1, 0, 0], 3), reciprocal_rank([0, 1])
(0.3333333333333333, 0.5)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

from ragrade.errors import InputError, RagradeWarning
from ragrade.evaluation import build_plan, dispatch_one


def _check(relevance: Sequence[float]) -> list[float]:
    out = []
    for i, r in enumerate(relevance):
        try:
            v = float(r)
        except (TypeError, ValueError):
            raise InputError(f"relevance label at position {i} is not a number", value=r) from None
        if v != v or v < 0:
            raise InputError(f"relevance label at position {i} must be >= 0", value=r)
        out.append(v)
    return out


def _score(relevance: Sequence[float], metric: str, n_relevant: int | None = None) -> float:
    rel = _check(relevance)
    if not rel:
        return 0.0
    docs = [f"d{i}" for i in range(len(rel))]
    judged = {d: g for d, g in zip(docs, rel, strict=True) if g > 0}
    found = sum(1 for g in rel if g > 0)
    if n_relevant is not None:
        if n_relevant < found:
            raise InputError(f"n_relevant={n_relevant} but the list holds {found} relevant items")
        for j in range(n_relevant - found):
            judged[f"unretrieved{j}"] = 1.0
    if not judged:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        res = dispatch_one(build_plan({"q": judged}, {"q": docs}, [metric]))
    v = res.per_query.iloc[0, 0]
    return 0.0 if v != v else float(v)


def _k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError("k must be a positive integer", value=k)
    return k


def precision_at_k(relevance: Sequence[float], k: int) -> float:
    """Relevant items in the top k / min(k, len(relevance)) (0 for an empty list)."""
    k = min(_k(k), len(relevance))
    return 0.0 if k == 0 else _score(relevance, f"P@{k}")


def recall_at_k(relevance: Sequence[float], k: int, n_relevant: int | None = None) -> float:
    """Relevant items in the top k / R (R = relevant items in the list unless ``n_relevant``)."""
    return _score(relevance, f"recall@{_k(k)}", n_relevant)


def hit_rate_at_k(relevance: Sequence[float], k: int) -> float:
    """1 if a relevant item is in the top k, else 0."""
    return _score(relevance, f"hit_rate@{_k(k)}")


def f1_at_k(relevance: Sequence[float], k: int, n_relevant: int | None = None) -> float:
    """Harmonic mean of :func:`precision_at_k` and :func:`recall_at_k` (0 when both are 0)."""
    p, r = precision_at_k(relevance, k), recall_at_k(relevance, k, n_relevant)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def reciprocal_rank(relevance: Sequence[float]) -> float:
    """1 / rank of the first relevant item (0 if none)."""
    return _score(relevance, "rr")


def average_precision(relevance: Sequence[float], n_relevant: int | None = None) -> float:
    """Mean of precision@i over the relevant positions i (divided by R)."""
    return _score(relevance, "ap", n_relevant)


def ndcg_at_k(relevance: Sequence[float], k: int, n_relevant: int | None = None) -> float:
    """nDCG@k with the labels as linear gains; the ideal list is the list's own labels sorted."""
    return _score(relevance, f"ndcg@{_k(k)}", n_relevant)


def mean_reciprocal_rank(all_relevance: Iterable[Sequence[float]]) -> float:
    vals = [reciprocal_rank(r) for r in all_relevance]
    return sum(vals) / len(vals) if vals else 0.0


def mean_average_precision(all_relevance: Iterable[Sequence[float]]) -> float:
    vals = [average_precision(r) for r in all_relevance]
    return sum(vals) / len(vals) if vals else 0.0
