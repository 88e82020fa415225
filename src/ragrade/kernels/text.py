"""Kernels of the text families: token overlap between retrieved texts and ground-truth texts.

AutoRAG's token metrics (``docs/profiles.md``, autorag): every text is SQuAD-normalised and tokenised;
for each retrieved passage in the top k, the best score over all ground-truth texts of the query is
taken, and the query's value is the mean over its retrieved passages (NaN for an empty list). The
scores of every (passage, ground-truth text) pair of every query are computed in one batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric


@dataclass(frozen=True)
class TextLists:
    """Texts per query: ``units[q]`` is the ground truth (a list of units, each a list of acceptable
    texts) and ``lists[q]`` the retrieved texts in rank order."""

    units: list[list[list[str]]]
    lists: list[list[str]]


def _token_scores(m: Metric, t: TextLists, column: int) -> np.ndarray:
    from ragrade.matching.matchers import token_overlap

    nq = len(t.lists)
    k = m.k
    retrieved = [lst if k is None else lst[:k] for lst in t.lists]
    gold = [[x for u in us for x in u] for us in t.units]
    n_ret = np.fromiter(map(len, retrieved), dtype=np.int64, count=nq)
    n_gold = np.fromiter(map(len, gold), dtype=np.int64, count=nq)
    per_q = n_ret * n_gold
    total = int(per_q.sum())
    r_items = [x for lst in retrieved for x in lst]
    g_items = [x for g in gold for x in g]
    pq = np.repeat(np.arange(nq, dtype=np.int64), per_q)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_q) - per_q, per_q)
    width = np.maximum(n_gold[pq], 1)
    row = np.repeat(np.cumsum(n_ret) - n_ret, per_q) + local // width
    alt = np.repeat(np.cumsum(n_gold) - n_gold, per_q) + local % width
    best = np.full(len(r_items), -np.inf)
    if total:
        scores = token_overlap([r_items[i] for i in row.tolist()], [g_items[i] for i in alt.tolist()])[:, column]
        np.maximum.at(best, row, scores)
    best = np.where(np.isfinite(best), best, 0.0)
    r_q = np.repeat(np.arange(nq, dtype=np.int64), n_ret)
    s = np.bincount(r_q, weights=best, minlength=nq)
    return np.divide(s, n_ret, out=np.full(nq, np.nan), where=n_ret > 0)


def token_precision(m: Metric, t: TextLists) -> np.ndarray:
    return _token_scores(m, t, 0)


def token_recall(m: Metric, t: TextLists) -> np.ndarray:
    return _token_scores(m, t, 1)


def token_f1(m: Metric, t: TextLists) -> np.ndarray:
    return _token_scores(m, t, 2)
