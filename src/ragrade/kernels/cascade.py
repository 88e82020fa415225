"""Kernels of user-model measures: ERR (gdeval), the C/W/L family (cwl-eval: NERR8-11, SDCG, INST, INSQ,
BPM, graded RBP), compatibility (Clarke et al.) and ir-measures' pairwise accuracy.

Same contract as :mod:`ragrade.kernels.metrics`. C/W/L measures follow cwl-eval exactly: a ranking is read
to depth 1000 (missing ranks and unjudged documents gain 0), a grade g gains ``(min(max(g, 0), max_rel) -
min_rel) / (max_rel - min_rel)`` clipped to [0, 1], and the expected utility is ``sum_i W_i g_i`` with
``W_1 = 1 / sum_i prod_{j<i} C_j`` and ``W_i = W_1 prod_{j<i} C_j`` for the measure's continuation
probabilities ``C``. The measures whose C depends on every rank are evaluated on blocks of queries
(a queries x 1000 matrix per block, vectorised within the block); the others have closed forms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ragrade.kernels.common import cumsum_within, group_starts, safe_div, sum_by_query
from ragrade.kernels.metrics import Judged

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric

DEPTH = 1000  # cwl-eval's default ranking depth (max_n)
GDEVAL_MAX_GRADE = 4  # gdeval.pl's MAX_JUDGMENT
_BLOCK = 2048  # queries per block of the C/W/L matrices


# -- gdeval's ERR ------------------------------------------------------------------------------------------


def err_gdeval(m: Metric, j: Judged) -> np.ndarray:
    """ERR@k with gdeval's stopping probabilities (2^g - 1) / 2^4 (grades above 4 count as 4)."""
    q, pos, g = j.q, j.pos, j.grade
    keep = pos < m.k if m.k is not None else np.ones(len(q), dtype=bool)
    q, pos, g = q[keep], pos[keep], np.minimum(g[keep], GDEVAL_MAX_GRADE)
    r = (np.exp2(g) - 1.0) / 2.0**GDEVAL_MAX_GRADE
    log_keep = np.log1p(-r)
    before = cumsum_within(q, log_keep) - log_keep  # log of prod_{earlier relevant} (1 - r)
    return sum_by_query(q, r * np.exp(before) / (pos + 1.0), j.nq)


# -- ir-measures' Accuracy ---------------------------------------------------------------------------------


def accuracy(m: Metric, j: Judged) -> np.ndarray:
    """1 - (sum over relevant documents in the top k of the non-relevant documents above them) /
    (relevant x non-relevant documents in the top k); NaN when the top k holds no such pair."""
    q, pos, hitnum = j.relevant_rows(m.rel)
    keep = pos < m.k if m.k is not None else np.ones(len(q), dtype=bool)
    q, pos, hitnum = q[keep], pos[keep], hitnum[keep]
    n_rel = np.bincount(q, minlength=j.nq).astype(np.float64)
    top = j.n_ret.astype(np.float64) if m.k is None else np.minimum(j.n_ret, m.k).astype(np.float64)
    n_non = top - n_rel
    above = sum_by_query(q, (pos - (hitnum - 1)).astype(np.float64), j.nq)
    pairs = n_rel * n_non
    out = np.full(j.nq, np.nan)
    ok = pairs > 0
    out[ok] = 1.0 - above[ok] / pairs[ok]
    return out


# -- C/W/L ---------------------------------------------------------------------------------------------------


def cwl_gain(m: Metric, j: Judged, grades: np.ndarray) -> np.ndarray:
    """cwl-eval's gain of a grade as ir-measures configures it: negative grades are 0, then clipped to
    [min_rel, max_rel] and scaled to [0, 1]; ``max_rel`` unset: the highest grade of the ground truth."""
    lo = float(m.get("min_rel"))
    hi_p = m.get("max_rel")
    hi = float(hi_p) if hi_p is not None else float(max(j.unit_grade.max(), lo + 1)) if len(j.unit_grade) else lo + 1
    g = np.clip(np.maximum(grades, 0.0), lo, hi)
    return (g - lo) / (hi - lo)


def _gain_rows(m: Metric, j: Judged, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, pos, gain)`` of the credited rows within ``depth`` with a positive C/W/L gain."""
    q, pos, g = j.q, j.pos, j.grade
    keep = pos < depth
    q, pos = q[keep], pos[keep]
    w = cwl_gain(m, j, g[keep])
    nz = w > 0
    return q[nz], pos[nz], w[nz]


def _expected_utility(j: Judged, q: np.ndarray, pos: np.ndarray, w: np.ndarray, width: int,
                      cont: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """``sum_i W_i g_i`` over rankings of ``width`` ranks; ``cont(G, cumG, r)`` gives the continuation
    probabilities (G and cumG: n x m matrices, r: the 1-based ranks of their m columns).

    Blocks of queries are dense matrices only up to the block's last rank with a gain. Past a query's own
    last gain every gain is 0 and the continuation depends on the rank and the query's total gain alone, so
    the rest of its normaliser ``sum_i prod_{j<i} C_j`` comes from a table computed once per distinct total
    gain (few: gains are grade steps) by the backward recursion ``T_i = 1 + C_i T_(i+1)``. Every sum runs
    left to right within the query and stops at the query's own last gain, so a query's value does not
    depend on the other queries evaluated with it (parts of a collection give the whole's values)."""
    out = np.zeros(j.nq, dtype=np.float64)
    starts = group_starts(q, j.nq)
    has = starts[1:] > starts[:-1]
    last = np.zeros(j.nq, dtype=np.int64)  # 1 + the 0-based rank of each query's last gain (0: none)
    last[has] = pos[starts[1:][has] - 1] + 1
    num = np.zeros(j.nq)
    head = np.zeros(j.nq)  # sum of the reach up to the last gain
    step = np.zeros(j.nq)  # the reach of the rank after the last gain
    total = np.zeros(j.nq)
    for a in range(0, j.nq, _BLOCK):
        b = min(a + _BLOCK, j.nq)
        lo, hi = starts[a], starts[b]
        if hi == lo:
            continue
        dense = int(last[a:b].max())
        g = np.zeros((b - a, dense))
        g[q[lo:hi] - a, pos[lo:hi]] = w[lo:hi]
        cg = np.cumsum(g, axis=1)
        c = cont(g, cg, _ranks(1, dense))
        reach = np.ones_like(c)
        np.cumprod(c[:, :-1], axis=1, out=reach[:, 1:])
        rows = np.flatnonzero(has[a:b])
        col = last[a:b][rows] - 1
        num[a + rows] = np.cumsum(reach * g, axis=1)[rows, col]
        head[a + rows] = np.cumsum(reach, axis=1)[rows, col]
        step[a + rows] = reach[rows, col] * c[rows, col]
        total[a + rows] = cg[rows, col]
    idx = np.flatnonzero(has & (last < width))
    tail = np.zeros(j.nq)
    if len(idx):
        values, inverse = np.unique(total[idx], return_inverse=True)
        inverse = inverse.reshape(-1)
        for c0 in range(0, len(values), _BLOCK):
            chunk = values[c0:c0 + _BLOCK]
            f = cont(np.zeros((len(chunk), width)), np.broadcast_to(chunk[:, None], (len(chunk), width)),
                     _ranks(1, width))
            t = np.zeros((len(chunk), width + 1))
            for i in range(width - 1, -1, -1):  # over ranks, vectorised over the distinct totals
                t[:, i] = 1.0 + f[:, i] * t[:, i + 1]
            sel = (inverse >= c0) & (inverse < c0 + len(chunk))
            tail[idx[sel]] = t[inverse[sel] - c0, last[idx[sel]]]
    norm = head + step * tail
    out[has] = num[has] / norm[has]
    return out


def rbp_cwl(m: Metric, j: Judged) -> np.ndarray:
    """cwl-eval's RBP: weights (1 - p) p^(i-1) / (1 - p^1000) over the first 1000 ranks."""
    p = float(m.get("p"))
    q, pos, w = _gain_rows(m, j, DEPTH)
    return sum_by_query(q, w * np.power(p, pos.astype(np.float64)), j.nq) * (1 - p) / (1 - p**DEPTH)


def sdcg(m: Metric, j: Judged) -> np.ndarray:
    """cwl-eval's NDCG@k (ir-measures SDCG): sum_{i<=k} g_i / log2(i+1) / sum_{i<=k} 1 / log2(i+1)."""
    k = min(int(m.k or DEPTH), DEPTH)
    q, pos, w = _gain_rows(m, j, k)
    disc = np.log(2.0) / np.log(np.arange(k) + 2.0)
    return sum_by_query(q, w * disc[pos], j.nq) / disc.sum()


def _ranks(first: int, n: int) -> np.ndarray:
    """The 1-based ranks first, ..., first + n - 1 as a row."""
    return np.arange(first, first + n, dtype=np.float64)[None, :]


def nerr8(m: Metric, j: Judged) -> np.ndarray:
    k = min(int(m.k or DEPTH), DEPTH)
    q, pos, w = _gain_rows(m, j, k)
    return _expected_utility(j, q, pos, w, k, lambda g, cg, r: 1.0 - g)


def nerr9(m: Metric, j: Judged) -> np.ndarray:
    k = min(int(m.k or DEPTH), DEPTH)
    q, pos, w = _gain_rows(m, j, k)

    def cont(g: np.ndarray, cg: np.ndarray, r: np.ndarray) -> np.ndarray:
        return r / (r + 1.0) * (1.0 - g)

    return _expected_utility(j, q, pos, w, k, cont)


def nerr10(m: Metric, j: Judged) -> np.ndarray:
    p = float(m.get("p"))
    q, pos, w = _gain_rows(m, j, DEPTH)
    return _expected_utility(j, q, pos, w, DEPTH, lambda g, cg, r: p * (1.0 - g))


def nerr11(m: Metric, j: Judged) -> np.ndarray:
    t = float(m.get("t"))
    q, pos, w = _gain_rows(m, j, DEPTH)

    def cont(g: np.ndarray, cg: np.ndarray, r: np.ndarray) -> np.ndarray:
        return ((r + 2.0 * t - 1.0) / (r + 2.0 * t)) ** 2.0 * (1.0 - g)

    return _expected_utility(j, q, pos, w, DEPTH, cont)


def inst(m: Metric, j: Judged) -> np.ndarray:
    t = float(m.get("t"))
    q, pos, w = _gain_rows(m, j, DEPTH)

    def cont(g: np.ndarray, cg: np.ndarray, r: np.ndarray) -> np.ndarray:
        ti = t - cg
        return ((r + t + ti - 1.0) / (r + t + ti)) ** 2.0

    return _expected_utility(j, q, pos, w, DEPTH, cont)


def insq(m: Metric, j: Judged) -> np.ndarray:
    t = float(m.get("t"))
    q, pos, w = _gain_rows(m, j, DEPTH)

    def cont(g: np.ndarray, cg: np.ndarray, r: np.ndarray) -> np.ndarray:
        return np.broadcast_to(((r + 2.0 * t - 1.0) / (r + 2.0 * t)) ** 2.0, g.shape).copy()

    return _expected_utility(j, q, pos, w, DEPTH, cont)


def bpm(m: Metric, j: Judged) -> np.ndarray:
    """Static BPM: the user goes on while the gain so far is below T and fewer than k documents were read."""
    t = float(m.get("t"))
    k = min(int(m.k or DEPTH), DEPTH)  # past rank k the user has stopped: k columns suffice
    q, pos, w = _gain_rows(m, j, k)

    def cont(g: np.ndarray, cg: np.ndarray, r: np.ndarray) -> np.ndarray:
        return ((cg < t) & (r < k)).astype(np.float64)

    return _expected_utility(j, q, pos, w, k, cont)


# -- compatibility -------------------------------------------------------------------------------------------


def compat(m: Metric, j: Judged) -> np.ndarray:
    """Compatibility (Clarke, Vtyurina & Smucker, TOIS 2020) as ir-measures computes it: rank-biased
    overlap, to depth max(|L|, |ideal|), between the run and the ideal ranking closest to it (relevant
    documents by grade, then in the run's order, unretrieved ones last), divided by the ideal's own RBO.

    A relevant document at run rank a (infinity if not retrieved) and ideal rank b is in the overlap at
    every depth d >= max(a, b), so RBO = sum_x sum_{d=max(a,b)}^{D} p^(d-1) / d / sum_{d<=D} p^(d-1)."""
    p = float(m.get("p"))
    ug, uq = j.unit_grade, j.unit_q
    n_ideal = np.bincount(uq[ug > 0], minlength=j.nq)
    depth = np.maximum(j.n_ret, n_ideal)
    dmax = int(depth.max()) if len(depth) else 0
    h = np.zeros(dmax + 1)
    if dmax:
        d = np.arange(1, dmax + 1, dtype=np.float64)
        np.cumsum(np.power(p, d - 1.0) / d, out=h[1:])
    # Run rank of every relevant unit (a large number when it was not retrieved); the ideal orders the
    # units by grade, then by run rank (unretrieved ones never overlap the run: their order is moot).
    big = np.iinfo(np.int64).max // 4
    rank = np.full(len(ug), big, dtype=np.int64)
    rank[j.unit] = j.pos + 1
    rel_units = np.flatnonzero(ug > 0)
    iq, ig, ia = uq[rel_units], ug[rel_units], rank[rel_units]
    order = np.lexsort((ia, -ig, iq))
    iq, ia = iq[order], ia[order]
    starts = group_starts(iq, j.nq)
    ib = np.arange(len(iq)) - starts[iq] + 1  # ideal rank
    first = np.maximum(ia, ib)
    dq = depth[iq]
    inside = first <= dq
    contrib = np.zeros(len(iq))
    contrib[inside] = h[dq[inside]] - h[first[inside] - 1]
    score = sum_by_query(iq, contrib, j.nq)
    norm = safe_div(1.0 - np.power(p, depth.astype(np.float64)), np.full(j.nq, 1.0 - p))
    rbo = safe_div(score, norm)
    if not m.get("normalize"):
        return rbo
    # The ideal against itself: overlap min(d, |ideal|) at depth d.
    dd = np.arange(1, dmax + 1, dtype=np.float64)
    w = np.power(p, dd - 1.0)
    # best_num(D, n) = sum_{d<=D} p^(d-1) min(d, n) / d = sum_{d<=min(D,n)} p^(d-1) + n * (h[D] - h[n])
    geo = np.zeros(dmax + 1)
    if dmax:
        np.cumsum(w, out=geo[1:])
    nn = np.minimum(n_ideal, depth)
    best = safe_div(geo[nn] + n_ideal * (h[depth] - h[nn]), norm)
    return np.where(best > 0, safe_div(rbo, best), rbo)
