"""Measures as one peer tool computes them, where its reading differs from ragrade's default family.

* :func:`rbp_ranx`: ranx's ``rbp.p``: the raw grade is the gain (grades at or above ``rel``), over the
  whole list: ``(1 - p) sum_i p^(i-1) grade_i``. ragrade's ``rbp`` rescales graded gains to [0, 1]
  (trec_eval 10); on binary judgments the two agree.
* :func:`bpref_ranx`: ranx's ``bpref``: negative grades are judged non-relevant (trec_eval: unjudged).
* :func:`compat_ir_measures`: ir-measures' ``Compat`` computed from the run and the qrels themselves,
  because its ideal ranking orders relevant documents of equal grade by their *run score* (0.0 when not
  retrieved, so an unretrieved document ties with a retrieved one scored 0 and ranks above negative
  scores), then by their order in the qrels; the run itself is ranked by score, ties by document id
  ascending.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragrade.kernels.common import safe_div, sum_by_query

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.kernels.metrics import Judged
    from ragrade.metrics.parser import Metric


def rbp_ranx(m: Metric, j: Judged) -> np.ndarray:
    """ranx's rank-biased precision: ``(1 - p) sum_i p^(i-1) grade_i`` over retrieved documents whose grade
    is at least ``rel`` (first copies), raw grades as gains."""
    p = float(m.get("p"))
    rel = m.get("rel")
    keep = j.grade >= (1 if rel is None else rel)
    q, pos, g = j.q[keep], j.pos[keep], j.grade[keep]
    if m.k is not None:
        cut = pos < m.k
        q, pos, g = q[cut], pos[cut], g[cut]
    return (1.0 - p) * sum_by_query(q, g * np.power(p, pos.astype(np.float64)), j.nq)


def bpref_ranx(m: Metric, j: Judged) -> np.ndarray:
    """ranx's bpref: every judged document below ``rel`` is judged non-relevant, negative grades included
    (trec_eval counts those as unjudged); ``N`` counts them in the qrels. A query with relevant documents
    retrieved but no judged non-relevant one is 0 / 0 in ranx (NaN); one without relevant judgments 0."""
    rel = m.get("rel")
    rel = 1 if rel is None else rel
    q, _, g, first = j.judged_table()
    q, g = q[first], g[first]
    is_rel = g >= rel
    nonrel = (~is_rel).astype(np.float64)
    csum = np.cumsum(nonrel)
    starts = np.searchsorted(q, np.arange(j.nq + 1))
    before = np.concatenate([[0.0], csum])[starts[:-1]]
    above = csum - nonrel - before[q]  # judged non-relevant above each row
    r_count = np.bincount(j.unit_q[j.unit_grade >= rel], minlength=j.nq).astype(np.float64)
    n_count = np.bincount(j.unit_q[j.unit_grade < rel], minlength=j.nq).astype(np.float64)
    denom = np.minimum(r_count, n_count)
    rq = q[is_rel]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = 1.0 - np.minimum(above[is_rel], r_count[rq]) / denom[rq]
        total = sum_by_query(rq, terms, j.nq)
        out = np.where(r_count > 0, total / np.where(r_count > 0, r_count, 1.0), 0.0)
    return out


def compat_ir_measures(qrel_q: np.ndarray, qrel_doc: np.ndarray, qrel_grade: np.ndarray, run_q: np.ndarray,
                       run_doc: np.ndarray, run_score: np.ndarray, nq: int, n_ret: np.ndarray, p: float,
                       normalize: bool) -> np.ndarray:
    """ir-measures' Compat for ``nq`` queries. Qrels rows (query index, document code, grade) are in the
    order the qrels list them; run rows (query index, document code, score) hold each document once.
    ``n_ret``: the run's list length per query. A query absent from the run scores 0.

    RBO at depth ``D = max(|L|, |I|)`` is ``sum_x sum_{d = max(a_x, b_x)}^{D} p^(d-1) / d`` over relevant
    documents x retrieved at rank a_x and placed at b_x by the ideal, divided by ``sum_{d<=D} p^(d-1)``.
    """
    out = np.zeros(nq)
    rel = qrel_grade > 0
    iq, idoc, igrade = qrel_q[rel], qrel_doc[rel], qrel_grade[rel]
    iorder_in_qrels = np.flatnonzero(rel)
    # Run rank of every retrieved document: score descending, document id ascending (codes follow ids).
    key_doc = run_doc
    order = np.lexsort((key_doc, -run_score, run_q))
    rq = run_q[order]
    starts = np.searchsorted(rq, np.arange(nq + 1))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - starts[rq] + 1
    # Score and rank of each relevant qrels row in the run (0.0 and "never" when not retrieved).
    span = int(max(int(run_doc.max()) if len(run_doc) else 0, int(idoc.max()) if len(idoc) else 0)) + 1
    run_key = run_q.astype(np.int64) * span + run_doc
    sorter = np.argsort(run_key, kind="stable")
    qkey = iq.astype(np.int64) * span + idoc
    at = np.searchsorted(run_key[sorter], qkey)
    found = at < len(run_key)
    found[found] = run_key[sorter[at[found]]] == qkey[found]
    big = np.iinfo(np.int64).max // 4
    a = np.full(len(iq), big, dtype=np.int64)
    score = np.zeros(len(iq))
    a[found] = rank[sorter[at[found]]]
    score[found] = run_score[sorter[at[found]]]
    ideal = np.lexsort((iorder_in_qrels, -score, -igrade, iq))
    iq, a = iq[ideal], a[ideal]
    istarts = np.searchsorted(iq, np.arange(nq + 1))
    b = np.arange(len(iq)) - istarts[iq] + 1
    n_ideal = np.diff(istarts)
    depth = np.maximum(n_ret, n_ideal)
    dmax = int(depth.max()) if len(depth) else 0
    h = np.zeros(dmax + 1)  # h[n] = sum_{d<=n} p^(d-1) / d
    geo = np.zeros(dmax + 1)  # geo[n] = sum_{d<=n} p^(d-1)
    if dmax:
        d = np.arange(1, dmax + 1, dtype=np.float64)
        w = np.power(p, d - 1.0)
        np.cumsum(w / d, out=h[1:])
        np.cumsum(w, out=geo[1:])
    first = np.maximum(a, b)
    dq = depth[iq]
    inside = first <= dq
    contrib = np.zeros(len(iq))
    contrib[inside] = h[dq[inside]] - h[first[inside] - 1]
    num = sum_by_query(iq, contrib, nq)
    norm = geo[depth]
    rbo = safe_div(num, norm)
    if normalize:
        nn = np.minimum(n_ideal, depth)
        best = safe_div(geo[nn] + n_ideal * (h[depth] - h[nn]), norm)
        rbo = np.where(best > 0, safe_div(rbo, best), rbo)
    out[:] = rbo
    return out


__all__ = ["bpref_ranx", "compat_ir_measures", "rbp_ranx"]
