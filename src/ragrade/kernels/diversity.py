"""Kernels of the diversity measures over subtopic judgments (TREC ``qid subtopic docno rel`` files):
alpha-nDCG@k (Clarke et al., SIGIR 2008) and intent-aware ERR@k, as ndeval (the TREC Web track's tool,
ir-measures' pyndeval provider) computes them.

Input is a :class:`Subtopics` table: every (retrieved row, subtopic) pair whose document is relevant to
that subtopic (binary: grade >= rel), and for the ideal ranking every judged document's subtopic pairs.
A subtopic counts for a query when at least one document is relevant to it. A document covering subtopic
s at rank i gains ``(1 - alpha)^c`` for s, c the documents above it that also cover s.

* alpha-nDCG@k = sum_{i<=k} gain_i / log2(i + 1), divided by the same for the ideal ranking, which ndeval
  builds greedily (at each rank the document with the largest gain, ties to the larger document id).
* ERR-IA@k = sum_{i<=k} gain_i / i, divided by sum_{i<=k} S (1 - alpha)^(i-1) / i (S subtopics), ndeval's
  "collection-independent" normalisation.

The greedy ideal loops over the k ranks, each step vectorised over every query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragrade.kernels.common import safe_div, sum_by_query

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric


@dataclass
class Subtopics:
    """Subtopic judgments joined to a run, for ``nq`` queries (binary relevance at one level)."""

    nq: int
    n_sub: np.ndarray  # int64[nq]: subtopics with at least one relevant document
    # retrieved (row, subtopic) pairs with relevance, sorted by (q, pos)
    q: np.ndarray
    pos: np.ndarray
    sub: np.ndarray  # subtopic id (unique across queries)
    # the ideal's candidates: judged documents (doc index unique across queries), their query and id order
    doc_q: np.ndarray
    doc_tie: np.ndarray  # int64: larger wins ties (the document id's rank within its query)
    pair_doc: np.ndarray  # (document, subtopic) pairs with relevance, for the ideal
    pair_sub: np.ndarray


def _discount(pos: np.ndarray) -> np.ndarray:
    return np.log(2.0) / np.log(pos + 2.0)


def _run_gains(m: Metric, s: Subtopics, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, pos, gain)`` of the retrieved (row, subtopic) pairs within the top k."""
    alpha = float(m.get("alpha"))
    keep = s.pos < k
    q, pos, sub = s.q[keep], s.pos[keep], s.sub[keep]
    order = np.lexsort((pos, sub))
    sub_sorted = sub[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = sub_sorted[1:] != sub_sorted[:-1]
    first = np.flatnonzero(start)
    seen = np.arange(len(order)) - np.repeat(first, np.diff(np.append(first, len(order))))
    gain = np.empty(len(order))
    gain[order] = np.power(1.0 - alpha, seen.astype(np.float64))
    return q, pos, gain


def _ideal_gains(m: Metric, s: Subtopics, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, rank, gain)`` of ndeval's greedy ideal ranking, first k ranks."""
    alpha = float(m.get("alpha"))
    n_docs = len(s.doc_q)
    weight = np.ones(int(s.pair_sub.max()) + 1 if len(s.pair_sub) else 0)
    taken = np.zeros(n_docs, dtype=bool)
    out_q, out_r, out_g = [], [], []
    n_per_q = np.bincount(s.doc_q, minlength=s.nq)
    for rank in range(k):  # one pass per rank, vectorised over queries
        score = np.bincount(s.pair_doc, weights=weight[s.pair_sub], minlength=n_docs)
        live = np.flatnonzero(~taken)
        if len(live) == 0:
            break
        order = np.lexsort((-s.doc_tie[live], -score[live], s.doc_q[live]))
        cand = live[order]
        first = np.ones(len(cand), dtype=bool)
        first[1:] = s.doc_q[cand[1:]] != s.doc_q[cand[:-1]]
        pick = cand[first]
        pick = pick[n_per_q[s.doc_q[pick]] > rank]
        taken[pick] = True
        out_q.append(s.doc_q[pick])
        out_r.append(np.full(len(pick), rank))
        out_g.append(score[pick])
        hit = taken[s.pair_doc] & np.isin(s.pair_doc, pick)
        np.multiply.at(weight, s.pair_sub[hit], 1.0 - alpha)
    if not out_q:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(out_q), np.concatenate(out_r), np.concatenate(out_g)


def alpha_ndcg(m: Metric, s: Subtopics) -> np.ndarray:
    k = int(m.k or 20)
    q, pos, g = _run_gains(m, s, k)
    dcg = sum_by_query(q, g * _discount(pos), s.nq)
    iq, ir, ig = _ideal_gains(m, s, k)
    ideal = sum_by_query(iq, ig * _discount(ir), s.nq)
    return np.where(s.n_sub > 0, safe_div(dcg, ideal), 0.0)


def err_ia(m: Metric, s: Subtopics) -> np.ndarray:
    k = int(m.k or 20)
    alpha = float(m.get("alpha"))
    q, pos, g = _run_gains(m, s, k)
    err = sum_by_query(q, g / (pos + 1.0), s.nq)
    i = np.arange(k, dtype=np.float64)
    ideal_ideal = float(np.sum(np.power(1.0 - alpha, i) / (i + 1.0)))
    return safe_div(err, s.n_sub * ideal_ideal)
