"""ndeval's other diversity measures (ir-measures' pyndeval provider), over the same :class:`Subtopics`
table as alpha-nDCG and ERR-IA (:mod:`ragrade.kernels.diversity`).

S is the number of subtopics of the query with at least one relevant document; a retrieved document
covering subtopic s gains ``(1 - alpha)^c`` for it, c the documents above it that also cover s. As ndeval:

* alpha-DCG@k: ``sum_{i<=k} gain_i / log2(i + 1)`` divided by the "ideal ideal" ``sum_{i<=k} S (1 -
  alpha)^(i-1) / log2(i + 1)`` (a document covering every subtopic at every rank); at k = 1 ndeval leaves
  it undivided.
* nERR-IA@k: ``sum_{i<=k} gain_i / i`` divided by the same sum for ndeval's greedy ideal ranking (0 when
  the run gains nothing in the top k).
* P-IA@k: relevant (document, subtopic) pairs in the top k / (k S).
* StRecall@k (subtopic recall): distinct subtopics covered in the top k / S.
* AP-IA: the mean over the S subtopics of the average precision for that subtopic alone (its relevant
  documents as R), over the whole list.
* NRBP: ``(1 - (1 - alpha) beta) / S * sum_i beta^(i-1) gain_i`` over the whole list (Clarke et al.,
  ICTIR 2009); nNRBP divides it by the NRBP of the greedy ideal ranking of every judged document.

A query with S = 0 scores 0 (nNRBP: 0 / 0 in ndeval, NaN here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragrade.kernels.common import safe_div, sum_by_query
from ragrade.kernels.diversity import Subtopics, _discount, _ideal_gains, _run_gains

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric

_ALL = 1 << 40  # "the whole list"


def alpha_dcg(m: Metric, s: Subtopics) -> np.ndarray:
    k = int(m.k or 20)
    alpha = float(m.get("alpha"))
    q, pos, g = _run_gains(m, s, k)
    dcg = sum_by_query(q, g * _discount(pos), s.nq)
    if k == 1:
        return np.where(s.n_sub > 0, dcg, 0.0)
    i = np.arange(k, dtype=np.float64)
    ideal_ideal = float(np.sum(np.power(1.0 - alpha, i) * _discount(i)))
    return safe_div(dcg, s.n_sub * ideal_ideal)


def nerr_ia(m: Metric, s: Subtopics) -> np.ndarray:
    k = int(m.k or 20)
    q, pos, g = _run_gains(m, s, k)
    err = sum_by_query(q, g / (pos + 1.0), s.nq)
    iq, ir, ig = _ideal_gains(m, s, k)
    ideal = sum_by_query(iq, ig / (ir + 1.0), s.nq)
    return np.where((s.n_sub > 0) & (err > 0), safe_div(err, ideal), 0.0)


def p_ia(m: Metric, s: Subtopics) -> np.ndarray:
    k = int(m.k or 20)
    keep = s.pos < k
    pairs = np.bincount(s.q[keep], minlength=s.nq).astype(np.float64)
    return safe_div(pairs, k * s.n_sub.astype(np.float64))


def strecall(m: Metric, s: Subtopics) -> np.ndarray:
    k = int(m.k or 20)
    keep = s.pos < k
    subs = np.unique(s.sub[keep])
    q_of_sub = np.zeros(int(s.sub.max()) + 1 if len(s.sub) else 0, dtype=np.int64)
    q_of_sub[s.sub] = s.q
    covered = np.bincount(q_of_sub[subs], minlength=s.nq).astype(np.float64)
    return safe_div(covered, s.n_sub.astype(np.float64))


def ap_ia(m: Metric, s: Subtopics) -> np.ndarray:
    # relevant documents per subtopic (the ideal's pairs list every relevant (document, subtopic) once)
    n_sub_ids = int(max(s.pair_sub.max() if len(s.pair_sub) else -1, s.sub.max() if len(s.sub) else -1)) + 1
    per_sub = np.bincount(s.pair_sub, minlength=n_sub_ids).astype(np.float64)
    order = np.lexsort((s.pos, s.sub))
    sub, pos, q = s.sub[order], s.pos[order], s.q[order]
    start = np.ones(len(sub), dtype=bool)
    start[1:] = sub[1:] != sub[:-1]
    first = np.flatnonzero(start)
    count = np.arange(len(sub)) - np.repeat(first, np.diff(np.append(first, len(sub)))) + 1.0
    prec = count / (pos + 1.0) / per_sub[sub]
    return safe_div(sum_by_query(q, prec, s.nq), s.n_sub.astype(np.float64))


def _nrbp_sum(q: np.ndarray, pos: np.ndarray, g: np.ndarray, nq: int, beta: float) -> np.ndarray:
    return sum_by_query(q, g * np.power(beta, pos.astype(np.float64)), nq)


def nrbp(m: Metric, s: Subtopics) -> np.ndarray:
    alpha, beta = float(m.get("alpha")), float(m.get("beta"))
    q, pos, g = _run_gains(m, s, _ALL)
    total = _nrbp_sum(q, pos, g, s.nq, beta)
    return safe_div(total * (1.0 - (1.0 - alpha) * beta), s.n_sub.astype(np.float64))


def nnrbp(m: Metric, s: Subtopics) -> np.ndarray:
    beta = float(m.get("beta"))
    q, pos, g = _run_gains(m, s, _ALL)
    run = _nrbp_sum(q, pos, g, s.nq, beta)
    depth = int(np.bincount(s.doc_q, minlength=s.nq).max()) if len(s.doc_q) else 0
    iq, ir, ig = _ideal_gains(m, s, depth)
    ideal = _nrbp_sum(iq, ir, ig, s.nq, beta)
    out = np.full(s.nq, np.nan)
    ok = ideal > 0
    out[ok] = run[ok] / ideal[ok]
    return out


__all__ = ["alpha_dcg", "ap_ia", "nerr_ia", "nnrbp", "nrbp", "p_ia", "strecall"]
